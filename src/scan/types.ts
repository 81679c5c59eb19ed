/**
 * The contract between scan engines, the engine registry and the verdict.
 * Engines produce findings; only verdict.ts turns findings into a score.
 */
import type { FileAnalysis } from './file-analysis';
import type { CveRecord, SafetyScore } from './schemas';

export type { CveRecord, SafetyScore };

/** File type names (docs/contract.md §5 "File type names"). Add names for new formats; never rename these. */
export const FILE_TYPES = [
  'pe', 'elf', 'macho', 'java_class', 'jar', 'apk', 'dex', 'zip', '7z', 'rar', 'tar', 'gzip',
  'office_ooxml', 'office_ole', 'pdf', 'powershell', 'javascript', 'vbscript', 'batch', 'shell',
  'python', 'html', 'image', 'text', 'unknown', 'php',
] as const;
export type FileType = (typeof FILE_TYPES)[number];

export type Coverage = SafetyScore['coverage'];
export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];
/** The one order of severities (info 0 .. critical 4), for every engine and the verdict. */
export const SEVERITY_RANK = Object.fromEntries(SEVERITIES.map((s, i) => [s, i])) as Record<Severity, number>;
export type ThreatLevel = SafetyScore['threatLevel'];
export type RecommendedAction = SafetyScore['recommendedAction'];
export type ConfidenceLabel = SafetyScore['confidence'];
export type ScanType = 'file' | 'payload';

export interface Finding {
  /** Name of the engine that produced it (set by the engine runner if the engine omits it). */
  engine?: string;
  /** Stable rule / signature identifier, e.g. "Eicar-Test-Signature" or "pe.packer.upx". */
  id: string;
  /** Human-readable threat name, used as primaryThreat when this finding is the worst one. */
  name: string;
  severity: Severity;
  /** How sure the engine is, 0..1. */
  confidence: number;
  /** One sentence saying what was found. */
  description: string;
  /** Optional grouping, e.g. "malware", "packer", "injection", "persistence". */
  category?: string;
  /** Path of the archive member the finding came from ("a.zip/b/c.exe"). */
  member?: string;
  /** Short quote of the evidence (persisted cut to 200 characters). */
  excerpt?: string;
  cve?: CveRecord;
}

/** What is known about the content handed to an engine. */
export interface ScanSubject {
  /** The whole content. Engines must not copy it needlessly. */
  content: Buffer;
  /** File name or payload label ("" when none). A hint only: type comes from content. */
  name: string;
  size: number;
  fileType: FileType;
  contentType: string;
  sha256: string;
  md5: string;
  sha1: string;
  /** 0 for the submitted object, n for an archive member n levels deep. */
  depth: number;
  scanType: ScanType;
  /** The content's parse and strings, computed once and shared by every engine of this subject. */
  file: FileAnalysis;
}

export interface EngineContext {
  /** Aborted when the engine's time budget runs out. */
  signal: AbortSignal;
  /** Milliseconds the engine may take. */
  budgetMs: number;
}

export interface EngineOutput {
  findings: Finding[];
  /**
   * Structured, engine-specific report that the scan result carries as-is, e.g. the payload
   * engines' codeExtraction / promptInjection / sensitiveData / toolCallAnalysis objects.
   */
  report?: Record<string, unknown>;
  /** Set when the engine looked but could not do its whole job (e.g. clamd absent). */
  note?: string;
  /** Archive members handed back for recursive analysis; never copied into the scan result. */
  members?: Array<{ path: string; content: Buffer }>;
}

export interface Engine {
  /** Unique name, shown in enginesUsed and suppressedEngines. */
  readonly name: string;
  scan(subject: ScanSubject, ctx: EngineContext): Promise<EngineOutput>;
}

export type EngineStatus = 'ok' | 'error' | 'timeout' | 'unavailable' | 'skipped';

/** One engine's recorded outcome: the runner turns crashes and timeouts into a status. */
export interface EngineResult {
  engine: string;
  status: EngineStatus;
  durationMs: number;
  findings: Finding[];
  report?: Record<string, unknown>;
  note?: string;
}
