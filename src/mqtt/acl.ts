/**
 * The device topic rules, one place for the embedded broker and for the HTTP authorizer that an
 * external broker calls: an entity publishes only to its own `.../publish` topic and subscribes
 * only to its own `.../messages` (needs entity:CheckMessages) and `.../state` (needs entity:State).
 */
import type { Permission } from '../accounts/roles';
import type { AccountService } from '../accounts/service';
import { topicsOf } from '../messaging/topics';

/** Who a device session is: enough to build its topics and load it fresh for the pipeline. */
export interface DeviceIdentity { accountId: string; region: string; apiKeyId: string; entityName: string }

export type TopicKind = 'publish' | 'messages' | 'state';

export const topicsOfDevice = (d: DeviceIdentity) => topicsOf(d.accountId, d.region, d.apiKeyId);

/** Splits `{accountId}/{region}/{apiKeyId}/{kind}`; undefined for anything else. */
export function parseDeviceTopic(topic: string): { accountId: string; region: string; apiKeyId: string; kind: TopicKind } | undefined {
  const parts = topic.split('/');
  if (parts.length !== 4 || parts.some((p) => p === '' || p.includes('+') || p.includes('#'))) return undefined;
  const [accountId, region, apiKeyId, kind] = parts;
  if (kind !== 'publish' && kind !== 'messages' && kind !== 'state') return undefined;
  return { accountId, region, apiKeyId, kind };
}

export function mayPublish(d: DeviceIdentity, topic: string): boolean {
  return topic === topicsOfDevice(d).publish;
}

export function maySubscribe(d: DeviceIdentity, topic: string, permissions: ReadonlySet<Permission>): 'messages' | 'state' | undefined {
  const t = topicsOfDevice(d);
  if (topic === t.messages && permissions.has('entity:CheckMessages')) return 'messages';
  if (topic === t.state && permissions.has('entity:State')) return 'state';
  return undefined;
}

/**
 * CONNECT credentials of a device: client_id = the entity's resourcePath, username = apiKeyId (the
 * jti), password = the entity API key, live and still the entity's current key. Used by the
 * embedded broker and by the HTTP authenticator external brokers call.
 */
export async function authenticateDevice(
  accounts: Pick<AccountService, 'authenticateEntityKey'>, clientId: string | undefined, username: string | undefined, password: string | undefined,
): Promise<{ device: DeviceIdentity; permissions: ReadonlySet<Permission> } | undefined> {
  if (!clientId || !username || !password) return undefined;
  const p = await accounts.authenticateEntityKey(password);
  if (!p || p.kind !== 'entity' || p.apiKeyId !== username || p.entity.resourcePath !== clientId) return undefined;
  return {
    device: { accountId: p.account._id, region: p.account.region, apiKeyId: p.apiKeyId, entityName: p.entity.name },
    permissions: p.permissions,
  };
}

/** The device behind a key id (no password: the broker checked it at CONNECT), if the key is live and the client id matches. */
export async function deviceOfKey(
  accounts: Pick<AccountService, 'entityOfKey'>, apiKeyId: string, clientId?: string,
): Promise<{ device: DeviceIdentity; permissions: ReadonlySet<Permission> } | undefined> {
  const r = await accounts.entityOfKey(apiKeyId);
  if (!r || (clientId !== undefined && r.entity.resourcePath !== clientId)) return undefined;
  return {
    device: { accountId: r.account._id, region: r.account.region, apiKeyId, entityName: r.entity.name },
    permissions: r.permissions,
  };
}
