/**
 * The embedded MQTT broker (aedes) of the `mqtt` role when MQTT_URL is unset. It authenticates
 * devices itself (acl.ts: client_id = resourcePath, username = apiKeyId, password = the entity
 * API key; anything else CONNACK 5 not authorized), enforces the topic ACLs, and hands device
 * traffic to the DeviceGateway. Revoking or rotating a key closes its live sessions at once: in
 * this process through `entityKeyRevoked`, from other processes through the signal log, and as a
 * safety net every live session's key is re-checked every `recheckMs`. A session's permissions are
 * re-read when they can have changed (`refreshAccount`: an entity's role, a custom role, the plan):
 * one that lost any is closed, so the device reconnects and subscribes under what it may do now.
 */
import net from 'node:net';
import { Aedes, AuthenticateError, Client } from 'aedes';
import type { Permission } from '../accounts/roles';
import type { AccountService } from '../accounts/service';
import type { Logger } from '../log';
import { authenticateDevice, deviceOfKey, DeviceIdentity, mayPublish, maySubscribe } from './acl';
import type { DeviceGateway, DeviceTransport, Presence } from './gateway';
import { listenOn } from '../stack/net';
import { observeMqttTakeover } from '../telemetry/metrics';

export interface DeviceSession extends DeviceIdentity { permissions: ReadonlySet<Permission> }

export interface EmbeddedBroker extends DeviceTransport, Presence {
  aedes: Aedes;
  server: net.Server;
  sessionOf(client: Client): DeviceSession | undefined;
  /** Attaches the gateway that handles device publishes and subscriptions. */
  use(gateway: DeviceGateway): void;
  /** Closes every live session of a key (revoked or rotated). */
  closeKey(apiKeyId: string): void;
  /** Re-reads the permissions of an account's live sessions; closes those that lost any. */
  refreshAccount(accountId: string): Promise<void>;
  close(): Promise<void>;
}

const NOT_AUTHORIZED = 5;
/** At most one takeover warning per key this often. */
export const TAKEOVER_WARN_MS = 60_000;
const entityKey = (d: { accountId: string; entityName: string }): string => `${d.accountId}/${d.entityName}`;

function authError(message: string): AuthenticateError {
  return Object.assign(new Error(message), { returnCode: NOT_AUTHORIZED }) as AuthenticateError;
}

export async function startEmbeddedBroker(opts: {
  port: number; host?: string; accounts: AccountService; logger: Logger; recheckMs?: number; now?: () => Date;
}): Promise<EmbeddedBroker> {
  const log = opts.logger.child({ component: 'mqtt-broker' });
  const now = opts.now ?? (() => new Date());
  const sessions = new WeakMap<Client, DeviceSession>();
  const clientsByKey = new Map<string, Set<Client>>();
  /** Clients subscribed to their messages topic, by entity: where directed messages may go now. */
  const listeners = new Map<string, Set<Client>>();
  const lastSeen = new WeakMap<Client, number>();
  /**
   * Each client's last inbound publish: aedes handles every packet of one socket read at once,
   * so two publishes that arrive together would race through the pipeline; each waits for the
   * one before it instead, and the device's messages are stored in the order it sent them.
   */
  const inbound = new WeakMap<Client, Promise<void>>();
  let gateway: DeviceGateway | undefined;
  const takeoverWarned = new Map<string, number>();
  const takenOver = (s: DeviceSession) => {
    observeMqttTakeover();
    const t = now().getTime();
    if (t - (takeoverWarned.get(s.apiKeyId) ?? Number.NEGATIVE_INFINITY) < TAKEOVER_WARN_MS) return;
    if (takeoverWarned.size > 10_000) takeoverWarned.clear();
    takeoverWarned.set(s.apiKeyId, t);
    log.warn({ accountId: s.accountId, entityName: s.entityName, apiKeyId: s.apiKeyId },
      'a second mqtt connection with the same key took over the session: are two devices using one key?');
  };

  const dropListener = (client: Client, s: DeviceSession) => {
    const set = listeners.get(entityKey(s));
    set?.delete(client);
    if (set && set.size === 0) listeners.delete(entityKey(s));
  };

  const aedes = await Aedes.createBroker({
    // resourcePaths are longer than MQTT 3.1's suggested 23 characters.
    maxClientsIdLength: 256,
    authenticate: (client, username, password, done) => {
      authenticateDevice(opts.accounts, client.id, username, password?.toString('utf8')).then((r) => {
        if (!r) {
          // The client chose its id: at most its first 256 characters reach the log (a probe sent 60,000).
          log.info({ clientId: client.id?.slice(0, 256) }, 'mqtt connect refused');
          return done(authError('not authorized'), false);
        }
        const session: DeviceSession = { ...r.device, permissions: r.permissions };
        sessions.set(client, session);
        let set = clientsByKey.get(session.apiKeyId);
        if (!set) clientsByKey.set(session.apiKeyId, (set = new Set()));
        // The client id is fixed by the key, so a second connection of the key takes the session
        // (MQTT closes the first). Two devices sharing a key take it from each other every few
        // seconds: say so, at most once a minute per key.
        if ([...set].some((c) => c.id === client.id && !c.closed)) takenOver(session);
        set.add(client);
        done(null, true);
      }, (err: unknown) => {
        log.error({ err }, 'mqtt authentication failed');
        done(authError('authentication unavailable'), false);
      });
    },
    authorizePublish: (client, packet, done) => {
      const s = client ? sessions.get(client) : undefined;
      if (!client || !s || !mayPublish(s, packet.topic)) return done(new Error('publish topic not allowed'));
      // Device publishes are consumed here, never routed or retained. Awaiting the pipeline, one
      // publish after another (`inbound`), keeps one device's messages in order and pushes back
      // on a device that outruns it.
      packet.retain = false;
      if (!gateway) return done(null);
      const g = gateway;
      const turn = (inbound.get(client) ?? Promise.resolve()).then(() => g.handlePublish(s, packet.payload as Buffer)).catch(() => undefined);
      inbound.set(client, turn);
      void turn.then(() => done(null));
    },
    authorizeSubscribe: (client, sub, done) => {
      const s = sessions.get(client);
      // A null subscription is refused with SUBACK 0x80 (an error would drop the connection).
      if (!s || !maySubscribe(s, sub.topic, s.permissions)) return done(null, null);
      done(null, sub);
    },
  });

  aedes.on('clientReady', (client) => {
    const s = sessions.get(client);
    if (s && gateway) gateway.markOnline(s).catch((err: unknown) => log.warn({ err }, 'could not record mqtt connect'));
  });
  aedes.on('ping', (_packet, client) => {
    const s = sessions.get(client);
    const t = now().getTime();
    // Keep-alives keep the entity online; written at most once a minute per session.
    if (!s || !gateway || t - (lastSeen.get(client) ?? 0) < 60_000) return;
    lastSeen.set(client, t);
    gateway.markOnline(s).catch((err: unknown) => log.warn({ err }, 'could not record mqtt keep-alive'));
  });
  aedes.on('subscribe', (subs, client) => {
    const s = sessions.get(client);
    if (!s || !gateway) return;
    const g = gateway;
    for (const sub of subs) {
      const kind = maySubscribe(s, sub.topic, s.permissions);
      if (kind === 'messages') {
        let set = listeners.get(entityKey(s));
        if (!set) listeners.set(entityKey(s), (set = new Set()));
        set.add(client);
        g.deliverPending(s).catch((err: unknown) => log.error({ err }, 'could not deliver pending messages'));
      } else if (kind === 'state') {
        // aedes hands the subscriber the retained table itself; publish one only when there is
        // none (first subscription ever, or a restarted broker that lost its retained messages),
        // so a device gets its state once.
        hasRetained(aedes, sub.topic)
          .then((has) => (has ? undefined : g.publishState(s.accountId, s.entityName, s.apiKeyId)))
          .catch((err: unknown) => log.error({ err }, 'could not publish state'));
      }
    }
  });
  aedes.on('unsubscribe', (topics, client) => {
    const s = sessions.get(client);
    if (s && topics.some((t) => maySubscribe(s, t, s.permissions) === 'messages')) dropListener(client, s);
  });
  aedes.on('clientDisconnect', (client) => {
    const s = sessions.get(client);
    if (!s) return;
    clientsByKey.get(s.apiKeyId)?.delete(client);
    if (clientsByKey.get(s.apiKeyId)?.size === 0) clientsByKey.delete(s.apiKeyId);
    dropListener(client, s);
    const stillConnected = [...(clientsByKey.get(s.apiKeyId) ?? [])].length > 0;
    if (!stillConnected && gateway) gateway.markOffline(s).catch((err: unknown) => log.warn({ err }, 'could not record mqtt disconnect'));
  });

  const closeKey = (apiKeyId: string) => {
    const set = clientsByKey.get(apiKeyId);
    if (!set) return;
    log.info({ apiKeyId, sessions: set.size }, 'closing mqtt sessions of a revoked key');
    for (const client of set) client.close();
    clientsByKey.delete(apiKeyId);
  };
  const onRevoked = (apiKeyId: string) => closeKey(apiKeyId);
  opts.accounts.events.on('entityKeyRevoked', onRevoked);

  const refreshAccount = async (accountId: string) => {
    const keys = [...clientsByKey].filter(([, set]) => [...set].some((c) => sessions.get(c)?.accountId === accountId)).map(([k]) => k);
    for (const apiKeyId of keys) {
      const now = await deviceOfKey(opts.accounts, apiKeyId);
      for (const client of [...(clientsByKey.get(apiKeyId) ?? [])]) {
        const s = sessions.get(client);
        if (!s) continue;
        if (!now) {
          client.close();
          continue;
        }
        const lost = [...s.permissions].filter((p) => !now.permissions.has(p));
        if (lost.length > 0) {
          // Its subscriptions were granted under permissions it no longer has: it starts over.
          log.info({ apiKeyId, lost }, 'closing an mqtt session whose role lost permissions');
          client.close();
        } else {
          sessions.set(client, { ...s, permissions: now.permissions });
        }
      }
    }
  };
  const onPermissions = (accountId: string) => {
    refreshAccount(accountId).catch((err: unknown) => log.warn({ err, accountId }, 'mqtt permission re-check failed'));
  };
  opts.accounts.events.on('entityPermissionsChanged', onPermissions);

  const recheck = setInterval(() => {
    const ids = [...clientsByKey.keys()];
    opts.accounts.deadEntityKeys(ids).then((dead) => dead.forEach(closeKey), (err: unknown) => log.warn({ err }, 'mqtt key re-check failed'));
  }, opts.recheckMs ?? 30_000);
  recheck.unref();

  const server = net.createServer(aedes.handle);
  await listenOn(server, opts.port, opts.host ?? '0.0.0.0', 'MQTT_PORT');
  log.info({ port: opts.port }, 'mqtt broker listening');

  return {
    aedes,
    server,
    sessionOf: (client) => sessions.get(client),
    use: (g) => { gateway = g; },
    closeKey,
    refreshAccount,
    send: (topic, payload, o) => new Promise<void>((resolve, reject) => {
      aedes.publish({ cmd: 'publish', topic, payload: Buffer.from(payload), qos: o.qos, retain: o.retain, dup: false }, (err) => (err ? reject(err) : resolve()));
    }),
    subscribedDevice: async (accountId, entityName) => {
      const set = listeners.get(entityKey({ accountId, entityName }));
      const client = set ? [...set][0] : undefined;
      return client ? sessions.get(client) : undefined;
    },
    close: async () => {
      clearInterval(recheck);
      opts.accounts.events.off('entityKeyRevoked', onRevoked);
      opts.accounts.events.off('entityPermissionsChanged', onPermissions);
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Whether the broker holds a retained message on `topic` (aedes' persistence is untyped). */
async function hasRetained(aedes: Aedes, topic: string): Promise<boolean> {
  const persistence = (aedes as unknown as { persistence: { createRetainedStream(pattern: string): AsyncIterable<unknown> } }).persistence;
  for await (const packet of persistence.createRetainedStream(topic)) {
    if (packet) return true;
  }
  return false;
}
