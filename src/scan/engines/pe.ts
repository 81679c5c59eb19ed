/**
 * Static analysis of Windows PE files (EXE/DLL, PE32 and PE32+, native and .NET).
 *
 * The parser is hand-written and bounds-checked on every read: the npm PE parsers we checked
 * (pe-library) parse headers and resources but not import/export tables, copy every section
 * into a new ArrayBuffer and throw on the malformed headers malware likes. The parse is done once
 * per file by FileAnalysis (file-analysis.ts) and shared with the behavior and ml engines.
 */
import type { Engine, EngineOutput, Finding, ScanSubject } from '../types';
import { makeFinding, shannonEntropy } from '../static/common';

const ENGINE = 'static_pe';

export interface PeSection {
  name: string;
  virtualAddress: number;
  virtualSize: number;
  rawOffset: number;
  rawSize: number;
  characteristics: number;
  entropy: number;
  executable: boolean;
  writable: boolean;
}

export interface PeImport {
  dll: string;
  /** Function names; ordinal imports appear as "#<n>". */
  functions: string[];
}

export interface PeInfo {
  is64: boolean;
  machine: number;
  timestamp: number;
  characteristics: number;
  isDll: boolean;
  subsystem: number;
  dllCharacteristics: number;
  entryPoint: number;
  imageBase: number;
  sizeOfHeaders: number;
  sections: PeSection[];
  imports: PeImport[];
  /** "dll!function" in lower-case dll, original-case function. */
  importNames: string[];
  exports: string[];
  /** Bytes after the last section's raw data, not counting a trailing certificate table. */
  overlaySize: number;
  overlayOffset: number;
  overlayEntropy: number;
  hasCertificate: boolean;
  certificateSize: number;
  isDotNet: boolean;
  /** Problems found while parsing (truncated tables, out-of-range pointers). */
  anomalies: string[];
}

const IMAGE_SCN_MEM_EXECUTE = 0x20000000;
const IMAGE_SCN_MEM_WRITE = 0x80000000;
const IMAGE_SCN_CNT_CODE = 0x00000020;
const MAX_SECTIONS = 96;
const MAX_IMPORT_DLLS = 1024;
const MAX_IMPORT_FUNCS = 32_768;
const MAX_EXPORTS = 32_768;

class Reader {
  constructor(readonly buf: Buffer) {}
  ok(off: number, len: number): boolean {
    return Number.isInteger(off) && off >= 0 && len >= 0 && off + len <= this.buf.length;
  }
  u16(off: number): number | null {
    return this.ok(off, 2) ? this.buf.readUInt16LE(off) : null;
  }
  u32(off: number): number | null {
    return this.ok(off, 4) ? this.buf.readUInt32LE(off) : null;
  }
  u64n(off: number): number | null {
    if (!this.ok(off, 8)) return null;
    return Number(this.buf.readBigUInt64LE(off));
  }
  cstr(off: number, max = 512): string | null {
    if (!this.ok(off, 1)) return null;
    const end = Math.min(this.buf.length, off + max);
    let i = off;
    while (i < end && this.buf[i] !== 0) i++;
    return this.buf.toString('latin1', off, i);
  }
}

/** Parses a PE file; null when it is not one (no MZ/PE signatures). Never throws on hostile input. */
export function parsePe(buf: Buffer): PeInfo | null {
  const r = new Reader(buf);
  if (buf.length < 64 || buf[0] !== 0x4d || buf[1] !== 0x5a) return null;
  const lfanew = r.u32(0x3c);
  if (lfanew === null || !r.ok(lfanew, 24) || buf.readUInt32LE(lfanew) !== 0x00004550) return null;
  const anomalies: string[] = [];
  const fh = lfanew + 4;
  const machine = buf.readUInt16LE(fh);
  const numSections = buf.readUInt16LE(fh + 2);
  const timestamp = buf.readUInt32LE(fh + 4);
  const sizeOfOptional = buf.readUInt16LE(fh + 16);
  const characteristics = buf.readUInt16LE(fh + 18);
  const oh = fh + 20;
  const magic = r.u16(oh);
  const is64 = magic === 0x20b;
  if (magic !== 0x10b && magic !== 0x20b) anomalies.push(`unknown optional header magic ${magic ?? 'truncated'}`);
  const entryPoint = r.u32(oh + 16) ?? 0;
  const imageBase = (is64 ? r.u64n(oh + 24) : r.u32(oh + 28)) ?? 0;
  const sizeOfHeaders = r.u32(oh + 60) ?? 0;
  const subsystem = r.u16(oh + 68) ?? 0;
  const dllCharacteristics = r.u16(oh + 70) ?? 0;
  const numRva = r.u32(oh + (is64 ? 108 : 92)) ?? 0;
  const ddBase = oh + (is64 ? 112 : 96);
  const dirs: Array<{ rva: number; size: number }> = [];
  for (let i = 0; i < Math.min(numRva, 16); i++) {
    const rva = r.u32(ddBase + i * 8);
    const size = r.u32(ddBase + i * 8 + 4);
    if (rva === null || size === null || ddBase + i * 8 + 8 > oh + sizeOfOptional) break;
    dirs.push({ rva, size });
  }

  const sections: PeSection[] = [];
  const secBase = oh + sizeOfOptional;
  if (numSections > MAX_SECTIONS) anomalies.push(`${numSections} sections declared, ${MAX_SECTIONS} read`);
  for (let i = 0; i < Math.min(numSections, MAX_SECTIONS); i++) {
    const s = secBase + i * 40;
    if (!r.ok(s, 40)) {
      anomalies.push('section table truncated');
      break;
    }
    const rawName = buf.subarray(s, s + 8);
    const nul = rawName.indexOf(0);
    const name = rawName.toString('latin1', 0, nul < 0 ? 8 : nul);
    const virtualSize = buf.readUInt32LE(s + 8);
    const virtualAddress = buf.readUInt32LE(s + 12);
    const rawSize = buf.readUInt32LE(s + 16);
    const rawOffset = buf.readUInt32LE(s + 20);
    const ch = buf.readUInt32LE(s + 36);
    const dataEnd = Math.min(buf.length, rawOffset + rawSize);
    if (rawSize > 0 && rawOffset + rawSize > buf.length) anomalies.push(`section ${name} raw data extends past end of file`);
    sections.push({
      name,
      virtualAddress,
      virtualSize,
      rawOffset,
      rawSize,
      characteristics: ch,
      entropy: rawOffset < buf.length ? shannonEntropy(buf, rawOffset, dataEnd) : 0,
      executable: (ch & IMAGE_SCN_MEM_EXECUTE) !== 0 || (ch & IMAGE_SCN_CNT_CODE) !== 0,
      writable: (ch & IMAGE_SCN_MEM_WRITE) !== 0,
    });
  }

  const rvaToOffset = (rva: number): number | null => {
    if (rva < sizeOfHeaders && rva < buf.length) return rva;
    for (const s of sections) {
      const span = Math.max(s.virtualSize, s.rawSize);
      if (rva >= s.virtualAddress && rva < s.virtualAddress + span) {
        const delta = rva - s.virtualAddress;
        if (delta >= s.rawSize) return null;
        const off = s.rawOffset + delta;
        return off < buf.length ? off : null;
      }
    }
    return null;
  };

  // Imports (directory 1).
  const imports: PeImport[] = [];
  const importNames: string[] = [];
  let totalFuncs = 0;
  const impDir = dirs[1];
  if (impDir && impDir.rva !== 0 && impDir.size !== 0) {
    let desc = rvaToOffset(impDir.rva);
    if (desc === null) anomalies.push('import directory outside mapped sections');
    for (let d = 0; desc !== null && d < MAX_IMPORT_DLLS && r.ok(desc, 20); d++, desc += 20) {
      const oft = buf.readUInt32LE(desc);
      const nameRva = buf.readUInt32LE(desc + 12);
      const ft = buf.readUInt32LE(desc + 16);
      if (oft === 0 && nameRva === 0 && ft === 0) break;
      const nameOff = rvaToOffset(nameRva);
      const dll = nameOff === null ? '' : (r.cstr(nameOff, 256) ?? '');
      const fns: string[] = [];
      let thunk = rvaToOffset(oft !== 0 ? oft : ft);
      const step = is64 ? 8 : 4;
      for (; thunk !== null && totalFuncs < MAX_IMPORT_FUNCS && r.ok(thunk, step); thunk += step) {
        let ordinalFlag: boolean;
        let value: number;
        if (is64) {
          const v = buf.readBigUInt64LE(thunk);
          if (v === 0n) break;
          ordinalFlag = (v & 0x8000000000000000n) !== 0n;
          value = Number(v & 0x7fffffffn);
        } else {
          const v = buf.readUInt32LE(thunk);
          if (v === 0) break;
          ordinalFlag = (v & 0x80000000) !== 0;
          value = v & 0x7fffffff;
        }
        totalFuncs++;
        if (ordinalFlag) {
          fns.push(`#${value & 0xffff}`);
          continue;
        }
        const hn = rvaToOffset(value);
        const fn = hn === null ? null : r.cstr(hn + 2, 256);
        if (fn !== null && fn !== '') fns.push(fn);
        else anomalies.push('import name outside mapped sections');
        if (anomalies.length > 50) break;
      }
      if (dll !== '' || fns.length > 0) {
        imports.push({ dll, functions: fns });
        const lower = dll.toLowerCase();
        for (const fn of fns) importNames.push(`${lower}!${fn}`);
      }
    }
  }

  // Exports (directory 0).
  const exports: string[] = [];
  const expDir = dirs[0];
  if (expDir && expDir.rva !== 0 && expDir.size !== 0) {
    const ed = rvaToOffset(expDir.rva);
    if (ed !== null && r.ok(ed, 40)) {
      const numNames = buf.readUInt32LE(ed + 24);
      const namesOff = rvaToOffset(buf.readUInt32LE(ed + 32));
      for (let i = 0; namesOff !== null && i < Math.min(numNames, MAX_EXPORTS); i++) {
        const nrva = r.u32(namesOff + i * 4);
        if (nrva === null) break;
        const no = rvaToOffset(nrva);
        const n = no === null ? null : r.cstr(no, 256);
        if (n) exports.push(n);
      }
    } else {
      anomalies.push('export directory outside mapped sections');
    }
  }

  // Certificate table (directory 4): its "RVA" is a file offset.
  const certDir = dirs[4];
  const hasCertificate = !!certDir && certDir.rva !== 0 && certDir.size >= 8 && certDir.rva + certDir.size <= buf.length;
  const certificateSize = hasCertificate && certDir ? certDir.size : 0;
  const clrDir = dirs[14];
  const isDotNet = !!clrDir && clrDir.rva !== 0 && clrDir.size >= 72;

  // Overlay: bytes beyond the last section's raw data, minus a trailing certificate table.
  let endOfImage = Math.min(buf.length, sizeOfHeaders);
  for (const s of sections) if (s.rawSize > 0) endOfImage = Math.max(endOfImage, Math.min(buf.length, s.rawOffset + s.rawSize));
  let overlayEnd = buf.length;
  if (hasCertificate && certDir && certDir.rva >= endOfImage) overlayEnd = Math.min(overlayEnd, certDir.rva);
  const overlaySize = Math.max(0, overlayEnd - endOfImage);
  const overlayEntropy = overlaySize > 0 ? shannonEntropy(buf, endOfImage, Math.min(overlayEnd, endOfImage + 4 * 1024 * 1024)) : 0;

  return {
    is64,
    machine,
    timestamp,
    characteristics,
    isDll: (characteristics & 0x2000) !== 0,
    subsystem,
    dllCharacteristics,
    entryPoint,
    imageBase,
    sizeOfHeaders,
    sections,
    imports,
    importNames,
    exports,
    overlaySize,
    overlayOffset: endOfImage,
    overlayEntropy,
    hasCertificate,
    certificateSize,
    isDotNet,
    anomalies,
  };
}

/** Section names written by common packers and protectors. */
const PACKER_SECTIONS: ReadonlyArray<[RegExp, string]> = [
  [/^UPX\d?$|^UPX!$/i, 'UPX'],
  [/^\.aspack$|^\.adata$/i, 'ASPack'],
  [/^MPRESS\d$/i, 'MPRESS'],
  [/^\.petite$/i, 'Petite'],
  [/^\.nsp[012]$/i, 'NsPack'],
  [/^\.themida$|^\.winlice$/i, 'Themida/WinLicense'],
  [/^\.vmp\d$/i, 'VMProtect'],
  [/^\.enigma\d$/i, 'Enigma Protector'],
  [/^\.packed$|^\.RLPack$/i, 'RLPack'],
  [/^pebundle$|^PEBundle$/i, 'PEBundle'],
  [/^\.MPRESS\d$/i, 'MPRESS'],
  [/^\.yP$|^\.y0da$/i, 'yoda'],
  [/^kkrunchy$/i, 'kkrunchy'],
];

export function sectionContaining(pe: PeInfo, rva: number): PeSection | undefined {
  return pe.sections.find((s) => rva >= s.virtualAddress && rva < s.virtualAddress + Math.max(s.virtualSize, s.rawSize));
}

/** Turns a parsed PE into findings. Exported for tests and the ml feature extractor. */
export function analyzePe(pe: PeInfo, fileSize: number, nowSec = Math.floor(Date.now() / 1000)): Finding[] {
  const f: Finding[] = [];
  const packerTraits: string[] = [];

  const packers = new Set<string>();
  for (const s of pe.sections) for (const [re, label] of PACKER_SECTIONS) if (re.test(s.name)) packers.add(label);
  if (packers.has('UPX')) {
    f.push(makeFinding(ENGINE, 'pe.packer.upx', 'Packer.UPX', 'low', 0.9, 'PE sections are named as by the UPX packer (UPX0/UPX1); legitimate tools use UPX too.', 'packer', pe.sections.map((s) => s.name).join(',')));
    packerTraits.push('UPX sections');
  }
  for (const p of packers) {
    if (p === 'UPX') continue;
    f.push(makeFinding(ENGINE, 'pe.packer.known_section', `Packer.${p.replace(/[^A-Za-z]/g, '')}`, 'low', 0.8, `PE has section names written by the ${p} packer/protector.`, 'packer', pe.sections.map((s) => s.name).join(',')));
    packerTraits.push(`${p} sections`);
  }

  const execHigh = pe.sections.filter((s) => s.executable && s.rawSize >= 512 && s.entropy >= 7.2);
  if (execHigh.length > 0) {
    f.push(makeFinding(ENGINE, 'pe.section.high_entropy', 'Packed.HighEntropyCode', 'low', 0.6, 'An executable section has entropy above 7.2 bits/byte, typical of compressed or encrypted code.', 'packer', execHigh.map((s) => `${s.name}=${s.entropy.toFixed(2)}`).join(' ')));
    packerTraits.push('high-entropy executable section');
  }

  const funcCount = pe.importNames.length;
  const anyHigh = pe.sections.some((s) => s.rawSize >= 512 && s.entropy >= 7.2);
  if (!pe.isDotNet && anyHigh && funcCount > 0 && funcCount <= 10) {
    f.push(makeFinding(ENGINE, 'pe.imports.tiny_packed', 'Packed.TinyImportTable', 'medium', 0.65, `High-entropy data with only ${funcCount} imported functions: imports are likely resolved at run time by an unpacking stub.`, 'packer', pe.importNames.slice(0, 10).join(' ')));
    packerTraits.push('tiny import table');
  }
  if (!pe.isDotNet && funcCount === 0 && pe.exports.length === 0 && pe.sections.some((s) => s.executable && s.rawSize > 0)) {
    f.push(makeFinding(ENGINE, 'pe.imports.none', 'Suspicious.NoImports', 'low', 0.5, 'Executable code but no import table: APIs must be resolved manually at run time.', 'anomaly'));
    packerTraits.push('no imports');
  }

  const wx = pe.sections.filter((s) => s.executable && s.writable);
  if (wx.length > 0) {
    f.push(makeFinding(ENGINE, 'pe.section.wx', 'Suspicious.WritableCode', 'low', 0.6, 'A section is both writable and executable, which self-modifying or unpacking code needs.', 'packer', wx.map((s) => s.name).join(',')));
    packerTraits.push('writable+executable section');
  }

  if (pe.entryPoint !== 0 && !pe.isDotNet) {
    const epSec = sectionContaining(pe, pe.entryPoint);
    if (!epSec) {
      f.push(makeFinding(ENGINE, 'pe.entrypoint.outside_sections', 'Suspicious.EntryPoint', 'medium', 0.6, 'The entry point lies outside every section.', 'anomaly', `EP=0x${pe.entryPoint.toString(16)}`));
      packerTraits.push('entry point outside sections');
    } else if (!epSec.executable) {
      f.push(makeFinding(ENGINE, 'pe.entrypoint.outside_code', 'Suspicious.EntryPoint', 'low', 0.6, `The entry point lies in non-code section ${epSec.name}.`, 'anomaly', `EP=0x${pe.entryPoint.toString(16)} in ${epSec.name}`));
      packerTraits.push('entry point outside code section');
    } else if (pe.sections.length > 2 && epSec === pe.sections[pe.sections.length - 1] && epSec.writable) {
      f.push(makeFinding(ENGINE, 'pe.entrypoint.last_section', 'Suspicious.EntryPoint', 'low', 0.5, `The entry point lies in the last, writable section ${epSec.name}, a common packer layout.`, 'anomaly', `EP in ${epSec.name}`));
      packerTraits.push('entry point in last writable section');
    }
  }

  if (packerTraits.length >= 3) {
    f.push(makeFinding(ENGINE, 'pe.packed', 'Packed.Generic', 'medium', 0.75, `Several packer traits together: ${packerTraits.join('; ')}.`, 'packer'));
  }

  if (pe.overlaySize > 0) {
    const big = pe.overlaySize >= 1024 && pe.overlaySize > fileSize / 2 && pe.overlayEntropy >= 7.5 && !pe.hasCertificate;
    f.push(makeFinding(ENGINE, 'pe.overlay', big ? 'Suspicious.Overlay' : 'Overlay', big ? 'low' : 'info', 0.8,
      `${pe.overlaySize} bytes of data after the last section (entropy ${pe.overlayEntropy.toFixed(2)}); installers and droppers carry payloads there.`, 'structure', `offset=${pe.overlayOffset} size=${pe.overlaySize}`));
  }

  if (pe.timestamp === 0) {
    f.push(makeFinding(ENGINE, 'pe.timestamp.zero', 'Timestamp.Zero', 'info', 0.9, 'Compile timestamp is zero (wiped or reproducible build).', 'anomaly'));
  } else if (pe.timestamp > nowSec + 86400 && pe.timestamp < 0xf0000000) {
    f.push(makeFinding(ENGINE, 'pe.timestamp.future', 'Timestamp.Future', 'low', 0.5, 'Compile timestamp lies in the future (forged, or a reproducible-build hash).', 'anomaly', new Date(pe.timestamp * 1000).toISOString()));
  }

  if (pe.hasCertificate) {
    f.push(makeFinding(ENGINE, 'pe.signature.present', 'Authenticode.Present', 'info', 0.9, 'An Authenticode certificate table is present (presence only; the signature is not verified).', 'signature', `${pe.certificateSize} bytes`));
  }
  if (pe.isDotNet) {
    f.push(makeFinding(ENGINE, 'pe.dotnet', '.NET.Assembly', 'info', 0.95, 'The file carries a CLR header: a .NET assembly.', 'structure'));
  }
  if (pe.anomalies.length > 0) {
    f.push(makeFinding(ENGINE, 'pe.malformed', 'Malformed.PE', 'low', 0.6, `Structural anomalies: ${pe.anomalies.slice(0, 3).join('; ')}.`, 'anomaly', pe.anomalies.slice(0, 5).join('; ')));
  }
  return f;
}

export function peReport(pe: PeInfo): Record<string, unknown> {
  return {
    format: pe.is64 ? 'PE32+' : 'PE32',
    machine: `0x${pe.machine.toString(16)}`,
    isDll: pe.isDll,
    isDotNet: pe.isDotNet,
    timestamp: pe.timestamp,
    entryPoint: `0x${pe.entryPoint.toString(16)}`,
    sections: pe.sections.map((s) => ({ name: s.name, rawSize: s.rawSize, virtualSize: s.virtualSize, entropy: s.entropy, executable: s.executable, writable: s.writable })),
    importDlls: pe.imports.map((i) => i.dll),
    importCount: pe.importNames.length,
    exportCount: pe.exports.length,
    overlaySize: pe.overlaySize,
    signed: pe.hasCertificate,
  };
}

export const engine: Engine = {
  name: ENGINE,
  async scan(subject: ScanSubject): Promise<EngineOutput> {
    const pe = subject.file.pe();
    if (!pe) {
      if (subject.fileType === 'pe') {
        return { findings: [makeFinding(ENGINE, 'pe.malformed', 'Malformed.PE', 'low', 0.6, 'Identified as PE but the MZ/PE headers could not be parsed.', 'anomaly')], note: 'PE headers unreadable' };
      }
      return { findings: [], note: 'not a PE file' };
    }
    return { findings: analyzePe(pe, subject.content.length), report: { pe: peReport(pe) } };
  },
};
