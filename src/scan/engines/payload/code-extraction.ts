/**
 * code_extraction: finds code inside a payload (markdown fences, HTML <script> and event
 * handlers, javascript: URLs, inline code spans, shell one-liners, and whole payloads that are
 * code by label or by language detection) and flags dangerous indicators inside that code.
 *
 * The indicator patterns run once over the whole (lower-cased) text; a match counts only when
 * it lies inside an extracted block, so prose that merely mentions "xmrig" is not flagged.
 * All patterns are literal-anchored with bounded quantifiers (linear; see bench/payload.ts).
 */
import { SEVERITY_RANK, type Engine, type EngineContext, type EngineOutput, type Finding, type ScanSubject, type Severity } from '../../types';
import { NeedleGate } from '../needle-index';
import { checkBudget, extensionOf, lowerSameLength, maxSeverity, payloadText, safeExcerpt, type BudgetSignal, deadlineSignal } from './text';

export type BlockSource =
  | 'markdown_fence' | 'html_script' | 'html_event_handler' | 'javascript_url'
  | 'inline_code' | 'shell_one_liner' | 'language_detected';

export interface CodeBlock {
  source: BlockSource;
  language: string;
  start: number;
  end: number;
}

export interface CodeMatch { indicator: string; excerpt: string }

export interface DangerBlock {
  source: BlockSource;
  language: string;
  indicators: string[];
  severity: Severity;
  excerpt: string;
}

export interface CodeExtractionReport {
  blocksFound: number;
  indicators: string[];
  matches: CodeMatch[];
  dangerBlocks: DangerBlock[];
}

interface Indicator {
  id: string;
  name: string;
  severity: Severity;
  needles: string[];
  patterns: RegExp[];
  /** Extra check on the matched (lower-cased) text. */
  accept?: (m: string) => boolean;
}

const SH = '(?:ba|z|k|da|fi)?sh';

export const INDICATORS: Indicator[] = [
  {
    id: 'reverse_shell', name: 'Reverse shell', severity: 'critical',
    needles: ['/dev/tcp', '/dev/udp', 'nc', 'socat', 'mkfifo', 'dup2', 'pty.spawn', 'tcpclient', 'fsockopen', 'socket', 'rsocket'],
    patterns: [
      /\/dev\/(?:tcp|udp)\/[a-z0-9.-]{1,253}\/\d{1,5}/g,
      new RegExp(`(?<![\\w.-])(?:nc|ncat|netcat|nc\\.exe|nc\\.traditional|nc\\.openbsd)(?:\\s[^\\n|;]{0,120}?)?\\s-[a-z]{0,4}[ec]\\s{1,3}(?:\\/bin\\/${SH}|${SH}|cmd(?:\\.exe)?|powershell(?:\\.exe)?)(?![\\w.])`, 'g'),
      /\bmkfifo\s[^\n]{0,120}?\b(?:nc|ncat|netcat|openssl\s{1,3}s_client)\s/g,
      /\bsocat\b[^\n]{0,200}?\bexec:[^\n]{0,40}?(?:sh|bash|cmd)/g,
      /\bos\.dup2\s{0,2}\(\s{0,2}[a-z_][\w.]{0,30}\.fileno\(\)/g,
      /\bpty\.spawn\s{0,2}\(\s{0,2}["']\/bin\/(?:ba|z)?sh/g,
      /net\.sockets\.tcpclient\s{0,3}\(\s{0,3}["'][^"'\n]{1,100}["']\s{0,3},\s{0,3}\d{1,5}\s{0,3}\)/g,
      /\bfsockopen\s{0,3}\([^\n]{0,200}?(?:exec|shell_exec|system|proc_open|passthru|popen)\s{0,3}\(/g,
      /\bperl\s{1,3}-e\s[^\n]{0,400}?\bsocket\s{0,2}\(/g,
      /\bruby\s{1,3}-rsocket\b/g,
    ],
  },
  {
    id: 'download_and_execute', name: 'Download and execute', severity: 'high',
    needles: ['curl', 'wget', 'iex', 'invoke-expression', 'certutil', 'bitsadmin', 'mshta', 'regsvr32', 'urlopen', 'requests.get'],
    patterns: [
      new RegExp(`\\b(?:curl|wget)\\b[^\\n|;&]{0,200}\\|\\s{0,4}(?:sudo\\s{1,4}(?:-[a-z]{1,3}\\s{1,4}){0,2})?(?:\\/bin\\/|\\/usr\\/bin\\/)?(?:${SH}|python[23]?|perl|ruby|node)\\b`, 'g'),
      new RegExp(`\\b(?:${SH})\\s{1,3}(?:-c\\s{1,3}["']?)?(?:<\\s{0,3}\\(|"?\\$\\()\\s{0,3}(?:curl|wget)\\b`, 'g'),
      /\beval\s{1,3}["']?\$\(\s{0,3}(?:curl|wget)\b/g,
      /\b(?:curl|wget)\b[^\n>]{0,200}?(?:\s-o|\s-o-|--output|>)\s{0,3}[^\s;&|]{1,200}\s{0,3}(?:&&|;)\s{0,3}(?:chmod\s{1,3}\+?[0-7a-z+]{1,4}\s{1,3}[^\s;&|]{1,200}\s{0,3}(?:&&|;)\s{0,3})?(?:\.\/|(?:ba)?sh\s|\/tmp\/)/g,
      /\b(?:iex|invoke-expression)\b[^\n]{0,200}?(?:downloadstring|downloaddata|invoke-webrequest|invoke-restmethod|\biwr\b|\birm\b)/g,
      /(?:downloadstring|invoke-webrequest|invoke-restmethod|\biwr\b|\birm\b)[^\n]{0,300}?\|\s{0,3}(?:iex|invoke-expression)\b/g,
      /\bcertutil(?:\.exe)?\s[^\n]{0,100}?-urlcache[^\n]{0,100}?\shttps?:/g,
      /\bbitsadmin(?:\.exe)?\s[^\n]{0,60}?\/transfer\b/g,
      /\bmshta(?:\.exe)?\s{1,3}["']?(?:https?|vbscript|javascript):/g,
      /\bregsvr32(?:\.exe)?\s[^\n]{0,60}?\/i:https?:/g,
      /\b(?:exec|eval)\s{0,3}\(\s{0,3}(?:urllib2?\.(?:request\.)?urlopen|urlopen|requests\.get)\s{0,3}\(/g,
    ],
  },
  {
    id: 'destructive_command', name: 'Destructive command', severity: 'critical',
    needles: ['rm ', 'mkfs', 'dd ', 'format', ':(){', '/dev/', 'del ', 'rd ', 'remove-item', 'vssadmin', 'chmod', 'wbadmin', 'bcdedit'],
    patterns: [
      /\brm\s{1,3}((?:-{1,2}[a-z-]{1,30}\s{1,3}){1,4})(?:\/\*?|~\/?|\$home\/?|\/\s{1,3}--no-preserve-root)(?![\w.\/-])/g,
      /\bmkfs(?:\.[a-z0-9]{2,8})?\s{1,3}(?:-[a-z]{1,3}\s{1,3}(?:[^\s]{1,20}\s{1,3})?){0,3}\/dev\//g,
      /\bdd\s[^\n]{0,200}?\bof=\/dev\/(?:sd[a-z]|hd[a-z]|nvme\d|xvd[a-z]|vd[a-z]|disk\d|mmcblk\d|da\d|rdisk\d)/g,
      /(?<![\w.-])format(?:\.com|\.exe)?\s{1,3}[a-z]:(?=[\s\/"'`;&|)]|$)/g,
      /:\(\)\s{0,2}\{\s{0,2}:\s{0,2}\|\s{0,2}:\s{0,2}&\s{0,2}\}\s{0,2};\s{0,2}:/g,
      /(?:>|\bshred\s[^\n]{0,80}?)\s{0,2}\/dev\/(?:sd[a-z]|nvme\d|hd[a-z])\b/g,
      /\bdel\s{1,3}(?:\/[a-z]\s{1,3}){1,4}[a-z]:\\\*?(?=[\s"'`;&|)]|$)/g,
      /\b(?:rd|rmdir)\s{1,3}\/s\s{1,3}\/q\s{1,3}[a-z]:\\(?:windows)?(?=[\s"'`;&|)]|$)/g,
      /\bremove-item\b[^\n]{0,120}?-recurse[^\n]{0,120}?\s["']?[a-z]:\\\*?["']?(?=[\s"'`;&|)]|$)/g,
      /\bremove-item\b[^\n]{0,60}?\s["']?[a-z]:\\\*?["']?\s[^\n]{0,60}?-recurse\b/g,
      /\bvssadmin(?:\.exe)?\s{1,3}delete\s{1,3}shadows/g,
      /\bwbadmin(?:\.exe)?\s{1,3}delete\s{1,3}catalog/g,
      /\bchmod\s{1,3}-r\s{1,3}(?:0?777|a\+rwx)\s{1,3}\/(?=[\s"'`;&|)]|$)/g,
    ],
    accept: (m) => {
      if (!m.startsWith('rm')) return true;
      const flags = /^rm\s{1,3}((?:-{1,2}[a-z-]{1,30}\s{1,3}){1,4})/.exec(m)?.[1] ?? '';
      const shortFlags = flags.split(/\s+/).filter((f) => /^-[a-z]+$/.test(f)).join('');
      const recursive = /r/.test(shortFlags) || /--recursive/.test(flags);
      const force = /f/.test(shortFlags) || /--force/.test(flags);
      return recursive && force;
    },
  },
  {
    id: 'eval_decoded_data', name: 'Eval/exec of decoded data', severity: 'high',
    needles: ['eval', 'exec', 'function', 'base64', 'frombase64string', 'assert'],
    patterns: [
      /\beval\s{0,3}\(\s{0,3}(?:window\.)?(?:atob|base64_decode|gzinflate|gzuncompress|str_rot13|unescape|decodeuricomponent|string\.fromcharcode|buffer\.from)\s{0,3}\(/g,
      /\bnew\s{1,3}function\s{0,3}\(\s{0,3}(?:atob|unescape|decodeuricomponent)\s{0,3}\(/g,
      /\b(?:exec|eval)\s{0,3}\(\s{0,3}(?:base64\.b64decode|base64\.decodebytes|base64\.b32decode|codecs\.decode|zlib\.decompress|bytes\.fromhex|marshal\.loads|__import__\(\s{0,2}["'](?:base64|zlib|codecs))/g,
      /\b(?:exec|eval)\s{0,3}\(\s{0,3}compile\s{0,3}\(\s{0,3}(?:base64|zlib|codecs)/g,
      new RegExp(`\\bbase64\\s{1,3}(?:-d|--decode|-di|-id|-d\\s{1,3}-i)\\b[^\\n|]{0,100}\\|\\s{0,3}(?:sudo\\s{1,3})?(?:${SH}|python[23]?|perl)\\b`, 'g'),
      /\b(?:iex|invoke-expression)\b[^\n]{0,200}?frombase64string/g,
      /frombase64string[^\n]{0,300}?\|\s{0,3}(?:iex|invoke-expression)\b/g,
      /\b(?:system|assert|passthru|shell_exec)\s{0,3}\(\s{0,3}(?:base64_decode|gzinflate|str_rot13)\s{0,3}\(/g,
    ],
  },
  {
    id: 'powershell_encoded_command', name: 'PowerShell -EncodedCommand', severity: 'high',
    needles: ['powershell', 'pwsh'],
    patterns: [
      /\b(?:powershell|pwsh)(?:\.exe)?\b[^\n]{0,200}?\s[-\/](?:e|ec|en|enc|enco|encod|encode|encoded|encodedc|encodedco|encodedcom|encodedcomm|encodedcomma|encodedcomman|encodedcommand)\s{1,3}["']?[a-z0-9+\/]{16,10000}={0,2}/g,
    ],
  },
  {
    id: 'credential_file_access', name: 'Credential file access', severity: 'high',
    needles: ['.ssh', '/etc/shadow', '/etc/gshadow', '/etc/sudoers', '.aws', '.kube', '.docker', '.git-credentials', '.netrc', 'gcloud', 'mimikatz', 'sekurlsa', 'lsass', 'find-generic-password', 'login data', 'key4.db', '.azure'],
    patterns: [
      /\.ssh[\/\\](?:id_(?:rsa|dsa|ecdsa|ed25519)(?![\w.])|authorized_keys\b)/g,
      /\/etc\/(?:shadow|gshadow|sudoers)\b/g,
      /\.aws[\/\\]credentials\b/g,
      /\.kube[\/\\]config\b/g,
      /\.docker[\/\\]config\.json\b/g,
      /\.git-credentials\b/g,
      /(?:~|\$home|\/root|\/home\/[a-z0-9_.-]{1,32})\/\.netrc\b/g,
      /\.config[\/\\]gcloud[\/\\](?:credentials\.db|application_default_credentials\.json|access_tokens\.db)/g,
      /\.azure[\/\\](?:accesstokens\.json|msal_token_cache)/g,
      /\bmimikatz\b|\bsekurlsa::/g,
      /\b(?:procdump(?:64)?(?:\.exe)?\s[^\n]{0,60}?lsass|comsvcs(?:\.dll)?[^\n]{0,60}?minidump)/g,
      /\bsecurity\s{1,3}find-generic-password\b/g,
      /(?:chrome|chromium|edge)[^\n]{0,80}?[\/\\]login data\b/g,
    ],
  },
  {
    id: 'crypto_mining', name: 'Crypto-mining', severity: 'high',
    needles: ['stratum+', 'xmrig', 'minerd', 'cpuminer', 'cryptonight', 'coinhive', 'donate-level', 'nicehash', 'xmr-stak', 'minexmr', 'supportxmr', 'nanopool', '2miners'],
    patterns: [
      /stratum\+(?:tcp|ssl|tls):\/\//g,
      /\b(?:xmrig|minerd|cpuminer|xmr-stak|coinhive)\b/g,
      /\bcryptonight\b|--donate-level\b|\bnicehash\b/g,
      /\b(?:pool\.)?(?:minexmr\.com|supportxmr\.com|nanopool\.org|2miners\.com)\b/g,
    ],
  },
];

const CODE_EXT: Record<string, string> = {
  py: 'python', js: 'javascript', mjs: 'javascript', cjs: 'javascript', ts: 'typescript', tsx: 'typescript', jsx: 'javascript',
  sh: 'shell', bash: 'shell', zsh: 'shell', ps1: 'powershell', psm1: 'powershell', psd1: 'powershell', bat: 'batch', cmd: 'batch',
  vbs: 'vbscript', php: 'php', rb: 'ruby', pl: 'perl', go: 'go', rs: 'rust', java: 'java', c: 'c', cpp: 'cpp', cs: 'csharp',
  lua: 'lua', r: 'r', sql: 'sql', swift: 'swift', kt: 'kotlin',
};

const COMMAND_WORDS = new Set([
  'curl', 'wget', 'bash', 'sh', 'zsh', 'sudo', 'rm', 'chmod', 'chown', 'powershell', 'powershell.exe', 'pwsh', 'iex',
  'invoke-expression', 'invoke-webrequest', 'iwr', 'nc', 'ncat', 'netcat', 'socat', 'python', 'python3', 'perl', 'php', 'ruby',
  'node', 'certutil', 'certutil.exe', 'bitsadmin', 'mshta', 'regsvr32', 'dd', 'mkfs', 'format', 'echo', 'base64', 'eval',
  'exec', 'mkfifo', 'cmd', 'cmd.exe', 'wmic', 'reg', 'schtasks', 'crontab', 'scp', 'rsync', 'ssh', 'cat', 'del', 'rd',
  'remove-item', 'xmrig', 'vssadmin', 'apt', 'apt-get', 'yum', 'pip', 'npm', 'npx', 'git', 'docker', 'kubectl', 'export',
  'set', 'tar', 'unzip', 'nohup', 'shred', 'systemctl', 'start-process', 'new-object', 'mimikatz', 'procdump', 'security',
  'invoke-mimikatz', 'invoke-restmethod', 'irm', 'mkfs', 'minerd', 'cpuminer', 'exec', 'ruby', 'wsl', 'msiexec', 'rundll32',
]);

const CODE_LINE = /^\s{0,40}(?:import\s|from\s\S{1,80}\simport\s|def\s|class\s|function\b|const\s|let\s|var\s|#include|package\s|using\s|public\s|private\s|if\s{0,2}\(|for\s{0,2}\(|while\s{0,2}\(|return\b|echo\s|export\s|\$[a-z_][\w:]{0,40}\s{0,2}=|<\?php|@echo\s|[}{\])]|[\w.$]{1,60}\([^\n]{0,200}\)\s{0,2}[;{]?\s{0,2}$|#!\/)/i;

function languageOf(code: string, hint = ''): string {
  const h = hint.toLowerCase();
  if (h) {
    if (CODE_EXT[h]) return CODE_EXT[h];
    if (['shell', 'bash', 'sh', 'zsh', 'console', 'shell-session'].includes(h)) return 'shell';
    if (['powershell', 'ps', 'pwsh', 'ps1'].includes(h)) return 'powershell';
    if (['python', 'py', 'python3'].includes(h)) return 'python';
    if (['javascript', 'js', 'node', 'typescript', 'ts'].includes(h)) return 'javascript';
    if (/^[a-z0-9+#-]{1,20}$/.test(h)) return h;
  }
  const head = code.slice(0, 4000);
  if (/^#!\s{0,2}\S{0,30}(?:bash|sh|zsh)\b/.test(head)) return 'shell';
  if (/^#!\s{0,2}\S{0,30}python/.test(head)) return 'python';
  if (/<\?php/i.test(head)) return 'php';
  if (/\$env:|\b(?:invoke-|new-object|get-childitem|set-executionpolicy|write-host)/i.test(head)) return 'powershell';
  if (/^\s{0,8}@echo\s+off/im.test(head)) return 'batch';
  if (/^\s{0,8}(?:def |import |from \S{1,80} import )|print\(/m.test(head)) return 'python';
  if (/\b(?:function|const|let|var|require\(|=>|document\.|window\.)/.test(head)) return 'javascript';
  if (/^\s{0,8}(?:\$ )?(?:sudo|curl|wget|echo|export|chmod|apt-get|cd|ls|rm)\s/m.test(head)) return 'shell';
  return 'text';
}

/** True when the text as a whole reads as source code rather than prose. */
function looksLikeCode(text: string): boolean {
  let lines = 0;
  let code = 0;
  let pos = 0;
  while (pos < text.length && lines < 400) {
    let nl = text.indexOf('\n', pos);
    if (nl === -1) nl = text.length;
    const line = text.slice(pos, Math.min(nl, pos + 400));
    pos = nl + 1;
    if (line.trim() === '') continue;
    lines++;
    if (CODE_LINE.test(line) || /;\s*$/.test(line)) code++;
  }
  return lines >= 2 && code / lines >= 0.4;
}

const PROMPT_PREFIX = /^\s{0,12}(?:[-*]\s{1,3}|\d{1,2}\.\s{1,3})?(?:[A-Za-z][\w ,'()-]{0,40}:\s{1,4})?(?:\$(?=\s)|#|>|PS[^>\n]{0,60}>|C:\\[^>\n]{0,60}>)?\s{0,4}/;

function firstWord(line: string): string {
  const rest = line.slice(PROMPT_PREFIX.exec(line)?.[0].length ?? 0);
  const m = /^(?:\$[A-Za-z_]\w{0,30}\s{0,2}=\s{0,2})?(?:sudo\s{1,3})?\(?\s{0,2}([A-Za-z][\w.-]{0,40}|\.{0,2}\/[\w.\/-]{1,80})/.exec(rest);
  if (!m) return '';
  const w = m[1].toLowerCase();
  if (w.startsWith('/') || w.startsWith('./') || w.startsWith('../')) return 'exec';
  return COMMAND_WORDS.has(w) ? w : w.replace(/\.[a-z0-9]{1,8}$/, '');
}

/** Command separators after which a new command (and its first word) starts. */
const SEPARATOR = /;|&&|\|\||\|/g;
const MAX_SEGMENTS_PER_LINE = 1000;

/**
 * True when a line (or any command after a `;`, `&&`, `||` or `|` on it) starts with a known
 * command, or pipes into a shell. The whole line is read however long it is: padding a command
 * with thousands of characters must not push it out of sight.
 */
function isCommandLine(head: string, text: string, lower: string, pos: number, nl: number): boolean {
  const w = firstWord(head);
  if (w && COMMAND_WORDS.has(w) && /[-|\/>;&$]/.test(head) && nl - pos < 1000) return true;
  const full = lower.slice(pos, nl);
  if (/\|\s{0,3}(?:sudo\s{1,3})?(?:ba|z)?sh\b|\|\s{0,3}iex\b/.test(full)) return true;
  if (nl - pos < 1000) return false;
  SEPARATOR.lastIndex = 0;
  let n = 0;
  let m: RegExpExecArray | null;
  while ((m = SEPARATOR.exec(full)) !== null && n++ < MAX_SEGMENTS_PER_LINE) {
    const start = m.index + m[0].length;
    const seg = text.slice(pos + start, Math.min(nl, pos + start + 1000));
    const sw = firstWord(seg);
    if (sw && COMMAND_WORDS.has(sw) && /[-|\/>;&$]/.test(seg)) return true;
  }
  return false;
}

export function extractBlocks(text: string, name: string, lower: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const ext = extensionOf(name);
  if (CODE_EXT[ext]) {
    blocks.push({ source: 'language_detected', language: CODE_EXT[ext], start: 0, end: text.length });
    return blocks;
  }
  const isHtml = ext === 'html' || ext === 'htm' || lower.includes('<script') || /<[a-z]{1,10}[^>\n]{0,200}\son[a-z]{3,20}\s{0,3}=/.test(lower.slice(0, 200_000));

  // Markdown fences and line-based one-liners, in one pass over lines.
  const outside: Array<[number, number]> = [];
  let pos = 0;
  let fence: { marker: string; start: number; lang: string } | undefined;
  while (pos <= text.length) {
    let nl = text.indexOf('\n', pos);
    if (nl === -1) nl = text.length;
    if (nl === pos) {
      // Empty line: nothing to extract, and it cannot open or close a fence.
      if (nl >= text.length) break;
      pos = nl + 1;
      continue;
    }
    const line = text.slice(pos, Math.min(nl, pos + 2000));
    const fm = /^\s{0,3}(`{3,}|~{3,})\s{0,4}([\w+#.-]{0,30})/.exec(line);
    if (fence) {
      if (fm && fm[1][0] === fence.marker[0] && fm[1].length >= fence.marker.length && fm[2] === '') {
        blocks.push({ source: 'markdown_fence', language: '', start: fence.start, end: pos });
        const b = blocks[blocks.length - 1];
        b.language = languageOf(text.slice(b.start, Math.min(b.end, b.start + 4000)), fence.lang);
        fence = undefined;
      }
    } else if (fm) {
      fence = { marker: fm[1], start: nl + 1, lang: fm[2] };
    } else {
      outside.push([pos, nl]);
      if (isCommandLine(line, text, lower, pos, nl)) blocks.push({ source: 'shell_one_liner', language: 'shell', start: pos, end: nl });
    }
    if (nl >= text.length) break;
    pos = nl + 1;
  }
  if (fence) blocks.push({ source: 'markdown_fence', language: languageOf(text.slice(fence.start, fence.start + 4000), fence.lang), start: fence.start, end: text.length });

  // Inline code spans `...` on prose lines.
  // The next backtick is looked up once and reused across lines (an indexOf per line would
  // rescan the rest of the payload for every line that has none).
  let nextTick = -2;
  for (const [s, e] of outside) {
    if (nextTick !== -1 && nextTick < s) nextTick = text.indexOf('`', s);
    if (nextTick === -1) break;
    if (nextTick >= e) continue;
    let i = nextTick;
    while (i !== -1 && i < e) {
      const j = text.indexOf('`', i + 1);
      if (j === -1 || j >= e) break;
      if (j - i > 3 && j - i < 600) {
        const code = text.slice(i + 1, j);
        const w = firstWord(code);
        if (COMMAND_WORDS.has(w) || /[|;&$(){}]|\/dev\/|\.ssh|stratum/.test(code)) {
          blocks.push({ source: 'inline_code', language: languageOf(code), start: i + 1, end: j });
        }
      }
      i = text.indexOf('`', j + 1);
    }
  }

  if (isHtml) {
    let i = lower.indexOf('<script');
    while (i !== -1) {
      const open = lower.indexOf('>', i);
      if (open === -1) break;
      let close = lower.indexOf('</script', open);
      if (close === -1) close = text.length;
      if (close > open + 1) blocks.push({ source: 'html_script', language: 'javascript', start: open + 1, end: close });
      i = lower.indexOf('<script', close);
    }
    const handler = /(?<![\w-])on[a-z]{3,20}\s{0,3}=\s{0,3}(?:"([^"]{1,2000})"|'([^']{1,2000})')/g;
    let m: RegExpExecArray | null;
    while ((m = handler.exec(lower)) !== null) {
      const body = m[1] ?? m[2] ?? '';
      const start = m.index + m[0].length - body.length - 1;
      blocks.push({ source: 'html_event_handler', language: 'javascript', start, end: start + body.length });
    }
    const jsUrl = /(?:href|src|action)\s{0,3}=\s{0,3}["']\s{0,3}javascript:([^"']{1,2000})/g;
    while ((m = jsUrl.exec(lower)) !== null) {
      const start = m.index + m[0].length - m[1].length;
      blocks.push({ source: 'javascript_url', language: 'javascript', start, end: start + m[1].length });
    }
  }

  if (blocks.length === 0 && looksLikeCode(text)) {
    blocks.push({ source: 'language_detected', language: languageOf(text), start: 0, end: text.length });
  }
  return blocks;
}

interface IndicatorHit { indicator: Indicator; start: number; end: number }

/** The indicators' needles in one automaton (one pass per text instead of an `includes` per needle). */
const INDICATOR_NEEDLES = new NeedleGate(INDICATORS);

function findIndicators(lower: string, signal?: BudgetSignal): IndicatorHit[] {
  const hits: IndicatorHit[] = [];
  const hasNeedle = INDICATOR_NEEDLES.in(lower);
  for (const ind of INDICATORS) {
    checkBudget(signal);
    if (!hasNeedle(ind)) continue;
    for (const re of ind.patterns) {
      re.lastIndex = 0;
      let m: RegExpExecArray | null;
      let perPattern = 0;
      while ((m = re.exec(lower)) !== null && perPattern < 1000) {
        if (m[0].length === 0) {
          re.lastIndex++;
          continue;
        }
        if (ind.accept && !ind.accept(m[0])) continue;
        hits.push({ indicator: ind, start: m.index, end: m.index + m[0].length });
        perPattern++;
      }
    }
  }
  return hits.sort((a, b) => a.start - b.start);
}

export function analyzeCode(text: string, name: string, signal?: BudgetSignal): CodeExtractionReport {
  const lower = lowerSameLength(text);
  const blocks = extractBlocks(text, name, lower);
  checkBudget(signal);
  const hits = findIndicators(lower, signal);
  const sortedBlocks = [...blocks].sort((a, b) => a.start - b.start);
  // Prefix maximum of block ends lets each hit find a containing block by binary search.
  const maxEnd: number[] = [];
  for (let i = 0; i < sortedBlocks.length; i++) maxEnd[i] = Math.max(sortedBlocks[i].end, i > 0 ? maxEnd[i - 1] : 0);

  const blockHits = new Map<CodeBlock, Set<Indicator>>();
  const matches: CodeMatch[] = [];
  const perIndicator = new Map<string, number>();
  for (const h of hits) {
    let lo = 0;
    let hi = sortedBlocks.length - 1;
    let idx = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (sortedBlocks[mid].start <= h.start) {
        idx = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (idx === -1 || maxEnd[idx] < h.end) continue;
    let block: CodeBlock | undefined;
    for (let k = idx; k >= 0 && maxEnd[k] >= h.end; k--) {
      if (sortedBlocks[k].end >= h.end) {
        block = sortedBlocks[k];
        break;
      }
    }
    if (!block) continue;
    const set = blockHits.get(block) ?? new Set<Indicator>();
    set.add(h.indicator);
    blockHits.set(block, set);
    const n = perIndicator.get(h.indicator.id) ?? 0;
    if (n < 5 && matches.length < 25) {
      matches.push({ indicator: h.indicator.id, excerpt: safeExcerpt(text, h.start, h.end, 20) });
    }
    perIndicator.set(h.indicator.id, n + 1);
  }

  const dangerBlocks: DangerBlock[] = [];
  for (const [block, set] of blockHits) {
    if (dangerBlocks.length >= 20) break;
    const inds = [...set];
    dangerBlocks.push({
      source: block.source,
      language: block.language,
      indicators: inds.map((i) => i.id),
      severity: maxSeverity(inds.map((i) => i.severity)) ?? 'info',
      excerpt: safeExcerpt(text, block.start, Math.min(block.end, block.start + 160), 0),
    });
  }
  dangerBlocks.sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity]);
  return {
    blocksFound: blocks.length,
    indicators: INDICATORS.filter((i) => perIndicator.has(i.id)).map((i) => i.id),
    matches,
    dangerBlocks,
  };
}

function toFindings(report: CodeExtractionReport): Finding[] {
  return report.indicators.map((id) => {
    const ind = INDICATORS.find((i) => i.id === id) as Indicator;
    const first = report.matches.find((m) => m.indicator === id);
    return {
      id: `payload.code.${id}`,
      name: ind.name,
      severity: ind.severity,
      confidence: 0.85,
      category: 'embedded-code',
      description: `Embedded code contains ${ind.name.toLowerCase()}.`,
      excerpt: first?.excerpt,
    };
  });
}

export const codeExtractionEngine: Engine = {
  name: 'code_extraction',
  async scan(subject: ScanSubject, ctx: EngineContext): Promise<EngineOutput> {
    const report = analyzeCode(payloadText(subject), subject.name, deadlineSignal(ctx));
    return { findings: toFindings(report), report: { codeExtraction: report } };
  },
};
