/**
 * External-broker mode (MQTT_URL set): the `mqtt` role connects to the broker as a service client
 * and consumes device publishes through an MQTT 5 shared subscription
 * (`$share/<group>/+/+/+/publish`), so the broker hands each publish to exactly one of the bridge
 * replicas. Deliveries, retained state and error replies go back through the broker.
 *
 * Device authentication and ACLs belong to the broker, which asks the api role's HTTP endpoints
 * (src/mqtt/routes.ts). Those endpoints also tell the bridges, through the signal log and the
 * presence collection, when a device subscribed to its messages topic, so directed messages are
 * claimed only for devices that listen. EMQX's client-disconnected system messages end a presence
 * at once; brokers that publish none (Mosquitto) let it lapse after MQTT_PRESENCE_TTL_SECONDS
 * without device traffic (docs/mqtt.md).
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import mqtt, { MqttClient } from 'mqtt';
import type { AccountService } from '../accounts/service';
import type { Logger } from '../log';
import { DeviceIdentity, deviceOfKey, parseDeviceTopic } from './acl';
import type { DeviceGateway, DeviceTransport, Presence } from './gateway';
import type { MqttService } from './service';

export interface BridgeOptions {
  url: string;
  username?: string;
  password?: string;
  /** Shared-subscription group; every replica of one deployment uses the same. Default `sentinel`. */
  shareGroup: string;
  /** How long a device counts as subscribed without news of it. */
  presenceTtlMs: number;
  /** Publishes processed concurrently; the rest wait in this process's queue. Default 256. */
  maxInFlight?: number;
}

export interface Bridge extends DeviceTransport, Presence {
  client: MqttClient;
  use(gateway: DeviceGateway): void;
  /** Forgets a revoked key (cached identity and presence). */
  forgetKey(apiKeyId: string): Promise<void>;
  /** Publishes processed by this replica since start (for tests and the operations log). */
  processed(): number;
  close(): Promise<void>;
}

const IDENTITY_CACHE_MS = 60_000;

export async function startBridge(opts: BridgeOptions & { accounts: AccountService; mqtt: MqttService; logger: Logger; now?: () => Date }): Promise<Bridge> {
  const log = opts.logger.child({ component: 'mqtt-bridge' });
  const now = opts.now ?? (() => new Date());
  const maxInFlight = opts.maxInFlight ?? 256;
  const identities = new Map<string, { device: DeviceIdentity | undefined; at: number }>();
  const presenceRefreshed = new Map<string, number>();
  let gateway: DeviceGateway | undefined;
  let inFlight = 0;
  let processed = 0;
  const waiting: Array<() => Promise<void>> = [];

  const client = mqtt.connect(opts.url, {
    protocolVersion: 5,
    clientId: `sentinel-bridge-${os.hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
    username: opts.username,
    password: opts.password,
    clean: true,
    reconnectPeriod: 1_000,
    connectTimeout: 10_000,
  });

  const identityOf = async (apiKeyId: string, accountId: string, region: string): Promise<DeviceIdentity | undefined> => {
    const hit = identities.get(apiKeyId);
    if (hit && now().getTime() - hit.at < IDENTITY_CACHE_MS) return hit.device;
    const r = await deviceOfKey(opts.accounts, apiKeyId);
    const device = r && r.device.accountId === accountId && r.device.region === region ? r.device : undefined;
    identities.set(apiKeyId, { device, at: now().getTime() });
    return device;
  };

  const onDevicePublish = async (topic: string, payload: Buffer, arrivedAt: Date) => {
    const t = parseDeviceTopic(topic);
    if (!t || t.kind !== 'publish') return;
    const device = await identityOf(t.apiKeyId, t.accountId, t.region);
    if (!device) {
      log.warn({ topic }, 'publish from an unknown or revoked key dropped');
      return;
    }
    if (!gateway) throw new Error('bridge consumed a publish before its gateway was attached');
    await gateway.handlePublish(device, payload, arrivedAt);
    processed++;
    // Device traffic keeps an external-broker presence alive (written at most every TTL/4).
    const key = device.apiKeyId;
    const t0 = now().getTime();
    if (t0 - (presenceRefreshed.get(key) ?? 0) > opts.presenceTtlMs / 4) {
      presenceRefreshed.set(key, t0);
      await opts.mqtt.refreshPresence(device);
    }
  };

  // EMQX announces disconnects on $SYS/brokers/<node>/clients/<clientid>/disconnected.
  const onSystem = async (topic: string, payload: Buffer) => {
    if (!topic.endsWith('/disconnected')) return;
    let username: unknown;
    try {
      username = (JSON.parse(payload.toString('utf8')) as { username?: unknown }).username;
    } catch {
      return;
    }
    if (typeof username !== 'string') return;
    const hit = await deviceOfKey(opts.accounts, username);
    if (!hit) return;
    await opts.mqtt.dropPresence(username);
    await opts.mqtt.markOffline(hit.device);
  };

  // mqtt.js reads inbound packets strictly in order and waits for handleMessage's callback, so
  // holding the callback back would also hold back PINGRESP and the connection would time out.
  // The publish is acknowledged on receipt and queued here; at most maxInFlight run at once.
  const pump = () => {
    // Publishes that arrive before the gateway is attached wait in the queue.
    while (gateway && inFlight < maxInFlight && waiting.length) {
      const job = waiting.shift() as () => Promise<void>;
      inFlight++;
      job().catch((err: unknown) => log.error({ err }, 'bridge message failed')).finally(() => {
        inFlight--;
        pump();
      });
    }
  };
  client.handleMessage = (packet, done) => {
    const topic = packet.topic;
    const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
    const arrivedAt = now();
    waiting.push(() => (topic.startsWith('$SYS/') ? onSystem(topic, payload) : onDevicePublish(topic, payload, arrivedAt)));
    if (waiting.length === 10_000) log.warn({ queued: waiting.length }, 'bridge backlog: the database is slower than device traffic');
    pump();
    done();
  };

  const subscribe = () => client.subscribeAsync({ [`$share/${opts.shareGroup}/+/+/+/publish`]: { qos: 1 }, '$SYS/brokers/+/clients/+/disconnected': { qos: 0 } });
  // clean: true, so every reconnect subscribes again.
  client.on('connect', (connack) => {
    if (connack.sessionPresent) return;
    subscribe().then(
      (granted) => log.info({ granted: granted.map((g) => `${g.topic}:${g.qos}`) }, 'bridge subscribed'),
      (err: unknown) => log.error({ err }, 'bridge subscription failed'),
    );
  });
  client.on('error', (err) => log.warn({ err }, 'bridge connection error'));

  await new Promise<void>((resolve, reject) => {
    const onConnect = () => { client.off('error', onError); resolve(); };
    const onError = (err: Error) => { client.off('connect', onConnect); client.end(true); reject(new Error(`cannot connect to MQTT_URL: ${err.message}`)); };
    client.once('connect', onConnect);
    client.once('error', onError);
  });
  // `ready` must mean publishes are being consumed: confirm the shared subscription once more.
  const granted = await subscribe();
  const refused = granted.filter((g) => g.qos >= 0x80);
  if (refused.length && refused[0].topic.startsWith('$share/')) {
    await client.endAsync();
    throw new Error(`the broker refused the shared subscription ${refused[0].topic} (reason ${refused[0].qos}); check the bridge user's ACL`);
  }
  log.info({ url: opts.url, group: opts.shareGroup }, 'mqtt bridge connected');

  return {
    client,
    use: (g) => {
      gateway = g;
      pump();
    },
    forgetKey: async (apiKeyId) => {
      identities.delete(apiKeyId);
      await opts.mqtt.dropPresence(apiKeyId);
    },
    processed: () => processed,
    send: async (topic, payload, o) => {
      await client.publishAsync(topic, payload, { qos: o.qos, retain: o.retain });
    },
    subscribedDevice: (accountId, entityName) => opts.mqtt.subscribedDevice(accountId, entityName),
    close: async () => {
      await client.endAsync();
      log.info({ processed }, 'bridge stopped');
    },
  };
}
