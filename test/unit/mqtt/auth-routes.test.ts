/**
 * The HTTP endpoints an external broker (EMQX, mosquitto-go-auth) asks about CONNECT, publish and
 * subscribe (src/mqtt/routes.ts). The handlers are called directly with a fake context, so these
 * check the decisions (MqttService over acl.ts rules, in both brokers' vocabularies: the bridge
 * superuser, the broker secret), not Koa.
 */
import type { Permission } from '../../../src/accounts/roles';
import type { AccountDoc } from '../../../src/accounts/records';
import type { EntityDoc } from '../../../src/entities/records';
import { AppError } from '../../../src/errors';
import type { RouteDef, RouteRegistry } from '../../../src/http/route';
import type { AccountService } from '../../../src/accounts/service';
import type { DeviceIdentity } from '../../../src/mqtt/acl';
import { registerMqttAuthRoutes } from '../../../src/mqtt/routes';
import { MqttService } from '../../../src/mqtt/service';

const SECRET = 'broker-secret-0123456789';
const ACC = '5f0c6d2e-8b1a-4c3d-9e7f-0a1b2c3d4e5f';
const KEY = '0123456789abcdef01234567';
const OTHER_KEY = 'ffffffffffffffffffffffff';
const base = `${ACC}/local/${KEY}`;
const resourcePath = `accounts/${ACC}/entities/sensor-1`;
const TOKEN = 'eyJ.device.key';

const account: AccountDoc = { _id: ACC, name: 'acme', plan: 'pro', region: 'local', entityCount: 1, createdAt: new Date(0) };
const entity = {
  _id: `${ACC}/sensor-1`, accountId: ACC, name: 'sensor-1', resourcePath, apiKeyId: KEY,
  role: 'default', tags: [], metadata: {}, online: false, statusTable: {}, createdAt: new Date(0),
} as EntityDoc;
const device: DeviceIdentity = { accountId: ACC, region: 'local', apiKeyId: KEY, entityName: 'sensor-1' };

interface Decision { result: 'allow' | 'deny'; ok: boolean; error: string; is_superuser: boolean }

function setup(opts: { permissions?: Permission[]; bridgeUser?: string; bridgePassword?: string; secret?: string } = {}) {
  const permissions = new Set<Permission>(opts.permissions ?? ['entity:Publish', 'entity:State', 'entity:CheckMessages', 'entity:Files']);
  const routes = new Map<string, RouteDef>();
  const heartbeats: unknown[][] = [];
  const marked: unknown[][] = [];
  const signals: unknown[] = [];
  const mqtt = new MqttService({
    settings: {
      authSecret: 'secret' in opts ? opts.secret : SECRET,
      bridgeUsername: 'bridgeUser' in opts ? opts.bridgeUser : 'sentinel-bridge',
      bridgePassword: 'bridgePassword' in opts ? opts.bridgePassword : 'bridge-pass',
      shareGroup: 'grp',
      presenceTtlMs: 300_000,
    },
    keys: {
      authenticateEntityKey: async (t: string) => (t === TOKEN ? { kind: 'entity', account, entity, apiKeyId: KEY, permissions } : undefined),
      entityOfKey: async (id: string) => (id === KEY ? { account, entity, permissions } : undefined),
    } as unknown as AccountService,
    status: { recordHeartbeat: async (...a: unknown[]) => { heartbeats.push(a); }, recordDisconnect: async () => {} },
    presence: {
      markSubscribed: async (...a: unknown[]) => { marked.push(a); },
      refreshPresence: async () => {}, subscribedDevice: async () => undefined, dropPresence: async () => {},
    },
    signals: { write: (s: unknown) => { signals.push(s); } },
  });
  const registry = { add: (def: RouteDef) => routes.set(def.path, def) };
  registerMqttAuthRoutes(registry as unknown as RouteRegistry, mqtt);

  async function call(path: string, body: Record<string, unknown>, auth: { header?: string; query?: Record<string, unknown> } = { header: `Bearer ${SECRET}` }): Promise<Decision> {
    const def = routes.get(path);
    if (!def) throw new Error(`route ${path} not registered`);
    const ctx = {
      get: (h: string) => (h.toLowerCase() === 'authorization' ? auth.header ?? '' : ''),
      query: auth.query ?? {},
      request: { body },
      body: undefined as unknown,
      state: {},
    };
    await def.handler(ctx as never);
    return ctx.body as Decision;
  }
  return { routes, call, heartbeats, marked, signals };
}

const acl = (topic: string, access: Record<string, unknown>, who: Record<string, unknown> = { username: KEY, clientid: resourcePath }) => ({ topic, ...who, ...access });

describe('broker secret', () => {
  test('no MQTT_AUTH_SECRET: the endpoints do not exist', () => {
    expect(setup({ secret: undefined }).routes.size).toBe(0);
  });

  test('all three endpoints exist when the secret is set', () => {
    expect([...setup().routes.keys()].sort()).toEqual(['/api/mqtt/acl', '/api/mqtt/auth', '/api/mqtt/superuser']);
  });

  test.each([
    ['no credentials', {}],
    ['a wrong bearer secret', { header: 'Bearer wrong' }],
    ['a prefix of the secret', { header: `Bearer ${SECRET.slice(0, -1)}` }],
    ['the secret plus a suffix', { header: `Bearer ${SECRET}x` }],
    ['a non-Bearer scheme', { header: `Basic ${SECRET}` }],
    ['a wrong query secret', { query: { secret: 'nope' } }],
    ['a repeated query secret (array)', { query: { secret: [SECRET, SECRET] } }],
    ['a wrong header even when the query is right', { header: 'Bearer wrong', query: { secret: SECRET } }],
  ])('%s is a 401 on every endpoint', async (_what, auth) => {
    const s = setup();
    for (const [path, body] of [
      ['/api/mqtt/auth', { clientid: resourcePath, username: KEY, password: TOKEN }],
      ['/api/mqtt/acl', acl(`${base}/publish`, { action: 'publish' })],
      ['/api/mqtt/superuser', { username: 'sentinel-bridge' }],
    ] as const) {
      const err = await s.call(path, body, auth).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).status).toBe(401);
    }
  });

  test('bearer header (any case, trailing spaces) and ?secret= are both accepted', async () => {
    const s = setup();
    const body = { username: 'sentinel-bridge' };
    expect((await s.call('/api/mqtt/superuser', body, { header: `bearer ${SECRET}  ` })).result).toBe('allow');
    expect((await s.call('/api/mqtt/superuser', body, { query: { secret: SECRET } })).result).toBe('allow');
  });
});

describe('/api/mqtt/auth (CONNECT)', () => {
  test('a device with the right client id, key id and key is allowed and marked online', async () => {
    const s = setup();
    expect(await s.call('/api/mqtt/auth', { clientid: resourcePath, username: KEY, password: TOKEN }))
      .toEqual({ result: 'allow', ok: true, error: '', is_superuser: false });
    expect(s.heartbeats).toHaveLength(1);
    expect(s.heartbeats[0].slice(0, 2)).toEqual([ACC, 'sensor-1']);
  });

  test.each([
    ['wrong password', { clientid: resourcePath, username: KEY, password: 'eyJ.other' }],
    ['another key id as username', { clientid: resourcePath, username: OTHER_KEY, password: TOKEN }],
    ['another client id', { clientid: `accounts/${ACC}/entities/sensor-2`, username: KEY, password: TOKEN }],
    ['no client id', { username: KEY, password: TOKEN }],
    ['nothing at all', {}],
  ])('%s: deny (200 body, not an error) and nothing recorded', async (_what, body) => {
    const s = setup();
    expect(await s.call('/api/mqtt/auth', body)).toEqual({ result: 'deny', ok: false, error: 'not authorized', is_superuser: false });
    expect(s.heartbeats).toEqual([]);
  });

  test('the bridge user is a superuser only with its own password', async () => {
    const s = setup();
    expect(await s.call('/api/mqtt/auth', { username: 'sentinel-bridge', password: 'bridge-pass' })).toMatchObject({ result: 'allow', is_superuser: true });
    expect(await s.call('/api/mqtt/auth', { username: 'sentinel-bridge', password: 'bridge-pas' })).toMatchObject({ result: 'deny', is_superuser: false });
    expect(await s.call('/api/mqtt/auth', { username: 'sentinel-bridge' })).toMatchObject({ result: 'deny' });
    // A device key is no bridge password.
    expect(await s.call('/api/mqtt/auth', { username: 'sentinel-bridge', password: TOKEN })).toMatchObject({ result: 'deny' });
  });

  test('bridge user configured without a password never authenticates', async () => {
    const s = setup({ bridgePassword: undefined });
    expect(await s.call('/api/mqtt/auth', { username: 'sentinel-bridge', password: '' })).toMatchObject({ result: 'deny' });
    expect(await s.call('/api/mqtt/auth', { username: 'sentinel-bridge', password: 'undefined' })).toMatchObject({ result: 'deny' });
  });
});

describe('/api/mqtt/acl for devices', () => {
  test.each([
    ['EMQX action', { action: 'publish' }],
    ['go-auth acc 2 (number)', { acc: 2 }],
    ['go-auth acc "2" (string)', { acc: '2' }],
  ])('publish to its own publish topic is allowed (%s)', async (_what, access) => {
    expect((await setup().call('/api/mqtt/acl', acl(`${base}/publish`, access))).result).toBe('allow');
  });

  test.each([
    ['own messages topic', `${base}/messages`],
    ['own state topic', `${base}/state`],
    ['another key\'s publish topic', `${ACC}/local/${OTHER_KEY}/publish`],
    ['a wildcard', `${ACC}/local/+/publish`],
    ['another region', `${ACC}/eu/${KEY}/publish`],
  ])('publish to %s is denied', async (_what, topic) => {
    expect(await setup().call('/api/mqtt/acl', acl(topic, { action: 'publish' }))).toMatchObject({ result: 'deny', ok: false, error: 'topic not allowed' });
  });

  test('subscribing to messages marks presence and signals the bridges; state only signals', async () => {
    const s = setup();
    expect((await s.call('/api/mqtt/acl', acl(`${base}/messages`, { action: 'subscribe' }))).result).toBe('allow');
    expect(s.marked).toHaveLength(1);
    expect(s.marked[0][0]).toEqual(device);
    expect(s.marked[0][2]).toBe(300_000);
    expect((await s.call('/api/mqtt/acl', acl(`${base}/state`, { acc: 4 }))).result).toBe('allow');
    expect(s.marked).toHaveLength(1);
    expect(s.signals).toEqual([
      { kind: 'subscribed', device, topic: 'messages' },
      { kind: 'subscribed', device, topic: 'state' },
    ]);
  });

  test('a read check (go-auth acc 1) is allowed on own topics but marks and signals nothing', async () => {
    const s = setup();
    expect((await s.call('/api/mqtt/acl', acl(`${base}/messages`, { acc: 1 }))).result).toBe('allow');
    expect((await s.call('/api/mqtt/acl', acl(`${base}/publish`, { acc: 1 }))).result).toBe('deny');
    expect(s.marked).toEqual([]);
    expect(s.signals).toEqual([]);
  });

  test.each(['#', `${ACC}/#`, `${base}/+`, `+/local/${KEY}/messages`, `${ACC}/local/${OTHER_KEY}/messages`, `$share/x/${base}/messages`, '$share/grp/+/+/+/publish'])(
    'subscribe to %s is denied with no presence side effects', async (topic) => {
      const s = setup();
      expect((await s.call('/api/mqtt/acl', acl(topic, { action: 'subscribe' }))).result).toBe('deny');
      expect(s.marked).toEqual([]);
      expect(s.signals).toEqual([]);
    },
  );

  test('permissions apply: no entity:CheckMessages → messages denied; no entity:State → state denied', async () => {
    const s = setup({ permissions: ['entity:Publish'] });
    expect((await s.call('/api/mqtt/acl', acl(`${base}/messages`, { action: 'subscribe' }))).result).toBe('deny');
    expect((await s.call('/api/mqtt/acl', acl(`${base}/state`, { action: 'subscribe' }))).result).toBe('deny');
    expect(s.marked).toEqual([]);
  });

  test.each([
    ['readwrite acc 3', { acc: 3 }],
    ['acc 0', { acc: 0 }],
    ['empty acc', { acc: '' }],
    ['unknown action', { action: 'all' }],
    ['action in upper case', { action: 'PUBLISH' }],
    ['nothing', {}],
  ])('an unsupported access (%s) is denied', async (_what, access) => {
    expect(await setup().call('/api/mqtt/acl', acl(`${base}/publish`, access))).toMatchObject({ result: 'deny', error: 'unsupported access' });
  });

  test('no username, an unknown/revoked key, or a key used with another client id: denied', async () => {
    const s = setup();
    expect((await s.call('/api/mqtt/acl', acl(`${base}/publish`, { action: 'publish' }, { clientid: resourcePath }))).error).toBe('not authorized');
    expect((await s.call('/api/mqtt/acl', acl(`${ACC}/local/${OTHER_KEY}/publish`, { action: 'publish' }, { username: OTHER_KEY, clientid: resourcePath }))).error).toBe('not authorized');
    expect((await s.call('/api/mqtt/acl', acl(`${base}/publish`, { action: 'publish' }, { username: KEY, clientid: `accounts/${ACC}/entities/sensor-2` }))).error).toBe('not authorized');
  });
});

describe('/api/mqtt/acl for the bridge user (superuser)', () => {
  const bridge = { username: 'sentinel-bridge', clientid: 'sentinel-bridge-host-1' };

  test('may subscribe to its shared subscription and the EMQX disconnect topic only', async () => {
    const s = setup();
    expect(await s.call('/api/mqtt/acl', acl('$share/grp/+/+/+/publish', { action: 'subscribe' }, bridge))).toMatchObject({ result: 'allow', is_superuser: true });
    expect((await s.call('/api/mqtt/acl', acl('$SYS/brokers/+/clients/+/disconnected', { acc: 4 }, bridge))).result).toBe('allow');
    for (const t of ['$share/other/+/+/+/publish', '#', '+/+/+/publish', `${base}/messages`, '$SYS/#']) {
      expect((await s.call('/api/mqtt/acl', acl(t, { action: 'subscribe' }, bridge))).result).toBe('deny');
    }
  });

  test('may publish to device messages/state topics but never impersonate a device publish', async () => {
    const s = setup();
    expect((await s.call('/api/mqtt/acl', acl(`${base}/messages`, { action: 'publish' }, bridge))).result).toBe('allow');
    expect((await s.call('/api/mqtt/acl', acl(`${base}/state`, { acc: 2 }, bridge))).result).toBe('allow');
    expect((await s.call('/api/mqtt/acl', acl(`${base}/publish`, { action: 'publish' }, bridge))).result).toBe('deny');
    expect((await s.call('/api/mqtt/acl', acl('#', { action: 'publish' }, bridge))).result).toBe('deny');
    expect((await s.call('/api/mqtt/acl', acl('$SYS/x', { action: 'publish' }, bridge))).result).toBe('deny');
  });

  test('no bridge user configured: nobody is the bridge (an absent username is not a match)', async () => {
    const s = setup({ bridgeUser: undefined });
    expect((await s.call('/api/mqtt/acl', acl('$share/grp/+/+/+/publish', { action: 'subscribe' }, {}))).result).toBe('deny');
    expect((await s.call('/api/mqtt/superuser', {})).result).toBe('deny');
  });
});

describe('/api/mqtt/superuser', () => {
  test('only the bridge user', async () => {
    const s = setup();
    expect(await s.call('/api/mqtt/superuser', { username: 'sentinel-bridge' })).toEqual({ result: 'allow', ok: true, error: '', is_superuser: true });
    expect(await s.call('/api/mqtt/superuser', { username: KEY })).toMatchObject({ result: 'deny', is_superuser: false });
    expect(await s.call('/api/mqtt/superuser', { username: 'Sentinel-Bridge' })).toMatchObject({ result: 'deny' });
    expect(await s.call('/api/mqtt/superuser', {})).toMatchObject({ result: 'deny' });
  });
});
