/** One scan result: the verdict, what was scanned, and each engine's outcome and findings. */
import { formatBytes, formatTime } from '../format';
import type { EngineOutcome, ScanResult } from '../types';

const LEVEL_CLASS: Record<string, string> = {
  Clean: 'ok', Informational: 'info', Suspicious: 'warn', Malicious: 'bad', Rejected: 'bad', Error: 'bad',
};

export function Verdict({ level, score }: { level: string; score?: number }) {
  // An unrecognised level is treated as unsafe, as the contract asks of clients.
  return <span class={`badge ${LEVEL_CLASS[level] ?? 'bad'}`}>{level}{score === undefined ? '' : ` · ${score}`}</span>;
}

function EngineRow({ name, e }: { name: string; e: EngineOutcome }) {
  const findings = e.findings ?? [];
  return (
    <>
      <tr>
        <th scope="row">{name}</th>
        <td><span class={`status s-${e.status}`}>{e.status}</span></td>
        <td class="num">{e.durationMs ?? '—'}</td>
        <td class="num">{findings.length}</td>
        <td>{e.note ?? ''}</td>
      </tr>
      {findings.map((f, i) => (
        <tr key={`${name}-${i}`} class="finding">
          <td colSpan={5}>
            <span class={`sev sev-${f.severity}`}>{f.severity}</span> <strong>{f.name}</strong> <code>{f.id}</code>
            {f.member ? <> in <code>{f.member}</code></> : null} — {f.description}
            <span class="muted"> (confidence {f.confidence}{f.category ? `, ${f.category}` : ''})</span>
          </td>
        </tr>
      ))}
    </>
  );
}

function PayloadSection({ title, value }: { title: string; value: Record<string, unknown> | undefined }) {
  if (!value) return null;
  const findings = (value.findings ?? value.matches) as Record<string, unknown>[] | undefined;
  const detected = value.detected === true || (typeof value.blocksFound === 'number' && value.blocksFound > 0);
  return (
    <section class="payload-section">
      <h3>{title}: <span class={detected ? 'badge warn' : 'badge ok'}>{detected ? 'detected' : 'nothing found'}</span></h3>
      {findings && findings.length > 0 ? (
        <div class="table-wrap">
          <table class="compact">
            <thead><tr>{Object.keys(findings[0]).map((k) => <th scope="col" key={k}>{k}</th>)}</tr></thead>
            <tbody>{findings.map((f, i) => <tr key={i}>{Object.keys(findings[0]).map((k) => <td key={k}>{typeof f[k] === 'object' ? JSON.stringify(f[k]) : String(f[k] ?? '')}</td>)}</tr>)}</tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

export function ScanResultView({ r }: { r: ScanResult }) {
  const s = r.safetyScore;
  const engines = Object.entries(r.engines ?? {});
  return (
    <article class="scan-result" aria-label="Scan result">
      <header class={`verdict v-${LEVEL_CLASS[s.threatLevel] ?? 'bad'}`}>
        <div>
          <Verdict level={s.threatLevel} score={s.score} />
          <span class={`action a-${s.recommendedAction}`}>Recommended: {s.recommendedAction}</span>
        </div>
        <p><strong>{s.primaryThreat}</strong> — {s.threatSummary}</p>
        {s.error ? <p role="alert">{s.error}</p> : null}
      </header>
      <dl class="facts">
        <dt>Name</dt><dd>{r.name || <span class="muted">(none)</span>}</dd>
        <dt>Kind</dt><dd>{r.scanType}{r.fileType ? ` · ${r.fileType}` : ''} · {r.contentType}</dd>
        <dt>Size</dt><dd>{formatBytes(r.size)}</dd>
        <dt>SHA-256</dt><dd class="mono wrap">{r.hash}</dd>
        <dt>Confidence</dt><dd>{s.confidence} ({s.confidenceScore}) — {s.confidenceReason}</dd>
        <dt>Coverage</dt><dd>{s.coverage}{s.coverageNote ? ` — ${s.coverageNote}` : ''}</dd>
        {s.suppressedEngines?.length ? <><dt>Suppressed by profile</dt><dd>{s.suppressedEngines.join(', ')}</dd></> : null}
        <dt>Scanned</dt><dd>{formatTime(r.timestamp)} in {r.scanTimeMs} ms</dd>
        <dt>Scan id</dt><dd class="mono wrap">{r.scanId}</dd>
        <dt>Request id</dt><dd class="mono wrap">{r.requestId}</dd>
      </dl>
      {s.cveFindings?.length ? (
        <section>
          <h3>Known vulnerabilities</h3>
          <ul>{s.cveFindings.map((c, i) => <li key={c.id ?? i}><strong>{c.id}</strong> (CVSS {c.cvss ?? '—'}) {c.description}</li>)}</ul>
        </section>
      ) : null}
      <section aria-labelledby="engines-h">
        <h3 id="engines-h">Engines</h3>
        {engines.length === 0 ? <p class="muted">No engine ran (nothing was scanned).</p> : (
          <div class="table-wrap">
            <table>
              <thead><tr><th scope="col">Engine</th><th scope="col">Status</th><th scope="col">ms</th><th scope="col">Findings</th><th scope="col">Note</th></tr></thead>
              <tbody>{engines.map(([name, e]) => <EngineRow key={name} name={name} e={e} />)}</tbody>
            </table>
          </div>
        )}
      </section>
      {r.scanType === 'payload' ? (
        <>
          <PayloadSection title="Prompt injection" value={r.promptInjection} />
          <PayloadSection title="Sensitive data" value={r.sensitiveData} />
          <PayloadSection title="Embedded code" value={r.codeExtraction} />
          <PayloadSection title="Tool calls" value={r.toolCallAnalysis} />
        </>
      ) : null}
    </article>
  );
}
