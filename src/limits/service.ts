/**
 * Rate limits (fixed one-minute or one-second windows) and calendar usage (UTC months and days).
 * Every limit number comes from accounts/plans.ts.
 */
import { GroupCommit } from '../storage/group-commit';
import type { Counters } from './records';

export interface WindowRule { name: string; limit: number }
export interface WindowVerdict { allowed: boolean; retryAfterSeconds: number; exceeded?: string; counts: Record<string, number> }

export const monthKey = (d: Date): string => d.toISOString().slice(0, 7);
export const dayKey = (d: Date): string => d.toISOString().slice(0, 10);
export const startOfNextMonthUtc = (d: Date): Date => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));


/** The usage documents of an account's month and day at `at`. */
const monthUsage = (accountId: string, at: Date) => {
  const month = monthKey(at);
  return { _id: `${accountId}:${month}`, accountId, period: month, kind: 'month' as const };
};
const dayUsage = (accountId: string, at: Date) => {
  const day = dayKey(at);
  return { _id: `${accountId}:${day}`, accountId, period: day, kind: 'day' as const, date: day };
};

export class LimitService {
  private lastSweep = 0;
  /** Hits on one window document: one `$inc` of their sum while an update of it is in flight. */
  private readonly windowWrites = new GroupCommit<{ fields: string[]; expiresAt: Date }, Record<string, number>>((id, hits) => this.writeWindow(id, hits));
  constructor(private readonly store: Counters, private readonly now: () => Date = () => new Date()) {}

  /**
   * Counts one request against several rules sharing one window and says whether every rule
   * still holds. Rejected requests count too, as in any fixed-window limiter.
   *
   * Hits on the same window document that arrive while an update of it is in flight are sent as
   * one `$inc` of their sum (one round trip for a burst), and each hit is then given its exact
   * place in the returned total, so the decision is the same as one update per request.
   */
  async hit(scope: string, windowMs: number, rules: WindowRule[], at?: Date): Promise<WindowVerdict> {
    // `at`: when the request arrived, for work queued before it is counted (MQTT bridge backlog).
    const now = (at ?? this.now()).getTime();
    const windowStart = Math.floor(now / windowMs) * windowMs;
    const counts = await this.addToWindow(`${scope}:${windowStart}`, rules.map((r) => r.name), new Date(windowStart + windowMs * 2));
    this.maybeSweep(now);
    const retryAfterSeconds = Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000));
    for (const rule of rules) {
      if ((counts[rule.name] ?? 0) > rule.limit) return { allowed: false, retryAfterSeconds, exceeded: rule.name, counts };
    }
    return { allowed: true, retryAfterSeconds, counts };
  }

  private addToWindow(id: string, fields: string[], expiresAt: Date): Promise<Record<string, number>> {
    return this.windowWrites.submit(id, { fields, expiresAt });
  }

  private async writeWindow(id: string, hits: Array<{ fields: string[]; expiresAt: Date }>): Promise<Array<Record<string, number>>> {
    const amounts: Record<string, number> = {};
    for (const h of hits) for (const f of h.fields) amounts[f] = (amounts[f] ?? 0) + 1;
    const totals = await this.store.hitWindow(id, amounts, hits[0].expiresAt);
    // Hand out places in arrival order: the first hit of the group gets total - amount + 1.
    const next: Record<string, number> = {};
    for (const [f, n] of Object.entries(amounts)) next[f] = (totals[f] ?? n) - n + 1;
    return hits.map((h) => {
      const mine: Record<string, number> = {};
      for (const f of h.fields) mine[f] = next[f]++;
      return mine;
    });
  }

  private maybeSweep(now: number): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    this.store.sweepWindows(new Date(now)).catch(() => undefined);
  }

  /** Reserves one scan of the month's quota; false when the quota is used up. Also counts the day. */
  async reserveScan(accountId: string, monthlyQuota: number): Promise<boolean> {
    const now = this.now();
    const used = await this.store.incrementUsageBounded(monthUsage(accountId, now), 'scans', 1, monthlyQuota);
    if (used === undefined) return false;
    await this.store.incrementUsage(dayUsage(accountId, now), 'scans', 1);
    return true;
  }

  /** Gives back a scan reserved at `at` for work that never started (the month's and the day's count). */
  async releaseScan(accountId: string, at: Date): Promise<void> {
    await this.store.incrementUsage(monthUsage(accountId, at), 'scans', -1);
    await this.store.incrementUsage(dayUsage(accountId, at), 'scans', -1);
  }

  /**
   * Counts `bytes` of messaging data against the month. Bounded (telemetry publishes): refused,
   * with nothing counted, when it would pass `max`. Unbounded (heartbeats, state messages, command
   * responses): always counted, since those keep flowing past the limit.
   */
  async addMessagingBytes(accountId: string, bytes: number, max?: number): Promise<{ allowed: boolean; used: number }> {
    const doc = monthUsage(accountId, this.now());
    if (max === undefined) return { allowed: true, used: await this.store.incrementUsage(doc, 'messagingBytes', bytes) };
    const used = await this.store.incrementUsageBounded(doc, 'messagingBytes', bytes, max);
    if (used !== undefined) return { allowed: true, used };
    return { allowed: false, used: await this.messagingBytesThisMonth(accountId) };
  }

  async messagingBytesThisMonth(accountId: string): Promise<number> {
    const doc = await this.store.getUsage(`${accountId}:${monthKey(this.now())}`);
    return doc?.messagingBytes ?? 0;
  }

  /** Reserves one manually started workflow run of the month; false when the quota is used up. */
  async reserveWorkflowRun(accountId: string, monthlyQuota: number): Promise<boolean> {
    return (await this.store.incrementUsageBounded(monthUsage(accountId, this.now()), 'workflowRuns', 1, monthlyQuota)) !== undefined;
  }

  /** Gives back a reserved run that was refused afterwards (a full queue). */
  async releaseWorkflowRun(accountId: string): Promise<void> {
    await this.store.incrementUsage(monthUsage(accountId, this.now()), 'workflowRuns', -1);
  }

  /** Charges compute units (one per started second of a node execution) to the month. */
  async addComputeUnits(accountId: string, units: number): Promise<void> {
    await this.store.incrementUsage(monthUsage(accountId, this.now()), 'computeUnits', units);
  }

  /** Workflow runs and compute units of this month. */
  async workflowUsageThisMonth(accountId: string): Promise<{ runs: number; computeUnits: number }> {
    const doc = await this.store.getUsage(`${accountId}:${monthKey(this.now())}`);
    return { runs: doc?.workflowRuns ?? 0, computeUnits: doc?.computeUnits ?? 0 };
  }

  async scansUsedThisMonth(accountId: string): Promise<number> {
    const doc = await this.store.getUsage(`${accountId}:${monthKey(this.now())}`);
    return doc?.scans ?? 0;
  }

  /** Scans per UTC day for the last `days` days including today, zero-filled, oldest first. */
  async dailyScanVolume(accountId: string, days = 30): Promise<{ dates: string[]; counts: number[] }> {
    const today = this.now();
    const dates: string[] = [];
    for (let i = days - 1; i >= 0; i--) dates.push(dayKey(new Date(today.getTime() - i * 86_400_000)));
    const docs = await this.store.listDaily(accountId, dates[0], dates[dates.length - 1]);
    const byDate = new Map(docs.map((d) => [d.date, d.scans ?? 0]));
    return { dates, counts: dates.map((d) => byDate.get(d) ?? 0) };
  }
}
