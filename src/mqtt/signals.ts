/**
 * Cross-process signals for MQTT. Every process writes what its own services did (a key revoked,
 * a message queued for an entity, a state table changed); processes of the `mqtt` role poll for
 * what other processes wrote. In-process events are handled directly, so the poll only adds the
 * delay of other processes' work (at most one poll interval, 500 ms by default).
 */
import { randomUUID } from 'node:crypto';
import type { AccountEvents } from '../accounts/service';
import type { Logger } from '../log';
import type { MessagingEvents } from '../messaging/pipeline';
import type { MqttSignal, SignalLog } from './records';

/** How long signals are kept before the sweep removes them. */
export const SIGNAL_KEEP_MS = 10 * 60_000;


export class MqttSignals {
  /** Identifies this process's signals so it does not act on them twice. */
  readonly origin = randomUUID();
  private timer?: NodeJS.Timeout;
  private lastSweep = 0;

  constructor(private readonly store: SignalLog, private readonly logger: Logger, private readonly now: () => Date = () => new Date()) {}

  /** Records the local events other MQTT processes must hear about. */
  attach(accounts: AccountEvents, messaging: MessagingEvents): void {
    accounts.on('entityKeyRevoked', (apiKeyId: string) => this.write({ kind: 'revoked', apiKeyId }));
    accounts.on('entityPermissionsChanged', (accountId: string) => this.write({ kind: 'permissions', accountId }));
    messaging.on('messageQueued', (e) => this.write({ kind: 'queued', accountId: e.accountId, dest: e.destName, messageId: e.messageId }));
    messaging.on('stateChanged', (e) => this.write({ kind: 'state', accountId: e.accountId, entityName: e.entityName, apiKeyId: e.apiKeyId }));
  }

  write(signal: MqttSignal): void {
    this.store.addSignal(this.origin, signal, this.now()).catch((err: unknown) => this.logger.error({ err, signal }, 'could not record mqtt signal'));
  }

  /**
   * Polls signals of other processes every `intervalMs`. Windows overlap by `overlapMs` (clocks of
   * processes differ and inserts land out of order); ids already seen are skipped.
   */
  follow(handler: (signal: MqttSignal) => Promise<void>, opts: { intervalMs?: number; overlapMs?: number } = {}): void {
    const intervalMs = opts.intervalMs ?? 500;
    const overlapMs = opts.overlapMs ?? 5_000;
    const seen = new Map<string, number>();
    let since = this.now();
    const tick = async () => {
      const started = this.now();
      const docs = await this.store.signalsSince(new Date(since.getTime() - overlapMs), 5_000);
      for (const d of docs) {
        if (seen.has(d._id)) continue;
        seen.set(d._id, d.at.getTime());
        if (d.origin === this.origin) continue;
        await handler(d.signal).catch((err: unknown) => this.logger.error({ err, signal: d.signal }, 'mqtt signal handler failed'));
      }
      // A full page means more are waiting: continue from the last one read, not from now.
      since = docs.length === 5_000 ? docs[docs.length - 1].at : started;
      const horizon = since.getTime() - overlapMs * 2;
      for (const [id, at] of seen) if (at < horizon) seen.delete(id);
      if (started.getTime() - this.lastSweep > 60_000) {
        this.lastSweep = started.getTime();
        await this.store.sweepSignals(new Date(started.getTime() - SIGNAL_KEEP_MS));
      }
    };
    const loop = () => {
      this.timer = setTimeout(() => {
        tick().catch((err: unknown) => this.logger.warn({ err }, 'mqtt signal poll failed')).finally(() => { if (this.timer) loop(); });
      }, intervalMs);
    };
    loop();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
