/** Display helpers shared by the pages. */
export function formatBytes(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '—';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

export function formatTime(t: string | number | null | undefined): string {
  if (t === null || t === undefined || t === '') return '—';
  const d = typeof t === 'number' ? new Date(t * 1000) : new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toLocaleString();
}

/** A CSV file from rows, quoted as RFC 4180 asks. */
export function toCsv(header: string[], rows: (string | number | undefined)[][]): string {
  const cell = (v: string | number | undefined): string => {
    const s = v === undefined ? '' : String(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [header, ...rows].map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
}

export function splitList(s: string): string[] {
  return s.split(/[,\n]/).map((x) => x.trim()).filter((x) => x !== '');
}

/** A local datetime-local input value as ISO 8601, or undefined when empty. */
export function isoOf(local: string): string | undefined {
  if (!local) return undefined;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}
