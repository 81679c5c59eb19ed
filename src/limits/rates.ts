/**
 * Which counters each rate class is charged against, for HTTP requests and MQTT publishes alike:
 * scanning reads 60/min and writes 30/min plus the plan's requests per minute (one-minute window
 * per account), messaging 50 requests per second per API key (one-second window per account),
 * workflow, connector and vault writes 30/min and workflow run requests 60/min per account;
 * device events start each workflow at most 60 times a minute.
 * Every number comes from accounts/plans.ts.
 */
import { FIXED_LIMITS, planOf, type PlanTier } from '../accounts/plans';
import { RateLimitedError } from '../errors';
import type { LimitService, WindowRule } from './service';

/** Which limiter a request is counted by; every HTTP route names one. */
export type RateClass = 'scan-read' | 'scan-write' | 'entity' | 'account-messaging' | 'workflow-write' | 'workflow-run' | 'none';

interface Window { scope: string; windowMs: number; rules: WindowRule[] }

/**
 * The messaging limit of 50 requests per second per API key; MQTT publishes count against it too.
 * One window document per account and second holds a counter per key, so the requests of many
 * devices of one account arriving together are counted in one round trip.
 */
function messagingKeyWindow(accountId: string, apiKeyId: string): Window {
  return { scope: `acct:${accountId}:msg`, windowMs: 1_000, rules: [{ name: `k_${apiKeyId}`, limit: FIXED_LIMITS.messagingRequestsPerSecondPerKey }] };
}

function scanWindow(accountId: string, plan: PlanTier, rate: 'scan-read' | 'scan-write'): Window {
  const cls = rate === 'scan-read'
    ? { name: 'read', limit: FIXED_LIMITS.scanReadsPerMinute }
    : { name: 'write', limit: FIXED_LIMITS.scanWritesPerMinute };
  return { scope: `acct:${accountId}:scan`, windowMs: 60_000, rules: [cls, { name: 'plan', limit: planOf(plan).scanRequestsPerMinute }] };
}

/** Writes of workflows, connectors and vault entries share one counter per account (docs/contract.md §3 "Rate limits": 30 per minute). */
function workflowWriteWindow(accountId: string): Window {
  return { scope: `acct:${accountId}:wf`, windowMs: 60_000, rules: [{ name: 'write', limit: FIXED_LIMITS.workflowWritesPerMinute }] };
}

/** `POST /api/workflows/{id}/run`: 60 per minute per account. */
function workflowRunWindow(accountId: string): Window {
  return { scope: `acct:${accountId}:wfrun`, windowMs: 60_000, rules: [{ name: 'run', limit: FIXED_LIMITS.workflowRunsPerMinute }] };
}

async function enforce(limits: LimitService, w: Window, plan: PlanTier | undefined, arrivedAt?: Date): Promise<void> {
  const verdict = await limits.hit(w.scope, w.windowMs, w.rules, arrivedAt);
  if (verdict.allowed) return;
  const message = verdict.exceeded === 'plan' && plan
    ? `Rate limit of the ${plan} plan reached (${planOf(plan).scanRequestsPerMinute} requests per minute)`
    : 'Rate limit reached; retry after the time in Retry-After';
  throw new RateLimitedError(verdict.retryAfterSeconds, message);
}

/** Counts one HTTP request of the key against its route's rate class; throws RateLimitedError (429) past a limit. */
export async function enforceRate(limits: LimitService, rate: RateClass, caller: { accountId: string; plan: PlanTier; apiKeyId: string }): Promise<void> {
  if (rate === 'none') return;
  if (rate === 'scan-read' || rate === 'scan-write') return enforce(limits, scanWindow(caller.accountId, caller.plan, rate), caller.plan);
  if (rate === 'workflow-write') return enforce(limits, workflowWriteWindow(caller.accountId), caller.plan);
  if (rate === 'workflow-run') return enforce(limits, workflowRunWindow(caller.accountId), caller.plan);
  return enforce(limits, messagingKeyWindow(caller.accountId, caller.apiKeyId), caller.plan);
}

/**
 * Counts one MQTT publish against the key's messaging limit in the window of its arrival
 * (`arrivedAt`: a backlog drained later in a burst is not refused for a burst never sent).
 */
export function enforceMessagingRate(limits: LimitService, accountId: string, apiKeyId: string, arrivedAt?: Date): Promise<void> {
  return enforce(limits, messagingKeyWindow(accountId, apiKeyId), undefined, arrivedAt);
}

/**
 * Counts one device-event start of a workflow (60 per minute per workflow); false when the
 * workflow's trigger rate is reached and the run must not start.
 */
export async function allowWorkflowTrigger(limits: Pick<LimitService, 'hit'>, workflowId: string): Promise<boolean> {
  const w: Window = { scope: `wf:${workflowId}:trigger`, windowMs: 60_000, rules: [{ name: 't', limit: FIXED_LIMITS.workflowTriggersPerMinute }] };
  return (await limits.hit(w.scope, w.windowMs, w.rules)).allowed;
}
