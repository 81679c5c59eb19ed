/** Custom entity roles: plan-gated, any subset of permissions, applied on the next request. */
import { api, cli, newAccount } from '../../support/env';

describe('custom roles', () => {
  it('are refused below Standard with 403 plan_required custom_roles', async () => {
    const acct = await newAccount('starter');
    const r = await api('POST', '/api/roles', { key: acct.apiKey, body: { name: 'reader', permissions: ['entity:ListMessages'] } });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ code: 'plan_required', feature: 'custom_roles', current_plan: 'starter', upgrade: true, reason: expect.any(String) });
    const bad = await cli('entity', 'create', '--account', acct.accountId, '--name', 'x', '--role', 'reader');
    expect(bad.code).not.toBe(0);
  });

  it('grant exactly their permissions, change on the next request, and cannot be deleted while held', async () => {
    const acct = await newAccount('standard');
    const created = await api('POST', '/api/roles', { key: acct.apiKey, body: { name: 'auditor', permissions: ['entity:Publish', 'entity:ListMessages'] } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'auditor', permissions: ['entity:Publish', 'entity:ListMessages'], builtIn: false });
    expect((await api('POST', '/api/roles', { key: acct.apiKey, body: { name: 'auditor', permissions: [] } })).status).toBe(409);
    expect((await api('POST', '/api/roles', { key: acct.apiKey, body: { name: 'x', permissions: ['entity:Everything'] } })).status).toBe(400);
    const list = await api('GET', '/api/roles', { key: acct.apiKey });
    expect(list.body.roles.map((r: { name: string }) => r.name)).toEqual(['default', 'auditor']);

    const auditor = (await cli('entity', 'create', '--account', acct.accountId, '--name', 'aud', '--role', 'auditor')).json as Record<string, string>;
    const plain = (await cli('entity', 'create', '--account', acct.accountId, '--name', 'plain')).json as Record<string, string>;
    expect((await api('POST', '/api/entities/message', { key: auditor.apiKey, body: { msg_type: 'publish', data: { v: 1 } } })).status).toBe(200);
    expect((await api('GET', '/api/entities/messages', { key: auditor.apiKey })).status).toBe(200);
    expect((await api('GET', '/api/entities/messages', { key: plain.apiKey })).status).toBe(403);
    // The role lacks entity:State and entity:CheckMessages.
    expect((await api('GET', '/api/entities/status-table', { key: auditor.apiKey })).status).toBe(403);

    const patched = await api('PATCH', '/api/roles/auditor', { key: acct.apiKey, body: { permissions: ['entity:Publish'] } });
    expect(patched.body.permissions).toEqual(['entity:Publish']);
    expect((await api('GET', '/api/entities/messages', { key: auditor.apiKey })).status).toBe(403);

    expect((await api('DELETE', '/api/roles/auditor', { key: acct.apiKey })).status).toBe(409);
    expect((await api('PATCH', '/api/roles/default', { key: acct.apiKey, body: { permissions: [] } })).status).toBe(409);
    expect((await api('DELETE', '/api/entities/aud', { key: acct.apiKey })).status).toBe(204);
    expect((await api('DELETE', '/api/roles/auditor', { key: acct.apiKey })).status).toBe(204);
    expect((await api('GET', '/api/roles/auditor', { key: acct.apiKey })).status).toBe(404);

    const other = await newAccount('standard');
    expect((await api('GET', '/api/roles/auditor', { key: other.apiKey })).status).toBe(404);
  });
});
