/**
 * Undoing the encodings and look-alike tricks used to slip a prompt injection past filters.
 * The character folds keep one output code unit per input code unit where they can, so offsets
 * found in the folded text point at the same place in the original.
 */

/** Zero-width characters, soft hyphen, word joiners and BOM. */
export const ZERO_WIDTH = /[\u00AD\u180E\u200B-\u200D\u2060-\u2064\uFEFF]/g;
/** Bidirectional controls (LRM/RLM, embeddings, overrides, isolates). */
export const BIDI = /[\u200E\u200F\u061C\u202A-\u202E\u2066-\u2069]/g;

export function stripInvisible(text: string): string {
  return text.replace(ZERO_WIDTH, '').replace(BIDI, '');
}

export function hasFullwidth(text: string): boolean {
  return /[\uFF01-\uFF5E\u3000]/.test(text);
}

/** Full-width ASCII forms (U+FF01..U+FF5E) and the ideographic space to ASCII. */
export function foldFullwidth(text: string): string {
  return text.replace(/[\uFF01-\uFF5E\u3000]/g, (c) => (c === '\u3000' ? ' ' : String.fromCharCode(c.charCodeAt(0) - 0xfee0)));
}

const HOMOGLYPHS: Record<string, string> = {
  // Cyrillic
  '\u0430': 'a', '\u0435': 'e', '\u043E': 'o', '\u0440': 'p', '\u0441': 'c', '\u0443': 'y', '\u0445': 'x',
  '\u0456': 'i', '\u0458': 'j', '\u0455': 's', '\u0501': 'd', '\u043A': 'k', '\u04BB': 'h', '\u0457': 'i',
  '\u0410': 'A', '\u0412': 'B', '\u0415': 'E', '\u041A': 'K', '\u041C': 'M', '\u041D': 'H', '\u041E': 'O',
  '\u0420': 'P', '\u0421': 'C', '\u0422': 'T', '\u0425': 'X', '\u0406': 'I', '\u0408': 'J', '\u0405': 'S',
  '\u0423': 'Y', '\u04CF': 'l', '\u0491': 'r', '\u0433': 'r', '\u043F': 'n', '\u0442': 't', '\u0432': 'b',
  // Greek
  '\u03B1': 'a', '\u03BF': 'o', '\u03BD': 'v', '\u03C1': 'p', '\u03B9': 'i', '\u03BA': 'k', '\u03C4': 't',
  '\u03C5': 'u', '\u03B5': 'e', '\u0391': 'A', '\u0392': 'B', '\u0395': 'E', '\u0396': 'Z', '\u0397': 'H',
  '\u0399': 'I', '\u039A': 'K', '\u039C': 'M', '\u039D': 'N', '\u039F': 'O', '\u03A1': 'P', '\u03A4': 'T',
  '\u03A7': 'X', '\u03A5': 'Y', '\u03B3': 'y', '\u03C9': 'w', '\u03C7': 'x',
  // Latin look-alikes outside ASCII
  '\u0131': 'i', '\u2113': 'l', '\u0251': 'a', '\u0261': 'g', '\u01C0': 'l', '\u0269': 'i',
};
const HOMOGLYPH_RE = new RegExp(`[${Object.keys(HOMOGLYPHS).join('')}]`, 'g');

export function hasHomoglyphs(text: string): boolean {
  return /[\u0370-\u04FF\u0131\u2113\u0251\u0261\u01C0\u0269\u0501]/.test(text) && /[A-Za-z]/.test(text);
}

export function foldHomoglyphs(text: string): string {
  return text.replace(HOMOGLYPH_RE, (c) => HOMOGLYPHS[c] ?? c);
}

const LEET: Record<string, string> = { '0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', '$': 's', '!': 'i', '|': 'l', '8': 'b', '9': 'g' };
const LEET_CODES = new Map<number, number>(Object.entries(LEET).map(([k, v]) => [k.charCodeAt(0), v.charCodeAt(0)]));

function isAsciiLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** Builds a string from char codes in slices (String.fromCharCode has an argument limit). */
function fromCodes(codes: Uint16Array): string {
  let out = '';
  for (let i = 0; i < codes.length; i += 8192) out += String.fromCharCode(...codes.subarray(i, i + 8192));
  return out;
}

/**
 * Leetspeak to letters, only inside word-like runs (letters, digits, @$!|) of 2-40 characters
 * that mix letters with leet symbols, and only where the folded word is in `vocabulary` (the
 * words the rules look for), so "utf8" or "sha256" in ordinary text are left alone and the
 * rescan is skipped when nothing was folded. Same length as the input; undefined if unchanged.
 */
export function foldLeet(text: string, vocabulary: ReadonlySet<string>): string | undefined {
  let codes: Uint16Array | undefined;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (!isAsciiLetter(c) && !LEET_CODES.has(c) && !(c >= 48 && c <= 57)) {
      i++;
      continue;
    }
    let end = i;
    let letters = false;
    let leet = false;
    while (end < text.length) {
      const d = text.charCodeAt(end);
      if (isAsciiLetter(d)) letters = true;
      else if (LEET_CODES.has(d)) leet = true;
      else if (!(d >= 48 && d <= 57)) break;
      end++;
    }
    if (letters && leet && end - i >= 2 && end - i <= 40) {
      let folded = '';
      for (let j = i; j < end; j++) {
        const d = text.charCodeAt(j);
        const m = LEET_CODES.get(d);
        folded += String.fromCharCode(m !== undefined && d !== 50 && d !== 54 ? m : d).toLowerCase();
      }
      if (vocabulary.has(folded)) {
        if (!codes) {
          codes = new Uint16Array(text.length);
          for (let k = 0; k < text.length; k++) codes[k] = text.charCodeAt(k);
        }
        for (let j = i; j < end; j++) codes[j] = folded.charCodeAt(j - i);
      }
    }
    i = end;
  }
  return codes ? fromCodes(codes) : undefined;
}

export function hasLeet(text: string): boolean {
  return /[A-Za-z][0134579@$][A-Za-z0-9@$]|[0134579@$][A-Za-z]/.test(text);
}

export function rot13(text: string): string {
  const codes = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 65 && c <= 90) codes[i] = ((c - 65 + 13) % 26) + 65;
    else if (c >= 97 && c <= 122) codes[i] = ((c - 97 + 13) % 26) + 97;
    else codes[i] = c;
  }
  return fromCodes(codes);
}

export interface DecodedSegment {
  encoding: 'base64' | 'hex' | 'url' | 'html_entities' | 'unicode_escape';
  start: number;
  end: number;
  decoded: string;
}

/** Mostly printable text (so decoded binary such as hashes or images is ignored). */
export function isMostlyText(s: string): boolean {
  if (s.length < 6) return false;
  let printable = 0;
  let letters = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0xfffd) continue;
    if ((c >= 32 && c < 127) || c === 9 || c === 10 || c === 13 || c >= 160) printable++;
    if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) letters++;
  }
  // Two words in a row somewhere; the look-behind keeps this linear on long letter runs.
  return printable / s.length >= 0.92 && letters / s.length >= 0.5 && /(?<![a-z])[a-z]{2,40} [a-z]{2}/i.test(s);
}

const MAX_SEGMENTS = 2000;
const MAX_DECODED_TOTAL = 2_000_000;

/** Base64, hex, URL-encoded, HTML-entity and \\u-escaped segments that decode to readable text. */
export function decodeSegments(text: string): DecodedSegment[] {
  const out: DecodedSegment[] = [];
  let total = 0;
  const push = (seg: DecodedSegment): boolean => {
    if (!isMostlyText(seg.decoded)) return true;
    out.push(seg);
    total += seg.decoded.length;
    return out.length < MAX_SEGMENTS && total < MAX_DECODED_TOTAL;
  };
  const runs: Array<[DecodedSegment['encoding'], RegExp, (m: string) => string]> = [
    ['base64', /(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,100000}={0,2}(?![A-Za-z0-9+/=_-])/g, (m) => {
      const b = Buffer.from(m.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8');
      return b;
    }],
    ['hex', /(?:\\x[0-9a-fA-F]{2}){6,50000}/g, (m) => Buffer.from(m.replace(/\\x/g, ''), 'hex').toString('utf8')],
    ['hex', /(?<![0-9A-Za-z])(?:[0-9a-fA-F]{2}){12,50000}(?![0-9A-Za-z])/g, (m) => Buffer.from(m, 'hex').toString('utf8')],
    ['hex', /(?<![0-9A-Za-z])[0-9a-fA-F]{2}(?:[ :,][0-9a-fA-F]{2}){11,50000}(?![0-9A-Za-z])/g, (m) => Buffer.from(m.replace(/[ :,]/g, ''), 'hex').toString('utf8')],
    ['url', /(?<=^|\s)[^\s%]{0,400}(?:%[0-9a-fA-F]{2}[^\s%]{0,400}){3,20000}/g, (m) => {
      try {
        return decodeURIComponent(m.replace(/\+/g, ' '));
      } catch {
        return m.replace(/%([0-9a-fA-F]{2})/g, (_x, h: string) => String.fromCharCode(parseInt(h, 16)));
      }
    }],
    ['html_entities', /(?:&#x?[0-9a-fA-F]{1,6};[^&\n]{0,3}){4,20000}/g, (m) => m.replace(/&#(x?)([0-9a-fA-F]{1,6});/g, (_x, hex: string, v: string) => {
      const code = parseInt(v, hex ? 16 : 10);
      return code > 0 && code < 0x110000 ? String.fromCodePoint(code) : '';
    })],
    ['unicode_escape', /(?:\\u[0-9a-fA-F]{4}){4,20000}/g, (m) => m.replace(/\\u([0-9a-fA-F]{4})/g, (_x, h: string) => String.fromCharCode(parseInt(h, 16)))],
  ];
  for (const [encoding, re, decode] of runs) {
    re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(text)) !== null) {
      if (encoding === 'base64' && !(/[A-Z]/.test(m[0]) && /[a-z]/.test(m[0]))) continue;
      const decoded = decode(m[0]);
      if (decoded === m[0]) continue;
      if (!push({ encoding, start: m.index, end: m.index + m[0].length, decoded })) return out;
    }
  }
  return out;
}
