/**
 * Counters (rate windows, monthly and daily usage) and the store interface both engines implement
 * (store/sqlite.ts, store/mongo.ts). Every API process sees the same numbers.
 */
import type { Counters } from './service';

export interface UsageDoc {
  _id: string; // `${accountId}:${period}` where period is YYYY-MM or YYYY-MM-DD
  accountId: string;
  period: string;
  kind: 'month' | 'day';
  date?: string;
  scans?: number;
  messagingBytes?: number;
  /** Manually started workflow runs and compute units (seconds of node execution) of the month. */
  workflowRuns?: number;
  computeUnits?: number;
}

/** The counters of a usage document. */
export type UsageField = 'scans' | 'messagingBytes' | 'workflowRuns' | 'computeUnits';

export type CounterStore = Counters;
