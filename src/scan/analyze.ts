/**
 * The scan pipeline: hash once, identify once (or take the caller's identification), run the
 * registry's engines (each within its budget) on one shared FileAnalysis per file, recurse into
 * archive members, then let verdict.ts judge. No HTTP, no storage: synchronous scans, deferred
 * scans and file-transfer scanning all call analyze().
 */
import { createHash } from 'node:crypto';
import { identify, type FileTypeInfo } from './filetype';
import { FileAnalysis } from './file-analysis';
import { budgetFor, buildEngines, selectEngines, type EngineDeps, type EngineSlot } from './registry';
import { runEngineWithMembers } from './runner';
import type { EnginePool } from './pool';
import { DEFAULT_ARCHIVE_LIMITS } from './engines/archive';
import { computeVerdict, notScannedVerdict } from './verdict';
import type { Coverage, EngineResult, FileType, Finding, SafetyScore, ScanSubject, ScanType } from './types';

export interface AnalyzeInput {
  content: Buffer;
  /** File name or payload label ("" when none); a hint only. */
  name: string;
  scanType: ScanType;
  /** From the scan profile: hidden from the visible output, still counted in the score. */
  suppressedEngines?: string[];
  /** Digests already computed while the content streamed in (uploads); computed here otherwise. */
  hashes?: { sha256: string; md5: string; sha1: string };
  /** The content's type when the caller already identified it (a scan profile's type check). */
  type?: FileTypeInfo;
}

export interface AnalyzeDeps extends EngineDeps {
  /** Prebuilt engine slots (tests, or a caller that builds once); default: the whole registry. */
  engines?: EngineSlot[];
  /** Worker threads for the CPU-bound engines; absent = every engine runs on the calling thread. */
  pool?: EnginePool;
}

export interface MemberSummary { path: string; fileType: FileType; size: number; sha256: string; depth: number }

export interface AnalysisResult {
  fileType: FileType;
  contentType: string;
  coverage: Coverage;
  sha256: string;
  md5: string;
  sha1: string;
  size: number;
  safetyScore: SafetyScore;
  /** Per-engine outcome keyed by engine name; archive members' findings are merged in, tagged with their member path. */
  engines: Record<string, EngineResult>;
  /** Engine reports merged (e.g. codeExtraction, promptInjection, archive, cve), plus `members` for archives. */
  reports: Record<string, unknown>;
  scanTimeMs: number;
}

const slotCache = new WeakMap<AnalyzeDeps, EngineSlot[]>();
let defaultSlots: EngineSlot[] | null = null;

function slotsFor(deps: AnalyzeDeps | undefined): EngineSlot[] {
  if (deps?.engines) return deps.engines;
  if (!deps) return (defaultSlots ??= buildEngines({}));
  let slots = slotCache.get(deps);
  if (!slots) {
    slots = deps.pool ? deps.pool.wrap(buildEngines(deps)) : buildEngines(deps);
    slotCache.set(deps, slots);
  }
  return slots;
}

/**
 * Builds the engines `deps` will scan with now (YARA compiles its rules, the models load) instead of
 * in the first scan, where the event loop would stall for every request in flight.
 */
export function prepareEngines(deps: AnalyzeDeps): void {
  slotsFor(deps);
}

export function hashes(content: Buffer): { sha256: string; md5: string; sha1: string } {
  return {
    sha256: createHash('sha256').update(content).digest('hex'),
    md5: createHash('md5').update(content).digest('hex'),
    sha1: createHash('sha1').update(content).digest('hex'),
  };
}

/** One file's shared analysis, starting from what identification already read. */
const analysisOf = (content: Buffer, type: FileTypeInfo): FileAnalysis =>
  new FileAnalysis(content, type.zip !== undefined ? { zip: type.zip } : {});

/** Bytes hashed between two turns of the event loop (about 10 ms of the three digests here). */
const HASH_SLICE_BYTES = 4 * 1024 * 1024;

/**
 * The same digests as hashes(), a slice at a time with the event loop free in between: a deferred
 * scan of 60 MB otherwise held every other request of the process for a third of a second.
 */
export async function hashesInSlices(content: Buffer): Promise<{ sha256: string; md5: string; sha1: string }> {
  if (content.length <= HASH_SLICE_BYTES) return hashes(content);
  const digests = [createHash('sha256'), createHash('md5'), createHash('sha1')];
  for (let at = 0; at < content.length; at += HASH_SLICE_BYTES) {
    const slice = content.subarray(at, at + HASH_SLICE_BYTES);
    for (const d of digests) d.update(slice);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  const [sha256, md5, sha1] = digests.map((d) => d.digest('hex'));
  return { sha256, md5, sha1 };
}

interface TreeState {
  members: number;
  bytes: number;
  limitHit: string[];
  summaries: MemberSummary[];
}

const fired = (r: EngineResult): boolean => r.status === 'ok' && r.findings.some((f) => f.severity !== 'info');

function mergeMemberResult(into: Map<string, EngineResult>, r: EngineResult, memberPath: string): void {
  const findings = r.findings.map((f): Finding => ({ ...f, member: f.member ? `${memberPath}/${f.member}` : memberPath }));
  const existing = into.get(r.engine);
  if (!existing) {
    const { report: _memberReport, ...rest } = r;
    into.set(r.engine, { ...rest, findings, ...(r.note ? { note: `${memberPath}: ${r.note}` } : {}) });
    return;
  }
  existing.findings.push(...findings);
  existing.durationMs += r.durationMs;
  if (r.status !== 'ok') {
    const note = `${memberPath}: ${r.status}${r.note ? ` (${r.note})` : ''}`;
    existing.note = existing.note ? `${existing.note}; ${note}` : note;
  }
}

export async function analyze(input: AnalyzeInput, deps?: AnalyzeDeps): Promise<AnalysisResult> {
  const started = performance.now();
  const slots = slotsFor(deps);
  const limits = { ...DEFAULT_ARCHIVE_LIMITS, ...deps?.archiveLimits };
  const { content, name, scanType } = input;
  const rootHashes = input.hashes ?? await hashesInSlices(content);
  const rootType = input.type ?? await identify(content, name);
  const results = new Map<string, EngineResult>();
  const reports: Record<string, unknown> = {};
  const tree: TreeState = { members: 0, bytes: 0, limitHit: [], summaries: [] };

  const scanOne = async (
    subject: ScanSubject,
    memberPath: string,
    containerFlaggedBy: ReadonlySet<string>,
  ): Promise<void> => {
    const selected = selectEngines(slots, subject.fileType, scanType, { depth: subject.depth, containerFlaggedBy });
    const runs = await Promise.all(selected.map((s) => runEngineWithMembers(s.engine, subject, budgetFor(s.row, subject.size))));
    for (const { result } of runs) {
      if (subject.depth === 0) {
        const { report, ...rest } = result;
        results.set(result.engine, { ...rest, findings: [...rest.findings] });
        if (report) Object.assign(reports, report);
      } else {
        mergeMemberResult(results, result, memberPath);
      }
    }
    const flagged = new Set(runs.filter((r) => fired(r.result)).map((r) => r.result.engine));
    const members = runs.flatMap((r) => r.members);
    runs.length = 0;
    // Members are scanned one at a time and released as we go, so memory stays near the archive's
    // expanded size (itself capped by the archive limits).
    while (members.length) {
      const m = members.shift() as { path: string; content: Buffer };
      if (tree.members >= limits.maxMembers || tree.bytes + m.content.length > limits.maxTotalBytes) {
        tree.limitHit.push(m.path);
        continue;
      }
      tree.members++;
      tree.bytes += m.content.length;
      const path = memberPath ? `${memberPath}/${m.path}` : m.path;
      const info = await identify(m.content, m.path);
      const h = await hashesInSlices(m.content);
      tree.summaries.push({ path, fileType: info.fileType, size: m.content.length, sha256: h.sha256, depth: subject.depth + 1 });
      await scanOne({
        content: m.content, name: m.path.split('/').pop() ?? m.path, size: m.content.length,
        fileType: info.fileType, contentType: info.contentType, ...h, depth: subject.depth + 1, scanType,
        file: analysisOf(m.content, info),
      }, path, flagged);
    }
  };

  const rootLabel = name || '';
  await scanOne({
    content, name, size: content.length, fileType: rootType.fileType, contentType: rootType.contentType,
    ...rootHashes, depth: 0, scanType, file: analysisOf(content, rootType),
  }, '', new Set());

  // Member paths are shown from the submitted object's name: "a.zip/b/c.exe".
  if (rootLabel) {
    for (const r of results.values()) {
      for (const f of r.findings) if (f.member) f.member = `${rootLabel}/${f.member}`;
    }
    for (const s of tree.summaries) s.path = `${rootLabel}/${s.path}`;
  }
  if (tree.limitHit.length) {
    const archive = results.get('archive');
    const finding: Finding = {
      engine: 'archive', id: 'archive.tree_limit', name: 'Archive tree exceeds scan limits', severity: 'medium', confidence: 0.9,
      category: 'archive',
      description: `Nested archives exceed ${limits.maxMembers} members or ${Math.round(limits.maxTotalBytes / 1048576)} MB in total; ${tree.limitHit.length} member(s) were not inspected.`,
      excerpt: tree.limitHit.slice(0, 5).join(', '),
    };
    if (archive) archive.findings.push(finding);
  }
  if (tree.summaries.length) reports.members = tree.summaries;

  const engines = Object.fromEntries(results);
  const safetyScore = computeVerdict({
    engines,
    coverage: rootType.coverage,
    coverageNote: rootType.coverageNote,
    suppressedEngines: input.suppressedEngines,
  });
  return {
    fileType: rootType.fileType,
    contentType: rootType.contentType,
    coverage: rootType.coverage,
    ...rootHashes,
    size: content.length,
    safetyScore,
    engines,
    reports,
    scanTimeMs: Math.round(performance.now() - started),
  };
}

/**
 * A result for content that was not scanned: 'Rejected' (the scan profile does not allow the
 * file type) or 'Error' (the scan could not run). Score 0, Block, and the error message.
 */
export async function notScannedResult(
  kind: 'Rejected' | 'Error',
  error: string,
  content: Buffer,
  name = '',
  identified?: FileTypeInfo,
): Promise<AnalysisResult> {
  const started = performance.now();
  const type = identified ?? await identify(content, name);
  return {
    fileType: type.fileType,
    contentType: type.contentType,
    coverage: type.coverage,
    ...hashes(content),
    size: content.length,
    safetyScore: notScannedVerdict(kind, error, type.coverage),
    engines: {},
    reports: {},
    scanTimeMs: Math.round(performance.now() - started),
  };
}
