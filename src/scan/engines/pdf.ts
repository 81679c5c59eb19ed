/**
 * Static analysis of PDF files in the manner of pdfid/peepdf: count the action and content
 * names that matter (JavaScript, OpenAction, AA, Launch, EmbeddedFile, URI, ObjStm), undo #xx
 * name escapes, and inflate FlateDecode streams (bounded) so object streams and compressed
 * JavaScript are looked at too. No PDF is rendered and no script is run.
 */
import * as zlib from 'node:zlib';
import type { Engine, EngineOutput, Finding, ScanSubject } from '../types';
import { makeFinding } from '../static/common';

const ENGINE = 'static_pdf';
const MAX_STREAM_OUT = 8 * 1024 * 1024;
const MAX_TOTAL_OUT = 64 * 1024 * 1024;
const MAX_STREAMS = 5000;

const KEYS = ['JavaScript', 'JS', 'OpenAction', 'AA', 'Launch', 'EmbeddedFile', 'EmbeddedFiles', 'URI', 'ObjStm', 'XFA', 'RichMedia', 'AcroForm', 'SubmitForm', 'GoToR', 'GoToE', 'Encrypt'] as const;
type Key = (typeof KEYS)[number];
const KEY_SET: ReadonlySet<string> = new Set(KEYS);

export interface PdfCounts {
  names: Record<Key, number>;
  /** Names of interest that were written with #xx escapes. */
  obfuscatedNames: string[];
  streams: number;
  inflatedStreams: number;
  inflatedBytes: number;
  embeddedFileNames: string[];
  jsIndicators: string[];
  truncated: boolean;
}

const NAME_RE = /\/([^\s/[\]<>(){}%]{1,127})/g;

function scanNames(text: string, counts: PdfCounts): void {
  for (const m of text.matchAll(NAME_RE)) {
    const raw = m[1];
    let name = raw;
    if (raw.includes('#')) {
      name = raw.replace(/#([0-9A-Fa-f]{2})/g, (_s, h: string) => String.fromCharCode(parseInt(h, 16)));
      if (KEY_SET.has(name) && counts.obfuscatedNames.length < 50) counts.obfuscatedNames.push(`/${raw}`);
    }
    if (KEY_SET.has(name)) counts.names[name as Key]++;
  }
}

const JS_INDICATORS: ReadonlyArray<[RegExp, string]> = [
  [/\beval\s*\(/, 'eval('],
  [/\bunescape\s*\(/, 'unescape('],
  [/String\.fromCharCode\s*\(/, 'String.fromCharCode'],
  [/%u9090|\\x90\\x90|%u0c0c%u0c0c/i, 'NOP sled / heap spray'],
  [/util\.printf\s*\(/, 'util.printf (CVE-2008-2992)'],
  [/Collab\.(?:getIcon|collectEmailInfo)/, 'Collab API (CVE-2009-0927/CVE-2007-5659)'],
  [/\.getAnnots\s*\(/, 'getAnnots (CVE-2009-1492)'],
  [/spell\.customDictionaryOpen/, 'spell.customDictionaryOpen (CVE-2009-1493)'],
  [/media\.newPlayer/, 'media.newPlayer (CVE-2009-4324)'],
  [/app\.launchURL|this\.exportDataObject\s*\(/, 'launchURL / exportDataObject'],
];

function scanJs(text: string, counts: PdfCounts): void {
  for (const [re, label] of JS_INDICATORS) if (!counts.jsIndicators.includes(label) && re.test(text)) counts.jsIndicators.push(label);
}

function scanEmbeddedNames(text: string, counts: PdfCounts): void {
  for (const m of text.matchAll(/\/U?F\s*\(([^()\\]{1,200})\)/g)) {
    if (counts.embeddedFileNames.length < 50 && !counts.embeddedFileNames.includes(m[1])) counts.embeddedFileNames.push(m[1]);
  }
}

export function analyzePdfCounts(buf: Buffer): PdfCounts {
  const text = buf.toString('latin1');
  const counts: PdfCounts = {
    names: Object.fromEntries(KEYS.map((k) => [k, 0])) as Record<Key, number>,
    obfuscatedNames: [],
    streams: 0,
    inflatedStreams: 0,
    inflatedBytes: 0,
    embeddedFileNames: [],
    jsIndicators: [],
    truncated: false,
  };
  scanNames(text, counts);
  scanEmbeddedNames(text, counts);

  let from = 0;
  let prevEnd = 0;
  while (counts.streams < MAX_STREAMS) {
    const s = text.indexOf('stream', from);
    if (s < 0) break;
    from = s + 6;
    if (text.startsWith('end', s - 3)) continue;
    let dataStart = s + 6;
    if (text[dataStart] === '\r') dataStart++;
    if (text[dataStart] === '\n') dataStart++;
    else if (dataStart === s + 6) continue;
    const end = text.indexOf('endstream', dataStart);
    if (end < 0) break;
    counts.streams++;
    const dictStart = Math.max(prevEnd, s - 2048);
    const dict = text.slice(dictStart, s).replace(/#([0-9A-Fa-f]{2})/g, (_x, h: string) => String.fromCharCode(parseInt(h, 16)));
    from = end + 9;
    prevEnd = from;
    if (!/\/(?:FlateDecode|Fl)\b/.test(dict)) {
      if (/\/JS\b|\/JavaScript\b/.test(dict)) scanJs(text.slice(dataStart, end), counts);
      continue;
    }
    if (counts.inflatedBytes >= MAX_TOTAL_OUT) {
      counts.truncated = true;
      continue;
    }
    const cap = Math.min(MAX_STREAM_OUT, MAX_TOTAL_OUT - counts.inflatedBytes);
    let out: Buffer;
    try {
      out = zlib.inflateSync(buf.subarray(dataStart, end), { maxOutputLength: cap, finishFlush: zlib.constants.Z_SYNC_FLUSH });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') counts.truncated = true;
      continue;
    }
    counts.inflatedStreams++;
    counts.inflatedBytes += out.length;
    const inner = out.toString('latin1');
    scanNames(inner, counts);
    scanEmbeddedNames(inner, counts);
    scanJs(inner, counts);
  }
  if (counts.names.JavaScript + counts.names.JS > 0) scanJs(text, counts);
  return counts;
}

const RISKY_EXT = /\.(?:exe|scr|com|pif|dll|js|jse|vbs|vbe|wsf|hta|bat|cmd|ps1|lnk|jar|msi)$/i;

export function pdfFindings(c: PdfCounts): Finding[] {
  const f: Finding[] = [];
  const n = c.names;
  const js = n.JavaScript + n.JS;
  const auto = n.OpenAction + n.AA;
  if (js > 0) {
    f.push(makeFinding(ENGINE, 'pdf.javascript', 'PDF.JavaScript', 'medium', 0.8, `The PDF contains JavaScript (${js} /JavaScript or /JS name(s)).`, 'script', `/JavaScript=${n.JavaScript} /JS=${n.JS}`));
  }
  if (js > 0 && auto > 0) {
    f.push(makeFinding(ENGINE, 'pdf.auto_javascript', 'PDF.AutoJavaScript', 'high', 0.8, 'JavaScript together with an automatic action (/OpenAction or /AA): script runs when the document opens.', 'script', `/OpenAction=${n.OpenAction} /AA=${n.AA}`));
  }
  if (c.jsIndicators.length > 0 && js > 0) {
    f.push(makeFinding(ENGINE, 'pdf.js.suspicious', 'Exploit.PDF.JavaScript', 'high', 0.75, `The JavaScript uses exploit or obfuscation constructs: ${c.jsIndicators.join(', ')}.`, 'exploit', c.jsIndicators.join(', ')));
  }
  if (n.OpenAction > 0) {
    f.push(makeFinding(ENGINE, 'pdf.openaction', 'PDF.OpenAction', 'info', 0.9, 'The PDF has an /OpenAction (often only a view setting).', 'structure'));
  }
  if (n.AA > 0) {
    f.push(makeFinding(ENGINE, 'pdf.aa', 'PDF.AdditionalActions', 'low', 0.7, 'The PDF defines /AA additional actions that trigger on page or field events.', 'structure'));
  }
  if (n.Launch > 0) {
    f.push(makeFinding(ENGINE, 'pdf.launch', 'PDF.Launch', 'high', 0.8, 'A /Launch action starts an external program or file.', 'execution', `/Launch x${n.Launch}`));
  }
  const embedded = n.EmbeddedFile + n.EmbeddedFiles;
  if (embedded > 0) {
    const risky = c.embeddedFileNames.filter((x) => RISKY_EXT.test(x.trim()));
    if (risky.length > 0) {
      f.push(makeFinding(ENGINE, 'pdf.embedded_executable', 'PDF.EmbeddedExecutable', 'high', 0.75, 'The PDF embeds a file with an executable or script extension.', 'embedded', risky.join(', ')));
    } else {
      f.push(makeFinding(ENGINE, 'pdf.embedded_file', 'PDF.EmbeddedFile', 'low', 0.8, 'The PDF carries embedded file(s).', 'embedded', c.embeddedFileNames.join(', ')));
    }
  }
  if (c.obfuscatedNames.length > 0) {
    f.push(makeFinding(ENGINE, 'pdf.obfuscated_names', 'PDF.ObfuscatedNames', 'medium', 0.85, 'Action names are written with #xx escapes, a trick to evade keyword scanners.', 'obfuscation', c.obfuscatedNames.slice(0, 10).join(' ')));
  }
  if (n.URI > 0) {
    f.push(makeFinding(ENGINE, 'pdf.uri', 'PDF.URI', 'info', 0.9, `The PDF links ${n.URI} URI(s).`, 'structure'));
  }
  if (n.ObjStm > 0) {
    f.push(makeFinding(ENGINE, 'pdf.objstm', 'PDF.ObjectStreams', 'info', 0.9, `${n.ObjStm} object stream(s) (inflated and inspected).`, 'structure'));
  }
  if (n.RichMedia > 0 || n.XFA > 0) {
    f.push(makeFinding(ENGINE, 'pdf.active_content', 'PDF.ActiveContent', 'low', 0.6, 'The PDF contains RichMedia (Flash) or XFA forms, historic exploit vectors.', 'structure', `/RichMedia=${n.RichMedia} /XFA=${n.XFA}`));
  }
  return f;
}

export const engine: Engine = {
  name: ENGINE,
  async scan(subject: ScanSubject): Promise<EngineOutput> {
    const head = subject.content.subarray(0, 1024).toString('latin1');
    if (!head.includes('%PDF-')) return { findings: [], note: 'not a PDF file' };
    const counts = analyzePdfCounts(subject.content);
    const out: EngineOutput = { findings: pdfFindings(counts), report: { pdf: counts } };
    if (counts.truncated) out.note = 'some streams were larger than the inflate limit and were inspected only partly';
    return out;
  },
};
