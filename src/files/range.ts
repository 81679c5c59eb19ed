/**
 * HTTP Range requests on one stored part (RFC 9110 section 14): a single byte range is served as
 * 206; a range that cannot be satisfied, or a `bytes=` header that does not parse, is 416. Other
 * units and lists of several ranges are ignored (a server may) and the whole part is sent.
 */
export type RangeAnswer =
  | { kind: 'full' }
  | { kind: 'partial'; start: number; end: number }
  | { kind: 'unsatisfiable' };

export function parseRange(header: string | undefined, size: number): RangeAnswer {
  if (!header) return { kind: 'full' };
  const m = /^\s*bytes\s*=\s*(.*)$/i.exec(header);
  if (!m) return { kind: 'full' };
  const spec = m[1].trim();
  if (spec.includes(',')) return { kind: 'full' };
  const r = /^(\d*)-(\d*)$/.exec(spec);
  if (!r || (r[1] === '' && r[2] === '')) return { kind: 'unsatisfiable' };
  if (r[1] === '') {
    const suffix = Number(r[2]);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(r[1]);
  const end = r[2] === '' ? size - 1 : Math.min(Number(r[2]), size - 1);
  if (!Number.isSafeInteger(start) || start >= size || (r[2] !== '' && Number(r[2]) < start)) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end };
}
