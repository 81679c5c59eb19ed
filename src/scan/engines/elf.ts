/**
 * Static analysis of ELF files (32/64-bit, either byte order).
 *
 * Hand-written bounds-checked parser (no maintained npm ELF parser exists; `elfy` is a 2016
 * one-off). The parse is done once per file by FileAnalysis (file-analysis.ts) and shared with the
 * behavior and ml engines.
 */
import type { Engine, EngineOutput, Finding, ScanSubject } from '../types';
import { makeFinding, shannonEntropy } from '../static/common';

const ENGINE = 'static_elf';

export interface ElfSection {
  name: string;
  type: number;
  flags: number;
  offset: number;
  size: number;
  entropy: number;
}

export interface ElfSegment {
  type: number;
  flags: number;
  offset: number;
  vaddr: number;
  fileSize: number;
  memSize: number;
  /** Entropy of the file-backed bytes (PT_LOAD only, else 0). */
  entropy: number;
}

export interface ElfInfo {
  is64: boolean;
  littleEndian: boolean;
  type: number;
  machine: number;
  entry: number;
  sections: ElfSection[];
  segments: ElfSegment[];
  interpreter: string | null;
  needed: string[];
  /** Undefined dynamic symbols: what the binary imports. */
  importedSymbols: string[];
  /** Defined global dynamic symbols. */
  exportedSymbols: string[];
  hasSymtab: boolean;
  hasDynamic: boolean;
  /** True when the file has no section header table at all. */
  noSectionHeaders: boolean;
  upxMarker: boolean;
  anomalies: string[];
}

const PT_LOAD = 1;
const PT_DYNAMIC = 2;
const PT_INTERP = 3;
const PT_GNU_STACK = 0x6474e551;
const PF_X = 1;
const PF_W = 2;
const SHT_SYMTAB = 2;
const SHT_DYNSYM = 11;
const SHT_DYNAMIC = 6;
const SHT_NOBITS = 8;
const SHF_WRITE = 1;
const SHF_EXECINSTR = 4;
const MAX_SECTIONS = 512;
const MAX_SEGMENTS = 256;
const MAX_SYMBOLS = 50_000;

/** Parses an ELF file; null when it is not one. Never throws on hostile input. */
export function parseElf(buf: Buffer): ElfInfo | null {
  if (buf.length < 52 || buf[0] !== 0x7f || buf[1] !== 0x45 || buf[2] !== 0x4c || buf[3] !== 0x46) return null;
  const cls = buf[4];
  const data = buf[5];
  if ((cls !== 1 && cls !== 2) || (data !== 1 && data !== 2)) return null;
  const is64 = cls === 2;
  const le = data === 1;
  if (is64 && buf.length < 64) return null;
  const anomalies: string[] = [];
  const ok = (off: number, len: number): boolean => Number.isSafeInteger(off) && off >= 0 && off + len <= buf.length;
  const u16 = (o: number): number => (le ? buf.readUInt16LE(o) : buf.readUInt16BE(o));
  const u32 = (o: number): number => (le ? buf.readUInt32LE(o) : buf.readUInt32BE(o));
  const u64 = (o: number): number => Number(le ? buf.readBigUInt64LE(o) : buf.readBigUInt64BE(o));
  const word = (o: number): number => (is64 ? u64(o) : u32(o));
  const cstr = (o: number, max = 1024): string => {
    if (!ok(o, 1)) return '';
    const end = Math.min(buf.length, o + max);
    let i = o;
    while (i < end && buf[i] !== 0) i++;
    return buf.toString('latin1', o, i);
  };

  const type = u16(16);
  const machine = u16(18);
  const entry = word(24);
  const phoff = is64 ? u64(32) : u32(28);
  const shoff = is64 ? u64(40) : u32(32);
  const phentsize = u16(is64 ? 54 : 42);
  const phnum = u16(is64 ? 56 : 44);
  const shentsize = u16(is64 ? 58 : 46);
  const shnum = u16(is64 ? 60 : 48);
  const shstrndx = u16(is64 ? 62 : 50);

  const segments: ElfSegment[] = [];
  const phMin = is64 ? 56 : 32;
  if (phnum > 0 && phentsize < phMin) anomalies.push('program header entry size too small');
  else {
    for (let i = 0; i < Math.min(phnum, MAX_SEGMENTS); i++) {
      const p = phoff + i * phentsize;
      if (!ok(p, phMin)) {
        anomalies.push('program header table truncated');
        break;
      }
      if (is64) {
        segments.push({ type: u32(p), flags: u32(p + 4), offset: u64(p + 8), vaddr: u64(p + 16), fileSize: u64(p + 32), memSize: u64(p + 40), entropy: 0 });
      } else {
        segments.push({ type: u32(p), offset: u32(p + 4), vaddr: u32(p + 8), fileSize: u32(p + 16), memSize: u32(p + 20), flags: u32(p + 24), entropy: 0 });
      }
    }
  }

  for (const s of segments) {
    if (s.type === PT_LOAD && ok(s.offset, 0)) s.entropy = shannonEntropy(buf, s.offset, Math.min(buf.length, s.offset + s.fileSize));
  }

  let interpreter: string | null = null;
  const interp = segments.find((s) => s.type === PT_INTERP);
  if (interp) interpreter = ok(interp.offset, 1) ? cstr(interp.offset, Math.min(interp.fileSize, 256)) : null;

  interface RawSection { nameOff: number; type: number; flags: number; offset: number; size: number; link: number; entsize: number }
  const raw: RawSection[] = [];
  const shMin = is64 ? 64 : 40;
  if (shnum > 0 && shentsize < shMin) anomalies.push('section header entry size too small');
  else {
    for (let i = 0; i < Math.min(shnum, MAX_SECTIONS); i++) {
      const s = shoff + i * shentsize;
      if (!ok(s, shMin)) {
        anomalies.push('section header table truncated or beyond end of file');
        break;
      }
      if (is64) raw.push({ nameOff: u32(s), type: u32(s + 4), flags: u64(s + 8), offset: u64(s + 24), size: u64(s + 32), link: u32(s + 40), entsize: u64(s + 56) });
      else raw.push({ nameOff: u32(s), type: u32(s + 4), flags: u32(s + 8), offset: u32(s + 16), size: u32(s + 20), link: u32(s + 24), entsize: u32(s + 36) });
    }
  }
  const shstr = raw[shstrndx];
  const sections: ElfSection[] = raw.map((s) => {
    const inFile = s.type !== SHT_NOBITS && ok(s.offset, 0);
    const end = Math.min(buf.length, s.offset + s.size);
    return {
      name: shstr ? cstr(shstr.offset + s.nameOff, 128) : '',
      type: s.type,
      flags: s.flags,
      offset: s.offset,
      size: s.size,
      entropy: inFile && s.size > 0 ? shannonEntropy(buf, s.offset, end) : 0,
    };
  });

  const importedSymbols: string[] = [];
  const exportedSymbols: string[] = [];
  const dynsym = raw.find((s) => s.type === SHT_DYNSYM);
  if (dynsym) {
    const strtab = raw[dynsym.link];
    const ent = is64 ? 24 : 16;
    const count = Math.min(Math.floor(dynsym.size / ent), MAX_SYMBOLS);
    for (let i = 1; strtab && i < count; i++) {
      const o = dynsym.offset + i * ent;
      if (!ok(o, ent)) break;
      const nameOff = u32(o);
      const info = is64 ? buf[o + 4] : buf[o + 12];
      const shndx = is64 ? u16(o + 6) : u16(o + 14);
      const bind = info >> 4;
      const name = nameOff < strtab.size ? cstr(strtab.offset + nameOff, 256) : '';
      if (name === '') continue;
      const bare = name.split('@')[0];
      if (shndx === 0) importedSymbols.push(bare);
      else if (bind === 1 || bind === 2) exportedSymbols.push(bare);
    }
  }

  const needed: string[] = [];
  const dynSec = raw.find((s) => s.type === SHT_DYNAMIC);
  if (dynSec) {
    const strtab = raw[dynSec.link];
    const ent = is64 ? 16 : 8;
    const count = Math.min(Math.floor(dynSec.size / ent), 4096);
    for (let i = 0; strtab && i < count; i++) {
      const o = dynSec.offset + i * ent;
      if (!ok(o, ent)) break;
      const tag = is64 ? u64(o) : u32(o);
      if (tag === 0) break;
      if (tag === 1) {
        const v = is64 ? u64(o + 8) : u32(o + 4);
        if (v < strtab.size) needed.push(cstr(strtab.offset + v, 256));
      }
    }
  }

  // UPX writes "UPX!" into the loader header near the start and the trailer, and its stub carries
  // a "$Info: This file is packed with the UPX" banner.
  const head = buf.subarray(0, Math.min(buf.length, 4096));
  const tail = buf.subarray(Math.max(0, buf.length - 4096));
  const upxMarker = head.includes('UPX!') || tail.includes('UPX!') || buf.includes('$Info: This file is packed with the UPX');

  return {
    is64,
    littleEndian: le,
    type,
    machine,
    entry,
    sections,
    segments,
    interpreter,
    needed,
    importedSymbols,
    exportedSymbols,
    hasSymtab: raw.some((s) => s.type === SHT_SYMTAB),
    hasDynamic: segments.some((s) => s.type === PT_DYNAMIC),
    noSectionHeaders: shnum === 0,
    upxMarker,
    anomalies,
  };
}

const STANDARD_INTERPRETERS = /^\/(?:usr\/)?lib(?:32|64|x32)?\/(?:[a-z0-9_-]+\/)?ld-(?:linux[a-z0-9_.-]*|musl-[a-z0-9_]+)\.so(?:\.\d+)*$|^\/system\/bin\/linker(?:64)?$/;

export function analyzeElf(elf: ElfInfo): Finding[] {
  const f: Finding[] = [];
  const isExec = elf.type === 2 || elf.type === 3;
  const packerTraits: string[] = [];

  if (elf.upxMarker) {
    f.push(makeFinding(ENGINE, 'elf.packer.upx', 'Packer.UPX', 'low', 0.9, 'The UPX packer signature is present; legitimate tools use UPX too.', 'packer', 'UPX!'));
    packerTraits.push('UPX marker');
  }
  if (isExec && elf.noSectionHeaders) {
    f.push(makeFinding(ENGINE, 'elf.no_sections', 'Suspicious.NoSectionHeaders', 'low', 0.6, 'The executable has no section header table (stripped by a packer or sstrip).', 'packer'));
    packerTraits.push('no section headers');
  }
  const wx = elf.segments.filter((s) => s.type === PT_LOAD && (s.flags & PF_W) !== 0 && (s.flags & PF_X) !== 0);
  if (wx.length > 0) {
    f.push(makeFinding(ENGINE, 'elf.segment.wx', 'Suspicious.WritableCode', 'low', 0.6, 'A loadable segment is both writable and executable, which self-unpacking code needs.', 'packer', `${wx.length} RWX PT_LOAD`));
    packerTraits.push('writable+executable segment');
  }
  const wxSections = elf.sections.filter((s) => (s.flags & SHF_WRITE) !== 0 && (s.flags & SHF_EXECINSTR) !== 0);
  if (wxSections.length > 0) {
    f.push(makeFinding(ENGINE, 'elf.section.wx', 'Suspicious.WritableCode', 'low', 0.6, 'A section is both writable and executable.', 'packer', wxSections.map((s) => s.name).join(',')));
  }
  const stack = elf.segments.find((s) => s.type === PT_GNU_STACK);
  if (stack && (stack.flags & PF_X) !== 0) {
    f.push(makeFinding(ENGINE, 'elf.stack.exec', 'Suspicious.ExecutableStack', 'low', 0.5, 'The binary requests an executable stack (PT_GNU_STACK with X).', 'anomaly'));
  }
  const highSecs = elf.sections.filter((s) => s.size >= 1024 && s.entropy >= 7.4 && ((s.flags & SHF_EXECINSTR) !== 0 || s.name === '.data' || s.name === '.rodata'));
  const segHigh = elf.noSectionHeaders
    ? elf.segments.filter((s) => s.type === PT_LOAD && s.fileSize >= 1024 && s.entropy >= 7.4)
    : [];
  if (highSecs.length > 0 || segHigh.length > 0) {
    f.push(makeFinding(ENGINE, 'elf.section.high_entropy', 'Packed.HighEntropy', 'low', 0.6, 'Code or data holds content with entropy above 7.4 bits/byte: compressed or encrypted payload.', 'packer',
      highSecs.map((s) => `${s.name}=${s.entropy.toFixed(2)}`).join(' ') || 'high-entropy PT_LOAD'));
    packerTraits.push('high-entropy content');
  }
  if (packerTraits.length >= 3) {
    f.push(makeFinding(ENGINE, 'elf.packed', 'Packed.Generic', 'medium', 0.75, `Several packer traits together: ${packerTraits.join('; ')}.`, 'packer'));
  }

  const isStatic = isExec && !elf.interpreter && !elf.hasDynamic && !elf.noSectionHeaders;
  const stripped = isExec && !elf.hasSymtab && !elf.noSectionHeaders;
  if (isStatic && stripped) {
    f.push(makeFinding(ENGINE, 'elf.static_stripped', 'StaticStripped', 'low', 0.5, 'Statically linked and stripped: self-contained with no symbols, common for implants and for some release builds.', 'structure'));
  } else {
    if (stripped) f.push(makeFinding(ENGINE, 'elf.stripped', 'Stripped', 'info', 0.9, 'No .symtab: the binary is stripped (normal for distribution builds).', 'structure'));
    if (isStatic) f.push(makeFinding(ENGINE, 'elf.static', 'StaticallyLinked', 'info', 0.9, 'Statically linked: no interpreter and no dynamic section.', 'structure'));
  }
  if (elf.interpreter !== null && !STANDARD_INTERPRETERS.test(elf.interpreter)) {
    f.push(makeFinding(ENGINE, 'elf.interp.unusual', 'Suspicious.Interpreter', 'low', 0.5, 'The program interpreter is not a standard dynamic loader path.', 'anomaly', elf.interpreter));
  }
  if (isExec && elf.entry !== 0 && elf.segments.length > 0) {
    const inExec = elf.segments.some((s) => s.type === PT_LOAD && (s.flags & PF_X) !== 0 && elf.entry >= s.vaddr && elf.entry < s.vaddr + s.memSize);
    if (!inExec) f.push(makeFinding(ENGINE, 'elf.entry.outside_code', 'Suspicious.EntryPoint', 'medium', 0.6, 'The entry point is not inside an executable loadable segment.', 'anomaly', `entry=0x${elf.entry.toString(16)}`));
  }
  if (elf.anomalies.length > 0) {
    f.push(makeFinding(ENGINE, 'elf.malformed', 'Malformed.ELF', 'low', 0.5, `Structural anomalies: ${elf.anomalies.slice(0, 3).join('; ')}.`, 'anomaly'));
  }
  return f;
}

export function elfReport(elf: ElfInfo): Record<string, unknown> {
  return {
    format: elf.is64 ? 'ELF64' : 'ELF32',
    type: elf.type,
    machine: elf.machine,
    interpreter: elf.interpreter,
    needed: elf.needed,
    sections: elf.sections.length,
    segments: elf.segments.length,
    importedSymbols: elf.importedSymbols.length,
    exportedSymbols: elf.exportedSymbols.length,
    stripped: !elf.hasSymtab,
  };
}

export const engine: Engine = {
  name: ENGINE,
  async scan(subject: ScanSubject): Promise<EngineOutput> {
    const elf = subject.file.elf();
    if (!elf) return { findings: [], note: 'not an ELF file' };
    return { findings: analyzeElf(elf), report: { elf: elfReport(elf) } };
  },
};
