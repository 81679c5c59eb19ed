/**
 * Which engines run for which file types and scan types, with what time budget: one table.
 * analyze() asks this table and nothing else; engines never decide for themselves whether to run.
 *
 * `members` says whether the engine also runs on archive members handed back for recursion:
 *  - 'always'
 *  - 'if-container-flagged': only when it fired on the enclosing archive. clamd unpacks archives
 *    itself, so rescanning every member would double its work; when the archive is flagged, the
 *    members are rescanned so the finding names the member that carries the signature.
 *  - 'never': the container-level result already covers members (e.g. the archive engine's own
 *    recursion is driven by analyze).
 */
import type { Engine, FileType, ScanType } from './types';
import { createArchiveEngine, type ArchiveLimits } from './engines/archive';
import { createClamavEngine, type ClamdAddress } from './engines/clamav';
import { createCveEngine } from './engines/cve';
import { createFeedEngine, type FeedLookup } from './engines/feeds';
import { createYaraEngine } from './engines/yara';
import { engine as staticPe } from './engines/pe';
import { engine as staticElf } from './engines/elf';
import { engine as staticOffice } from './engines/office';
import { engine as staticPdf } from './engines/pdf';
import { engine as staticScript } from './engines/script';
import { engine as behavior } from './engines/behavior';
import { engine as ml } from './engines/ml';
import { payloadEngines } from './engines/payload';

/** Everything engines need from outside; each field optional with the documented default. */
export interface EngineDeps {
  /** clamd address (config.ts); absent: clamav is 'unavailable'. */
  clamd?: ClamdAddress;
  /** Threat-feed lookup (mongoFeedLookup(db) in the service); absent = engine 'unavailable'. */
  feedLookup?: FeedLookup;
  /** YARA rule directories; default the bundled rules/yara. */
  yaraRuleDirs?: string[];
  /** CVE dataset file; default datasets/cve/cves.json. */
  cveDatasetPath?: string;
  archiveLimits?: Partial<ArchiveLimits>;
}

export type MemberPolicy = 'always' | 'if-container-flagged' | 'never';

export interface RegistryRow {
  engine: string;
  fileTypes: readonly FileType[] | 'all';
  scanTypes: readonly ScanType[];
  budgetMs: number;
  /** Extra budget per MB of content, for engines whose cost grows with size (text engines). */
  budgetMsPerMb?: number;
  members: MemberPolicy;
  /**
   * 'pool': CPU-bound work that runs on the engine pool's worker threads when the service has one
   * (pool.ts): synchronous JavaScript, and YARA, whose native scan copies the whole content on the
   * calling thread first (tens of milliseconds per 60 MB, which the main thread must not spend).
   * Everything else waits on I/O and stays on the main thread.
   */
  thread?: 'pool';
  /**
   * Reads the subject's shared parse and strings (FileAnalysis): on the pool, a PE or ELF is
   * prepared once on a thread and its facts handed to every engine with this flag.
   */
  sharesParse?: true;
  create: (deps: EngineDeps) => Engine;
}

const SCRIPTS: readonly FileType[] = ['powershell', 'javascript', 'vbscript', 'batch', 'shell', 'python', 'php'];
const BOTH: readonly ScanType[] = ['file', 'payload'];
const PARTIAL: readonly FileType[] = [...SCRIPTS, 'html', 'text', 'unknown', 'zip', '7z', 'rar', 'tar', 'gzip', 'office_ooxml', 'office_ole', 'pdf', 'image'];
const fixed = (e: Engine) => (): Engine => e;

export const REGISTRY: readonly RegistryRow[] = [
  { engine: 'clamav', fileTypes: 'all', scanTypes: BOTH, budgetMs: 30_000, members: 'if-container-flagged', create: (d) => createClamavEngine(d.clamd) },
  { engine: 'yara', thread: 'pool', fileTypes: 'all', scanTypes: BOTH, budgetMs: 10_000, members: 'always', create: (d) => createYaraEngine({ ruleDirs: d.yaraRuleDirs }) },
  { engine: 'threat_feed', fileTypes: 'all', scanTypes: BOTH, budgetMs: 3_000, members: 'always', create: (d) => createFeedEngine(d.feedLookup) },
  { engine: 'archive', fileTypes: ['zip', 'jar', 'apk', 'tar', 'gzip', '7z', 'rar'], scanTypes: BOTH, budgetMs: 30_000, members: 'always', create: (d) => createArchiveEngine(d.archiveLimits) },
  { engine: 'cve', thread: 'pool', fileTypes: ['jar', 'apk', 'zip', 'pe', 'elf', 'macho'], scanTypes: BOTH, budgetMs: 5_000, members: 'always', create: (d) => createCveEngine({ datasetPath: d.cveDatasetPath }) },
  { engine: 'static_pe', thread: 'pool', sharesParse: true, fileTypes: ['pe'], scanTypes: BOTH, budgetMs: 10_000, members: 'always', create: fixed(staticPe) },
  { engine: 'static_elf', thread: 'pool', sharesParse: true, fileTypes: ['elf'], scanTypes: BOTH, budgetMs: 10_000, members: 'always', create: fixed(staticElf) },
  { engine: 'static_office', thread: 'pool', fileTypes: ['office_ooxml', 'office_ole'], scanTypes: BOTH, budgetMs: 10_000, members: 'always', create: fixed(staticOffice) },
  { engine: 'static_pdf', thread: 'pool', fileTypes: ['pdf'], scanTypes: BOTH, budgetMs: 10_000, members: 'always', create: fixed(staticPdf) },
  // Text too: a one-liner saved as .txt (or pasted into a payload) is still a script.
  { engine: 'static_script', thread: 'pool', fileTypes: [...SCRIPTS, 'html', 'text', 'unknown'], scanTypes: BOTH, budgetMs: 5_000, members: 'always', create: fixed(staticScript) },
  { engine: 'behavior', thread: 'pool', sharesParse: true, fileTypes: ['pe', 'elf', 'macho', ...SCRIPTS], scanTypes: BOTH, budgetMs: 10_000, members: 'always', create: fixed(behavior) },
  // PE/ELF (full coverage) and every partial-coverage type (docs/contract.md §5 "Coverage": ML model plus the engine set).
  { engine: 'ml', thread: 'pool', sharesParse: true, fileTypes: ['pe', 'elf', ...PARTIAL], scanTypes: BOTH, budgetMs: 5_000, members: 'always', create: fixed(ml) },
  ...payloadEngines.map((e): RegistryRow => ({
    engine: e.name, fileTypes: 'all', scanTypes: ['payload'], budgetMs: 5_000, budgetMsPerMb: 600, members: 'never', thread: 'pool', create: fixed(e),
  })),
];

/** The time an engine may take on content of this size. */
export const budgetFor = (row: RegistryRow, bytes: number): number =>
  row.budgetMs + Math.ceil((row.budgetMsPerMb ?? 0) * (bytes / (1024 * 1024)));

export interface EngineSlot { engine: Engine; row: RegistryRow }

/** Instantiates every row once; the result is reused for every scan. */
export function buildEngines(deps: EngineDeps = {}, rows: readonly RegistryRow[] = REGISTRY): EngineSlot[] {
  const slots = rows.map((row) => {
    const engine = row.create(deps);
    if (engine.name !== row.engine) throw new Error(`registry row "${row.engine}" created engine "${engine.name}"`);
    return { engine, row };
  });
  const names = slots.map((s) => s.engine.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new Error(`engine "${dup}" registered twice`);
  return slots;
}

export function selectEngines(
  slots: readonly EngineSlot[],
  fileType: FileType,
  scanType: ScanType,
  member: { depth: number; containerFlaggedBy: ReadonlySet<string> },
): EngineSlot[] {
  return slots.filter(({ row }) => {
    if (!row.scanTypes.includes(scanType)) return false;
    if (row.fileTypes !== 'all' && !row.fileTypes.includes(fileType)) return false;
    if (member.depth === 0) return true;
    if (row.members === 'never') return false;
    if (row.members === 'if-container-flagged') return member.containerFlaggedBy.has(row.engine);
    return true;
  });
}
