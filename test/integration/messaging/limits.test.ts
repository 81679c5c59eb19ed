/** Messaging limits from outside: 50 requests/second per key, the monthly data limit, its warnings. */
import type { UsageDoc } from '../../../src/limits/records';
import { withStackRecords } from '../../support/db';
import { api, Json } from '../../support/env';
import { fleet, publish } from './helpers';

const FREE_LIMIT = 50 * 1024 * 1024;

/** A fixed window of rate counters as the counter store keeps it (limits/store/sqlite.ts). */
interface WindowDoc { _id: string; c: Record<string, number>; expiresAt: Date }

/** The account's messaging rate windows (one per second) that counted `counter`. */
async function messagingWindows(accountId: string, counter: string): Promise<WindowDoc[]> {
  const windows = await withStackRecords(async ({ table }) => table<WindowDoc>('rate_counters').find('instr(id, ?) = 1', [`acct:${accountId}:msg:`]));
  return windows.filter((w) => w.c[counter] !== undefined);
}

/** Sets the account's usage counter of `month` to `messagingBytes`, as if that much had been sent. */
function setMonthBytes(accountId: string, month: string, messagingBytes: number): Promise<void> {
  return withStackRecords(async ({ table }) => {
    const usage = table<UsageDoc>('usage');
    const id = `${accountId}:${month}`;
    usage.put({ ...(usage.get(id) ?? { _id: id, accountId, period: month, kind: 'month' }), messagingBytes });
  });
}

describe('per-key rate limit', () => {
  it('answers more than 50 requests in a second on one key with 429, Retry-After and code rate_limited; other keys are unaffected', async () => {
    const f = await fleet('starter', ['busy', 'calm']);
    const burst = await Promise.all(Array.from({ length: 300 }, () => api('GET', '/api/entities/status-table', { key: f.devices.busy.apiKey })));
    const limited = burst.filter((r) => r.status === 429);
    // However the burst fell across one-second windows (one counter document each), each admitted at most 50.
    const counter = `k_${f.devices.busy.apiKeyId}`;
    const windows = await messagingWindows(f.accountId, counter);
    expect(windows.reduce((n, w) => n + w.c[counter], 0)).toBeGreaterThanOrEqual(300);
    expect(burst.filter((r) => r.status === 200).length).toBeLessThanOrEqual(50 * windows.length);
    expect(limited.length).toBeGreaterThanOrEqual(1);
    expect(limited[0].body).toMatchObject({ code: 'rate_limited', reason: expect.any(String) });
    expect(Number(limited[0].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await api('GET', '/api/entities/status-table', { key: f.devices.calm.apiKey })).status).toBe(200);
  });
});

describe('monthly data limit', () => {
  it('pauses only telemetry publishes at the limit (429 data_limit_exceeded) and raises the 80% and 100% warnings once', async () => {
    const f = await fleet('free', ['meter', 'panel']);
    const key = f.devices.meter.apiKey;
    const month = new Date().toISOString().slice(0, 7);
    // Seed this month's counter just under 80%, as if most of the month's data had been sent.
    await setMonthBytes(f.accountId, month, Math.floor(FREE_LIMIT * 0.8) - 10);
    expect((await api('GET', '/api/account/notifications', { key: f.apiKey })).body).toEqual({ notifications: [] });
    expect((await publish(key, { msg_type: 'publish', data: { v: 'x'.repeat(100) } })).status).toBe(200);
    const at80 = await api('GET', '/api/account/notifications', { key: f.apiKey });
    expect(at80.body.notifications).toEqual([expect.objectContaining({ kind: 'data_limit_80', period: month, limitBytes: FREE_LIMIT })]);

    await setMonthBytes(f.accountId, month, FREE_LIMIT - 50);
    const refused = await publish(key, { msg_type: 'publish', data: { v: 'x'.repeat(100) } });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'data_limit_exceeded', reason: expect.any(String) });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Small enough to fit what is left: still accepted.
    expect((await publish(key, { msg_type: 'publish', data: { v: 1 } })).status).toBe(200);
    // Heartbeats, state messages and command responses keep flowing past the limit.
    expect((await publish(key, { msg_type: 'heartbeat', data: { mem_free: 1 } })).status).toBe(200);
    expect((await publish(key, { msg_type: 'state_update', data: { v: 'y'.repeat(200) } })).status).toBe(200);
    expect((await publish(key, { msg_type: 'client_cmd_resp', data: { ok: 'z'.repeat(200) }, dest: 'panel' })).status).toBe(200);
    expect((await publish(key, { msg_type: 'publish', data: { v: 2 } })).status).toBe(429);
    const batch = await api('POST', '/api/entities/messages', { key, body: [{ msg_type: 'publish', data: { v: 3 } }, { msg_type: 'heartbeat' }] });
    expect(batch.body.results).toEqual([{ code: 429, reason: expect.any(String), errorCode: 'data_limit_exceeded' }, { code: 200, content: '' }]);

    const notes = (await api('GET', '/api/account/notifications', { key: f.apiKey })).body.notifications as Json[];
    expect(notes.map((n) => n.kind).sort()).toEqual(['data_limit_100', 'data_limit_80']);
    expect(notes.find((n) => n.kind === 'data_limit_100').message).toMatch(/paused/);
    expect((await api('GET', '/api/account/notifications', { key: key })).status).toBe(403);
  });
});
