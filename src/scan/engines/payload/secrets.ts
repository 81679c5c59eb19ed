/**
 * Detectors of secrets and personal data, shared by the sensitive_data engine and by the
 * excerpt masking of every payload engine.
 *
 * Backtracking safety: every pattern starts with a literal or with a negative look-behind
 * that allows a match to begin only at the start of a token, and every quantifier is bounded,
 * so work per start position is bounded and a scan is linear in the input. Long runs of one
 * character or repeated near-matches (the adversarial inputs in bench/payload.ts) cannot
 * multiply the work. Validation that a regex cannot express (Luhn, mod-97, check letters,
 * 11-proof, entropy) is done in code on each candidate.
 */
import type { Severity } from '../../types';
import type { BudgetSignal } from './text';
import { EngineTimeoutError } from '../../runner';

export type DataCategory = 'secret' | 'pii';

export interface SecretHit {
  type: string;
  category: DataCategory;
  severity: Severity;
  start: number;
  end: number;
  /** The raw value. Never leaves this module's callers except masked. */
  value: string;
}

interface Detector {
  type: string;
  category: DataCategory;
  severity: Severity;
  re: RegExp;
  /** Capture group holding the secret value (0 = whole match). */
  group?: number;
  /** Cheap literal pre-check (lower-case); the regex runs only when one occurs. */
  needles?: string[];
  validate?: (value: string, match: RegExpExecArray, text: string) => boolean;
}

// ---------- validators ----------

export function shannonEntropy(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const c of counts.values()) {
    const p = c / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

export function luhnValid(digits: string): boolean {
  let sum = 0;
  let dbl = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (dbl) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    dbl = !dbl;
  }
  return sum % 10 === 0;
}

/** Issuer prefixes of the card networks (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay). */
function cardIssuerKnown(d: string): boolean {
  const n2 = Number(d.slice(0, 2));
  const n4 = Number(d.slice(0, 4));
  const n6 = Number(d.slice(0, 6));
  if (d[0] === '4') return d.length === 13 || d.length === 16 || d.length === 19;
  if ((n2 >= 51 && n2 <= 55) || (n6 >= 222100 && n6 <= 272099)) return d.length === 16;
  if (n2 === 34 || n2 === 37) return d.length === 15;
  if (n4 === 6011 || n2 === 65 || (n6 >= 622126 && n6 <= 622925)) return d.length >= 16;
  if (n4 >= 3528 && n4 <= 3589) return d.length >= 16;
  if (n2 === 36 || n2 === 38 || (n4 >= 3000 && n4 <= 3059)) return d.length >= 14;
  if (n2 === 62) return d.length >= 16;
  return false;
}

function cardValid(raw: string): boolean {
  const seps = raw.replace(/\d/g, '');
  if (seps.length > 0 && new Set(seps).size > 1) return false;
  // Dots also separate decimals and versions: only a number grouped like a card (4111.1111.1111.1111,
  // Amex 3782.822463.10005) counts.
  if (seps[0] === '.' && !raw.split('.').every((g, i, all) => all.length >= 3 && g.length >= 4 && g.length <= 6)) return false;
  const d = raw.replace(/[ .-]/g, '');
  if (d.length < 13 || d.length > 19) return false;
  if (/^(\d)\1+$/.test(d)) return false;
  return cardIssuerKnown(d) && luhnValid(d);
}

const IBAN_LENGTHS: Record<string, number> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BR: 29, CH: 21, CR: 22,
  CY: 28, CZ: 24, DE: 22, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27, GB: 22,
  GE: 22, GI: 23, GL: 18, GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IS: 26, IT: 27, JO: 30,
  KW: 30, KZ: 20, LB: 28, LI: 21, LT: 20, LU: 20, LV: 21, MC: 27, MD: 24, ME: 22, MK: 19, MR: 27,
  MT: 31, MU: 30, NL: 18, NO: 15, PK: 24, PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, SA: 24,
  SE: 24, SI: 19, SK: 24, SM: 27, TN: 24, TR: 26, UA: 29, VG: 24, XK: 20,
};

export function ibanChecksumValid(iban: string): boolean {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let rem = 0;
  for (const ch of rearranged) {
    const code = ch.charCodeAt(0);
    const v = code >= 65 ? String(code - 55) : ch;
    for (const digit of v) rem = (rem * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return rem === 1;
}

/** Returns the IBAN (compact) if a valid one starts the candidate, else undefined. */
function ibanFrom(candidate: string): string | undefined {
  const compact = candidate.replace(/ /g, '');
  const len = IBAN_LENGTHS[compact.slice(0, 2)];
  if (len === undefined || compact.length < len) return undefined;
  const iban = compact.slice(0, len);
  return ibanChecksumValid(iban) ? iban : undefined;
}

function ssnValid(v: string): boolean {
  const [a, g, s] = v.split('-');
  if (a === '000' || a === '666' || a[0] === '9') return false;
  if (g === '00' || s === '0000') return false;
  // Numbers publicised in advertising and never valid.
  if (v === '078-05-1120' || v === '219-09-9999') return false;
  return true;
}

const NINO_BAD_PREFIX = new Set(['BG', 'GB', 'NK', 'KN', 'TN', 'NT', 'ZZ']);
function ninoValid(v: string): boolean {
  return !NINO_BAD_PREFIX.has(v.slice(0, 2));
}

const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';
export function dniValid(v: string): boolean {
  const c = v.replace('-', '').toUpperCase();
  let num = c.slice(0, -1);
  const first = num[0];
  if (first === 'X') num = `0${num.slice(1)}`;
  else if (first === 'Y') num = `1${num.slice(1)}`;
  else if (first === 'Z') num = `2${num.slice(1)}`;
  if (!/^\d{8}$/.test(num)) return false;
  return DNI_LETTERS[Number(num) % 23] === c.slice(-1);
}

/** Dutch BSN "11-proof": 9*d1 + 8*d2 + ... + 2*d8 - d9 is divisible by 11. */
export function bsnValid(v: string): boolean {
  if (!/^\d{9}$/.test(v) || v === '000000000') return false;
  let sum = 0;
  for (let i = 0; i < 8; i++) sum += (9 - i) * (v.charCodeAt(i) - 48);
  sum -= v.charCodeAt(8) - 48;
  return sum % 11 === 0;
}

const PLACEHOLDER = /^(?:x{3,}|\*{3,}|\.{3,}|<[^>]{0,60}>|\$\{[^}]{0,60}\}|\{\{[^}]{0,60}\}\}|%\([^)]{0,40}\)s|your[_-]?\w{0,30}|changeme|password|passwd|secret|example\w{0,20}|dummy\w{0,20}|test\w{0,10}|null|none|undefined|true|false|redacted|process\.env\.\w{0,40}|os\.environ\w{0,40})$/i;

function notPlaceholder(v: string): boolean {
  return !PLACEHOLDER.test(v);
}

function genericSecretValid(v: string): boolean {
  if (!notPlaceholder(v)) return false;
  if (v.length < 8) return false;
  if (/^[a-z]+$/i.test(v) && v.length < 20) return false;
  if (/^\$|^\{|^%|^\(|\(\)$/.test(v)) return false;
  if (/^[a-z_][\w.]*\(?$/i.test(v) && /[._]/.test(v) && !/\d/.test(v)) return false;
  return shannonEntropy(v) >= 3.0 && /\d|[^a-z0-9]/i.test(v);
}

function jwtValid(v: string): boolean {
  try {
    const header = JSON.parse(Buffer.from(v.slice(0, v.indexOf('.')), 'base64url').toString('utf8')) as unknown;
    return typeof header === 'object' && header !== null && 'alg' in header;
  } catch {
    return false;
  }
}

function nanpValid(v: string): boolean {
  const d = v.replace(/\D/g, '');
  const local = d.length === 11 ? d.slice(1) : d;
  if (local.length !== 10) return false;
  if (local[0] < '2' || local[3] < '2') return false;
  if (local.slice(3, 6) === '555' && local.slice(6, 8) === '01') return true;
  return !/^(\d)\1+$/.test(local);
}

function e164Valid(v: string): boolean {
  const d = v.replace(/\D/g, '');
  return d.length >= 8 && d.length <= 15 && !/^(\d)\1+$/.test(d);
}

// ---------- detectors ----------

const B = '(?<![A-Za-z0-9_])';
const E = '(?![A-Za-z0-9_])';

const DETECTORS: Detector[] = [
  { type: 'aws_access_key_id', category: 'secret', severity: 'high', needles: ['akia', 'asia', 'abia', 'acca'],
    re: new RegExp(`${B}(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}${E}`, 'g') },
  { type: 'aws_secret_access_key', category: 'secret', severity: 'critical', needles: ['secret'], group: 1,
    re: /(?:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key)["']?\s{0,3}(?:=|:|=>)\s{0,3}["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/gi },
  { type: 'gcp_service_account_key', category: 'secret', severity: 'critical', needles: ['private_key_id'], group: 1,
    re: /"private_key_id"\s{0,3}:\s{0,3}"([a-f0-9]{40})"/g },
  { type: 'azure_storage_key', category: 'secret', severity: 'critical', needles: ['accountkey'], group: 1,
    re: /AccountKey=([A-Za-z0-9+/]{86}==)/gi },
  { type: 'azure_sas_token', category: 'secret', severity: 'high', needles: ['sig='], group: 1,
    re: /[?&]sv=\d{4}-\d{2}-\d{2}&[^\s"'<>]{0,300}?sig=([A-Za-z0-9%+/]{30,120}=*)/g },
  { type: 'github_token', category: 'secret', severity: 'high', needles: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_'],
    re: new RegExp(`${B}(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})${E}`, 'g') },
  { type: 'gitlab_token', category: 'secret', severity: 'high', needles: ['glpat-', 'glptt-', 'gldt-'],
    re: new RegExp(`${B}(?:glpat|glptt|gldt)-[A-Za-z0-9_-]{20,64}(?![A-Za-z0-9_-])`, 'g') },
  { type: 'slack_token', category: 'secret', severity: 'high', needles: ['xox'],
    re: new RegExp(`${B}xox[abposr]-[0-9]{6,16}-[A-Za-z0-9-]{8,200}(?![A-Za-z0-9-])`, 'g') },
  { type: 'slack_webhook', category: 'secret', severity: 'high', needles: ['hooks.slack.com'],
    re: /https:\/\/hooks\.slack\.com\/services\/T[A-Z0-9]{8,12}\/B[A-Z0-9]{8,12}\/[A-Za-z0-9]{24}/g },
  { type: 'stripe_secret_key', category: 'secret', severity: 'critical', needles: ['_live_'],
    re: new RegExp(`${B}(?:sk|rk)_live_[A-Za-z0-9]{24,99}${E}`, 'g') },
  { type: 'anthropic_api_key', category: 'secret', severity: 'high', needles: ['sk-ant-'],
    re: /(?<![A-Za-z0-9_-])sk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{80,120}(?![A-Za-z0-9_-])/g },
  { type: 'openai_api_key', category: 'secret', severity: 'high', needles: ['sk-'],
    re: /(?<![A-Za-z0-9_-])sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,200}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|[A-Za-z0-9]{48})(?![A-Za-z0-9_-])/g },
  { type: 'google_api_key', category: 'secret', severity: 'high', needles: ['aiza'],
    re: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g },
  { type: 'twilio_api_key', category: 'secret', severity: 'high', needles: ['sk'],
    re: new RegExp(`${B}SK[0-9a-f]{32}${E}`, 'g') },
  { type: 'twilio_auth_token', category: 'secret', severity: 'high', needles: ['twilio'], group: 1,
    re: /twilio[A-Za-z_]{0,20}(?:auth)?_?token["']?\s{0,3}(?:=|:)\s{0,3}["']?([0-9a-f]{32})(?![0-9a-f])/gi },
  { type: 'sendgrid_api_key', category: 'secret', severity: 'high', needles: ['sg.'],
    re: /(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g },
  { type: 'jwt', category: 'secret', severity: 'medium', needles: ['eyj'],
    re: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,2000}\.eyJ[A-Za-z0-9_-]{5,8000}\.[A-Za-z0-9_-]{10,1000}(?![A-Za-z0-9_-])/g,
    validate: (v) => jwtValid(v) },
  { type: 'database_connection_string', category: 'secret', severity: 'high', needles: ['://'], group: 1,
    re: /(?<![A-Za-z0-9+.-])(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|sqlserver|oracle|cockroachdb|clickhouse)(?:\+[a-z0-9]{1,20})?:\/\/[^\s:/@'"`<>]{1,128}:([^\s@/'"`<>]{1,128})@[^\s/'"`<>]{1,253}/gi,
    validate: (v) => notPlaceholder(v) && !/^\*+$/.test(v) },
  { type: 'password_in_url', category: 'secret', severity: 'high', needles: ['://'], group: 1,
    re: /(?<![A-Za-z0-9+.-])(?:https?|ftps?|sftp|ssh|smtps?|imaps?|git|ldaps?|svn):\/\/[^\s:/@'"`<>]{1,128}:([^\s@/'"`<>]{1,128})@[A-Za-z0-9.-]{1,253}/gi,
    validate: (v) => notPlaceholder(v) && !/^\*+$/.test(v) && !/^\d{1,5}$/.test(v) },
  { type: 'generic_secret', category: 'secret', severity: 'medium', needles: ['pass', 'pwd', 'secret', 'key', 'token'], group: 1,
    re: /(?:password|passwd|passphrase|pwd|secret|api_?key|apikey|access_?key|auth_?token|access_?token|client_?secret|private_?key|token)(?:[A-Za-z0-9_]{0,20})["']?\s{0,3}(?:=|:=|:|=>)\s{0,3}["'`]([^"'`\s]{8,200})["'`]/gi,
    validate: genericSecretValid },
  { type: 'generic_secret', category: 'secret', severity: 'medium', needles: ['pass', 'pwd', 'secret', 'key', 'token'], group: 1,
    // Unquoted env-file style, one assignment per line: DB_PASSWORD=...
    re: /(?<=^|\n)[ \t]{0,8}(?:export[ \t]{1,4})?[A-Z0-9_]{0,40}(?:PASSWORD|PASSWD|SECRET|API_KEY|APIKEY|TOKEN|PRIVATE_KEY)[A-Z0-9_]{0,40}[ \t]{0,3}=[ \t]{0,3}([^\s"'`#]{8,200})(?=[ \t]{0,20}(?:\r?\n|$))/g,
    validate: genericSecretValid },

  // ---------- personal data ----------
  { type: 'payment_card', category: 'pii', severity: 'high',
    re: /(?<![\d-])\d(?:[ .-]?\d){12,18}(?![\d])/g, validate: (v) => cardValid(v) },
  { type: 'iban', category: 'pii', severity: 'medium',
    re: /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}/g, validate: (v) => ibanFrom(v) !== undefined },
  { type: 'us_ssn', category: 'pii', severity: 'high', needles: ['-'],
    re: /(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])/g, validate: ssnValid },
  { type: 'uk_nino', category: 'pii', severity: 'high',
    re: /(?<![A-Za-z0-9])[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])/g, validate: ninoValid },
  { type: 'es_dni', category: 'pii', severity: 'high',
    re: /(?<![A-Za-z0-9])[XYZ0-9]\d{7}-?[A-Z](?![A-Za-z0-9])/g, validate: dniValid },
  { type: 'nl_bsn', category: 'pii', severity: 'high', needles: ['bsn', 'burgerservicenummer', 'sofinummer'], group: 1,
    re: /(?:bsn|burgerservicenummer|sofinummer)[^\d\n]{0,30}(?<!\d)(\d{9}|\d{4}\.\d{2}\.\d{3})(?!\d)/gi,
    validate: (v) => bsnValid(v.replace(/\./g, '')) },
  { type: 'phone_number', category: 'pii', severity: 'low', needles: ['+'],
    re: /(?<![\w+])\+[1-9]\d{7,14}(?!\d)/g, validate: e164Valid },
  { type: 'phone_number', category: 'pii', severity: 'low', needles: ['+'],
    re: /(?<![\w+])\+[1-9]\d{0,3}[ .-]\(?\d{1,4}\)?[ .-]\d{2,4}[ .-]\d{2,4}(?:[ .-]\d{2,4})?(?![\d])/g, validate: e164Valid },
  { type: 'phone_number', category: 'pii', severity: 'low',
    // A sentence-ending full stop may follow; a dot followed by a digit (a version) may not.
    re: /(?<![\w+.-])(?:\(\d{3}\) ?|\d{3}[.-])\d{3}[.-]\d{4}(?![\w-]|\.\d)/g, validate: nanpValid },
  { type: 'phone_number', category: 'pii', severity: 'low',
    // UK national formats: 07xxx xxxxxx mobiles, 0xx xxxx xxxx and 0xxxx xxxxxx landlines.
    re: /(?<![\w+.-])0(?:7\d{3} ?\d{6}|[1-9]\d ?\d{4} ?\d{4}|1\d{3} ?\d{6})(?![\w-]|\.\d)/g },
];

const PEM_BEGIN = /-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----/g;
const PEM_BODY = /^[A-Za-z0-9+/=\s:,-]{0,12000}/;
const MAX_PEM = 12_000;

/**
 * PEM private keys: a BEGIN header up to its END marker, or, when the END is missing (a
 * truncated paste), the base64 body after the header. The next END position is looked up once
 * and reused, so many headers without an END stay linear.
 */
function findPrivateKeys(text: string, out: SecretHit[]): void {
  PEM_BEGIN.lastIndex = 0;
  let nextEnd = -2;
  let m: RegExpExecArray | null;
  while ((m = PEM_BEGIN.exec(text)) !== null) {
    const bodyStart = m.index + m[0].length;
    if (nextEnd !== -1 && nextEnd < bodyStart) nextEnd = text.indexOf('-----END ', bodyStart);
    let end: number;
    if (nextEnd !== -1 && nextEnd - bodyStart <= MAX_PEM && PEM_BODY.exec(text.slice(bodyStart, nextEnd))?.[0].length === nextEnd - bodyStart) {
      const close = text.indexOf('-----', nextEnd + 9);
      end = close === -1 || close - nextEnd > 60 ? nextEnd + 9 : close + 5;
    } else {
      const body = /^[A-Za-z0-9+/=\s]{0,4000}/.exec(text.slice(bodyStart, bodyStart + 4000))?.[0] ?? '';
      if (body.replace(/\s/g, '').length < 40) continue;
      end = bodyStart + body.length;
    }
    out.push({ type: 'private_key', category: 'secret', severity: 'critical', start: m.index, end, value: text.slice(m.index, end) });
    PEM_BEGIN.lastIndex = Math.max(PEM_BEGIN.lastIndex, end);
  }
}

const EMAIL_LOCAL = /[A-Za-z0-9._%+-]/;
const EMAIL_DOMAIN = /[A-Za-z0-9.-]/;

/** Emails by scanning from each '@' outwards (bounded), which keeps long runs linear. */
function findEmails(text: string, out: SecretHit[]): void {
  let at = text.indexOf('@');
  while (at !== -1) {
    let s = at;
    while (s > 0 && at - s < 64 && EMAIL_LOCAL.test(text[s - 1])) s--;
    let e = at + 1;
    while (e < text.length && e - at < 254 && EMAIL_DOMAIN.test(text[e])) e++;
    while (e > at + 1 && (text[e - 1] === '.' || text[e - 1] === '-')) e--;
    const local = text.slice(s, at);
    const domain = text.slice(at + 1, e);
    const tld = domain.slice(domain.lastIndexOf('.') + 1);
    if (local.length > 0 && !local.startsWith('.') && domain.includes('.') && /^[A-Za-z]{2,24}$/.test(tld)
      && !domain.startsWith('.') && !domain.includes('..') && !/^\d/.test(tld)) {
      out.push({ type: 'email_address', category: 'pii', severity: 'low', start: s, end: e, value: text.slice(s, e) });
    }
    at = text.indexOf('@', Math.max(e, at + 1));
  }
}

/** All secret / PII hits in the text, in order of detector then position; overlapping hits of lower rank dropped. */
export function findSensitive(text: string, signal?: BudgetSignal): SecretHit[] {
  const lower = text.length < 4_000_000 ? text.toLowerCase() : undefined;
  const hits: SecretHit[] = [];
  for (const d of DETECTORS) {
    if (signal?.aborted) throw new EngineTimeoutError('payload engine: time budget exhausted');
    if (d.needles && lower !== undefined && !d.needles.some((n) => lower.includes(n))) continue;
    d.re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = d.re.exec(text)) !== null) {
      const g = d.group ?? 0;
      const value = m[g];
      if (value === undefined) continue;
      const start = m.index + (g === 0 ? 0 : m[0].lastIndexOf(value));
      let v = value;
      if (d.type === 'iban') {
        const iban = ibanFrom(value);
        if (iban === undefined) continue;
        v = value.slice(0, spacedLength(value, iban.length));
      } else if (d.validate && !d.validate(value, m, text)) {
        continue;
      }
      hits.push({ type: d.type, category: d.category, severity: d.severity, start, end: start + v.length, value: v });
    }
  }
  if (lower === undefined || lower.includes('private key')) findPrivateKeys(text, hits);
  findEmails(text, hits);
  return dropOverlaps(hits);
}

/** Length in the spaced candidate covering `compactLen` non-space characters. */
function spacedLength(spaced: string, compactLen: number): number {
  let n = 0;
  for (let i = 0; i < spaced.length; i++) {
    if (spaced[i] !== ' ') n++;
    if (n === compactLen) return i + 1;
  }
  return spaced.length;
}

const TYPE_PRIORITY: Record<DataCategory, number> = { secret: 1, pii: 0 };

/** Where hits overlap keep the more specific one (secret over PII, longer over shorter). */
function dropOverlaps(hits: SecretHit[]): SecretHit[] {
  const sorted = [...hits].sort((a, b) => a.start - b.start || (b.end - b.start) - (a.end - a.start));
  const kept: SecretHit[] = [];
  for (const h of sorted) {
    const prev = kept[kept.length - 1];
    if (prev && h.start < prev.end) {
      const better = TYPE_PRIORITY[h.category] > TYPE_PRIORITY[prev.category]
        || (TYPE_PRIORITY[h.category] === TYPE_PRIORITY[prev.category] && h.type !== 'generic_secret' && prev.type === 'generic_secret');
      if (better) kept[kept.length - 1] = h;
      continue;
    }
    kept.push(h);
  }
  return kept;
}

/**
 * A redacted example that keeps the shape and little else: a recognisable prefix and the last
 * characters for keys (AKIA************MPLE), first letters for emails (j***@e******.com),
 * last digits for cards. Same length as the value, so it can replace it in place.
 */
export function redactValue(type: string, value: string): string {
  const star = (s: string): string => s.replace(/[^\s\-.@:/]/g, '*');
  if (type === 'private_key') {
    const header = /^-----BEGIN [A-Z ]{0,30}-----/.exec(value)?.[0] ?? '';
    return header + value.slice(header.length).replace(/[^\s-]/g, '*');
  }
  if (type === 'email_address') {
    const at = value.indexOf('@');
    const local = value.slice(0, at);
    const domain = value.slice(at + 1);
    const dot = domain.lastIndexOf('.');
    return `${local[0]}${'*'.repeat(local.length - 1)}@${domain[0]}${'*'.repeat(Math.max(0, dot - 1))}${domain.slice(dot)}`;
  }
  if (type === 'payment_card' || type === 'iban' || type === 'phone_number') {
    const keep = type === 'iban' ? 2 : 0;
    const lastDigits = 4;
    let digitsSeen = 0;
    const total = value.replace(/[^A-Za-z0-9]/g, '').length;
    let out = '';
    for (const ch of value) {
      if (/[A-Za-z0-9]/.test(ch)) {
        digitsSeen++;
        out += digitsSeen <= keep || digitsSeen > total - lastDigits ? ch : '*';
      } else {
        out += ch;
      }
    }
    return out;
  }
  if (type === 'us_ssn' || type === 'uk_nino' || type === 'es_dni' || type === 'nl_bsn') {
    return star(value.slice(0, -2)) + value.slice(-2);
  }
  if (value.length >= 16) {
    const keep = value.length >= 20 ? 4 : 2;
    return value.slice(0, keep) + '*'.repeat(value.length - 2 * keep) + value.slice(-keep);
  }
  if (value.length >= 8) return value.slice(0, 1) + '*'.repeat(value.length - 1);
  return '*'.repeat(value.length);
}

/** Pure base64 lines (PEM bodies, key material) are masked even without a recognisable header. */
const KEY_MATERIAL_LINE = /(?<=^|\n)[ \t]{0,8}[A-Za-z0-9+/]{60,200}={0,2}[ \t]{0,8}(?=\r?\n|$)/g;

/** The text with every detected secret or personal value replaced by its redacted form. */
export function maskSecrets(text: string): string {
  const hits = findSensitive(text);
  let out = '';
  let pos = 0;
  for (const h of hits) {
    out += text.slice(pos, h.start) + redactValue(h.type, h.value);
    pos = h.end;
  }
  out += text.slice(pos);
  // The same value may recur nearby without the context that identified it (a key id echoed
  // in a URL): mask every occurrence, not only the recognised one.
  for (const h of hits) {
    if (h.value.length >= 6 && out.includes(h.value)) out = out.split(h.value).join(redactValue(h.type, h.value));
  }
  return out.replace(KEY_MATERIAL_LINE, (m) => m.replace(/[A-Za-z0-9+/=]/g, '*'));
}
