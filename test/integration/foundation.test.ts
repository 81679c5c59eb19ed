/** The foundation from outside: CLI, auth, usage, entity info, rate limits, health, OpenAPI. */
import { api, clearOfWindowEdge, cli, newAccount, stack } from '../support/env';

describe('operator CLI and account keys', () => {
  it('creates an account whose key reads usage with the plan numbers', async () => {
    const acct = await newAccount('free', 'acme');
    expect(acct.apiKey).toMatch(/^sk_[0-9a-f]{16}\./);
    const r = await api('GET', '/api/account/usage', { key: acct.apiKey });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ plan_tier: 'free', max_scans: 100, max_file_size_mb: 10, scans_used: 0, scans_remaining: 100 });
    expect(r.body.daily_volume.dates).toHaveLength(30);
    expect(r.body.daily_volume.counts).toEqual(new Array(30).fill(0));
    const now = new Date();
    expect(r.body.reset_at).toBe(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString());
  });

  it('answers 401 {error, requestId} for a missing, malformed or wrong key, echoing X-Request-ID', async () => {
    const missing = await api('GET', '/api/account/usage', { headers: { 'x-request-id': 'req-123' } });
    expect(missing.status).toBe(401);
    expect(missing.body).toMatchObject({ requestId: 'req-123' });
    expect(typeof missing.body.error).toBe('string');
    expect(missing.headers.get('x-request-id')).toBe('req-123');
    const acct = await newAccount('free');
    const tampered = acct.apiKey.slice(0, -2) + (acct.apiKey.endsWith('AA') ? 'BB' : 'AA');
    const wrong = await api('GET', '/api/account/usage', { key: tampered });
    expect(wrong.status).toBe(401);
    expect(wrong.body.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('changes plans and issues extra keys', async () => {
    const acct = await newAccount('free');
    const set = await cli('account', 'set-plan', '--account', acct.accountId, '--plan', 'pro');
    expect(set.code).toBe(0);
    expect(set.json).toEqual({ accountId: acct.accountId, plan: 'pro' });
    const key = await cli('key', 'create', '--account', acct.accountId);
    expect(key.code).toBe(0);
    const r = await api('GET', '/api/account/usage', { key: key.json?.apiKey });
    expect(r.body).toMatchObject({ plan_tier: 'pro', max_scans: 100000, max_file_size_mb: 100 });
  });

  it('fails with a message on stderr and a non-zero exit for bad input', async () => {
    const bad = await cli('account', 'create', '--name', 'x', '--plan', 'platinum');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/plan must be one of/);
    const unknown = await cli('account', 'set-plan', '--account', 'no-such', '--plan', 'pro');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/not found/);
  });

  // Found by an outside probe of the documented CLI.
  it('help is usage on stdout; a repeated flag is refused; a flag\'s value is not a command word; names keep to one line', async () => {
    const help = await cli('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: npm run -s cli -- <command> \[--flags\]/);
    const twice = await cli('account', 'create', '--name', 'x', '--plan', 'free', '--plan', 'pro');
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/^--plan is given twice/);
    const acct = await newAccount('free');
    const known = await cli('account', 'set-plan', '--account', acct.accountId, '--plan', 'starter');
    expect(known.code).toBe(0);
    const notACommand = await cli('account', 'frobnicate', '--account', acct.accountId);
    expect(notACommand.code).toBe(2);
    expect(notACommand.stderr).toMatch(/^unknown command "account frobnicate"/);
    const multiline = await cli('account', 'create', '--name', 'a\nb', '--plan', 'free');
    expect(multiline.code).toBe(1);
    expect(multiline.stderr).toBe('error: account name must not contain line breaks or other control characters\n');
  });
});

describe('entity keys', () => {
  it('issues a JWT that reads /api/entities/me, and the account key is refused there', async () => {
    const acct = await newAccount('free');
    const e = await cli('entity', 'create', '--account', acct.accountId, '--name', 'sensor-1');
    expect(e.code).toBe(0);
    const { apiKey, apiKeyId, resourcePath } = e.json as Record<string, string>;
    expect(apiKey.split('.')).toHaveLength(3);
    expect(resourcePath).toBe(`accounts/${acct.accountId}/entities/sensor-1`);
    const me = await api('GET', '/api/entities/me', { key: apiKey });
    expect(me.status).toBe(200);
    const base = `${acct.accountId}/local/${apiKeyId}`;
    expect(me.body).toEqual({
      name: 'sensor-1', resourcePath, apiKeyId, accountId: acct.accountId, region: 'local', tags: [],
      mqtt: { url: `mqtt://localhost:${stack().mqttPort}`, topics: { publish: `${base}/publish`, messages: `${base}/messages`, state: `${base}/state` } },
    });
    const asAccount = await api('GET', '/api/entities/me', { key: acct.apiKey });
    expect(asAccount.status).toBe(403);
    expect(typeof asAccount.body.reason).toBe('string');
  });

  it('rejects a forged token signed with another secret and a duplicate or invalid name', async () => {
    const acct = await newAccount('free');
    const e = await cli('entity', 'create', '--account', acct.accountId, '--name', 'dup');
    const [h, p] = (e.json?.apiKey as string).split('.');
    const forged = `${h}.${p}.${Buffer.from('not-the-signature').toString('base64url')}`;
    expect((await api('GET', '/api/entities/me', { key: forged })).status).toBe(401);
    const again = await cli('entity', 'create', '--account', acct.accountId, '--name', 'dup');
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/already exists/);
    const bad = await cli('entity', 'create', '--account', acct.accountId, '--name', 'bad name!');
    expect(bad.code).not.toBe(0);
  });

  it('enforces the plan entity quota (free: 10)', async () => {
    const acct = await newAccount('free');
    for (let i = 1; i <= 10; i++) expect((await cli('entity', 'create', '--account', acct.accountId, '--name', `d${i}`)).code).toBe(0);
    const over = await cli('entity', 'create', '--account', acct.accountId, '--name', 'd11');
    expect(over.code).not.toBe(0);
    expect(over.stderr).toMatch(/Entity limit reached/);
  });
});

describe('shared HTTP layer', () => {
  it('limits a Free account to 10 scanning requests a minute with 429 and Retry-After', async () => {
    const acct = await newAccount('free');
    await clearOfWindowEdge(60_000, 15_000);
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof api>> | undefined;
    for (let i = 0; i < 11; i++) {
      last = await api('GET', '/api/account/usage', { key: acct.apiKey });
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(200));
    expect(statuses[10]).toBe(429);
    expect(Number(last?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(last?.body.code).toBe('rate_limited');
  });

  it('serves health and an OpenAPI 3.1 document that lists the routes', async () => {
    const h = await api('GET', '/healthz');
    expect(h.status).toBe(200);
    expect(h.body.status).toBe('ok');
    expect(Object.keys(h.body.parts)).toEqual(expect.arrayContaining(['database', 'temporal', 'mqtt', 'worker']));
    const doc = await api('GET', '/openapi.json');
    expect(doc.body.openapi).toBe('3.1.0');
    expect(doc.body.paths['/api/account/usage'].get).toBeDefined();
    expect(doc.body.paths['/api/entities/me'].get).toBeDefined();
    expect(doc.body.paths['/api/scan'].post).toBeDefined();
    expect(doc.body.paths['/api/entities/check_messages'].get).toBeDefined();
  });

  it('serves an OpenAPI document that validates against the OpenAPI 3.1 schema', async () => {
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const doc = await api('GET', '/openapi.json');
    const result = await new Validator().validate(doc.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('answers unknown routes in the error dialect of their path', async () => {
    const scan = await api('GET', '/api/account/nothing-here');
    expect(scan.status).toBe(404);
    expect(scan.body.error).toBeDefined();
    const msg = await api('GET', '/api/entities/nothing/here/at/all');
    expect(msg.status).toBe(404);
    expect(msg.body.reason).toBeDefined();
  });
});
