/** HTTP for the account area of the scanning API: usage. */
import type { RouteRegistry } from '../http/route';
import { principalOf } from '../http/route';
import type { Services } from '../services';
import { planOf } from './plans';
import { usageSchema } from './schemas';
import { startOfNextMonthUtc } from '../limits/service';

export function registerAccountRoutes(r: RouteRegistry, s: Services): void {
  r.add({
    method: 'GET', path: '/api/account/usage', area: 'scan', tags: ['account'], auth: 'account', rate: 'scan-read',
    summary: 'Scan usage of the current month and the last 30 days',
    responses: { 200: { description: 'Usage object', schema: usageSchema } },
    handler: async (ctx) => {
      const { account } = principalOf(ctx);
      const plan = planOf(account.plan);
      const [used, daily] = await Promise.all([s.limits.scansUsedThisMonth(account._id), s.limits.dailyScanVolume(account._id, 30)]);
      ctx.body = {
        scans_used: used,
        max_scans: plan.scansPerMonth,
        scans_remaining: Math.max(0, plan.scansPerMonth - used),
        max_file_size_mb: plan.maxFileSizeMb,
        plan_tier: plan.tier,
        reset_at: startOfNextMonthUtc(new Date()).toISOString(),
        daily_volume: daily,
      };
    },
  });
}
