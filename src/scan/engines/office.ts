/**
 * Static analysis of Office documents.
 *
 * OLE/CFB (.doc/.xls/.ppt, vbaProject.bin) is read with SheetJS `cfb`. OOXML packages are read
 * through src/scan/zip.ts (yauzl), inflating only the parts inspected, each size-capped (cfb's own
 * ZIP mode inflates every member with no limit). VBA source is recovered by parsing the VBA `dir` stream and decompressing each module
 * with MS-OVBA 2.4.1 (implemented below; no maintained npm library does it).
 */
import * as CFB from 'cfb';
import type { Engine, EngineOutput, Finding, ScanSubject } from '../types';
import { makeFinding } from '../static/common';
import { readZipEntries } from '../zip';

const ENGINE = 'static_office';
const MAX_PART_BYTES = 32 * 1024 * 1024;
const MAX_VBA_SOURCE = 8 * 1024 * 1024;

/* ------------------------------------------------------------------ MS-OVBA decompression */

/** MS-OVBA 2.4.1 CompressedContainer -> bytes. Throws on a malformed container. */
export function decompressOvba(data: Uint8Array, start = 0, maxOut = MAX_VBA_SOURCE): Buffer {
  if (data[start] !== 0x01) throw new Error('OVBA: bad signature byte');
  const out: number[] = [];
  let pos = start + 1;
  while (pos + 2 <= data.length) {
    const header = data[pos] | (data[pos + 1] << 8);
    const chunkSize = (header & 0x0fff) + 3;
    const sig = (header >> 12) & 0x07;
    const compressed = (header & 0x8000) !== 0;
    if (sig !== 0b011) throw new Error('OVBA: bad chunk signature');
    const chunkEnd = Math.min(data.length, pos + chunkSize);
    pos += 2;
    const chunkStart = out.length;
    if (!compressed) {
      const end = Math.min(data.length, pos + 4096);
      for (; pos < end; pos++) out.push(data[pos]);
    } else {
      while (pos < chunkEnd) {
        const flags = data[pos++];
        for (let bit = 0; bit < 8 && pos < chunkEnd; bit++) {
          if ((flags & (1 << bit)) === 0) {
            out.push(data[pos++]);
          } else {
            if (pos + 2 > chunkEnd) throw new Error('OVBA: truncated copy token');
            const token = data[pos] | (data[pos + 1] << 8);
            pos += 2;
            const diff = out.length - chunkStart;
            let bitCount = 4;
            while (bitCount < 12 && 1 << bitCount < diff) bitCount++;
            const lengthMask = 0xffff >> bitCount;
            const length = (token & lengthMask) + 3;
            const offset = (token >> (16 - bitCount)) + 1;
            const from = out.length - offset;
            if (from < chunkStart) throw new Error('OVBA: copy token reaches before chunk');
            for (let k = 0; k < length; k++) out.push(out[from + k]);
          }
        }
      }
    }
    if (out.length > maxOut) throw new Error('OVBA: output limit');
    pos = chunkEnd;
  }
  return Buffer.from(out);
}

export interface VbaModule {
  name: string;
  stream: string;
  source: string;
}

/** Reads the VBA modules of a CFB container holding a VBA project (any storage path). */
export function extractVba(container: CFB.CFB$Container): VbaModule[] {
  const modules: VbaModule[] = [];
  container.FullPaths.forEach((fullPath, idx) => {
    if (!/\/VBA\/dir$/i.test(fullPath)) return;
    const dirEntry = container.FileIndex[idx];
    const vbaStorage = fullPath.slice(0, -'dir'.length);
    let dir: Buffer;
    try {
      dir = decompressOvba(toU8(dirEntry.content));
    } catch {
      return;
    }
    for (const m of parseDirStream(dir)) {
      const entryIdx = container.FullPaths.findIndex((p) => p.toLowerCase() === (vbaStorage + m.stream).toLowerCase());
      if (entryIdx < 0) continue;
      const content = toU8(container.FileIndex[entryIdx].content);
      let source: Buffer | null = null;
      try {
        source = decompressOvba(content, m.offset);
      } catch {
        // Offsets are sometimes wrong in crafted files; fall back to the "Attribut" marker as olevba does.
        const marker = Buffer.from(content).indexOf('\x00Attribut\x00e ', 0, 'latin1');
        if (marker >= 3) {
          try {
            source = decompressOvba(content, marker - 3);
          } catch {
            source = null;
          }
        }
      }
      if (source) modules.push({ name: m.name, stream: m.stream, source: source.toString('latin1') });
    }
  });
  return modules;
}

function toU8(c: CFB.CFB$Blob | undefined): Uint8Array {
  if (!c) return new Uint8Array(0);
  return c instanceof Uint8Array ? c : Uint8Array.from(c);
}

/** MS-OVBA 2.3.4.2 dir stream: a flat list of records; we only need module names/streams/offsets. */
function parseDirStream(dir: Buffer): Array<{ name: string; stream: string; offset: number }> {
  const mods: Array<{ name: string; stream: string; offset: number }> = [];
  let cur: { name: string; stream: string; offset: number } | null = null;
  let pos = 0;
  while (pos + 6 <= dir.length) {
    const id = dir.readUInt16LE(pos);
    let size = dir.readUInt32LE(pos + 2);
    pos += 6;
    // PROJECTVERSION's Size field is fixed 4 but 6 bytes of data follow.
    if (id === 0x0009) size = 6;
    if (pos + size > dir.length) break;
    const data = dir.subarray(pos, pos + size);
    pos += size;
    if (id === 0x0019) cur = { name: data.toString('latin1'), stream: data.toString('latin1'), offset: 0 };
    else if (id === 0x001a && cur) cur.stream = data.toString('latin1');
    else if (id === 0x0031 && cur && size >= 4) cur.offset = data.readUInt32LE(0);
    else if (id === 0x002b && cur) {
      mods.push(cur);
      cur = null;
    } else if (id === 0x0010) break;
  }
  return mods;
}

/* ------------------------------------------------------------------ macro rules */

const AUTOEXEC = /\b(?:Auto_?Open|AutoExec|AutoNew|AutoClose|Auto_Close|Document_Open|Document_Close|Document_New|DocumentOpen|Workbook_Open|Workbook_Activate|Workbook_BeforeClose|Presentation_Open|[A-Za-z]{1,24}\d{0,3}_(?:Layout|Painted|GotFocus))\b/gi;

const SUSPICIOUS_CALLS: ReadonlyArray<[RegExp, string]> = [
  [/\bShell(?:Execute)?\s*[( ]/i, 'Shell'],
  [/\bCreateObject\s*\(/i, 'CreateObject'],
  [/WScript\.Shell/i, 'WScript.Shell'],
  [/Shell\.Application/i, 'Shell.Application'],
  [/URLDownloadToFile/i, 'URLDownloadToFile'],
  [/MSXML2\.(?:Server)?XMLHTTP|WinHttp\.WinHttpRequest/i, 'HTTP request object'],
  [/ADODB\.Stream/i, 'ADODB.Stream'],
  [/powershell/i, 'PowerShell'],
  [/\bEnviron\s*\$?\s*\(/i, 'Environ'],
  [/\bCallByName\b/i, 'CallByName'],
  [/\bDeclare\s+(?:PtrSafe\s+)?(?:Function|Sub)\b/i, 'Win32 API Declare'],
  [/\b(?:VirtualAlloc|RtlMoveMemory|CreateThread)\b/i, 'in-memory code execution API'],
  [/\bGetObject\s*\(\s*"winmgmts/i, 'WMI'],
  [/\bcmd(?:\.exe)?\s+\/c\b/i, 'cmd /c'],
  [/\bKill\s+|\.DeleteFile\b/i, 'file deletion'],
];

function analyzeMacros(modules: VbaModule[], where: string): Finding[] {
  const f: Finding[] = [];
  if (modules.length === 0) return f;
  const all = modules.map((m) => m.source).join('\n');
  const code = all.replace(/^Attribute VB_.*$/gim, '');
  const autoexec = new Set<string>();
  for (const m of code.matchAll(AUTOEXEC)) {
    // Only procedure definitions count, not any mention.
    const idx = m.index ?? 0;
    const lineStart = code.lastIndexOf('\n', idx) + 1;
    const prefix = code.slice(lineStart, idx);
    if (/^\s*(?:Private\s+|Public\s+)?(?:Sub|Function)\s+$/i.test(prefix)) autoexec.add(m[0]);
  }
  const calls = SUSPICIOUS_CALLS.filter(([re]) => re.test(code)).map(([, label]) => label);
  const chrCount = (code.match(/\bChrW?\$?\s*\(\s*&?H?\d/gi) ?? []).length;
  const obfuscated = chrCount >= 10;
  if (obfuscated) calls.push(`Chr() obfuscation x${chrCount}`);

  f.push(makeFinding(ENGINE, 'office.macro.present', 'Macro.VBA', 'low', 0.95, `The document carries ${modules.length} VBA module(s) (${where}).`, 'macro', modules.map((m) => m.name).join(',')));
  if (autoexec.size > 0) {
    f.push(makeFinding(ENGINE, 'office.macro.autoexec', 'Macro.AutoExec', 'medium', 0.9, 'A macro runs automatically when the document is opened or closed.', 'macro', [...autoexec].join(',')));
  }
  if (calls.length > 0) {
    f.push(makeFinding(ENGINE, 'office.macro.suspicious_call', 'Macro.SuspiciousCall', 'medium', 0.8, `The macro code uses: ${calls.join(', ')}.`, 'macro', calls.join(', ')));
  }
  if (obfuscated) {
    f.push(makeFinding(ENGINE, 'office.macro.obfuscated', 'Macro.Obfuscated', 'medium', 0.7, `The macro builds strings from ${chrCount} Chr() calls, a common obfuscation.`, 'obfuscation'));
  }
  const exec = calls.some((c) => /Shell|PowerShell|URLDownloadToFile|HTTP|in-memory|cmd|WMI/.test(c));
  if (autoexec.size > 0 && exec) {
    f.push(makeFinding(ENGINE, 'office.macro.autoexec_exec', 'Trojan.Downloader.MacroAutoExec', 'high', 0.85,
      'An auto-executing macro launches processes or downloads content: the classic malicious-document pattern.', 'malware', `${[...autoexec].join(',')} + ${calls.join(', ')}`));
  }
  return f;
}

/* ------------------------------------------------------------------ OLE */

function analyzeCfb(content: Buffer, where: string): { findings: Finding[]; modules: VbaModule[]; streams: number } {
  const container = CFB.read(content, { type: 'buffer' });
  const modules = extractVba(container);
  const findings = analyzeMacros(modules, where);
  const paths = container.FullPaths;
  const equation = paths.some((p) => /Equation Native$/i.test(p)) || content.includes('Equation.3', 0, 'latin1');
  if (equation) {
    findings.push(makeFinding(ENGINE, 'office.ole.equation_editor', 'Exploit.EquationEditor', 'high', 0.7,
      'An Equation Editor 3.0 object is embedded; it is the target of CVE-2017-11882/CVE-2018-0802 exploits.', 'exploit', 'Equation Native'));
  }
  if (paths.some((p) => /\x01Ole10Native$/i.test(p))) {
    findings.push(makeFinding(ENGINE, 'office.ole.embedded_package', 'Embedded.OLEPackage', 'low', 0.8, 'An OLE Package object (embedded file) is present.', 'embedded'));
  }
  return { findings, modules, streams: paths.length };
}

/* ------------------------------------------------------------------ OOXML */

const OOXML_PARTS = /^\[Content_Types\]\.xml$|(?:^|\/)_rels\/[^/]*\.rels$|^word\/(?:document|header\d*|footer\d*|footnotes|endnotes)\.xml$|^xl\/externalLinks\/[^/]+\.xml$|(?:^|\/)vbaProject\.bin$|(?:^|\/)embeddings\/oleObject\d*\.bin$/i;

class Parts {
  constructor(private readonly parts: Map<string, Buffer>) {}
  text(re: RegExp): Array<{ name: string; text: string }> {
    return [...this.parts].filter(([n]) => re.test(n)).map(([name, data]) => ({ name, text: data.toString('utf8') }));
  }
  binary(re: RegExp): Array<{ name: string; data: Buffer }> {
    return [...this.parts].filter(([n]) => re.test(n)).map(([name, data]) => ({ name, data }));
  }
}

const ATTR = (tag: string, attr: string): string | null => {
  const m = new RegExp(`\\b${attr}\\s*=\\s*("([^"]*)"|'([^']*)')`, 'i').exec(tag);
  return m ? (m[2] ?? m[3] ?? '') : null;
};

async function analyzeOoxml(buf: Buffer): Promise<{ findings: Finding[]; report: Record<string, unknown> } | null> {
  const map = await readZipEntries(buf, (n) => OOXML_PARTS.test(n), MAX_PART_BYTES, 400);
  if (!map.has('[Content_Types].xml')) return null;
  const zip = new Parts(map);
  const findings: Finding[] = [];
  let externalRels = 0;

  for (const rels of zip.text(/(^|\/)_rels\/[^/]*\.rels$/)) {
    for (const m of rels.text.matchAll(/<Relationship\b[^>]{0,4096}>/gi)) {
      const tag = m[0];
      if ((ATTR(tag, 'TargetMode') ?? '').toLowerCase() !== 'external') continue;
      const type = ATTR(tag, 'Type') ?? '';
      const target = ATTR(tag, 'Target') ?? '';
      externalRels++;
      const remote = /^(?:https?|ftp|file):|^\\\\|^\/\//i.test(target);
      if (/attachedTemplate$/i.test(type) && remote) {
        findings.push(makeFinding(ENGINE, 'office.external_template', 'TemplateInjection', 'high', 0.85,
          'The document loads its template from a remote location (remote template injection, ATT&CK T1221).', 'injection', `${rels.name}: ${target}`));
      } else if (/\/(?:oleObject|frame|subDocument)$/i.test(type) && remote) {
        findings.push(makeFinding(ENGINE, 'office.external_object', 'RemoteObject', 'medium', 0.7,
          'The document links an OLE object, frame or sub-document from a remote location.', 'injection', `${rels.name}: ${target}`));
      }
    }
  }

  // DDE in Word fields (fldSimple instr or instrText runs, which may be split across runs).
  for (const part of zip.text(/^word\/(?:document|header\d*|footer\d*|footnotes|endnotes)\.xml$/)) {
    const instr: string[] = [];
    for (const m of part.text.matchAll(/<w:instrText\b[^>]{0,512}>([^<]{0,4096})<\/w:instrText>/g)) instr.push(m[1]);
    for (const m of part.text.matchAll(/\bw:instr\s*=\s*"([^"]{0,4096})"/g)) instr.push(m[1]);
    const joined = instr.join('').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
    const dde = /\bDDE(AUTO)?\b/i.exec(joined);
    if (dde) {
      const auto = dde[1] !== undefined;
      findings.push(makeFinding(ENGINE, 'office.dde', auto ? 'Exploit.DDEAuto' : 'Exploit.DDE', auto ? 'high' : 'medium', 0.85,
        `A ${auto ? 'DDEAUTO' : 'DDE'} field runs an external application${auto ? ' automatically' : ' on update'}.`, 'dde', joined.slice(dde.index, dde.index + 200)));
    }
  }
  for (const part of zip.text(/^xl\/externalLinks\/[^/]+\.xml$/)) {
    const m = /<ddeLink\b[^>]{0,1024}>/i.exec(part.text);
    if (m) findings.push(makeFinding(ENGINE, 'office.dde', 'Exploit.DDE', 'medium', 0.8, 'The workbook has a DDE link to an external application.', 'dde', m[0]));
  }

  let modules: VbaModule[] = [];
  for (const e of zip.binary(/(^|\/)vbaProject\.bin$/i)) {
    const data = e.data;
    try {
      const res = analyzeCfb(data, e.name);
      findings.push(...res.findings);
      modules = modules.concat(res.modules);
      if (res.modules.length === 0) {
        findings.push(makeFinding(ENGINE, 'office.macro.present', 'Macro.VBA', 'low', 0.7, 'A VBA project is present but no module source could be recovered.', 'macro', e.name));
      }
    } catch {
      findings.push(makeFinding(ENGINE, 'office.macro.present', 'Macro.VBA', 'low', 0.6, 'A vbaProject.bin part is present but is not a readable CFB file.', 'macro', e.name));
    }
  }
  for (const e of zip.binary(/(^|\/)embeddings\/oleObject\d*\.bin$/i)) {
    try {
      findings.push(...analyzeCfb(e.data, e.name).findings.filter((f) => f.id.startsWith('office.ole.')));
    } catch {
      // Not every embedding is CFB.
    }
  }
  return { findings, report: { format: 'ooxml', parts: map.size, externalRelationships: externalRels, vbaModules: modules.map((m) => m.name) } };
}

export const engine: Engine = {
  name: ENGINE,
  async scan(subject: ScanSubject): Promise<EngineOutput> {
    const c = subject.content;
    if (c.length >= 8 && c.readUInt32BE(0) === 0xd0cf11e0 && c.readUInt32BE(4) === 0xa1b11ae1) {
      try {
        const res = analyzeCfb(c, 'OLE document');
        return { findings: res.findings, report: { office: { format: 'ole', streams: res.streams, vbaModules: res.modules.map((m) => m.name) } } };
      } catch (err) {
        return { findings: [makeFinding(ENGINE, 'office.malformed', 'Malformed.OLE', 'low', 0.5, 'The OLE compound file could not be parsed.', 'anomaly')], note: `CFB parse failed: ${(err as Error).message}` };
      }
    }
    if (c.length >= 4 && c.readUInt32LE(0) === 0x04034b50) {
      const res = await analyzeOoxml(c);
      if (res) return { findings: res.findings, report: { office: res.report } };
    }
    return { findings: [], note: 'not an Office document' };
  },
};
