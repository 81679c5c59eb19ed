/** The 30-day scan volume as a bar chart (uPlot on a canvas), with the same figures as a table. */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export function VolumeChart({ dates, counts }: { dates: string[]; counts: number[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = dates.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const opts: uPlot.Options = {
      width: Math.max(el.clientWidth, 200),
      height: 220,
      legend: { show: false },
      cursor: { show: true, drag: { x: false, y: false } },
      // Half a day of room at both ends, so the first and last bars are drawn whole.
      scales: { x: { time: true, range: (_u, min, max) => [min - 43_200, max + 43_200] }, y: { range: (_u, _min, max) => [0, Math.max(1, Math.ceil(max * 1.1))] } },
      // Counts are whole numbers: no fractional ticks.
      axes: [{ stroke: '#555', grid: { show: false } }, { stroke: '#555', grid: { stroke: '#e4e4e4' }, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000] }],
      series: [{}, { label: 'Scans', stroke: '#2456a6', fill: 'rgba(36, 86, 166, 0.55)', paths: uPlot.paths.bars!({ size: [0.7, 40] }), points: { show: false } }],
    };
    const plot = new uPlot(opts, [xs, counts], el);
    const ro = new ResizeObserver(() => plot.setSize({ width: Math.max(el.clientWidth, 200), height: 220 }));
    ro.observe(el);
    return () => { ro.disconnect(); plot.destroy(); };
  }, [dates.join(), counts.join()]);
  const total = counts.reduce((a, b) => a + b, 0);
  return (
    <figure class="chart">
      <div ref={box} role="img" aria-label={`Scans per day over the last ${dates.length} days: ${total} in total`} />
      <figcaption>
        <details>
          <summary>{total} scans over the last {dates.length} days (UTC) — show the figures</summary>
          <table class="compact">
            <thead><tr><th scope="col">Day</th><th scope="col">Scans</th></tr></thead>
            <tbody>{dates.map((d, i) => <tr key={d}><td>{d}</td><td>{counts[i]}</td></tr>)}</tbody>
          </table>
        </details>
      </figcaption>
    </figure>
  );
}
