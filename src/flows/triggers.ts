/**
 * Device-event triggers (docs/contract.md §7): a stored `publish` that passed or skipped
 * validation starts a run of every enabled, exposed workflow of the account whose trigger tags
 * match (`any` or `all`), with the message as input. At most 50 workflows per message (oldest
 * first; the rest are logged), 60 triggers per minute per workflow. Such runs do not count toward
 * the month's runs but pass the same compute, concurrency and queue admission as manual ones.
 */
import { FIXED_LIMITS, type PlanTier } from '../accounts/plans';
import type { Logger } from '../log';
import type { DeviceEvent, FlowTrigger } from '../messaging/pipeline';
import type { LimitService } from '../limits/service';
import { allowWorkflowTrigger } from '../limits/rates';
import type { RunAccount, RunService } from './service';
import type { WorkflowRepository } from './records';

export class DeviceEventTriggers implements FlowTrigger {
  constructor(private readonly deps: {
    workflows: Pick<WorkflowRepository, 'triggeredBy'>;
    runs: Pick<RunService, 'start'>;
    accounts: { cachedAccount(accountId: string): Promise<{ _id: string; plan: PlanTier } | null> };
    limits: Pick<LimitService, 'hit'>;
    logger: Logger;
  }) {}

  async onDeviceEvent(event: DeviceEvent): Promise<void> {
    if (event.msgType !== 'publish' || event.validation === 'failed' || event.tags.length === 0) return;
    const max = FIXED_LIMITS.workflowTriggersPerMessage;
    // Fetched past the cap: `all` is checked here and the extra ones are logged.
    const candidates = await this.deps.workflows.triggeredBy(event.accountId, event.tags, max * 4);
    const matching = candidates.filter((w) => w.trigger && (w.trigger.match === 'any' || w.trigger.tags.every((t) => event.tags.includes(t))));
    if (matching.length === 0) return;
    if (matching.length > max) {
      this.deps.logger.warn({ messageId: event.id, accountId: event.accountId, skipped: matching.slice(max).map((w) => w._id) }, `a message matched more than ${max} workflows; the newest were not started`);
    }
    const account = await this.deps.accounts.cachedAccount(event.accountId);
    if (!account) return;
    const runAccount: RunAccount = { id: account._id, plan: account.plan };
    const input = { message: { id: event.id, source: event.source, data: event.data, tags: event.tags, timestamp: event.timestamp.toISOString() } };
    for (const wf of matching.slice(0, max)) {
      if (!(await allowWorkflowTrigger(this.deps.limits, wf._id))) {
        this.deps.logger.warn({ messageId: event.id, workflowId: wf._id }, 'device-event trigger rate of the workflow reached; not started');
        continue;
      }
      try {
        await this.deps.runs.start(runAccount, wf._id, input, { type: 'device_event', messageId: event.id });
      } catch (err) {
        this.deps.logger.warn({ err, messageId: event.id, workflowId: wf._id }, 'device-event run not admitted');
      }
    }
  }
}
