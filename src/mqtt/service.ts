/**
 * The MQTT rules beyond topic shapes (those are acl.ts's): who may connect to an external broker
 * and use which topic (devices by their entity key, the bridge by its own credentials as
 * superuser), and the writes a device session causes: online status, external-broker presence,
 * and the `subscribed` signal that makes the bridge deliver what waited. HTTP (routes.ts), the
 * gateway and the bridge call these; none of them reaches a store.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AccountService } from '../accounts/service';
import { UnauthorizedError } from '../errors';
import { authenticateDevice, deviceOfKey, DeviceIdentity, mayPublish, maySubscribe, parseDeviceTopic } from './acl';
import type { DevicePresence, MqttSignal } from './records';

/** What a broker may let a client do; `superuser` only for the bridge. */
export interface BrokerDecision { allowed: boolean; superuser: boolean; reason: string }
export type BrokerAccess = 'publish' | 'subscribe' | 'read';

/** The entity's online status (src/entities/service.ts). */
export interface DeviceStatus {
  recordHeartbeat(accountId: string, entityName: string, at: Date, metrics: Record<string, number>): Promise<void>;
  recordDisconnect(accountId: string, entityName: string, at: Date): Promise<void>;
}


export interface MqttSettings {
  /** MQTT_AUTH_SECRET: the external broker's proof; unset = the broker endpoints are off. */
  authSecret?: string;
  bridgeUsername?: string;
  bridgePassword?: string;
  shareGroup: string;
  presenceTtlMs: number;
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();
const sameSecret = (a: string, b: string): boolean => timingSafeEqual(digest(a), digest(b));

const allow = (superuser = false): BrokerDecision => ({ allowed: true, superuser, reason: '' });
const deny = (reason: string): BrokerDecision => ({ allowed: false, superuser: false, reason });

export class MqttService {
  private readonly now: () => Date;

  constructor(private readonly d: {
    keys: Pick<AccountService, 'authenticateEntityKey' | 'entityOfKey'>;
    status: DeviceStatus;
    presence: DevicePresence;
    signals: { write(signal: MqttSignal): void };
    settings: MqttSettings;
    now?: () => Date;
  }) {
    this.now = d.now ?? (() => new Date());
  }

  get brokerAuthEnabled(): boolean {
    return this.d.settings.authSecret !== undefined;
  }

  /** The external broker presents MQTT_AUTH_SECRET; anything else is 401. */
  checkBrokerSecret(given: string | undefined): void {
    const secret = this.d.settings.authSecret;
    if (!secret || !given || !sameSecret(given, secret)) throw new UnauthorizedError('Missing or invalid broker secret');
  }

  private isBridge(username: string | undefined): boolean {
    return this.d.settings.bridgeUsername !== undefined && username === this.d.settings.bridgeUsername;
  }

  /** CONNECT: the bridge by its password (superuser), a device by its live entity key; a device that connects is online. */
  async authenticate(clientId: string | undefined, username: string | undefined, password: string | undefined): Promise<BrokerDecision> {
    if (this.isBridge(username)) {
      const expected = this.d.settings.bridgePassword;
      return expected !== undefined && password !== undefined && sameSecret(password, expected) ? allow(true) : deny('not authorized');
    }
    const r = await authenticateDevice(this.d.keys, clientId, username, password);
    if (!r) return deny('not authorized');
    await this.markOnline(r.device);
    return allow();
  }

  /**
   * Publish / subscribe / read. The bridge subscribes only to the shared device-publish topic and
   * EMQX's disconnect notices and publishes only to devices' messages and state topics. A device
   * follows acl.ts; its messages-topic subscription marks it present so waiting messages go out.
   */
  async authorize(req: { clientId?: string; username?: string; topic: string; access: BrokerAccess }): Promise<BrokerDecision> {
    if (this.isBridge(req.username)) {
      const t = parseDeviceTopic(req.topic);
      const ok = req.access === 'subscribe'
        ? req.topic === `$share/${this.d.settings.shareGroup}/+/+/+/publish` || req.topic === '$SYS/brokers/+/clients/+/disconnected'
        : req.access === 'publish' ? t !== undefined && t.kind !== 'publish' : true;
      return ok ? allow(true) : deny('topic not allowed');
    }
    if (!req.username) return deny('not authorized');
    const r = await deviceOfKey(this.d.keys, req.username, req.clientId);
    if (!r) return deny('not authorized');
    if (req.access === 'publish') return mayPublish(r.device, req.topic) ? allow() : deny('topic not allowed');
    const kind = maySubscribe(r.device, req.topic, r.permissions);
    if (!kind) return deny('topic not allowed');
    if (req.access === 'subscribe') {
      if (kind === 'messages') await this.d.presence.markSubscribed(r.device, this.now(), this.d.settings.presenceTtlMs);
      this.d.signals.write({ kind: 'subscribed', device: r.device, topic: kind });
    }
    return allow();
  }

  superuser(username: string | undefined): BrokerDecision {
    return this.isBridge(username) ? allow(true) : deny('not a superuser');
  }

  async markOnline(device: DeviceIdentity): Promise<void> {
    await this.d.status.recordHeartbeat(device.accountId, device.entityName, this.now(), {});
  }

  async markOffline(device: DeviceIdentity): Promise<void> {
    await this.d.status.recordDisconnect(device.accountId, device.entityName, this.now());
  }

  /** Device traffic through an external broker keeps its presence alive. */
  async refreshPresence(device: DeviceIdentity): Promise<void> {
    await this.d.presence.refreshPresence(device, this.now(), this.d.settings.presenceTtlMs);
  }

  subscribedDevice(accountId: string, entityName: string): Promise<DeviceIdentity | undefined> {
    return this.d.presence.subscribedDevice(accountId, entityName, this.now());
  }

  /** A revoked key or a disconnected client no longer counts as listening. */
  async dropPresence(apiKeyId: string): Promise<void> {
    await this.d.presence.dropPresence({ apiKeyId });
  }
}
