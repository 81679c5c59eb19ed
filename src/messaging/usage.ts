/**
 * The monthly messaging data limit of the plan. Every accepted message's data counts; when the
 * limit is reached only telemetry publishes are refused (429 data_limit_exceeded), while
 * heartbeats, state messages and command responses keep flowing. In-app warnings are raised at
 * 80% and at 100%, each once per UTC month (the notification's id is unique per month).
 */
import type { AccountDoc } from '../accounts/records';
import { planOf } from '../accounts/plans';
import { AppError } from '../errors';
import { type LimitService, monthKey, startOfNextMonthUtc } from '../limits/service';
import type { Logger } from '../log';
import { GroupCommit } from '../storage/group-commit';
import type { NotificationKind, NotificationLog } from './records';

export class DataLimitExceededError extends AppError {
  constructor(limitBytes: number, plan: string, retryAfterSeconds: number) {
    super(429, `Monthly messaging data limit of the ${plan} plan (${limitBytes} bytes) reached; telemetry publishes are paused until the next month`, {
      code: 'data_limit_exceeded',
      headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    });
  }
}


export class MessagingUsage {
  /** Notifications this process already knows exist, so crossing traffic does not re-insert them. */
  private readonly raised = new Set<string>();
  /** Charges of one account and kind: one `$inc` of their sum while an update is in flight. */
  private readonly charges = new GroupCommit<{ accountId: string; bytes: number; max: number | undefined }, { allowed: boolean; used: number }>((_key, group) => this.writeCharges(group));

  constructor(
    private readonly limits: LimitService,
    private readonly store: NotificationLog,
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Counts `bytes`; for telemetry, refuses with DataLimitExceededError when the month is used up. */
  async charge(account: AccountDoc, bytes: number, telemetry: boolean): Promise<void> {
    const limit = planOf(account.plan).messagingBytesPerMonth;
    const r = await this.add(account._id, bytes, telemetry ? limit : undefined);
    if (!r.allowed) {
      await this.warn(account, 'data_limit_100', Math.max(r.used, limit), limit);
      const now = this.now();
      throw new DataLimitExceededError(limit, account.plan, (startOfNextMonthUtc(now).getTime() - now.getTime()) / 1000);
    }
    if (r.used >= limit) await this.warn(account, 'data_limit_100', r.used, limit);
    if (r.used >= 0.8 * limit) await this.warn(account, 'data_limit_80', r.used, limit);
  }

  private add(accountId: string, bytes: number, max: number | undefined): Promise<{ allowed: boolean; used: number }> {
    return this.charges.submit(`${accountId}:${max === undefined ? 'u' : 'b'}`, { accountId, bytes, max });
  }

  /**
   * A group (one account, one kind) goes out as one $inc of its sum. A bounded group that does not
   * fit as a whole is retried one by one, so every charge that fits on its own is still accepted.
   */
  private async writeCharges(group: Array<{ accountId: string; bytes: number; max: number | undefined }>): Promise<Array<{ allowed: boolean; used: number }>> {
    const { accountId, max } = group[0];
    const r = await this.limits.addMessagingBytes(accountId, group.reduce((n, c) => n + c.bytes, 0), max);
    if (r.allowed || group.length === 1) return group.map(() => r);
    const out: Array<{ allowed: boolean; used: number }> = [];
    for (const c of group) out.push(await this.limits.addMessagingBytes(accountId, c.bytes, max));
    return out;
  }

  private async warn(account: AccountDoc, kind: NotificationKind, used: number, limit: number): Promise<void> {
    const period = monthKey(this.now());
    const id = `${account._id}:${period}:${kind}`;
    if (this.raised.has(id)) return;
    const pct = kind === 'data_limit_80' ? 80 : 100;
    try {
      await this.store.raiseNotification({
        _id: id, accountId: account._id, kind, period, usedBytes: used, limitBytes: limit, createdAt: this.now(),
        message: pct === 100
          ? `Monthly messaging data limit reached (${used} of ${limit} bytes): telemetry publishes are paused until the next month`
          : `80% of the monthly messaging data limit used (${used} of ${limit} bytes)`,
      });
      this.raised.add(id);
    } catch (err) {
      // A warning that could not be written must not fail the message; the next one retries.
      this.logger.warn({ err, accountId: account._id, kind }, 'could not raise data-limit notification');
    }
  }
}
