/**
 * `{{ vault.NAME }}` in a node's config (docs/contract.md §7 "Templating"). The activity that
 * runs the node finds the names in the author's config, reveals them, and fills them in during
 * the one templating pass over the author's text (src/flows/expressions.ts), so a value that came
 * from data is never read as a reference; it redacts them from what it reports.
 */
const VAULT_REF = /\{\{\s*vault\.([A-Za-z_][A-Za-z0-9_]{0,63})\s*\}\}/g;

function strings(value: unknown, visit: (s: string) => void): void {
  if (typeof value === 'string') visit(value);
  else if (Array.isArray(value)) value.forEach((v) => strings(v, visit));
  else if (value !== null && typeof value === 'object') Object.values(value).forEach((v) => strings(v, visit));
}

/** The vault names a JSON value refers to, each once, in order of appearance. */
export function vaultRefs(value: unknown): string[] {
  const names = new Set<string>();
  strings(value, (s) => { for (const m of s.matchAll(VAULT_REF)) names.add(m[1]); });
  return [...names];
}

/** A copy of `value` with every `{{ vault.NAME }}` replaced by the revealed value. */
export function fillVaultRefs<T>(value: T, revealed: Readonly<Record<string, string>>): T {
  const fill = (v: unknown): unknown => {
    if (typeof v === 'string') return v.replace(VAULT_REF, (ref, name: string) => revealed[name] ?? ref);
    if (Array.isArray(v)) return v.map(fill);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x)]));
    return v;
  };
  return fill(value) as T;
}
