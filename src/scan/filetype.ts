/**
 * File-type identification from content: magic bytes and structure first, the name only as a
 * tie-breaker among text formats. Every type's media type, coverage and coverage note live in one
 * table (TYPE_INFO); the detectors are an ordered list (BINARY_DETECTORS, ZIP_KINDS, TEXT_RULES).
 */
import type { Coverage, FileType } from './types';
import { listZipEntries, type ZipListing } from './zip';

export interface FileTypeInfo {
  fileType: FileType;
  contentType: string;
  coverage: Coverage;
  coverageNote?: string;
  traits: Record<string, string | number | boolean>;
  /** For ZIP-based content: the entry listing read to classify it (null: unreadable), kept for the engines. */
  zip?: ZipListing | null;
}

interface TypeInfo {
  contentType: string;
  coverage: Coverage;
  label: string;
}

const MINIMAL_NOTE = 'pattern rules (YARA, ClamAV signatures) and threat feeds only; no dedicated ML model or static/behavioural analysis for this format';

/** Media type, coverage level (docs/contract.md §5 "Coverage") and a human label per file type. */
export const TYPE_INFO: Record<FileType, TypeInfo> = {
  pe: { contentType: 'application/vnd.microsoft.portable-executable', coverage: 'full', label: 'Windows executable' },
  elf: { contentType: 'application/x-elf', coverage: 'full', label: 'Linux binary' },
  macho: { contentType: 'application/x-mach-binary', coverage: 'minimal', label: 'Mach-O binary' },
  java_class: { contentType: 'application/java-vm', coverage: 'minimal', label: 'Java class' },
  jar: { contentType: 'application/java-archive', coverage: 'minimal', label: 'JAR' },
  apk: { contentType: 'application/vnd.android.package-archive', coverage: 'minimal', label: 'APK' },
  dex: { contentType: 'application/octet-stream', coverage: 'minimal', label: 'Dalvik executable' },
  zip: { contentType: 'application/zip', coverage: 'partial', label: 'ZIP archive' },
  '7z': { contentType: 'application/x-7z-compressed', coverage: 'partial', label: '7z archive' },
  rar: { contentType: 'application/vnd.rar', coverage: 'partial', label: 'RAR archive' },
  tar: { contentType: 'application/x-tar', coverage: 'partial', label: 'tar archive' },
  gzip: { contentType: 'application/gzip', coverage: 'partial', label: 'gzip stream' },
  office_ooxml: { contentType: 'application/vnd.openxmlformats-officedocument', coverage: 'partial', label: 'Office Open XML document' },
  office_ole: { contentType: 'application/x-ole-storage', coverage: 'partial', label: 'OLE Office document' },
  pdf: { contentType: 'application/pdf', coverage: 'partial', label: 'PDF' },
  powershell: { contentType: 'text/x-powershell', coverage: 'partial', label: 'PowerShell script' },
  javascript: { contentType: 'text/javascript', coverage: 'partial', label: 'JavaScript' },
  vbscript: { contentType: 'text/vbscript', coverage: 'partial', label: 'VBScript' },
  batch: { contentType: 'text/x-msdos-batch', coverage: 'partial', label: 'batch script' },
  shell: { contentType: 'text/x-shellscript', coverage: 'partial', label: 'shell script' },
  python: { contentType: 'text/x-python', coverage: 'partial', label: 'Python script' },
  php: { contentType: 'text/x-php', coverage: 'partial', label: 'PHP script' },
  html: { contentType: 'text/html', coverage: 'partial', label: 'HTML' },
  image: { contentType: 'application/octet-stream', coverage: 'partial', label: 'image' },
  text: { contentType: 'text/plain', coverage: 'partial', label: 'text' },
  unknown: { contentType: 'application/octet-stream', coverage: 'partial', label: 'unrecognised content' },
};

export function coverageNoteFor(fileType: FileType): string | undefined {
  const info = TYPE_INFO[fileType];
  if (info.coverage === 'full') return undefined;
  if (info.coverage === 'minimal') return `${info.label}: ${MINIMAL_NOTE}.`;
  // The ml engine runs the general script-text model on every partial type (archives: on each member).
  return `${info.label}: the ML model is the general script-text model, not one built for this format; it ran beside signatures, threat feeds and format rules, and detection varies with language and obfuscation.`;
}

type Traits = Record<string, string | number | boolean>;
interface Detected { fileType: FileType; contentType?: string; traits?: Traits; zip?: ZipListing | null }

const startsWith = (b: Buffer, sig: number[], at = 0): boolean =>
  b.length >= at + sig.length && sig.every((v, i) => b[at + i] === v);

function detectPe(b: Buffer): Detected | null {
  if (!startsWith(b, [0x4d, 0x5a]) || b.length < 0x40) return null;
  const peOff = b.readUInt32LE(0x3c);
  if (peOff + 24 > b.length || !startsWith(b, [0x50, 0x45, 0, 0], peOff)) return null;
  const traits: Traits = {};
  const machine = b.readUInt16LE(peOff + 4);
  const characteristics = b.readUInt16LE(peOff + 22);
  traits.machine = machine === 0x8664 ? 'x64' : machine === 0x14c ? 'x86' : machine === 0xaa64 ? 'arm64' : `0x${machine.toString(16)}`;
  if (characteristics & 0x2000) traits.dll = true;
  const opt = peOff + 24;
  if (opt + 2 <= b.length) {
    const magic = b.readUInt16LE(opt);
    const dirs = magic === 0x20b ? opt + 112 : magic === 0x10b ? opt + 96 : -1;
    const clr = dirs + 14 * 8;
    if (dirs > 0 && clr + 8 <= b.length && b.readUInt32LE(clr) !== 0 && b.readUInt32LE(clr + 4) !== 0) {
      traits.dotnet = true;
    }
  }
  return { fileType: 'pe', traits };
}

function detectMacho(b: Buffer): Detected | null {
  const thin: Array<[number[], Traits]> = [
    [[0xfe, 0xed, 0xfa, 0xce], { bits: 32 }], [[0xce, 0xfa, 0xed, 0xfe], { bits: 32 }],
    [[0xfe, 0xed, 0xfa, 0xcf], { bits: 64 }], [[0xcf, 0xfa, 0xed, 0xfe], { bits: 64 }],
  ];
  for (const [sig, traits] of thin) if (startsWith(b, sig)) return { fileType: 'macho', traits };
  // CAFEBABE is both Mach-O fat and Java class: fat stores a small architecture count where Java
  // stores minor/major version (major >= 45), so the 32-bit word after the magic disambiguates.
  if ((startsWith(b, [0xca, 0xfe, 0xba, 0xbe]) || startsWith(b, [0xca, 0xfe, 0xba, 0xbf])) && b.length >= 8) {
    const n = b.readUInt32BE(4);
    if (n > 0 && n < 45) return { fileType: 'macho', traits: { fat: true, architectures: n } };
  }
  return null;
}

function detectJavaClass(b: Buffer): Detected | null {
  if (!startsWith(b, [0xca, 0xfe, 0xba, 0xbe]) || b.length < 10) return null;
  const major = b.readUInt16BE(6);
  return major >= 45 ? { fileType: 'java_class', traits: { classVersion: major } } : null;
}

function detectBmp(b: Buffer): Detected | null {
  // "BM" alone is too weak: also require the reserved words to be zero and a sane header size.
  if (!startsWith(b, [0x42, 0x4d]) || b.length < 26) return null;
  const headerSize = b.readUInt32LE(14);
  return b.readUInt32LE(6) === 0 && [12, 40, 52, 56, 64, 108, 124].includes(headerSize)
    ? { fileType: 'image', contentType: 'image/bmp' } : null;
}

function detectPdf(b: Buffer): Detected | null {
  // Readers accept %PDF- anywhere in the first kilobyte, so attackers prepend junk.
  const at = b.subarray(0, 1024).indexOf('%PDF-');
  return at >= 0 ? { fileType: 'pdf', traits: at > 0 ? { headerOffset: at } : {} } : null;
}

/** Binary formats in precedence order. */
const BINARY_DETECTORS: Array<(b: Buffer) => Detected | null> = [
  detectPe,
  (b) => (startsWith(b, [0x7f, 0x45, 0x4c, 0x46]) ? { fileType: 'elf', traits: { bits: b[4] === 2 ? 64 : 32 } } : null),
  detectMacho,
  detectJavaClass,
  (b) => (startsWith(b, [0x64, 0x65, 0x78, 0x0a]) && b[7] === 0 ? { fileType: 'dex' } : null),
  (b) => (startsWith(b, [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]) ? { fileType: '7z' } : null),
  (b) => (startsWith(b, [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07]) ? { fileType: 'rar' } : null),
  (b) => (startsWith(b, [0x1f, 0x8b]) ? { fileType: 'gzip' } : null),
  (b) => (b.length >= 262 && b.toString('latin1', 257, 262) === 'ustar' ? { fileType: 'tar' } : null),
  (b) => (startsWith(b, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]) ? { fileType: 'office_ole' } : null),
  detectPdf,
  (b) => (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) ? { fileType: 'image', contentType: 'image/png' } : null),
  (b) => (startsWith(b, [0xff, 0xd8, 0xff]) ? { fileType: 'image', contentType: 'image/jpeg' } : null),
  (b) => (b.length >= 6 && /^GIF8[79]a$/.test(b.toString('latin1', 0, 6)) ? { fileType: 'image', contentType: 'image/gif' } : null),
  (b) => (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP' ? { fileType: 'image', contentType: 'image/webp' } : null),
  detectBmp,
  (b) => (startsWith(b, [0, 0, 1, 0]) && b.length >= 22 && b.readUInt16LE(4) > 0 && b[9] === 0 ? { fileType: 'image', contentType: 'image/vnd.microsoft.icon' } : null),
];

const isZip = (b: Buffer): boolean =>
  startsWith(b, [0x50, 0x4b, 0x03, 0x04]) || startsWith(b, [0x50, 0x4b, 0x05, 0x06]);

/** What a zip really is, judged from its entry names, in precedence order. */
const ZIP_KINDS: Array<{ fileType: FileType; test: (names: Set<string>, list: string[]) => string | boolean }> = [
  { fileType: 'apk', test: (n) => n.has('AndroidManifest.xml') || n.has('classes.dex') },
  {
    fileType: 'office_ooxml',
    test: (n, list) => {
      if (!n.has('[Content_Types].xml')) return false;
      if (list.some((x) => x.startsWith('word/'))) return 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
      if (list.some((x) => x.startsWith('xl/'))) return 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
      if (list.some((x) => x.startsWith('ppt/'))) return 'application/vnd.openxmlformats-officedocument.presentationml.presentation';
      return false;
    },
  },
  { fileType: 'jar', test: (n, list) => n.has('META-INF/MANIFEST.MF') || list.some((x) => x.endsWith('.class')) },
];

async function classifyZip(b: Buffer): Promise<Detected> {
  const listing = await listZipEntries(b);
  if (!listing) return { fileType: 'zip', traits: { damaged: true }, zip: null };
  const names = new Set(listing.names);
  for (const kind of ZIP_KINDS) {
    const r = kind.test(names, listing.names);
    if (r) return { fileType: kind.fileType, contentType: typeof r === 'string' ? r : undefined, traits: { entries: listing.names.length }, zip: listing };
  }
  return { fileType: 'zip', traits: { entries: listing.names.length }, zip: listing };
}

/** Up to `n` bytes decoded as UTF-8 if they are valid UTF-8 and mostly printable, else null. */
function asText(b: Buffer, n = 65536): string | null {
  let head = b.subarray(0, n);
  if (startsWith(head, [0xef, 0xbb, 0xbf])) head = head.subarray(3);
  // A multi-byte character cut at the window edge is not an encoding error.
  if (b.length > n) {
    let cut = head.length;
    while (cut > 0 && cut > head.length - 4 && (head[cut - 1] & 0xc0) === 0x80) cut--;
    if (cut > 0 && head[cut - 1] >= 0xc0) cut--;
    head = head.subarray(0, cut);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(head);
  } catch {
    return null;
  }
  if (text.length === 0) return null;
  let bad = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0 || (c < 0x20 && c !== 9 && c !== 10 && c !== 13 && c !== 12 && c !== 27)) bad++;
  }
  return bad / text.length <= 0.02 ? text : null;
}

const SHEBANGS: Array<[RegExp, FileType]> = [
  [/python[0-9.]*\b/, 'python'],
  [/\b(node|nodejs|deno|bun)\b/, 'javascript'],
  [/\bphp[\d.]*\b/, 'php'],
  [/\bpwsh\b|powershell/i, 'powershell'],
  [/\b(ba|da|z|k|c|tc|fi|a)?sh\b/, 'shell'],
];

/**
 * Content patterns per script language; a language needs two distinct hits (an extension that
 * names it counts as one), so prose mentioning one keyword stays text.
 */
const TEXT_RULES: Array<{ fileType: FileType; ext: RegExp; patterns: RegExp[] }> = [
  {
    fileType: 'html', ext: /\.(x?html?|hta)$/i,
    patterns: [/<!doctype html/i, /<html[\s>]/i, /<head[\s>]/i, /<body[\s>]/i, /<script[\s>]/i, /<(div|meta|iframe|form)[\s>]/i],
  },
  {
    // Before JavaScript: PHP shares `function f(`, `=>` and `$x =`, so a tie goes to the syntax only PHP has.
    fileType: 'php', ext: /\.(php[3-8]?|phtml)$/i,
    patterns: [/<\?php\b/i, /\$this->\w/, /\$_(GET|POST|REQUEST|COOKIE|SERVER|FILES)\b/, /^\s*(?:(?:abstract|final)\s+)?(?:public|private|protected)\s+(?:static\s+)?function\s/m, /^\s*namespace\s+[A-Za-z_][\w\\]*\s*;/m, /\barray\s*\([^)\n]{0,200}=>/],
  },
  {
    fileType: 'powershell', ext: /\.(ps1|psm1|psd1)$/i,
    patterns: [/\$env:/i, /\b(Invoke|Get|Set|New|Start)-[A-Z][a-z]+/, /\bparam\s*\(/i, /\[(System\.)?[A-Z][\w.]+\]::/, /-(EncodedCommand|ExecutionPolicy|NoProfile)\b/i, /\bWrite-(Host|Output)\b/i, /\$[A-Za-z_]\w*\s*=\s*/],
  },
  {
    fileType: 'vbscript', ext: /\.(vbs|vbe|wsf)$/i,
    patterns: [/^\s*Dim\s+\w/im, /\bCreateObject\s*\(/i, /\bWScript\.\w+/i, /^\s*End\s+(Sub|Function|If)\b/im, /^\s*Set\s+\w+\s*=/im, /^\s*On Error Resume Next/im],
  },
  {
    fileType: 'batch', ext: /\.(bat|cmd)$/i,
    patterns: [/^\s*@?echo\s+off\b/im, /%~?d?p?0/i, /^\s*(set|setlocal)\s/im, /^\s*goto\s+:?\w+/im, /^\s*rem\s/im, /^\s*:\w+\s*$/m, /%\w+%/],
  },
  {
    fileType: 'python', ext: /\.(py|pyw)$/i,
    patterns: [/^__[a-z]+__\s*=\s*\S/m, /^\s*(from\s+[\w.]+\s+)?import\s+\w/m, /^\s*def\s+\w+\s*\(.*\)\s*:/m, /if __name__ == ['"]__main__['"]/, /^\s*class\s+\w+(\(.*\))?\s*:/m, /\bprint\s*\(/, /^\s*(elif|except|with)\b.*:\s*$/m],
  },
  {
    fileType: 'javascript', ext: /\.(m?js|cjs|jsx|ts)$/i,
    patterns: [/\bfunction\s*\w*\s*\(/, /\b(const|let|var)\s+\w+\s*=/, /=>\s*[{(]?/, /\brequire\s*\(['"]/, /\b(document|window)\.\w+/, /\bmodule\.exports\b|\bexport\s+(default|const|function|class)\b/, /\bconsole\.log\s*\(/,
      /^\s*import\s+(?:[\w$]+|\*\s+as\s+[\w$]+|\{[^}\n]{0,300}\})\s+from\s+['"]/m],
  },
  {
    fileType: 'shell', ext: /\.(sh|bash|zsh|ksh)$/i,
    patterns: [/^\s*(if|while|for)\s.*;\s*(then|do)\s*$/m, /^\s*fi\s*$/m, /^\s*export\s+[A-Z_]+=/m, /\$\{?[A-Z_]+\}?/, /^\s*(echo|chmod|curl|wget)\s/m, /\|\|\s*exit\b/],
  },
];

/** A file that opens with PHP's tag is PHP whatever else it contains (a table of `=>` pairs reads like JavaScript). */
const PHP_OPENING = /^\s*<\?php\b/i;

function classifyText(text: string, name: string): FileType {
  const firstLine = text.slice(0, 200).split('\n', 1)[0];
  if (firstLine.startsWith('#!')) {
    for (const [re, t] of SHEBANGS) if (re.test(firstLine)) return t;
  }
  if (PHP_OPENING.test(text.slice(0, 4096))) return 'php';
  const sample = text.slice(0, 16384);
  let best: { fileType: FileType; score: number } | null = null;
  for (const rule of TEXT_RULES) {
    let score = rule.ext.test(name) ? 1 : 0;
    for (const p of rule.patterns) if (p.test(sample)) score++;
    if (score >= 2 && (!best || score > best.score)) best = { fileType: rule.fileType, score };
  }
  return best ? best.fileType : 'text';
}

function finish(d: Detected): FileTypeInfo {
  const info = TYPE_INFO[d.fileType];
  const coverageNote = coverageNoteFor(d.fileType);
  return {
    fileType: d.fileType,
    contentType: d.contentType ?? info.contentType,
    coverage: info.coverage,
    ...(coverageNote ? { coverageNote } : {}),
    traits: d.traits ?? {},
    ...(d.zip !== undefined ? { zip: d.zip } : {}),
  };
}

/** Whether `<?php` (any case) occurs anywhere in the bytes. */
function hasPhpTag(b: Buffer): boolean {
  for (let at = b.indexOf('<?'); at >= 0 && at + 5 <= b.length; at = b.indexOf('<?', at + 2)) {
    if (b.toString('latin1', at + 2, at + 5).toLowerCase() === 'php') return true;
  }
  return false;
}

export async function identify(content: Buffer, name = ''): Promise<FileTypeInfo> {
  if (isZip(content)) return finish(await classifyZip(content));
  for (const detect of BINARY_DETECTORS) {
    const d = detect(content);
    // An image carrying a PHP block is the classic upload web shell (`GIF89a<?php ...`): PHP runs
    // it when it is included, so it is read as the script it is; the image it claims to be is a trait.
    if (d?.fileType === 'image' && hasPhpTag(content)) return finish({ fileType: 'php', traits: { disguisedAs: d.contentType ?? 'image' } });
    if (d) return finish(d);
  }
  const text = asText(content);
  if (text !== null) return finish({ fileType: classifyText(text, name) });
  return finish({ fileType: 'unknown' });
}
