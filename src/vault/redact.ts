/**
 * Keeps revealed secrets out of whatever an activity reports: a node's output, its error, a
 * run-log line. Every occurrence of a value (also in its URL-encoded and JSON-escaped forms,
 * as it appears in URLs and serialized bodies) becomes `[vault:NAME]`, in strings and in
 * object keys, at any depth.
 */
export class Redactor {
  /** [form of a value, replacement], longest first so a value containing another is replaced whole. */
  private readonly forms: Array<[string, string]>;

  /** `secrets`: name → plaintext, as VaultService.reveal returns them (or connector credentials). */
  constructor(secrets: Record<string, string>, label: (name: string) => string = (n) => `[vault:${n}]`) {
    const forms = new Map<string, string>();
    for (const [name, value] of Object.entries(secrets)) {
      if (!value) continue;
      for (const form of [value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1)]) forms.set(form, label(name));
    }
    this.forms = [...forms.entries()].sort((a, b) => b[0].length - a[0].length);
  }

  get empty(): boolean {
    return this.forms.length === 0;
  }

  text(s: string): string {
    let out = s;
    for (const [form, replacement] of this.forms) if (out.includes(form)) out = out.split(form).join(replacement);
    return out;
  }

  /** A copy of a JSON-like value with every string and key redacted. */
  json<T>(value: T): T {
    if (this.empty) return value;
    return this.walk(value) as T;
  }

  /**
   * An error safe to report: same name, redacted message and own fields (e.g. `attempts`,
   * `kind`); the stack and cause, which may quote a secret, are dropped.
   */
  error(err: unknown): Error {
    const e = err instanceof Error ? err : new Error(String(err));
    const safe = Object.assign(new Error(this.text(e.message)), this.json({ ...e }));
    safe.name = e.name;
    return safe;
  }

  private walk(v: unknown): unknown {
    if (typeof v === 'string') return this.text(v);
    if (Array.isArray(v)) return v.map((x) => this.walk(x));
    if (v !== null && typeof v === 'object' && !(v instanceof Date) && !Buffer.isBuffer(v)) {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [this.text(k), this.walk(x)]));
    }
    return v;
  }
}
