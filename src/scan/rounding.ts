/**
 * Scan numbers keep full precision while engines and the verdict compute with them; they are
 * rounded to two decimals once, where a result leaves the pipeline (publicResult in service.ts:
 * responses, history, webhooks). `round2` also writes a number into a finding's text.
 */
export const round2 = (n: number): number => Math.round(n * 100) / 100;

/** Rounds every fractional number to two decimals (docs/contract.md §5 "Scan result"). */
export function round2Deep<T>(value: T): T {
  if (typeof value === 'number') return (Number.isInteger(value) ? value : round2(value)) as T;
  if (Array.isArray(value)) return value.map((v) => round2Deep(v)) as T;
  if (value && typeof value === 'object' && !(value instanceof Date) && !Buffer.isBuffer(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = round2Deep(v);
    return out as T;
  }
  return value;
}
