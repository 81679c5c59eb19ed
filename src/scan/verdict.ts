/**
 * The only place that turns engine findings into the safetyScore object (docs/contract.md
 * §5 "Scan result", "Coverage"). It never looks at content, only at EngineResults.
 *
 * Scoring (score = 100 - penalty, clamped to 0..100, rounded to an integer):
 *  - A finding's penalty grows linearly with its confidence between a floor and a ceiling per
 *    severity (SEVERITY). The floors put one finding of that severity in its band on its own:
 *    low -> Informational, medium/high -> Suspicious, critical -> Malicious.
 *  - Within one engine: worst finding + 25% of the others, capped per worst severity (one engine
 *    repeating itself cannot climb a band it would not reach alone; high caps in Suspicious).
 *  - Across independent engines: the worst engine's penalty + 50% of each other engine's, so two
 *    engines agreeing always score lower than either alone.
 *  - Archive members are judged separately; the worst member (or the container itself) drives
 *    the score and is named in primaryThreat.
 *  - If nothing worse than `low` fired, the penalty stays within Informational.
 *  - Malicious needs decisive evidence (`decisive`): a critical finding, or a high one of at least
 *    DECISIVE_CONFIDENCE from an engine other than `ml`. Without it the subject stops at score 31,
 *    the Malicious edge of Suspicious, however many weaker findings add up (dual-use capabilities
 *    and the text model name a reason to look, not an attack).
 *  - `minimal` coverage caps the score at 85 (never Clean); a detection is never softened.
 */
import {
  SEVERITY_RANK, type ConfidenceLabel, type Coverage, type CveRecord, type EngineResult, type Finding, type RecommendedAction,
  type SafetyScore, type Severity, type ThreatLevel,
} from './types';
import { round2 } from './rounding';

export const NO_THREATS = 'No threats detected';

export const SEVERITY: Record<Severity, { floor: number; ceiling: number; engineCap: number }> = {
  info: { floor: 0, ceiling: 0, engineCap: 0 },
  low: { floor: 15, ceiling: 20, engineCap: 29 },
  medium: { floor: 30, ceiling: 40, engineCap: 55 },
  high: { floor: 45, ceiling: 55, engineCap: 69 },
  critical: { floor: 75, ceiling: 95, engineCap: 100 },
};

/** Confidence from which a high finding is decisive on its own (rule hits: 0.8-0.9). */
export const DECISIVE_CONFIDENCE = 0.8;
/** Engines whose findings are never decisive: the statistical text and static-feature models. */
const NEVER_DECISIVE = new Set(['ml']);
const SAME_ENGINE_WEIGHT = 0.25;
const OTHER_ENGINE_WEIGHT = 0.5;
const MINIMAL_COVERAGE_MAX = 85;

export const BANDS: Array<{ min: number; threatLevel: ThreatLevel; action: RecommendedAction }> = [
  { min: 86, threatLevel: 'Clean', action: 'Allow' },
  { min: 71, threatLevel: 'Informational', action: 'Allow' },
  { min: 31, threatLevel: 'Suspicious', action: 'Review' },
  { min: 0, threatLevel: 'Malicious', action: 'Block' },
];

/** The largest penalty a subject without decisive evidence can reach: the lowest Suspicious score. */
const UNDECIDED_MAX_PENALTY = 100 - (BANDS.find((b) => b.threatLevel === 'Suspicious')?.min ?? 31);

const COVERAGE_CONFIDENCE: Record<Coverage, number> = { full: 0.9, partial: 0.75, minimal: 0.6 };

export interface VerdictInput {
  engines: EngineResult[] | Record<string, EngineResult>;
  coverage: Coverage;
  coverageNote?: string;
  /** Engines whose findings the scan profile hides (they still count in the score). */
  suppressedEngines?: string[];
}

const clamp = (n: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, n));

export function findingPenalty(f: Finding): number {
  const s = SEVERITY[f.severity];
  return s.floor + (s.ceiling - s.floor) * clamp(f.confidence, 0, 1);
}

const worse = (a: Finding, b: Finding): boolean =>
  SEVERITY_RANK[a.severity] !== SEVERITY_RANK[b.severity]
    ? SEVERITY_RANK[a.severity] > SEVERITY_RANK[b.severity]
    : a.confidence > b.confidence;

export function bandFor(score: number): { threatLevel: ThreatLevel; action: RecommendedAction } {
  const band = BANDS.find((b) => score >= b.min) ?? BANDS[BANDS.length - 1];
  return { threatLevel: band.threatLevel, action: band.action };
}

/** Penalty of one engine's findings on one subject. */
function enginePenalty(findings: Finding[]): number {
  const scored = findings.filter((f) => f.severity !== 'info').sort((a, b) => findingPenalty(b) - findingPenalty(a));
  if (!scored.length) return 0;
  const [top, ...rest] = scored;
  const raw = findingPenalty(top) + SAME_ENGINE_WEIGHT * rest.reduce((s, f) => s + findingPenalty(f), 0);
  return Math.min(raw, SEVERITY[top.severity].engineCap);
}

interface GroupScore { member: string; penalty: number; engines: string[]; undecided: boolean }

const decisive = (engine: string, f: Finding): boolean =>
  !NEVER_DECISIVE.has(engine) && (f.severity === 'critical' || (f.severity === 'high' && f.confidence >= DECISIVE_CONFIDENCE));

/** Penalty of one subject (the container or one member) combining its engines. */
function groupPenalty(member: string, byEngine: Map<string, Finding[]>): GroupScore {
  const perEngine = [...byEngine.entries()]
    .map(([engine, fs]) => ({ engine, penalty: enginePenalty(fs), worst: fs.reduce((a, b) => (worse(b, a) ? b : a)) }))
    .filter((e) => e.penalty > 0)
    .sort((a, b) => b.penalty - a.penalty);
  if (!perEngine.length) return { member, penalty: 0, engines: [], undecided: false };
  let penalty = perEngine[0].penalty + OTHER_ENGINE_WEIGHT * perEngine.slice(1).reduce((s, e) => s + e.penalty, 0);
  const maxRank = Math.max(...perEngine.map((e) => SEVERITY_RANK[e.worst.severity]));
  if (maxRank <= SEVERITY_RANK.low) penalty = Math.min(penalty, SEVERITY.low.engineCap);
  const undecided = penalty > UNDECIDED_MAX_PENALTY && ![...byEngine].some(([engine, fs]) => fs.some((f) => decisive(engine, f)));
  if (undecided) penalty = UNDECIDED_MAX_PENALTY;
  return { member, penalty: Math.min(100, penalty), engines: perEngine.map((e) => e.engine), undecided };
}

function describe(f: Finding): string {
  return f.member ? `${f.name} in ${f.member}` : f.name;
}

function summarise(visible: Finding[], hiddenFired: string[]): string {
  const parts: string[] = [];
  const scored = visible.filter((f) => f.severity !== 'info');
  if (scored.length) {
    const engines = new Set(scored.map((f) => f.engine ?? 'unknown'));
    const sorted = [...scored].sort((a, b) => (worse(a, b) ? -1 : worse(b, a) ? 1 : 0));
    const shown = sorted.slice(0, 5).map((f) => `${f.engine ?? 'unknown'}: ${describe(f)} (${f.severity})`);
    const more = sorted.length > 5 ? `; and ${sorted.length - 5} more` : '';
    parts.push(`${scored.length} finding${scored.length === 1 ? '' : 's'} from ${engines.size} engine${engines.size === 1 ? '' : 's'}: ${shown.join('; ')}${more}.`);
  } else {
    parts.push('No findings.');
  }
  if (hiddenFired.length) {
    parts.push(`Findings of ${hiddenFired.length} suppressed engine${hiddenFired.length === 1 ? '' : 's'} are hidden but count in the score.`);
  }
  return parts.join(' ');
}

function confidenceLabel(score: number): ConfidenceLabel {
  return score >= 0.8 ? 'High' : score >= 0.5 ? 'Medium' : 'Low';
}

export function computeVerdict(input: VerdictInput): SafetyScore {
  const results = Array.isArray(input.engines) ? input.engines : Object.values(input.engines);
  const suppressed = new Set(input.suppressedEngines ?? []);
  const all: Finding[] = [];
  for (const r of results) {
    if (r.status !== 'ok') continue;
    for (const f of r.findings) all.push({ ...f, engine: f.engine ?? r.engine });
  }

  // Group by subject (container '' or member path), then by engine.
  const groups = new Map<string, Map<string, Finding[]>>();
  for (const f of all) {
    const key = f.member ?? '';
    const byEngine = groups.get(key) ?? new Map<string, Finding[]>();
    const list = byEngine.get(f.engine as string) ?? [];
    list.push(f);
    byEngine.set(f.engine as string, list);
    groups.set(key, byEngine);
  }
  const scoredGroups = [...groups.entries()].map(([m, g]) => groupPenalty(m, g)).sort((a, b) => b.penalty - a.penalty);
  const worst = scoredGroups[0];
  const penalty = worst ? worst.penalty : 0;
  const detected = penalty > 0;

  let score = clamp(Math.round(100 - penalty), 0, 100);
  if (input.coverage === 'minimal') score = Math.min(score, MINIMAL_COVERAGE_MAX);
  const { threatLevel, action } = bandFor(score);

  const visible = all.filter((f) => !suppressed.has(f.engine as string));
  const hiddenFired = [...new Set(all.filter((f) => suppressed.has(f.engine as string) && f.severity !== 'info').map((f) => f.engine as string))].sort();

  // Primary threat: the worst visible finding, preferring the subject that drove the score.
  const visibleScored = visible.filter((f) => f.severity !== 'info');
  const inWorst = worst ? visibleScored.filter((f) => (f.member ?? '') === worst.member) : [];
  const pool = inWorst.length ? inWorst : visibleScored;
  const primary = pool.length ? pool.reduce((a, b) => (worse(b, a) ? b : a)) : null;

  // Confidence: coverage sets the base; a detection moves it toward the engines' own confidence
  // and gains with agreement; every engine that could not run takes some away.
  const failed = results.filter((r) => r.status === 'error' || r.status === 'timeout' || r.status === 'unavailable');
  const reasons: string[] = [`coverage ${input.coverage}`];
  let conf = COVERAGE_CONFIDENCE[input.coverage];
  if (detected && worst) {
    const maxConf = Math.max(...all.filter((f) => f.severity !== 'info').map((f) => clamp(f.confidence, 0, 1)));
    const agreeing = worst.engines.length;
    conf = 0.5 * conf + 0.5 * maxConf + 0.1 * (agreeing - 1);
    reasons.push(agreeing > 1
      ? `${agreeing} independent engines agree (${worst.engines.join(', ')})`
      : `a single engine fired (${worst.engines[0]})`);
    if (worst.undecided) reasons.push('no finding is decisive on its own (critical, or high and sure from a rule engine), so the findings together stay Suspicious');
  } else {
    const ran = results.filter((r) => r.status === 'ok').length;
    reasons.push(`${ran} engine${ran === 1 ? '' : 's'} ran without findings`);
  }
  if (failed.length) {
    conf -= Math.min(0.3, 0.1 * failed.length);
    reasons.push(`did not complete: ${failed.map((r) => `${r.engine} ${r.status}${r.note ? ` (${r.note})` : ''}`).join('; ')}`);
  }
  if (input.coverage === 'minimal' && !detected) reasons.push('minimal coverage caps a clean result at Informational');
  const confidenceScore = clamp(conf, 0.05, 1);

  let coverageNote = input.coverageNote;
  if (failed.length) {
    const missing = `Engines that did not complete: ${failed.map((r) => `${r.engine} (${r.status})`).join(', ')}.`;
    coverageNote = coverageNote ? `${coverageNote} ${missing}` : missing;
  }

  const cves = new Map<string, CveRecord>();
  for (const f of visible) if (f.cve && !cves.has(f.cve.id)) cves.set(f.cve.id, f.cve);

  const out: SafetyScore = {
    score,
    threatLevel,
    // The label follows the score as it is answered (two decimals), so the two never disagree.
    confidence: confidenceLabel(round2(confidenceScore)),
    confidenceScore,
    confidenceReason: `${reasons.join('; ')}.`,
    primaryThreat: primary ? describe(primary) : NO_THREATS,
    threatSummary: summarise(visible, hiddenFired),
    enginesUsed: results.filter((r) => r.status === 'ok').map((r) => r.engine),
    recommendedAction: action,
    coverage: input.coverage,
  };
  if (hiddenFired.length) out.suppressedEngines = hiddenFired;
  if (coverageNote && (input.coverage !== 'full' || failed.length)) out.coverageNote = coverageNote;
  if (cves.size) out.cveFindings = [...cves.values()].sort((a, b) => b.cvss - a.cvss);
  return out;
}

/** The safetyScore of a scan that did not run: Rejected (type not allowed) or Error. */
export function notScannedVerdict(
  threatLevel: 'Rejected' | 'Error',
  error: string,
  coverage: Coverage = 'partial',
): SafetyScore {
  return {
    score: 0,
    threatLevel,
    confidence: 'High',
    confidenceScore: 1,
    confidenceReason: threatLevel === 'Rejected'
      ? 'The scan profile does not allow this file type; nothing was scanned.'
      : 'The scan could not run; nothing was scanned.',
    primaryThreat: NO_THREATS,
    threatSummary: error,
    enginesUsed: [],
    recommendedAction: 'Block',
    coverage,
    coverageNote: 'Nothing was scanned.',
    error,
  };
}
