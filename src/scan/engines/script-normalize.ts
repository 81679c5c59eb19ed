/**
 * Undoes the cheap obfuscations scripts use to hide a technique from literal matching, so the
 * technique rules (attack-techniques.ts) can be written once against plain commands:
 *
 *  - PowerShell backtick escapes inside words (`I`E`X`), caret escapes in cmd (`p^ow^ershell`);
 *  - string concatenation of literals ('Down'+'loadString', "a" & "b", "a"."b") and the
 *    PowerShell format operator ("{1}{0}" -f 'EX','I');
 *  - characters indexed out of host-constant values ($PSHome[21]+$PSHome[30]+'x');
 *  - character-code arrays ([char]73+[char]69+[char]88, String.fromCharCode(73,69,88), Chr(73) & ..);
 *  - base64 given to -EncodedCommand (UTF-16LE), FromBase64String, atob, b64decode, `base64 -d`;
 *  - simple variable indirection ($c = New-Object Net.WebClient; ... $c.DownloadString(..)),
 *    one level deep, for PowerShell and POSIX shells;
 *  - case and runs of whitespace.
 *
 * Every loop is bounded and every pattern is linear (literal-anchored, bounded quantifiers).
 * The result is a list of views; rules run on each.
 */

/** One normalised reading of a script, lower-cased, whitespace runs collapsed to one space. */
export interface ScriptView {
  /** How the view was obtained: 'plain', 'deobfuscated', 'base64', 'encodedcommand', ... */
  via: string;
  text: string;
}

const MAX_VIEWS = 24;
const MAX_DECODED_TOTAL = 4 * 1024 * 1024;
const MAX_VARS = 2000;

/** Lower case and whitespace runs (including newlines) kept as at most one space or newline. */
function squash(s: string): string {
  return s.toLowerCase().replace(/[ \t\f\v\u00a0]{2,}/g, ' ').replace(/\r\n?/g, '\n');
}

function removeEscapes(s: string): string {
  // PowerShell backticks and cmd carets between word characters carry no meaning there.
  return s.replace(/(?<=[A-Za-z0-9])[`^](?=[A-Za-z0-9])/g, '').replace(/(?<=[\s(])`(?=[A-Za-z])/g, '');
}

/** Joins adjacent string literals: 'a' + 'b' -> 'ab' (PowerShell, JS, Python, VBScript &, PHP .). */
function joinConcat(s: string): string {
  let prev = '';
  let cur = s;
  for (let i = 0; i < 6 && cur !== prev; i++) {
    prev = cur;
    cur = cur.replace(/(["'])([^"'\n]{0,400})\1\s{0,4}[+&.]\s{0,4}(["'])([^"'\n]{0,400})\3/g, (_m, q: string, a: string, _q2: string, b: string) => `${q}${a}${b}${q}`);
  }
  return cur;
}

function codeToChar(n: number): string {
  return n > 0 && n < 0x110000 ? String.fromCodePoint(n) : '';
}

/** Character-code sequences rebuilt into the string they spell. */
function charCodes(s: string): string {
  return s
    .replace(/(?:\[char\]\s{0,2}\(?\s{0,2}(?:0x[0-9a-f]{1,4}|\d{1,6})\s{0,2}\)?\s{0,2}[+,]?\s{0,2}){2,}/gi, (m) =>
      `'${[...m.matchAll(/(0x[0-9a-f]{1,4}|\d{1,6})/gi)].map((x) => codeToChar(Number(x[1]))).join('')}'`)
    .replace(/String\.fromCharCode\s{0,2}\(\s{0,2}((?:(?:0x[0-9a-f]{1,4}|\d{1,6})\s{0,2},?\s{0,2}){1,4000})\)/gi, (_m, list: string) =>
      `'${[...list.matchAll(/(0x[0-9a-f]{1,4}|\d{1,6})/gi)].map((x) => codeToChar(Number(x[1]))).join('')}'`)
    .replace(/(?:\bChrW?\$?\s{0,2}\(\s{0,2}\d{1,6}\s{0,2}\)\s{0,2}[&+]?\s{0,2}){2,}/gi, (m) =>
      `"${[...m.matchAll(/\((\s{0,2}\d{1,6})/g)].map((x) => codeToChar(Number(x[1]))).join('')}"`)
    .replace(/(?:\bchr\s{0,2}\(\s{0,2}\d{1,6}\s{0,2}\)\s{0,2}[+.]?\s{0,2}){2,}/g, (m) =>
      `'${[...m.matchAll(/\((\s{0,2}\d{1,6})/g)].map((x) => codeToChar(Number(x[1]))).join('')}'`)
    .replace(/\[char\[\]\]\s{0,2}\(?\s{0,2}((?:\d{1,6}\s{0,2},\s{0,2}){2,4000}\d{1,6})\s{0,2}\)?\s{0,2}-join\s{0,2}(["'])\2/gi, (_m, list: string) =>
      `'${list.split(',').map((x) => codeToChar(Number(x.trim()))).join('')}'`);
}

/**
 * PowerShell's format operator: "{1}{0}" -f 'EX','I' -> 'IEX'. Only literal format strings and
 * literal arguments are resolved; anything else is left as written.
 */
function formatOperator(s: string): string {
  return s.replace(/(["'])([^"'\n]{1,400})\1\s{0,4}-f\s{0,4}((?:["'][^"'\n]{0,400}["']\s{0,4},\s{0,4}){0,40}["'][^"'\n]{0,400}["'])/gi, (whole, _q: string, fmt: string, list: string) => {
    if (!/\{\d{1,2}\}/.test(fmt)) return whole;
    const args = [...list.matchAll(/["']([^"'\n]{0,400})["']/g)].map((x) => x[1]);
    return `'${fmt.replace(/\{(\d{1,2})\}/g, (m, i: string) => args[Number(i)] ?? m)}'`;
  });
}

/**
 * Characters picked out of PowerShell values that are the same on every Windows host, the usual
 * way to spell IEX without writing it ($PSHome[21]+$PSHome[30]+'x', $env:ComSpec[4,15,25]-join'').
 */
const CONSTANT_VALUES: Record<string, string> = {
  pshome: 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0',
  shellid: 'Microsoft.PowerShell',
  'env:comspec': 'C:\\WINDOWS\\system32\\cmd.exe',
  'env:public': 'C:\\Users\\Public',
  verbosepreference: 'SilentlyContinue',
};

function constantIndexing(s: string): string {
  return s.replace(/\$(pshome|shellid|env:comspec|env:public|verbosepreference)(?:\.tostring\(\))?\s{0,2}\[\s{0,2}(\d{1,2}(?:\s{0,2},\s{0,2}\d{1,2}){0,10})\s{0,2}\]/gi, (whole, name: string, list: string) => {
    const v = CONSTANT_VALUES[name.toLowerCase()];
    const chars = list.split(',').map((i) => v[Number(i.trim())] ?? '');
    return chars.includes('') ? whole : `'${chars.join('')}'`;
  });
}

/** Replaces `$name` uses by the simple value assigned to it earlier (one level, bounded). */
function substituteVariables(s: string): string {
  const vars = new Map<string, string>();
  // PowerShell: $name = value ; or newline. Shell: name=value / name="value".
  const assign = /(?:^|[;\n{(]\s{0,8})\$([A-Za-z_][\w:]{0,40})\s{0,4}=\s{0,4}([^;\n]{1,400})|(?:^|[;\n]\s{0,8})(?:export\s{1,4})?([A-Za-z_]\w{0,40})=(["']?)([^;\n"'` ]{1,400})\4(?=[;\n ]|$)/gm;
  let m: RegExpExecArray | null;
  while ((m = assign.exec(s)) !== null && vars.size < MAX_VARS) {
    if (m[1] !== undefined) vars.set(m[1].toLowerCase(), m[2].trim());
    else if (m[3] !== undefined) vars.set(m[3].toLowerCase(), m[5]);
  }
  if (vars.size === 0) return s;
  return s.replace(/\$\{?([A-Za-z_][\w:]{0,40})\}?/g, (whole, name: string, at: number, all: string) => {
    const v = vars.get(name.toLowerCase());
    if (v === undefined) return whole;
    // A string literal: quoted where it is concatenated ('Down'+$b), its text inside a string.
    const literal = /^(["'])([^"'\n]{0,400})\1$/.exec(v);
    if (literal) return /\+\s{0,4}$/.test(all.slice(Math.max(0, at - 6), at)) || /^\s{0,4}\+/.test(all.slice(at + whole.length, at + whole.length + 6)) ? v : literal[2];
    // A bare token stays bare (/dev/tcp/$h/$p); an expression keeps its grouping.
    return /^[\w.:/@-]{1,400}$/.test(v) ? v : `(${v})`;
  });
}

function printable(s: string): boolean {
  if (s.length < 4) return false;
  let ok = 0;
  const n = Math.min(s.length, 400);
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 9 || c === 10 || c === 13 || (c >= 32 && c < 127)) ok++;
  }
  return ok / n >= 0.95;
}

/** Base64 text as UTF-16LE (PowerShell) or UTF-8, whichever is readable; undefined otherwise. */
export function decodeBase64Text(b64: string): string | undefined {
  const raw = Buffer.from(b64.replace(/\s/g, ''), 'base64');
  if (raw.length < 4) return undefined;
  if (raw[1] === 0 && raw[3] === 0) {
    const u = raw.toString('utf16le');
    if (printable(u)) return u;
  }
  const a = raw.toString('utf8');
  return printable(a) ? a : undefined;
}

/** Base64 payloads found in places where scripts decode them, decoded. */
function encodedPayloads(s: string): Array<{ via: string; text: string }> {
  const out: Array<{ via: string; text: string }> = [];
  const sources: Array<[string, RegExp]> = [
    ['encodedcommand', /\s[-/](?:e|ec|en|enc|enco|encod|encode|encoded|encodedc\w{0,8}|encodedcommand)\s{1,8}["']?([A-Za-z0-9+/]{16,}={0,2})/gi],
    ['base64', /(?:FromBase64String|b64decode|base64_decode|atob|decodebytes|Base64\.decode64|DecodeBase64)\s{0,2}\(\s{0,2}(?:b?["'])([A-Za-z0-9+/\s]{16,}={0,2})["']/gi],
    ['base64', /(?:echo|printf)\s{1,4}(?:-n\s{1,4})?["']?([A-Za-z0-9+/]{16,}={0,2})["']?\s{0,4}\|\s{0,4}base64\s{1,4}(?:-d|--decode|-D)/gi],
    ['base64', /base64\s{1,4}(?:-d|--decode|-D)\s{0,4}<<<\s{0,4}["']?([A-Za-z0-9+/]{16,}={0,2})/gi],
  ];
  let total = 0;
  for (const [via, re] of sources) {
    let m: RegExpExecArray | null;
    while ((m = re.exec(s)) !== null && out.length < MAX_VIEWS) {
      const d = decodeBase64Text(m[1]);
      if (d === undefined) continue;
      total += d.length;
      if (total > MAX_DECODED_TOTAL) return out;
      out.push({ via, text: d });
    }
  }
  return out;
}

/**
 * Comment lines (#, //, REM, ::) and PowerShell <# #> blocks blanked: a command quoted in a
 * comment ("never run 'rm -rf /'") does not run. Shebangs stay.
 */
export function stripComments(text: string): string {
  let out = '';
  let pos = 0;
  for (;;) {
    const open = text.indexOf('<#', pos);
    if (open === -1) break;
    const close = text.indexOf('#>', open + 2);
    out += text.slice(pos, open);
    pos = close === -1 ? text.length : close + 2;
  }
  out += text.slice(pos);
  return out.replace(/^[ \t]{0,40}(?:#(?!!)|\/\/|rem\s|::)[^\n]{0,100000}$/gim, '');
}

/** Obfuscation undone (escapes, concatenation, char codes, variables), not yet lower-cased. */
export function deobfuscate(text: string): string {
  const once = substituteVariables(formatOperator(joinConcat(formatOperator(constantIndexing(charCodes(removeEscapes(text)))))));
  // Literals brought in by the substitution can be joined or formatted in their turn.
  return formatOperator(joinConcat(once));
}

/**
 * The views of a script the rules read: as written, deobfuscated, and every embedded base64
 * payload (deobfuscated too, two levels deep).
 */
/**
 * Above this many characters only the plain view (and the base64 payloads found in it) is built:
 * deobfuscation passes cost several times the text, and a multi-megabyte file is data or
 * generated code, not a hand-obfuscated launcher. Every character is still read by the rules.
 */
export const MAX_DEOBFUSCATE = 2 * 1024 * 1024;

/**
 * Word lists: a syntax highlighter's keywords (GeSHi's Windows API files, CodeMirror's and
 * Pygments' PowerShell modes), an API catalogue, a completion table. They name commands and APIs
 * without running them, so the rules read the text with them taken out:
 * - four or more quoted identifiers separated by commas (`'VirtualAlloc', 'CreateThread', ...`);
 * - seven or more bare words joined by `|` (a regex alternation: `iex|ihy|ii|ipal|...`);
 * - thirteen or more bare lower-case words in a row on one line (`h history icm iex ihy ...`), which
 *   no command line is (it has options, paths, quotes or operators) and prose is.
 * Code that calls or runs them (`VirtualAlloc(0, n, 0x3000, 0x40)`, `iex (iwr $u)`) is not a list.
 */
const WORD_LISTS = /(?:(["'])[a-z_][\w-]{0,60}\1\s{0,4},\s{0,4}){4,}|(?<![\w-])(?:[a-z_][\w-]{0,40}\|){6,}[a-z_][\w-]{0,40}|(?<![\w-])(?:[a-z]{1,12} ){12,}[a-z]{1,12}\b/gi;
export const withoutWordLists = (text: string): string => text.replace(WORD_LISTS, ' ');

export function scriptViews(source: string): ScriptView[] {
  const text = stripComments(source);
  const views: ScriptView[] = [{ via: 'plain', text: squash(text) }];
  if (text.length > MAX_DEOBFUSCATE) {
    for (const p of encodedPayloads(text)) views.push({ via: p.via, text: squash(p.text) });
    return views;
  }
  const seen = new Set<string>([views[0].text]);
  const add = (via: string, t: string): void => {
    const v = squash(t);
    if (views.length < MAX_VIEWS && !seen.has(v)) {
      seen.add(v);
      views.push({ via, text: v });
    }
  };
  const deob = deobfuscate(text);
  add('deobfuscated', deob);
  let frontier: Array<{ via: string; text: string }> = [{ via: '', text: deob }];
  for (let depth = 0; depth < 2 && frontier.length > 0; depth++) {
    const next: Array<{ via: string; text: string }> = [];
    for (const f of frontier) {
      for (const p of encodedPayloads(f.text)) {
        const via = f.via ? `${f.via}+${p.via}` : p.via;
        const d = deobfuscate(p.text);
        add(via, d);
        next.push({ via, text: d });
      }
    }
    frontier = next;
  }
  return views;
}
