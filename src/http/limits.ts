/** Maps a route's rate class to the counters it is charged against (numbers from plans.ts). */
import { FIXED_LIMITS, planOf } from '../accounts/plans';
import type { LimitService, WindowRule } from '../limits/service';
import { RateLimitedError } from '../errors';
import type { AppContext, RateClass } from './route';

/**
 * The messaging limit of 50 requests per second per API key; MQTT publishes count against it too.
 * One window document per account and second holds a counter per key, so the requests of many
 * devices of one account arriving together are counted in one round trip.
 */
export function messagingKeyWindow(accountId: string, apiKeyId: string): { scope: string; windowMs: number; rules: WindowRule[] } {
  return { scope: `acct:${accountId}:msg`, windowMs: 1_000, rules: [{ name: `k_${apiKeyId}`, limit: FIXED_LIMITS.messagingRequestsPerSecondPerKey }] };
}

/**
 * Counts one messaging request of the key in the window of its arrival; throws RateLimitedError
 * (429 rate_limited) past the limit.
 */
export async function checkMessagingRate(limits: LimitService, accountId: string, apiKeyId: string, arrivedAt?: Date): Promise<void> {
  const w = messagingKeyWindow(accountId, apiKeyId);
  const verdict = await limits.hit(w.scope, w.windowMs, w.rules, arrivedAt);
  if (!verdict.allowed) throw new RateLimitedError(verdict.retryAfterSeconds, 'Rate limit reached; retry after the time in Retry-After');
}

export function makeRateLimiter(limits: LimitService) {
  return async function rateLimit(ctx: AppContext, rate: RateClass): Promise<void> {
    const p = ctx.state.principal;
    if (!p || rate === 'none') return;
    const accountId = p.account._id;
    let scope: string;
    let windowMs: number;
    let rules: WindowRule[];
    switch (rate) {
      case 'scan-read':
      case 'scan-write': {
        scope = `acct:${accountId}:scan`;
        windowMs = 60_000;
        const cls = rate === 'scan-read'
          ? { name: 'read', limit: FIXED_LIMITS.scanReadsPerMinute }
          : { name: 'write', limit: FIXED_LIMITS.scanWritesPerMinute };
        rules = [cls, { name: 'plan', limit: planOf(p.account.plan).scanRequestsPerMinute }];
        break;
      }
      // Writes of workflows, connectors and vault entries share one counter per account (spec: 30 per minute).
      case 'workflow-write':
        scope = `acct:${accountId}:wf`;
        windowMs = 60_000;
        rules = [{ name: 'write', limit: FIXED_LIMITS.workflowWritesPerMinute }];
        break;
      case 'entity':
      case 'account-messaging':
        ({ scope, windowMs, rules } = messagingKeyWindow(accountId, p.apiKeyId));
        break;
    }
    const verdict = await limits.hit(scope, windowMs, rules);
    if (!verdict.allowed) {
      const message = verdict.exceeded === 'plan'
        ? `Rate limit of the ${p.account.plan} plan reached (${planOf(p.account.plan).scanRequestsPerMinute} requests per minute)`
        : 'Rate limit reached; retry after the time in Retry-After';
      throw new RateLimitedError(verdict.retryAfterSeconds, message);
    }
  };
}
