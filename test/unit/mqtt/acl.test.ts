/**
 * Device topic rules (src/mqtt/acl.ts), shared by the embedded broker and the HTTP authorizer of
 * external brokers: a device publishes only to its own `.../publish` topic and subscribes only to
 * its own `.../messages` (entity:CheckMessages) and `.../state` (entity:State). Topics are compared
 * as exact strings, so wildcards, other accounts, other regions and path tricks must all be refused.
 */
import type { Permission } from '../../../src/accounts/roles';
import type { AccountService } from '../../../src/accounts/service';
import type { AccountDoc } from '../../../src/accounts/records';
import type { EntityDoc } from '../../../src/entities/records';
import { topicsOf } from '../../../src/messaging/topics';
import {
  authenticateDevice, DeviceIdentity, deviceOfKey, mayPublish, maySubscribe, parseDeviceTopic, topicsOfDevice,
} from '../../../src/mqtt/acl';

const ACC = '5f0c6d2e-8b1a-4c3d-9e7f-0a1b2c3d4e5f';
const OTHER_ACC = '7a7a7a7a-0000-4000-8000-000000000001';
const me: DeviceIdentity = { accountId: ACC, region: 'eu-west', apiKeyId: '0123456789abcdef01234567', entityName: 'sensor-1' };
const base = `${ACC}/eu-west/0123456789abcdef01234567`;
const ALL: ReadonlySet<Permission> = new Set<Permission>(['entity:Publish', 'entity:State', 'entity:CheckMessages', 'entity:Files']);

describe('topicsOf / topicsOfDevice', () => {
  test('build {accountId}/{region}/{apiKeyId}/publish|messages|state', () => {
    expect(topicsOf('a', 'r', 'k')).toEqual({ publish: 'a/r/k/publish', messages: 'a/r/k/messages', state: 'a/r/k/state' });
    expect(topicsOfDevice(me)).toEqual({ publish: `${base}/publish`, messages: `${base}/messages`, state: `${base}/state` });
  });

  test('the entity name is not part of the topic (a rename or a look-alike name changes nothing)', () => {
    expect(topicsOfDevice({ ...me, entityName: 'other' })).toEqual(topicsOfDevice(me));
  });
});

describe('parseDeviceTopic', () => {
  test.each(['publish', 'messages', 'state'] as const)('splits a %s topic into its four parts', (kind) => {
    expect(parseDeviceTopic(`${base}/${kind}`)).toEqual({ accountId: ACC, region: 'eu-west', apiKeyId: me.apiKeyId, kind });
  });

  test.each([
    ['empty', ''],
    ['three segments', `${ACC}/eu-west/publish`],
    ['five segments', `${base}/publish/extra`],
    ['trailing slash', `${base}/publish/`],
    ['leading slash', `/${base}/publish`],
    ['empty segment', `${ACC}//k/publish`],
    ['unknown kind', `${base}/subscribe`],
    ['kind in upper case', `${base}/PUBLISH`],
    ['kind with a trailing space', `${base}/publish `],
    ['single-level wildcard as account', '+/eu-west/k/publish'],
    ['single-level wildcard as key', `${ACC}/eu-west/+/publish`],
    ['multi-level wildcard', `${ACC}/eu-west/#`],
    ['wildcard as kind', `${base}/+`],
    ['wildcard glued inside a segment', `${ACC}/eu-west/k+/publish`],
    ['hash glued inside a segment', `${ACC}/eu#/k/publish`],
    ['shared subscription', '$share/sentinel/+/+/+/publish'],
    ['$SYS topic', '$SYS/brokers/n1/clients/c1/disconnected'],
  ])('refuses %s', (_what, topic) => {
    expect(parseDeviceTopic(topic)).toBeUndefined();
  });

  test('does not interpret ".." (segments are opaque): it parses but names a different account', () => {
    const t = parseDeviceTopic('../eu-west/k/publish');
    expect(t).toEqual({ accountId: '..', region: 'eu-west', apiKeyId: 'k', kind: 'publish' });
  });

  test('a very long topic is handled without blowing up', () => {
    expect(parseDeviceTopic('a/'.repeat(100_000) + 'publish')).toBeUndefined();
  });
});

describe('mayPublish: only the device\'s own publish topic', () => {
  test('own publish topic is allowed', () => {
    expect(mayPublish(me, `${base}/publish`)).toBe(true);
  });

  test.each([
    ['own messages topic', `${base}/messages`],
    ['own state topic (devices must not forge retained state)', `${base}/state`],
    ['another account, same region and key', `${OTHER_ACC}/eu-west/${me.apiKeyId}/publish`],
    ['another region', `${ACC}/us-east/${me.apiKeyId}/publish`],
    ['another key of the same account', `${ACC}/eu-west/ffffffffffffffffffffffff/publish`],
    ['wildcard key', `${ACC}/eu-west/+/publish`],
    ['multi-level wildcard', `${ACC}/#`],
    ['bare #', '#'],
    ['path traversal segment', `${ACC}/eu-west/${me.apiKeyId}/../publish`],
    ['dot segment prefix', `./${base}/publish`],
    ['trailing slash', `${base}/publish/`],
    ['double slash', `${ACC}//eu-west/${me.apiKeyId}/publish`],
    ['upper-cased key', `${ACC}/eu-west/${me.apiKeyId.toUpperCase()}/publish`],
    ['entity name instead of key', `${ACC}/eu-west/${me.entityName}/publish`],
    ['resource path style', `accounts/${ACC}/entities/${me.entityName}/publish`],
    ['NUL appended', `${base}/publish\u0000`],
    ['full-width solidus look-alike', `${ACC}\uff0feu-west\uff0f${me.apiKeyId}\uff0fpublish`],
    ['Cyrillic look-alike kind', `${base}/publ\u0456sh`],
    ['shared-subscription prefix', `$share/g/${base}/publish`],
    ['empty topic', ''],
  ])('refuses %s', (_what, topic) => {
    expect(mayPublish(me, topic)).toBe(false);
  });
});

describe('maySubscribe: own messages (CheckMessages) and state (State) only', () => {
  test('own messages and state topics with the default permissions', () => {
    expect(maySubscribe(me, `${base}/messages`, ALL)).toBe('messages');
    expect(maySubscribe(me, `${base}/state`, ALL)).toBe('state');
  });

  test('messages needs entity:CheckMessages, state needs entity:State, each independently', () => {
    const noCheck = new Set<Permission>(['entity:Publish', 'entity:State']);
    const noState = new Set<Permission>(['entity:Publish', 'entity:CheckMessages']);
    expect(maySubscribe(me, `${base}/messages`, noCheck)).toBeUndefined();
    expect(maySubscribe(me, `${base}/state`, noCheck)).toBe('state');
    expect(maySubscribe(me, `${base}/state`, noState)).toBeUndefined();
    expect(maySubscribe(me, `${base}/messages`, noState)).toBe('messages');
    expect(maySubscribe(me, `${base}/messages`, new Set())).toBeUndefined();
  });

  test.each([
    ['own publish topic (would let a device read its own traffic or others\' via the broker)', `${base}/publish`],
    ['everything', '#'],
    ['all of the account', `${ACC}/#`],
    ['all keys of the account', `${ACC}/eu-west/+/messages`],
    ['all kinds of own key', `${base}/+`],
    ['own key, multi-level', `${base}/#`],
    ['all accounts', `+/eu-west/${me.apiKeyId}/messages`],
    ['all regions', `${ACC}/+/${me.apiKeyId}/messages`],
    ['another account', `${OTHER_ACC}/eu-west/${me.apiKeyId}/messages`],
    ['another region', `${ACC}/us-east/${me.apiKeyId}/state`],
    ['another key', `${ACC}/eu-west/ffffffffffffffffffffffff/messages`],
    ['shared subscription of own topic', `$share/g/${base}/messages`],
    ['shared subscription of the bridge', '$share/sentinel/+/+/+/publish'],
    ['$SYS', '$SYS/#'],
    ['traversal', `${base}/../../${OTHER_ACC}/eu-west/k/messages`],
    ['trailing slash', `${base}/messages/`],
    ['trailing wildcard level', `${base}/messages/#`],
    ['upper case kind', `${base}/MESSAGES`],
  ])('refuses %s', (_what, topic) => {
    expect(maySubscribe(me, topic, ALL)).toBeUndefined();
  });
});

describe('authenticateDevice: client_id = resourcePath, username = apiKeyId, password = current key', () => {
  const account: AccountDoc = { _id: ACC, name: 'acme', plan: 'pro', region: 'eu-west', entityCount: 1, createdAt: new Date(0) };
  const entity = {
    _id: `${ACC}/sensor-1`, accountId: ACC, name: 'sensor-1', resourcePath: `accounts/${ACC}/entities/sensor-1`, apiKeyId: me.apiKeyId,
    role: 'default', tags: [], metadata: {}, online: false, statusTable: {}, createdAt: new Date(0),
  } as EntityDoc;
  const GOOD = 'eyJ.good.token';

  function accounts(principal?: unknown) {
    const calls: string[] = [];
    const svc = {
      calls,
      authenticateEntityKey: async (token: string) => {
        calls.push(token);
        return token === GOOD ? (principal ?? { kind: 'entity', account, entity, apiKeyId: me.apiKeyId, permissions: ALL }) : undefined;
      },
    };
    return svc;
  }

  test('the right triple yields the device identity and its permissions', async () => {
    const r = await authenticateDevice(accounts() as unknown as AccountService, entity.resourcePath, me.apiKeyId, GOOD);
    expect(r?.device).toEqual(me);
    expect(r?.permissions).toBe(ALL);
  });

  test.each([
    ['missing client id', undefined, me.apiKeyId, GOOD],
    ['empty client id', '', me.apiKeyId, GOOD],
    ['missing username', `accounts/${ACC}/entities/sensor-1`, undefined, GOOD],
    ['missing password', `accounts/${ACC}/entities/sensor-1`, me.apiKeyId, undefined],
    ['empty password', `accounts/${ACC}/entities/sensor-1`, me.apiKeyId, ''],
  ])('refuses %s without asking the account service', async (_what, clientId, username, password) => {
    const a = accounts();
    expect(await authenticateDevice(a as unknown as AccountService, clientId, username, password)).toBeUndefined();
    expect(a.calls).toEqual([]);
  });

  test.each([
    ['a wrong key', `accounts/${ACC}/entities/sensor-1`, me.apiKeyId, 'eyJ.bad.token'],
    ['a username that is another key id', `accounts/${ACC}/entities/sensor-1`, 'ffffffffffffffffffffffff', GOOD],
    ['a client id of another entity', `accounts/${ACC}/entities/sensor-2`, me.apiKeyId, GOOD],
    ['a client id of another account', `accounts/${OTHER_ACC}/entities/sensor-1`, me.apiKeyId, GOOD],
    ['a client id with a trailing slash', `accounts/${ACC}/entities/sensor-1/`, me.apiKeyId, GOOD],
    ['the entity name as client id', 'sensor-1', me.apiKeyId, GOOD],
  ])('refuses %s', async (_what, clientId, username, password) => {
    expect(await authenticateDevice(accounts() as unknown as AccountService, clientId, username, password)).toBeUndefined();
  });

  test('an account key (not an entity principal) is refused', async () => {
    const a = accounts({ kind: 'account', account, apiKeyId: me.apiKeyId, permissions: ALL });
    expect(await authenticateDevice(a as unknown as AccountService, entity.resourcePath, me.apiKeyId, GOOD)).toBeUndefined();
  });

  test('deviceOfKey: a live key, optionally checked against the client id', async () => {
    const svc = {
      entityOfKey: async (id: string) => (id === me.apiKeyId ? { account, entity, permissions: ALL } : undefined),
    } as unknown as AccountService;
    expect((await deviceOfKey(svc, me.apiKeyId))?.device).toEqual(me);
    expect((await deviceOfKey(svc, me.apiKeyId, entity.resourcePath))?.device).toEqual(me);
    expect(await deviceOfKey(svc, me.apiKeyId, `accounts/${ACC}/entities/sensor-2`)).toBeUndefined();
    expect(await deviceOfKey(svc, me.apiKeyId, '')).toBeUndefined();
    expect(await deviceOfKey(svc, 'ffffffffffffffffffffffff')).toBeUndefined();
  });
});
