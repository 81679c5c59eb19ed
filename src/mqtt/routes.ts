/**
 * HTTP endpoints an external broker calls to authenticate and authorize MQTT clients: EMQX's HTTP
 * authenticator and authorizer, and mosquitto-go-auth's HTTP backend (response mode `json`).
 * One answer shape serves both: always 200 with `{result: "allow"|"deny", ok, error}` (EMQX reads
 * `result` and `is_superuser`; go-auth reads `ok`/`error`). The broker proves itself with the
 * shared secret MQTT_AUTH_SECRET, as `Authorization: Bearer <secret>` (EMQX headers) or the
 * `secret` query parameter (go-auth cannot add headers). Off when MQTT_AUTH_SECRET is unset.
 * The decisions are MqttService's (service.ts) over acl.ts's topic rules, the same ones the
 * embedded broker enforces; this file only translates the two brokers' vocabularies. See docs/mqtt.md.
 */
import type { FromSchema } from 'json-schema-to-ts';
import type { AppContext, RouteRegistry } from '../http/route';
import { bodyOf } from '../http/route';
import type { JsonSchema } from '../http/schema';
import type { BrokerAccess, BrokerDecision, MqttService } from './service';

const authBodySchema = {
  type: 'object',
  properties: { clientid: { type: 'string' }, username: { type: 'string' }, password: { type: 'string' } },
} as const;
const aclBodySchema = {
  type: 'object', required: ['topic'],
  properties: {
    clientid: { type: 'string' }, username: { type: 'string' }, topic: { type: 'string' },
    action: { type: 'string', description: 'EMQX: publish | subscribe' },
    acc: { type: ['integer', 'string'], description: 'mosquitto-go-auth: 1 read, 2 write, 3 readwrite, 4 subscribe' },
  },
} as const;
const superuserBodySchema = { type: 'object', properties: { username: { type: 'string' } } } as const;
type AuthBody = FromSchema<typeof authBodySchema>;
type AclBody = FromSchema<typeof aclBodySchema>;
type SuperuserBody = FromSchema<typeof superuserBodySchema>;

const decisionSchema: JsonSchema = {
  type: 'object', required: ['result', 'ok'],
  properties: {
    result: { type: 'string', enum: ['allow', 'deny'] }, ok: { type: 'boolean' }, error: { type: 'string' },
    is_superuser: { type: 'boolean' },
  },
};

/** The one answer both brokers read. */
const answer = (d: BrokerDecision) => ({ result: d.allowed ? 'allow' : 'deny', ok: d.allowed, error: d.reason, is_superuser: d.superuser });

/** What the client asks for, in either broker's words. */
function accessOf(b: AclBody): BrokerAccess | undefined {
  if (b.action === 'publish' || b.action === 'subscribe') return b.action;
  switch (Number(b.acc)) {
    case 2: return 'publish';
    case 4: return 'subscribe';
    case 1: return 'read';
    default: return undefined;
  }
}

/** `Authorization: Bearer <secret>` (EMQX) or `?secret=` (go-auth cannot add headers). */
function givenSecret(ctx: AppContext): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
  const q = ctx.query.secret;
  return m?.[1] ?? (typeof q === 'string' ? q : undefined);
}

export function registerMqttAuthRoutes(r: RouteRegistry, mqtt: MqttService): void {
  if (!mqtt.brokerAuthEnabled) return;
  const common = { dialect: 'messaging' as const, tags: ['mqtt-broker'], auth: 'none' as const, rate: 'none' as const };

  r.add({
    ...common, method: 'POST', path: '/api/mqtt/auth',
    summary: 'MQTT CONNECT check for an external broker (EMQX HTTP authenticator, mosquitto-go-auth getuser)',
    description: 'Devices: clientid = resourcePath, username = apiKeyId, password = the entity API key. The bridge: MQTT_BRIDGE_USERNAME/PASSWORD (superuser).',
    body: { schema: authBodySchema, maxBytes: 16 * 1024 },
    responses: { 200: { description: 'Decision', schema: decisionSchema }, 401: { description: 'Wrong broker secret' } },
    handler: async (ctx) => {
      mqtt.checkBrokerSecret(givenSecret(ctx));
      const b = bodyOf<AuthBody>(ctx);
      ctx.body = answer(await mqtt.authenticate(b.clientid, b.username, b.password));
    },
  });

  r.add({
    ...common, method: 'POST', path: '/api/mqtt/acl',
    summary: 'MQTT publish/subscribe check for an external broker (EMQX HTTP authorizer, mosquitto-go-auth aclcheck)',
    description: 'A device publishes only to its publish topic and subscribes/reads only its messages and state topics. A messages-topic subscription marks the device present so waiting directed messages are delivered.',
    body: { schema: aclBodySchema, maxBytes: 16 * 1024 },
    responses: { 200: { description: 'Decision', schema: decisionSchema }, 401: { description: 'Wrong broker secret' } },
    handler: async (ctx) => {
      mqtt.checkBrokerSecret(givenSecret(ctx));
      const b = bodyOf<AclBody>(ctx);
      const access = accessOf(b);
      ctx.body = answer(access
        ? await mqtt.authorize({ clientId: b.clientid, username: b.username, topic: b.topic, access })
        : { allowed: false, superuser: false, reason: 'unsupported access' });
    },
  });

  r.add({
    ...common, method: 'POST', path: '/api/mqtt/superuser',
    summary: 'mosquitto-go-auth superuser check: only the bridge user',
    body: { schema: superuserBodySchema, maxBytes: 16 * 1024 },
    responses: { 200: { description: 'Decision', schema: decisionSchema }, 401: { description: 'Wrong broker secret' } },
    handler: async (ctx) => {
      mqtt.checkBrokerSecret(givenSecret(ctx));
      ctx.body = answer(mqtt.superuser(bodyOf<SuperuserBody>(ctx).username));
    },
  });
}
