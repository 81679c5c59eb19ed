/** MQTT device clients for integration tests: real mqtt.js connections to the stack's broker. */
import mqtt, { IClientOptions, MqttClient } from 'mqtt';
import { api, cli, Json } from '../../support/env';

export interface Device { name: string; resourcePath: string; apiKeyId: string; apiKey: string }
export interface Topics { publish: string; messages: string; state: string }

export async function newDevice(accountId: string, name: string): Promise<Device> {
  const r = await cli('entity', 'create', '--account', accountId, '--name', name);
  if (r.code !== 0 || !r.json) throw new Error(`entity create failed: ${r.stderr}`);
  return r.json as unknown as Device;
}

export async function topicsOf(d: Device): Promise<Topics> {
  const me = await api('GET', '/api/entities/me', { key: d.apiKey });
  if (me.status !== 200) throw new Error(`GET /api/entities/me: ${me.status} ${me.text}`);
  return (me.body as Json).mqtt.topics as Topics;
}

/** Connects as the device; rejects with the CONNACK error when refused. */
export function connect(url: string, d: Device, override: Partial<IClientOptions> = {}): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, {
      clientId: d.resourcePath, username: d.apiKeyId, password: d.apiKey, reconnectPeriod: 0, connectTimeout: 5_000, ...override,
    });
    client.once('connect', () => resolve(client));
    client.once('error', (err) => { client.end(true); reject(err); });
  });
}

export interface Inbox { messages: Array<{ topic: string; body: Json; qos: number; retain: boolean }>; next(pred?: (m: Json) => boolean, timeoutMs?: number): Promise<{ topic: string; body: Json; qos: number; retain: boolean }> }

/** Collects everything the client receives; `next` waits for the first matching one not yet taken. */
export function inbox(client: MqttClient): Inbox {
  const messages: Inbox['messages'] = [];
  const taken = new Set<number>();
  client.on('message', (topic, payload, packet) => {
    let body: Json;
    try { body = JSON.parse(payload.toString('utf8')); } catch { body = payload.toString('utf8'); }
    messages.push({ topic, body, qos: packet.qos, retain: packet.retain });
  });
  return {
    messages,
    next: (pred = () => true, timeoutMs = 30_000) => new Promise((resolve, reject) => {
      const started = Date.now();
      const look = () => {
        const i = messages.findIndex((m, k) => !taken.has(k) && pred(m.body));
        if (i >= 0) {
          taken.add(i);
          return resolve(messages[i]);
        }
        if (Date.now() - started > timeoutMs) return reject(new Error(`no matching MQTT message within ${timeoutMs} ms; got ${JSON.stringify(messages.map((m) => m.body))}`));
        setTimeout(look, 20);
      };
      look();
    }),
  };
}

export async function until<T>(fn: () => Promise<T | undefined>, timeoutMs = 30_000, what = 'condition'): Promise<T> {
  const started = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits for `p`, failing with `what` after `timeoutMs` (a bound for a hang, not a speed claim). */
export async function within<T>(p: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs); })]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Sends the subscribed device a fresh directed message over HTTP and waits for it over MQTT: a
 * barrier, so a test can then assert what did NOT arrive before it without sleeping.
 */
export async function deliveredAfter(box: Inbox, from: { key: string; dest: string }): Promise<void> {
  const barrier = `barrier-${Math.random().toString(36).slice(2)}`;
  const sent = await api('POST', '/api/entities/message', { key: from.key, body: { msg_type: 'publish', dest: from.dest, data: { barrier } } });
  if (sent.status !== 200) throw new Error(`barrier message refused: ${sent.status} ${sent.text}`);
  await box.next((m) => m.data?.barrier === barrier);
}
