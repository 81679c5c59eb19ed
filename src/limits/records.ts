/**
 * Counters (rate windows, monthly and daily usage) and the store interface both engines implement
 * (store/sqlite.ts, store/mongo.ts). Every API process sees the same numbers.
 */

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

/** Where counters are kept, shared by every replica (limits/records.ts). */
export interface Counters {
  /** Adds the amounts to the named counters of the window and returns the new values. */
  hitWindow(id: string, amounts: Record<string, number>, expiresAt: Date): Promise<Record<string, number>>;
  /** Removes windows that ended before `now`. */
  sweepWindows(now: Date): Promise<void>;
  /** Adds `amount` only while the counter stays at or below `max`; the new value, or undefined when it would pass. */
  incrementUsageBounded(doc: Omit<UsageDoc, UsageField>, field: UsageField, amount: number, max: number): Promise<number | undefined>;
  incrementUsage(doc: Omit<UsageDoc, UsageField>, field: UsageField, amount: number): Promise<number>;
  getUsage(id: string): Promise<UsageDoc | null>;
  listDaily(accountId: string, fromDate: string, toDate: string): Promise<UsageDoc[]>;
}

export type CounterStore = Counters;
