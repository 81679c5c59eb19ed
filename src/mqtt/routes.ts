/**
 * HTTP endpoints an external broker calls to authenticate and authorize MQTT clients: EMQX's HTTP
 * authenticator and authorizer, and mosquitto-go-auth's HTTP backend (response mode `json`).
 * One answer shape serves both: always 200 with `{result: "allow"|"deny", ok, error}` (EMQX reads
 * `result` and `is_superuser`; go-auth reads `ok`/`error`). The broker proves itself with the
 * shared secret MQTT_AUTH_SECRET, as `Authorization: Bearer <secret>` (EMQX headers) or the
 * `secret` query parameter (go-auth cannot add headers). Off when MQTT_AUTH_SECRET is unset.
 * The rules are acl.ts's, the same ones the embedded broker enforces. See docs/mqtt.md.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import type { AppContext, RouteRegistry } from '../http/route';
import { bodyOf } from '../http/route';
import { UnauthorizedError } from '../errors';
import type { JsonSchema } from '../http/schema';
import type { Services } from '../services';
import { authenticateDevice, deviceOfKey, mayPublish, maySubscribe, parseDeviceTopic } from './acl';

interface AuthBody { clientid?: string; username?: string; password?: string }
interface AclBody { clientid?: string; username?: string; topic: string; action?: string; acc?: number | string }
interface SuperuserBody { username?: string }

const authBodySchema: JsonSchema = {
  type: 'object',
  properties: { clientid: { type: 'string' }, username: { type: 'string' }, password: { type: 'string' } },
};
const aclBodySchema: JsonSchema = {
  type: 'object', required: ['topic'],
  properties: {
    clientid: { type: 'string' }, username: { type: 'string' }, topic: { type: 'string' },
    action: { type: 'string', description: 'EMQX: publish | subscribe' },
    acc: { type: ['integer', 'string'], description: 'mosquitto-go-auth: 1 read, 2 write, 3 readwrite, 4 subscribe' },
  },
};
const decisionSchema: JsonSchema = {
  type: 'object', required: ['result', 'ok'],
  properties: {
    result: { type: 'string', enum: ['allow', 'deny'] }, ok: { type: 'boolean' }, error: { type: 'string' },
    is_superuser: { type: 'boolean' },
  },
};

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();
const sameSecret = (a: string, b: string): boolean => timingSafeEqual(digest(a), digest(b));

const allow = (superuser = false) => ({ result: 'allow', ok: true, error: '', is_superuser: superuser });
const deny = (why: string) => ({ result: 'deny', ok: false, error: why, is_superuser: false });

/** What the client asks for, in either broker's words. */
function accessOf(b: AclBody): 'publish' | 'subscribe' | 'read' | undefined {
  if (b.action === 'publish' || b.action === 'subscribe') return b.action;
  switch (Number(b.acc)) {
    case 2: return 'publish';
    case 4: return 'subscribe';
    case 1: return 'read';
    default: return undefined;
  }
}

export function registerMqttAuthRoutes(r: RouteRegistry, s: Services): void {
  const secret = s.config.mqttAuthSecret;
  if (!secret) return;
  const bridgeUser = s.config.mqttBridgeUsername;
  const bridgePassword = s.config.mqttBridgePassword;
  const group = s.config.mqttShareGroup;
  const ttlMs = s.config.mqttPresenceTtlSeconds * 1000;

  const checkSecret = (ctx: AppContext) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
    const q = ctx.query.secret;
    const given = m?.[1] ?? (typeof q === 'string' ? q : undefined);
    if (!given || !sameSecret(given, secret)) throw new UnauthorizedError('Missing or invalid broker secret');
  };
  const isBridge = (username: string | undefined) => bridgeUser !== undefined && username === bridgeUser;

  const common = { area: 'messaging' as const, tags: ['mqtt-broker'], auth: 'none' as const, rate: 'none' as const };

  r.add({
    ...common, method: 'POST', path: '/api/mqtt/auth',
    summary: 'MQTT CONNECT check for an external broker (EMQX HTTP authenticator, mosquitto-go-auth getuser)',
    description: 'Devices: clientid = resourcePath, username = apiKeyId, password = the entity API key. The bridge: MQTT_BRIDGE_USERNAME/PASSWORD (superuser).',
    body: { schema: authBodySchema, maxBytes: 16 * 1024 },
    responses: { 200: { description: 'Decision', schema: decisionSchema }, 401: { description: 'Wrong broker secret' } },
    handler: async (ctx) => {
      checkSecret(ctx);
      const b = bodyOf<AuthBody>(ctx);
      if (isBridge(b.username)) {
        ctx.body = bridgePassword !== undefined && b.password !== undefined && sameSecret(b.password, bridgePassword) ? allow(true) : deny('not authorized');
        return;
      }
      const r2 = await authenticateDevice(s.accounts, b.clientid, b.username, b.password);
      if (!r2) {
        ctx.body = deny('not authorized');
        return;
      }
      await s.messageStore.recordHeartbeat(r2.device.accountId, r2.device.entityName, new Date(), {});
      ctx.body = allow();
    },
  });

  r.add({
    ...common, method: 'POST', path: '/api/mqtt/acl',
    summary: 'MQTT publish/subscribe check for an external broker (EMQX HTTP authorizer, mosquitto-go-auth aclcheck)',
    description: 'A device publishes only to its publish topic and subscribes/reads only its messages and state topics. A messages-topic subscription marks the device present so waiting directed messages are delivered.',
    body: { schema: aclBodySchema, maxBytes: 16 * 1024 },
    responses: { 200: { description: 'Decision', schema: decisionSchema }, 401: { description: 'Wrong broker secret' } },
    handler: async (ctx) => {
      checkSecret(ctx);
      const b = bodyOf<AclBody>(ctx);
      const access = accessOf(b);
      if (!access) {
        ctx.body = deny('unsupported access');
        return;
      }
      if (isBridge(b.username)) {
        const t = parseDeviceTopic(b.topic);
        const ok = access === 'subscribe'
          ? b.topic === `$share/${group}/+/+/+/publish` || b.topic === '$SYS/brokers/+/clients/+/disconnected'
          : access === 'publish' ? t !== undefined && t.kind !== 'publish' : true;
        ctx.body = ok ? allow(true) : deny('topic not allowed');
        return;
      }
      if (!b.username) {
        ctx.body = deny('not authorized');
        return;
      }
      const r2 = await deviceOfKey(s.accounts, b.username, b.clientid);
      if (!r2) {
        ctx.body = deny('not authorized');
        return;
      }
      const { device, permissions } = r2;
      if (access === 'publish') {
        ctx.body = mayPublish(device, b.topic) ? allow() : deny('topic not allowed');
        return;
      }
      const kind = maySubscribe(device, b.topic, permissions);
      if (!kind) {
        ctx.body = deny('topic not allowed');
        return;
      }
      if (access === 'subscribe') {
        if (kind === 'messages') await s.mqttStore.markSubscribed(device, new Date(), ttlMs);
        s.mqttSignals.write({ kind: 'subscribed', device, topic: kind });
      }
      ctx.body = allow();
    },
  });

  r.add({
    ...common, method: 'POST', path: '/api/mqtt/superuser',
    summary: 'mosquitto-go-auth superuser check: only the bridge user',
    body: { schema: { type: 'object', properties: { username: { type: 'string' } } }, maxBytes: 16 * 1024 },
    responses: { 200: { description: 'Decision', schema: decisionSchema }, 401: { description: 'Wrong broker secret' } },
    handler: async (ctx) => {
      checkSecret(ctx);
      ctx.body = isBridge(bodyOf<SuperuserBody>(ctx).username) ? allow(true) : deny('not a superuser');
    },
  });
}
