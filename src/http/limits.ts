/** Binds a route's rate class to the caller of the request; the counting rules are in limits/rates.ts. */
import type { LimitService } from '../limits/service';
import { enforceRate, type RateClass } from '../limits/rates';
import type { AppContext } from './route';

export function makeRateLimiter(limits: LimitService) {
  return async function rateLimit(ctx: AppContext, rate: RateClass): Promise<void> {
    const p = ctx.state.principal;
    if (!p) return;
    await enforceRate(limits, rate, { accountId: p.account._id, plan: p.account.plan, apiKeyId: p.apiKeyId });
  };
}
