/**
 * The embedded MQTT broker (aedes) of the `mqtt` role. It authenticates devices itself:
 * client_id = the entity's resourcePath, username = apiKeyId (the jti), password = the entity
 * API key. An entity may publish only to its own publish topic and subscribe only to its own
 * messages and state topics. Revoking a key disconnects its live sessions at once.
 */
import net from 'node:net';
import { Aedes, AuthenticateError, Client } from 'aedes';
import type { AccountService } from '../accounts/service';
import type { Logger } from '../log';
import { topicsOf } from '../messaging/topics';

export interface DeviceSession { accountId: string; entityName: string; apiKeyId: string; region: string }

export interface EmbeddedBroker {
  aedes: Aedes;
  server: net.Server;
  sessionOf(client: Client): DeviceSession | undefined;
  close(): Promise<void>;
}

const NOT_AUTHORIZED = 5;

function authError(message: string): AuthenticateError {
  return Object.assign(new Error(message), { returnCode: NOT_AUTHORIZED }) as AuthenticateError;
}

export async function startEmbeddedBroker(opts: { port: number; host?: string; accounts: AccountService; logger: Logger }): Promise<EmbeddedBroker> {
  const log = opts.logger.child({ component: 'mqtt-broker' });
  const sessions = new WeakMap<Client, DeviceSession>();
  const clientsByKey = new Map<string, Set<Client>>();

  const aedes = await Aedes.createBroker({
    // resourcePaths are longer than MQTT 3.1's suggested 23 characters.
    maxClientsIdLength: 256,
    authenticate: (client, username, password, done) => {
      (async () => {
        if (!username || !password) return done(authError('credentials required'), false);
        const principal = await opts.accounts.authenticateEntityKey(password.toString('utf8'));
        if (!principal || principal.kind !== 'entity' || principal.apiKeyId !== username || principal.entity.resourcePath !== client.id) {
          log.info({ clientId: client.id }, 'mqtt connect refused');
          return done(authError('not authorized'), false);
        }
        const session: DeviceSession = { accountId: principal.account._id, entityName: principal.entity.name, apiKeyId: principal.apiKeyId, region: principal.account.region };
        sessions.set(client, session);
        let set = clientsByKey.get(session.apiKeyId);
        if (!set) clientsByKey.set(session.apiKeyId, (set = new Set()));
        set.add(client);
        done(null, true);
      })().catch((err: unknown) => {
        log.error({ err }, 'mqtt authentication failed');
        done(authError('authentication unavailable'), false);
      });
    },
    authorizePublish: (client, packet, done) => {
      const s = client ? sessions.get(client) : undefined;
      if (!s) return done(new Error('not authorized'));
      if (packet.topic !== topicsOf(s.accountId, s.region, s.apiKeyId).publish) return done(new Error('publish topic not allowed'));
      done(null);
    },
    authorizeSubscribe: (client, sub, done) => {
      const s = sessions.get(client);
      const t = s ? topicsOf(s.accountId, s.region, s.apiKeyId) : undefined;
      if (!t || (sub.topic !== t.messages && sub.topic !== t.state)) return done(new Error('subscription not allowed'));
      done(null, sub);
    },
  });

  aedes.on('clientDisconnect', (client) => {
    const s = sessions.get(client);
    if (s) clientsByKey.get(s.apiKeyId)?.delete(client);
  });
  opts.accounts.events.on('entityKeyRevoked', (apiKeyId: string) => {
    for (const client of clientsByKey.get(apiKeyId) ?? []) client.close();
    clientsByKey.delete(apiKeyId);
  });

  const server = net.createServer(aedes.handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  log.info({ port: opts.port }, 'mqtt broker listening');
  return {
    aedes,
    server,
    sessionOf: (client) => sessions.get(client),
    close: async () => {
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
