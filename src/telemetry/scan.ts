/** Scan series: kept apart from metrics.ts so processes that never scan do not load the engine registry. */
import type { AnalysisResult } from '../scan/analyze';
import { REGISTRY } from '../scan/registry';
import type { ScanType } from '../scan/types';
import { engineLabel, oneOf } from './labels';
import { metricsEnabled, scanEngineDuration, scans } from './metrics';

const ENGINES: ReadonlySet<string> = new Set(REGISTRY.map((r) => r.engine));
const VERDICTS = ['Clean', 'Informational', 'Suspicious', 'Malicious', 'Rejected', 'Error'] as const;
const ENGINE_STATUSES = ['ok', 'error', 'timeout', 'unavailable', 'skipped'] as const;

/** One analysed scan: its verdict, and each engine's time and outcome. */
export function observeScan(scanType: ScanType, analysis: Pick<AnalysisResult, 'safetyScore' | 'engines'>): void {
  if (!metricsEnabled()) return;
  scans.inc({ type: oneOf(scanType, ['file', 'payload']), verdict: oneOf(analysis.safetyScore.threatLevel, VERDICTS) });
  for (const [name, r] of Object.entries(analysis.engines)) {
    scanEngineDuration.observe({ engine: engineLabel(name, ENGINES), status: oneOf(r.status, ENGINE_STATUSES) }, r.durationMs / 1000);
  }
}
