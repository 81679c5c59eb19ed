/** Bulk registration, entity management, key rotation and deletion, from outside. */
import type { AuditEntry } from '../../../src/accounts/audit';
import { withStackRecords } from '../../support/db';
import { api, Json, newAccount } from '../../support/env';
import { fleet } from './helpers';

/** The account's audit entries of one action, as stored (newest first). */
function auditEntries(accountId: string, action: string): Promise<AuditEntry[]> {
  return withStackRecords(({ stores }) => stores.audit.list(accountId, { action }, 1000));
}

/** Directed messages waiting in the account's inboxes. */
function queuedMessages(accountId: string): Promise<number> {
  return withStackRecords(async ({ table }) => table('message_inbox').count('account_id = ?', [accountId]));
}

async function inParallel<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

describe('bulk registration', () => {
  it('registers 500 devices by count + prefix: 500 keys that each authenticate, one audit entry', async () => {
    const acct = await newAccount('standard');
    const r = await api('POST', '/api/entities/bulk', { key: acct.apiKey, body: { count: 500, prefix: 'cam', tags: ['site-a'], metadata: { floor: 2 } } });
    expect(r.status).toBe(200);
    // Keys shown once: no cache may keep them (an outside probe found no Cache-Control).
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body.created).toBe(500);
    expect(r.body.failed).toBe(0);
    const results = r.body.results as Json[];
    expect(results.map((x) => x.name)).toEqual(Array.from({ length: 500 }, (_, i) => `cam-${i + 1}`));
    expect(new Set(results.map((x) => x.apiKey)).size).toBe(500);
    expect(results[0]).toEqual({ name: 'cam-1', status: 'created', apiKeyId: expect.any(String), apiKey: expect.any(String), resourcePath: `accounts/${acct.accountId}/entities/cam-1` });
    let ok = 0;
    await inParallel(results, 16, async (d) => {
      const me = await api('GET', '/api/entities/me', { key: d.apiKey });
      expect(me.status).toBe(200);
      expect(me.body.name).toBe(d.name);
      expect(me.body.tags).toEqual(['site-a']);
      ok++;
    });
    expect(ok).toBe(500);
    const entries = await auditEntries(acct.accountId, 'bulk_create');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ resourceType: 'entity', userEmail: `api_key:${acct.apiKeyId}`, details: { requested: 500, created: 500, failed: 0 } });
    const one = await api('GET', '/api/entities/cam-250', { key: acct.apiKey });
    expect(one.body).toMatchObject({ name: 'cam-250', tags: ['site-a'], metadata: { floor: 2 }, role: 'default', service: null, online: false });
  }, 120_000);

  it('prefers the explicit list, fails bad, taken and over-quota names per entry, and refuses more than 1,000', async () => {
    const acct = await newAccount('free');
    await api('POST', '/api/entities/bulk', { key: acct.apiKey, body: { entities: [{ name: 'taken' }] } });
    const names = ['ok-1', 'bad name', 'taken', 'me', 'ok-1', ...Array.from({ length: 10 }, (_, i) => `n${i}`)];
    const r = await api('POST', '/api/entities/bulk', { key: acct.apiKey, body: { count: 3, prefix: 'ignored', entities: names.map((name) => ({ name, tags: ['x'] })) } });
    expect(r.status).toBe(200);
    const byName = (n: string) => (r.body.results as Json[]).filter((x) => x.name === n);
    expect(byName('ok-1')[0].status).toBe('created');
    expect(byName('ok-1')[1]).toMatchObject({ status: 'failed', detail: expect.stringMatching(/twice/) });
    expect(byName('bad name')[0]).toMatchObject({ status: 'failed', detail: expect.stringMatching(/must match/) });
    expect(byName('taken')[0]).toMatchObject({ status: 'failed', detail: expect.stringMatching(/already exists/) });
    expect(byName('me')[0]).toMatchObject({ status: 'failed', detail: expect.stringMatching(/reserved/) });
    // Free: 10 entities; 'taken' and 'ok-1' hold two, so 8 of n0..n9 fit.
    expect(r.body.created).toBe(9);
    expect(r.body.failed).toBe(6);
    expect(byName('n9')[0]).toMatchObject({ status: 'failed', detail: expect.stringMatching(/Entity limit reached/) });
    expect((r.body.results as Json[]).some((x) => x.name.startsWith('ignored'))).toBe(false);
    const entry = (await auditEntries(acct.accountId, 'bulk_create')).find((e) => e.details.requested === names.length);
    expect(entry?.details).toMatchObject({ requested: 15, created: 9, failed: 6 });
    expect((await api('POST', '/api/entities/bulk', { key: acct.apiKey, body: { count: 1001, prefix: 'x' } })).status).toBe(400);
    expect((await api('POST', '/api/entities/bulk', { key: acct.apiKey, body: { tags: ['x'] } })).status).toBe(400);
  });
});

describe('entity management', () => {
  it('lists, reads and patches entities; another account gets 404', async () => {
    const f = await fleet('starter', ['m1', 'm2', 'm3']);
    const other = await newAccount('starter');
    const list = await api('GET', '/api/entities?limit=2', { key: f.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.entities.map((e: Json) => e.name)).toEqual(['m1', 'm2']);
    expect(list.body.next_cursor).toBe(2);
    const rest = await api('GET', '/api/entities?limit=2&offset=2', { key: f.apiKey });
    expect(rest.body).toMatchObject({ entities: [expect.objectContaining({ name: 'm3' })], next_cursor: null });
    const patched = await api('PATCH', '/api/entities/m1', { key: f.apiKey, body: { tags: ['t1'], metadata: { room: 'lab' } } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'm1', tags: ['t1'], metadata: { room: 'lab' } });
    expect((await api('GET', '/api/entities/m1', { key: f.apiKey })).body.tags).toEqual(['t1']);
    // Metadata is at most 16 KB as JSON, by PATCH and by bulk registration (which copies it to
    // every entity: an outside probe stored 25 MB from one request).
    const big = { blob: 'x'.repeat(17 * 1024) };
    const tooBig = await api('PATCH', '/api/entities/m1', { key: f.apiKey, body: { metadata: big } });
    expect([tooBig.status, tooBig.body.code]).toEqual([413, 'payload_too_large']);
    expect((await api('GET', '/api/entities/m1', { key: f.apiKey })).body.metadata).toEqual({ room: 'lab' });
    const bulk = await api('POST', '/api/entities/bulk', { key: f.apiKey, body: { count: 3, prefix: 'meta', metadata: big } });
    expect([bulk.status, bulk.body.code]).toEqual([413, 'payload_too_large']);
    expect((await api('GET', '/api/entities/meta-1', { key: f.apiKey })).status).toBe(404);
    expect((await api('PATCH', '/api/entities/m1', { key: f.apiKey, body: { role: 'operator' } })).body).toMatchObject({ code: 'plan_required', feature: 'custom_roles' });
    for (const [method, path] of [['GET', '/api/entities/m1'], ['PATCH', '/api/entities/m1'], ['DELETE', '/api/entities/m1'], ['POST', '/api/entities/m1/keys/rotate']]) {
      const r = await api(method, path, { key: other.apiKey, ...(method === 'PATCH' ? { body: { tags: [] } } : {}) });
      expect(r.status).toBe(404);
      expect(typeof r.body.reason).toBe('string');
    }
    expect((await api('GET', '/api/entities/nope', { key: f.apiKey })).status).toBe(404);
    expect((await api('GET', '/api/entities', { key: f.devices.m1.apiKey })).status).toBe(403);
  });

  it('a rotated key is refused at once with 401, the new one works; deletion revokes too; both are audited', async () => {
    const f = await fleet('starter', ['r1', 'r2']);
    const old = f.devices.r1.apiKey;
    expect((await api('GET', '/api/entities/me', { key: old })).status).toBe(200);
    const rot = await api('POST', '/api/entities/r1/keys/rotate', { key: f.apiKey });
    expect(rot.headers.get('cache-control')).toBe('no-store');
    expect(rot.status).toBe(200);
    expect(rot.body).toMatchObject({ name: 'r1', resourcePath: f.devices.r1.resourcePath, apiKeyId: expect.any(String), apiKey: expect.any(String) });
    expect(rot.body.apiKeyId).not.toBe(f.devices.r1.apiKeyId);
    const refused = await api('POST', '/api/entities/message', { key: old, body: { msg_type: 'publish', data: {} } });
    expect(refused.status).toBe(401);
    expect(typeof refused.body.reason).toBe('string');
    expect((await api('GET', '/api/entities/me', { key: rot.body.apiKey })).status).toBe(200);

    // A message waiting for r2 is dropped with it.
    await api('POST', '/api/entities/message', { key: rot.body.apiKey, body: { msg_type: 'publish', data: {}, dest: 'r2' } });
    expect(await queuedMessages(f.accountId)).toBe(1);
    expect((await api('DELETE', '/api/entities/r2', { key: f.apiKey })).status).toBe(204);
    expect((await api('GET', '/api/entities/check_messages', { key: f.devices.r2.apiKey })).status).toBe(401);
    expect((await api('GET', '/api/entities/r2', { key: f.apiKey })).status).toBe(404);
    expect(await queuedMessages(f.accountId)).toBe(0);

    const rotations = await auditEntries(f.accountId, 'rotate_key');
    expect(rotations).toEqual([expect.objectContaining({ resourceType: 'entity', resourceName: 'r1', details: { revokedApiKeyId: f.devices.r1.apiKeyId, newApiKeyId: rot.body.apiKeyId } })]);
    const deletions = await auditEntries(f.accountId, 'delete');
    expect(deletions).toEqual([expect.objectContaining({ resourceType: 'entity', resourceName: 'r2', details: { revokedApiKeyId: f.devices.r2.apiKeyId } })]);
  });
});

describe('OpenAPI', () => {
  it('documents the messaging routes with their permissions and the decided response shapes', async () => {
    const doc = (await api('GET', '/openapi.json')).body;
    for (const [p, m] of [
      ['/api/entities/message', 'post'], ['/api/entities/messages', 'post'], ['/api/entities/status-table', 'patch'], ['/api/entities/status-table', 'put'],
      ['/api/entities/check_messages', 'get'], ['/api/entities/messages/{id}', 'get'], ['/api/entities/messages/search', 'post'], ['/api/entities/bulk', 'post'],
      ['/api/entities', 'get'], ['/api/entities/{name}', 'delete'], ['/api/entities/{name}/keys/rotate', 'post'], ['/api/services/{id}', 'patch'],
      ['/api/messages/export', 'get'], ['/api/audit-log/export', 'get'], ['/api/account/notifications', 'get'],
    ]) expect(doc.paths[p]?.[m]).toBeDefined();
    expect(doc.paths['/api/entities/messages'].get['x-permission']).toBe('entity:ListMessages');
    expect(doc.paths['/api/entities/status-table'].patch.responses['200'].content['application/json'].schema.required).toEqual(['statusTable']);
    expect(doc.paths['/api/entities/{name}'].delete.responses['204']).toBeDefined();
  });
});
