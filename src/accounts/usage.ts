/** The account's scan usage as GET /api/account/usage answers it: this month's count against the plan, and the last 30 days. */
import type { AccountDoc } from './records';
import { planOf } from './plans';
import type { Usage } from './schemas';
import { startOfNextMonthUtc, type LimitService } from '../limits/service';

export class AccountUsage {
  constructor(
    private readonly counters: Pick<LimitService, 'scansUsedThisMonth' | 'dailyScanVolume' | 'workflowUsageThisMonth'>,
    private readonly now: () => Date = () => new Date(),
    /** Runs holding a slot and waiting now (flows/admission.ts). */
    private readonly runQueue?: { occupancy(accountId: string): Promise<{ queued: number; running: number }> },
  ) {}

  async scanUsage(account: Pick<AccountDoc, '_id' | 'plan'>): Promise<Usage> {
    const plan = planOf(account.plan);
    const [used, daily, month, now] = await Promise.all([
      this.counters.scansUsedThisMonth(account._id), this.counters.dailyScanVolume(account._id, 30),
      this.counters.workflowUsageThisMonth(account._id), this.runQueue?.occupancy(account._id) ?? { queued: 0, running: 0 },
    ]);
    return {
      scans_used: used,
      max_scans: plan.scansPerMonth,
      scans_remaining: Math.max(0, plan.scansPerMonth - used),
      max_file_size_mb: plan.maxFileSizeMb,
      plan_tier: plan.tier,
      reset_at: startOfNextMonthUtc(this.now()).toISOString(),
      daily_volume: daily,
      workflows: {
        runs_this_month: month.runs, max_runs_per_month: plan.workflowRunsPerMonth,
        compute_units: month.computeUnits, max_compute_units: plan.computeUnitsPerMonth,
        running: now.running, queued: now.queued, max_concurrent_runs: plan.concurrentWorkflowRuns,
      },
    };
  }
}
