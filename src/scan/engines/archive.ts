/**
 * Archive extraction for recursive analysis: zip/jar/apk (yauzl), tar (tar-stream), gzip (node
 * zlib). 7z and RAR are identified but not extracted (no well-kept pure-JS extractor), and say so.
 * Every member is inflated as a stream with a byte cap, so a bomb ends as a finding after at most
 * the cap, never as an exhausted process. Members go back to analyze() for their own scan.
 */
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import type { Engine, EngineContext, EngineOutput, Finding, ScanSubject } from '../types';
import { ByteCapExceeded, forEachZipEntry, openEntryStream, openZip, readCapped } from '../zip';

export interface ArchiveLimits {
  /** Archives nested deeper than this are not opened. Default 5. */
  maxDepth: number;
  /** Members extracted from one archive. Default 1,000. */
  maxMembers: number;
  /** Total expanded bytes from one archive. Default 256 MB. */
  maxTotalBytes: number;
  /** Expanded/compressed ratio above which a member is a bomb. Default 100. */
  maxRatio: number;
  /** Members expanding to less than this are never judged by ratio (small text compresses well). Default 1 MB. */
  ratioMinBytes: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxDepth: 5,
  maxMembers: 1000,
  maxTotalBytes: 256 * 1024 * 1024,
  maxRatio: 100,
  ratioMinBytes: 1024 * 1024,
};

export interface Member { path: string; content: Buffer }

interface Extraction {
  members: Member[];
  findings: Finding[];
  entries: number;
  expandedBytes: number;
  skipped: number;
  notes: string[];
}

const MB = 1024 * 1024;
const fmtMB = (n: number): string => `${(n / MB).toFixed(1)} MB`;

function limitFinding(id: string, name: string, severity: Finding['severity'], description: string, excerpt?: string): Finding {
  return { id, name, severity, confidence: 0.9, category: 'archive', description, ...(excerpt ? { excerpt } : {}) };
}

class Extractor {
  readonly out: Extraction = { members: [], findings: [], entries: 0, expandedBytes: 0, skipped: 0, notes: [] };
  private bombs: string[] = [];
  private encrypted: string[] = [];
  private sizeLimitHit = false;
  private memberLimitHit = false;

  constructor(private readonly limits: ArchiveLimits, private readonly signal: AbortSignal) {}

  get remaining(): number { return this.limits.maxTotalBytes - this.out.expandedBytes; }

  /** True when another member may be taken; records the member-limit condition otherwise. */
  admit(): boolean {
    this.out.entries++;
    if (this.signal.aborted) throw new Error('archive extraction aborted');
    if (this.out.members.length >= this.limits.maxMembers) {
      this.memberLimitHit = true;
      this.out.skipped++;
      return false;
    }
    return true;
  }

  encryptedMember(path: string): void { this.encrypted.push(path); this.out.skipped++; }

  /** Byte cap for a member: the ratio cap (when compressed size is known) and what is left in total. */
  capFor(compressed: number | undefined): { cap: number; byRatio: boolean } {
    const ratioCap = compressed === undefined ? Infinity : Math.max(this.limits.ratioMinBytes, compressed * this.limits.maxRatio);
    return ratioCap < this.remaining ? { cap: ratioCap, byRatio: true } : { cap: this.remaining, byRatio: false };
  }

  /** Declared sizes already prove a bomb: skip without inflating. */
  declaredBomb(path: string, compressed: number, uncompressed: number): boolean {
    if (uncompressed >= this.limits.ratioMinBytes && uncompressed > compressed * this.limits.maxRatio) {
      this.bombs.push(`${path} (${fmtMB(uncompressed)} from ${compressed} bytes)`);
      this.out.skipped++;
      return true;
    }
    return false;
  }

  async take(path: string, stream: Readable, compressed: number | undefined): Promise<void> {
    const { cap, byRatio } = this.capFor(compressed);
    try {
      const content = await readCapped(stream, cap, this.signal);
      this.out.expandedBytes += content.length;
      if (content.length) this.out.members.push({ path, content });
    } catch (err) {
      if (!(err instanceof ByteCapExceeded)) throw err;
      this.out.skipped++;
      if (byRatio) this.bombs.push(`${path} (more than ${fmtMB(cap)} from ${compressed} bytes)`);
      else this.sizeLimitHit = true;
    }
  }

  noteTooBig(): void { this.sizeLimitHit = true; this.out.skipped++; }

  finish(): Extraction {
    const L = this.limits;
    if (this.bombs.length) {
      this.out.findings.push(limitFinding('archive.bomb', 'Decompression bomb', 'high',
        `${this.bombs.length} member(s) expand more than ${L.maxRatio}:1 (over ${fmtMB(L.ratioMinBytes)}); extraction stopped at the cap.`,
        this.bombs.slice(0, 3).join('; ')));
    }
    if (this.sizeLimitHit) {
      this.out.findings.push(limitFinding('archive.size_limit', 'Archive expands beyond the size limit', 'medium',
        `Expanded content exceeds ${fmtMB(L.maxTotalBytes)}; the remaining members were not inspected.`));
    }
    if (this.memberLimitHit) {
      const excessive = this.out.entries > 10 * L.maxMembers;
      this.out.findings.push(limitFinding('archive.member_limit', excessive ? 'Excessive archive member count' : 'Archive member limit reached',
        excessive ? 'medium' : 'low',
        `The archive has ${this.out.entries} entries; only the first ${L.maxMembers} were inspected.`));
    }
    if (this.encrypted.length) {
      this.out.findings.push({
        id: 'archive.encrypted_member', name: 'Encrypted archive member', severity: 'medium', confidence: 0.8, category: 'evasion',
        description: `${this.encrypted.length} encrypted member(s) could not be inspected.`,
        excerpt: this.encrypted.slice(0, 5).join(', '),
      });
    }
    return this.out;
  }
}

async function extractZip(content: Buffer, x: Extractor): Promise<void> {
  const zip = await openZip(content);
  await forEachZipEntry(zip, async (entry) => {
    if (entry.fileName.endsWith('/')) return true;
    if (!x.admit()) return true;
    if (entry.isEncrypted()) { x.encryptedMember(entry.fileName); return true; }
    if (x.declaredBomb(entry.fileName, entry.compressedSize, entry.uncompressedSize)) return true;
    if (entry.uncompressedSize > x.remaining) { x.noteTooBig(); return true; }
    await x.take(entry.fileName, await openEntryStream(zip, entry), entry.compressedSize);
    return true;
  });
}

async function extractTar(content: Buffer, x: Extractor): Promise<void> {
  const extract = tar.extract();
  Readable.from([content]).pipe(extract);
  for await (const entry of extract) {
    const { name, type, size } = entry.header;
    if (type !== 'file' && type !== 'contiguous-file') { entry.resume(); continue; }
    if (!x.admit() || (size ?? 0) > x.remaining) {
      if ((size ?? 0) > x.remaining) x.noteTooBig();
      entry.resume();
      continue;
    }
    await x.take(name, entry, undefined);
  }
}

function gunzipName(name: string): string {
  const base = name.split('/').pop() ?? '';
  if (/\.tgz$/i.test(base)) return base.replace(/\.tgz$/i, '.tar');
  if (/\.gz$/i.test(base)) return base.replace(/\.gz$/i, '');
  return base ? `${base}.gunzipped` : 'gunzipped';
}

async function extractGzip(content: Buffer, name: string, x: Extractor): Promise<void> {
  if (!x.admit()) return;
  const gunzip = zlib.createGunzip();
  Readable.from([content]).pipe(gunzip);
  await x.take(gunzipName(name), gunzip, content.length);
}

const NOT_EXTRACTED = new Set(['7z', 'rar']);

export function createArchiveEngine(limits: Partial<ArchiveLimits> = {}): Engine {
  const L: ArchiveLimits = { ...DEFAULT_ARCHIVE_LIMITS, ...limits };
  return {
    name: 'archive',
    async scan(subject: ScanSubject, ctx: EngineContext): Promise<EngineOutput> {
      if (NOT_EXTRACTED.has(subject.fileType)) {
        return {
          findings: [limitFinding('archive.not_extracted', `${subject.fileType} archive not inspected`, 'low',
            `${subject.fileType} archives are identified but not extracted; their members were not scanned.`)],
          note: `${subject.fileType} extraction is not supported`,
          report: { archive: { format: subject.fileType, extracted: false } },
        };
      }
      if (subject.depth >= L.maxDepth) {
        return {
          findings: [limitFinding('archive.depth_limit', 'Archive nesting too deep', 'high',
            `Archives are nested more than ${L.maxDepth} levels deep; the innermost archive was not opened.`)],
          report: { archive: { format: subject.fileType, extracted: false, depth: subject.depth } },
        };
      }
      const x = new Extractor(L, ctx.signal);
      try {
        if (subject.fileType === 'tar') await extractTar(subject.content, x);
        else if (subject.fileType === 'gzip') await extractGzip(subject.content, subject.name, x);
        else await extractZip(subject.content, x);
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        const msg = err instanceof Error ? err.message : String(err);
        x.out.findings.push(limitFinding('archive.damaged', 'Damaged archive', 'low',
          `The archive could not be fully read (${msg.slice(0, 120)}); members after the damage were not inspected.`));
        x.out.notes.push(`extraction stopped: ${msg}`);
      }
      const out = x.finish();
      return {
        findings: out.findings,
        members: out.members,
        ...(out.notes.length ? { note: out.notes.join('; ') } : {}),
        report: {
          archive: {
            format: subject.fileType,
            extracted: true,
            entries: out.entries,
            membersExtracted: out.members.length,
            membersSkipped: out.skipped,
            expandedBytes: out.expandedBytes,
          },
        },
      };
    },
  };
}
