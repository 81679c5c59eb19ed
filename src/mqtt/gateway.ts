/**
 * What the service does for devices over MQTT, whichever broker carries the packets (the embedded
 * aedes broker, or an external broker through the bridge). It holds no message rule of its own:
 * - a publish is counted against the key's messaging rate (the HTTP limiter's window) and handed
 *   to THE message pipeline; any refusal goes back to the device as
 *   `{msg_type: "error", data: {reason, code, status}}` on its messages topic;
 * - directed messages are claimed exactly as check_messages claims them (one atomic delete of the
 *   inbox entry) and only then sent at QoS 1, so a message goes out once across HTTP and MQTT;
 * - after every state-table change the full table is published retained on the state topic;
 * - connect, disconnect and keep-alive traffic keep the entity's online status.
 */
import { FIXED_LIMITS } from '../accounts/plans';
import type { Logger } from '../log';
import type { Services } from '../services';
import { AppError, BadRequestError, PayloadTooLargeError, UnauthorizedError } from '../errors';
import { enforceMessagingRate } from '../limits/rates';
import { parseClientJson } from '../json-schema';
import type { Sender } from '../messaging/pipeline';
import type { DeliveredMessage } from '../messaging/records';
import { DeviceIdentity, topicsOfDevice } from './acl';
import { countMessage, observeMessage } from '../telemetry/metrics';
import { answerOf } from '../storage/errors';
import { inConsumerSpan } from '../telemetry/tracing';

/** How the gateway reaches devices: the embedded broker or the bridge's client connection. */
export interface DeviceTransport {
  send(topic: string, payload: string, opts: { qos: 0 | 1; retain: boolean }): Promise<void>;
}

/** Who is listening on its messages topic right now (delivery waits in the inbox otherwise). */
export interface Presence {
  subscribedDevice(accountId: string, entityName: string): Promise<DeviceIdentity | undefined>;
}

const SENDER_CACHE_MS = 10_000;

type GatewayServices = Pick<Services, 'messagePipeline' | 'messaging' | 'mqtt' | 'limits' | 'accounts'>;

export class DeviceGateway {
  private readonly regions = new Map<string, string>();
  private readonly senders = new Map<string, { sender: Sender; at: number }>();

  constructor(
    private readonly s: GatewayServices,
    private readonly transport: DeviceTransport,
    private readonly presence: Presence,
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * One device publish: the same rate limit and pipeline as POST /api/entities/message. The rate
   * window is the one the publish arrived in, so a backlog drained later in a burst is not
   * refused for a burst the device never sent.
   */
  handlePublish(device: DeviceIdentity, payload: Buffer, arrivedAt: Date = this.now()): Promise<void> {
    return inConsumerSpan('mqtt publish', { 'messaging.system': 'mqtt', 'messaging.operation.type': 'process' }, () => this.judgePublish(device, payload, arrivedAt));
  }

  private async judgePublish(device: DeviceIdentity, payload: Buffer, arrivedAt: Date): Promise<void> {
    // A publish refused before the pipeline (rate, size, not JSON, a superseded key) has no HTTP
    // answer to count it by: it counts in messages_total, as `other` when it never parsed.
    let raw: unknown;
    let counted = false;
    try {
      await enforceMessagingRate(this.s.limits, device.accountId, device.apiKeyId, arrivedAt);
      if (payload.length > FIXED_LIMITS.messageBodyBytes) throw new PayloadTooLargeError(`Message exceeds ${FIXED_LIMITS.messageBodyBytes} bytes`);
      try {
        raw = parseClientJson(payload.toString('utf8'));
      } catch (err) {
        // A `__proto__` key is refused by name, as the HTTP routes refuse it; other errors are generic.
        const proto = /prototype/.test((err as Error).message) ? `: ${(err as Error).message}` : '';
        throw new BadRequestError(`Malformed JSON payload${proto}`, undefined, 'invalid_json');
      }
      const sender = await this.senderOf(device);
      // The key was rotated after this session authenticated: nothing more from it counts.
      if (sender.entity.apiKeyId !== device.apiKeyId) throw new UnauthorizedError('Invalid API key');
      counted = true;
      await countMessage('mqtt', raw, () => this.s.messagePipeline.process(sender, raw));
    } catch (err) {
      if (!counted) observeMessage('mqtt', raw, answerOf(err)?.status ?? 500);
      if (!(err instanceof AppError)) this.logger.error({ err, apiKeyId: device.apiKeyId }, 'mqtt publish failed');
      await this.sendError(device, err);
    }
  }

  /**
   * The pipeline's sender, reloaded at most every SENDER_CACHE_MS per key: a device publishing 50
   * times a second would otherwise reload its entity 50 times a second, and a thousand devices
   * would spend the database on reloads. Role and service changes reach MQTT publishes within
   * that time (plan changes within the account cache's 2 s); revocation closes the session at once
   * and the key check below refuses a superseded key.
   */
  private async senderOf(device: DeviceIdentity): Promise<Sender> {
    const t = this.now().getTime();
    const hit = this.senders.get(device.apiKeyId);
    if (hit && t - hit.at < SENDER_CACHE_MS) return hit.sender;
    const sender = await this.s.messagePipeline.loadSender(device.accountId, device.entityName);
    if (this.senders.size > 100_000) this.senders.clear();
    this.senders.set(device.apiKeyId, { sender, at: t });
    return sender;
  }

  forget(apiKeyId: string): void {
    this.senders.delete(apiKeyId);
  }

  async sendError(device: DeviceIdentity, err: unknown): Promise<void> {
    const e = answerOf(err);
    const data = e
      ? { reason: e.message, code: e.code ?? `http_${e.status}`, status: e.status, ...(e.headers['Retry-After'] ? { retry_after: Number(e.headers['Retry-After']) } : {}) }
      : { reason: 'Internal server error', code: 'internal_error', status: 500 };
    await this.transport.send(topicsOfDevice(device).messages, JSON.stringify({ msg_type: 'error', data, timestamp: this.now().toISOString() }), { qos: 1, retain: false })
      .catch((sendErr: unknown) => this.logger.warn({ err: sendErr }, 'could not send mqtt error reply'));
  }

  /** Per destination device, the tail of its deliveries: each waits for the one before. */
  private readonly deliveries = new Map<string, Promise<unknown>>();

  /**
   * Runs one destination's deliveries one after another, in the order they were asked for: two
   * messages queued back to back would otherwise race through the presence read and the claim,
   * and the second could reach the device first.
   */
  private inOrder<T>(accountId: string, entityName: string, work: () => Promise<T>): Promise<T> {
    const key = `${accountId}\0${entityName}`;
    const run = (this.deliveries.get(key) ?? Promise.resolve()).then(work);
    const tail = run.catch(() => undefined);
    this.deliveries.set(key, tail);
    void tail.then(() => { if (this.deliveries.get(key) === tail) this.deliveries.delete(key); });
    return run;
  }

  /** A message was queued for `dest`: if it listens now, claim it and send it. */
  onMessageQueued(accountId: string, dest: string, messageId: string): Promise<void> {
    return this.inOrder(accountId, dest, async () => {
      const device = await this.presence.subscribedDevice(accountId, dest);
      if (!device) return;
      const message = await this.s.messaging.claimForDelivery(messageId);
      if (message) await this.deliver(device, message);
    });
  }

  /** The device (re)subscribed to its messages topic: everything that waited goes out, oldest first. */
  deliverPending(device: DeviceIdentity): Promise<number> {
    return this.inOrder(device.accountId, device.entityName, async () => {
      let sent = 0;
      for (;;) {
        const batch = await this.s.messaging.checkMessages(device.accountId, device.entityName, 50);
        if (!batch) return sent;
        for (const m of batch) await this.deliver(device, m);
        sent += batch.length;
      }
    });
  }

  private async deliver(device: DeviceIdentity, message: DeliveredMessage): Promise<void> {
    try {
      await this.transport.send(topicsOfDevice(device).messages, JSON.stringify(message), { qos: 1, retain: false });
    } catch (err) {
      // Claimed but not handed to the broker: say so loudly, the message is not retried.
      this.logger.error({ err, messageId: message.id, apiKeyId: device.apiKeyId }, 'mqtt delivery failed after claim');
    }
  }

  /** Publishes the entity's current table retained (read fresh, so out-of-order signals cannot regress it). */
  async publishState(accountId: string, entityName: string, apiKeyId: string): Promise<void> {
    let table: Record<string, unknown>;
    try {
      table = await this.s.messaging.getStatusTable(accountId, entityName);
    } catch (err) {
      if (err instanceof AppError && err.status === 404) return;
      throw err;
    }
    const device: DeviceIdentity = { accountId, entityName, apiKeyId, region: await this.regionOf(accountId) };
    await this.transport.send(topicsOfDevice(device).state, JSON.stringify({ statusTable: table }), { qos: 1, retain: true });
  }

  async markOnline(device: DeviceIdentity): Promise<void> {
    await this.s.mqtt.markOnline(device);
  }

  async markOffline(device: DeviceIdentity): Promise<void> {
    await this.s.mqtt.markOffline(device);
  }

  private async regionOf(accountId: string): Promise<string> {
    let region = this.regions.get(accountId);
    if (!region) {
      region = (await this.s.accounts.getAccount(accountId)).region;
      this.regions.set(accountId, region);
    }
    return region;
  }
}
