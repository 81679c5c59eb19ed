/**
 * Keeps revealed secrets out of whatever an activity reports: a node's output, its error, a
 * run-log line. Every occurrence of a value in the spellings it takes on its way through a
 * request (see `spellings`) becomes `[vault:NAME]`, in strings and in object keys, at any depth.
 *
 * A value of 6 or more characters is also found inside a base64 token that encodes it with other
 * bytes (a Basic header of `user:secret`): the token is replaced whole.
 *
 * What it cannot do: recognise a value that user code transformed (reversed, re-cased, hashed,
 * split, encoded twice). docs/workflows-sandbox.md says so, and says what limits that exposure.
 */
/**
 * Secrets at least this long are also looked for inside base64 tokens (decoded): `user:secret` in a
 * Basic header, a JSON blob holding the secret. Shorter ones would match random decoded bytes.
 */
const DECODE_MIN_SECRET = 6;

export class Redactor {
  /** [form of a value, replacement], longest first so a value containing another is replaced whole. */
  private readonly forms: Array<[string, string]>;
  /** [raw bytes of a value, replacement] for the values looked for inside decoded base64. */
  private readonly rawValues: Array<[Buffer, string]> = [];
  /** Base64 / base64url runs long enough to hold one of `rawValues` (undefined: none to look for). */
  private readonly tokens?: RegExp;

  /** `secrets`: name → plaintext, as VaultService.reveal returns them (or connector credentials). */
  constructor(secrets: Record<string, string>, label: (name: string) => string = (n) => `[vault:${n}]`) {
    const forms = new Map<string, string>();
    for (const [name, value] of Object.entries(secrets)) {
      if (!value) continue;
      for (const form of spellings(value)) if (form) forms.set(form, label(name));
      if (value.length >= DECODE_MIN_SECRET) this.rawValues.push([Buffer.from(value), label(name)]);
    }
    this.forms = [...forms.entries()].sort((a, b) => b[0].length - a[0].length);
    if (this.rawValues.length) {
      // A value of n bytes takes at least 4n/3 base64 characters, wherever it sits in the encoded bytes.
      const shortest = Math.min(...this.rawValues.map(([b]) => Math.floor((b.length * 4) / 3)));
      this.tokens = new RegExp(`[A-Za-z0-9+/_-]{${shortest},}={0,2}`, 'g');
    }
  }

  get empty(): boolean {
    return this.forms.length === 0;
  }

  text(s: string): string {
    let out = s;
    for (const [form, replacement] of this.forms) if (out.includes(form)) out = out.split(form).join(replacement);
    // A value encoded together with other bytes (`Basic base64(user:secret)`, which the HTTP client
    // builds from a URL's user info; a JSONata $base64encode of a larger string) has no spelling of
    // its own: such a token is decoded, and replaced whole when the decoded bytes hold a value.
    if (this.tokens) out = out.replace(this.tokens, (token) => this.decodedLabel(token) ?? token);
    return out;
  }

  private decodedLabel(token: string): string | undefined {
    // Prose words are not base64 worth decoding (keeps a large text's cost down).
    if (/^[A-Z]?[a-z]+$/.test(token)) return undefined;
    // Each of the four alignments: the token may start mid-way through the encoded bytes.
    for (let skip = 0; skip < 4 && token.length - skip >= 8; skip++) {
      const bytes = Buffer.from(token.slice(skip).replace(/-/g, '+').replace(/_/g, '/'), 'base64');
      for (const [raw, label] of this.rawValues) if (bytes.includes(raw)) return label;
    }
    return undefined;
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

/**
 * The spellings a value takes on its way into a request or a serialised report: as written; in a
 * URL's path (WHATWG path percent-encoding, as `new URL` writes it, and `encodeURI`'s), query and
 * form body (`encodeURIComponent`, `+` for space); inside a JSON string; and base64 (standard and
 * URL-safe, as in a Basic authorization header).
 */
function spellings(value: string): Set<string> {
  const forms = new Set([
    value,
    encodeURIComponent(value),
    encodeURI(value),
    new URLSearchParams({ v: value }).toString().slice(2),
    JSON.stringify(value).slice(1, -1),
    Buffer.from(value).toString('base64'),
    Buffer.from(value).toString('base64').replace(/=+$/, ''),
    Buffer.from(value).toString('base64url'),
  ]);
  for (const [prefix, part] of [['http://h/', 'pathname'], ['http://h/?', 'search']] as const) {
    try {
      forms.add(new URL(prefix + value)[part].slice(1));
    } catch {
      // Not a spelling a URL can hold.
    }
  }
  return forms;
}
