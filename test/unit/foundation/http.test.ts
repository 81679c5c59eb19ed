/**
 * src/http in-process: the Koa app from createApp with a RouteRegistry of test routes, on an
 * ephemeral port, spoken to with node's http and raw sockets. Covers the one error mapper (dialect
 * shapes, internal errors never leak), X-Request-ID echo and validation, bearer parsing and
 * key kinds, JSON body limits (declared, chunked, gzip), content type, malformed JSON, nesting
 * depth, prototype keys and NUL keys. No database.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import pino from 'pino';
import { createApp, dialectOfPath, errorBody } from '../../../src/http/app';
import { PlanRequiredError, RateLimitedError, AppError } from '../../../src/errors';
import { RouteRegistry, bodyOf, RouteDef } from '../../../src/http/route';
import { checkJsonShape } from '../../../src/http/schema';
import { DEFAULT_ROLE_PERMISSIONS, PERMISSIONS, Permission } from '../../../src/accounts/roles';
import type { Principal } from '../../../src/accounts/service';
import type { AccountDoc } from '../../../src/accounts/records';
import type { EntityDoc } from '../../../src/entities/records';

const SECRET_TEXT = 'mongodb://admin:hunter2@db.internal:27017';
const account: AccountDoc = { _id: 'acc-1', name: 'acme', plan: 'free', region: 'local', entityCount: 1, createdAt: new Date(0) };
const entity = { _id: 'acc-1/e', accountId: 'acc-1', name: 'e', resourcePath: 'accounts/acc-1/entities/e', apiKeyId: 'ek', role: 'default' } as EntityDoc;
const principals: Record<string, Principal> = {
  acct: { kind: 'account', account, apiKeyId: 'ak', permissions: new Set<Permission>(PERMISSIONS) },
  ent: { kind: 'entity', account, entity, apiKeyId: 'ek', permissions: new Set<Permission>(DEFAULT_ROLE_PERMISSIONS) },
};

const logLines: Array<Record<string, unknown>> = [];
let server: http.Server;
let port: number;
const rateCalls: string[] = [];

function internal(): never {
  const e = new Error(`connect failed: ${SECRET_TEXT}`);
  throw e;
}

beforeAll(async () => {
  const logger = pino({ level: 'debug' }, { write: (s: string) => { logLines.push(JSON.parse(s) as Record<string, unknown>); } });
  const registry = new RouteRegistry({
    authenticate: async (t) => principals[t],
    rateLimit: async (ctx, rate) => { rateCalls.push(`${rate}:${ctx.path}`); },
  });
  const route = (d: Partial<RouteDef> & Pick<RouteDef, 'method' | 'path' | 'dialect' | 'handler'>) =>
    registry.add({ summary: 's', tags: ['t'], auth: 'none', rate: 'none', responses: { 200: { description: 'ok' } }, ...d });
  for (const dialect of ['scan', 'messaging'] as const) {
    const base = dialect === 'scan' ? '/api/scan/t' : '/api/entities/t';
    route({ method: 'GET', path: `${base}/internal`, dialect, handler: async () => internal() });
    route({ method: 'GET', path: `${base}/undefined`, dialect, handler: async () => { throw undefined; } });
    route({ method: 'GET', path: `${base}/null`, dialect, handler: async () => Promise.reject(null) });
    route({ method: 'GET', path: `${base}/string`, dialect, handler: async () => { throw SECRET_TEXT; } });
    route({ method: 'GET', path: `${base}/plan`, dialect, handler: async () => { throw new PlanRequiredError('async_scanning', 'free'); } });
    route({ method: 'GET', path: `${base}/rate`, dialect, handler: async () => { throw new RateLimitedError(0.2); } });
    route({ method: 'GET', path: `${base}/exposed400`, dialect, handler: async () => { throw Object.assign(new Error('Bad range header'), { status: 400, expose: true }); } });
    route({ method: 'GET', path: `${base}/exposed500`, dialect, handler: async () => { throw Object.assign(new Error(SECRET_TEXT), { status: 500, expose: true }); } });
    route({ method: 'GET', path: `${base}/exposed503`, dialect, handler: async () => { throw Object.assign(new Error(SECRET_TEXT), { status: 503, expose: true }); } });
    route({ method: 'GET', path: `${base}/status999`, dialect, handler: async () => { throw Object.assign(new Error(SECRET_TEXT), { status: 999, expose: true }); } });
    route({ method: 'GET', path: `${base}/unexposed400`, dialect, handler: async () => { throw Object.assign(new Error(SECRET_TEXT), { status: 400 }); } });
    route({ method: 'GET', path: `${base}/mongo-down`, dialect, handler: async () => { throw Object.assign(new Error(`connect ECONNREFUSED ${SECRET_TEXT}`), { name: 'MongoServerSelectionError' }); } });
    route({ method: 'GET', path: `${base}/sqlite-busy`, dialect, handler: async () => { throw Object.assign(new Error('database is locked'), { name: 'SqliteError', code: 'SQLITE_BUSY' }); } });
    route({ method: 'GET', path: `${base}/sqlite-constraint`, dialect, handler: async () => { throw Object.assign(new Error(SECRET_TEXT), { name: 'SqliteError', code: 'SQLITE_CONSTRAINT_CHECK' }); } });
    route({ method: 'GET', path: `${base}/apperror500`, dialect, handler: async () => { throw new AppError(500, 'Scan store unavailable', { code: 'store_down', cause: new Error(SECRET_TEXT) }); } });
    route({ method: 'GET', path: `${base}/account`, dialect, auth: 'account', rate: dialect === 'scan' ? 'scan-read' : 'account-messaging', handler: async (ctx) => { ctx.body = { ok: true }; } });
  }
  route({ method: 'GET', path: '/api/entities/t/me', dialect: 'messaging', auth: 'entity', permission: 'entity:Publish', rate: 'entity', handler: async (ctx) => { ctx.body = { ok: true }; } });
  route({ method: 'GET', path: '/api/entities/t/list', dialect: 'messaging', auth: 'any', permission: 'entity:ListMessages', rate: 'entity', handler: async (ctx) => { ctx.body = { ok: true }; } });
  route({ method: 'GET', path: '/api/account/notifications', dialect: 'messaging', handler: async (ctx) => { ctx.body = { notifications: [] }; } });
  const echo = (ctx: Parameters<RouteDef['handler']>[0]) => { ctx.body = { got: bodyOf<unknown>(ctx) }; return Promise.resolve(); };
  route({ method: 'POST', path: '/api/entities/t/echo', dialect: 'messaging', body: { schema: { type: 'object' }, maxBytes: 1024 }, handler: echo });
  route({ method: 'PATCH', path: '/api/entities/t/echo', dialect: 'messaging', body: { schema: { type: 'object' }, maxBytes: 1024 }, handler: echo });
  route({ method: 'POST', path: '/api/scan/t/echo', dialect: 'scan', body: { schema: { type: 'object', required: ['payload'], properties: { payload: { type: 'string' } }, additionalProperties: false }, maxBytes: 1024 }, handler: echo });
  route({ method: 'POST', path: '/api/entities/t/big', dialect: 'messaging', body: { schema: {}, maxBytes: 4 << 20 }, handler: echo });
  for (const code of ['ECONNRESET', 'EBOOM']) {
    route({ method: 'GET', path: `/api/entities/t/stream-${code}`, dialect: 'messaging', handler: async (ctx) => {
      const body = new Readable({ read() {} });
      body.push('{"rows": [');
      setTimeout(() => body.destroy(Object.assign(new Error(`stream failed ${code}`), { code })), 20);
      ctx.body = body;
    } });
  }
  route({ method: 'GET', path: '/api/entities/t/:name', dialect: 'messaging', handler: async (ctx) => { ctx.body = { name: ctx.params.name }; } });
  route({ method: 'POST', path: '/api/entities/t/authed', dialect: 'messaging', auth: 'account', rate: 'account-messaging', body: { schema: { type: 'object' }, maxBytes: 64 }, handler: echo });

  const app = createApp({ logger, registry, health: async () => ({ status: 'ok', parts: {} }), version: 'test' });
  app.silent = true;
  server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

interface Res { status: number; headers: http.IncomingHttpHeaders; text: string; json: any }

function req(method: string, path: string, opts: { headers?: Record<string, string | string[]>; body?: string | Buffer; chunks?: Array<string | Buffer> } = {}): Promise<Res> {
  return new Promise((resolve, reject) => {
    const r = http.request({ host: '127.0.0.1', port, method, path, headers: opts.headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        let json: unknown;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    r.on('error', reject);
    if (opts.chunks) for (const c of opts.chunks) r.write(c);
    r.end(opts.body);
  });
}

/** A request written byte for byte, for headers node's client refuses to send. */
function raw(lines: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const parts: Buffer[] = [];
    sock.on('data', (c) => parts.push(c));
    sock.on('end', () => resolve(Buffer.concat(parts).toString('latin1')));
    sock.on('error', reject);
    sock.end(Buffer.from(lines, 'latin1'));
  });
}

const json = (v: unknown) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(v) });
const nested = (depth: number, leaf: unknown = 1): unknown => { let v: unknown = leaf; for (let i = 0; i < depth; i++) v = { a: v }; return v; };
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function expectShape(res: Res, dialect: 'scan' | 'messaging', status: number, code?: string) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const msgField = dialect === 'scan' ? 'error' : 'reason';
  const other = dialect === 'scan' ? 'reason' : 'error';
  expect(typeof res.json[msgField]).toBe('string');
  expect(res.json[msgField].length).toBeGreaterThan(0);
  expect(res.json).not.toHaveProperty(other);
  expect(res.json.requestId).toBe(res.headers['x-request-id']);
  if (code !== undefined) expect(res.json.code).toBe(code);
}

function expectNoLeak(res: Res) {
  expect(res.text).not.toContain('hunter2');
  expect(res.text).not.toContain('db.internal');
  expect(res.text).not.toMatch(/at .*\.(ts|js):\d+/);
  expect(res.text).not.toContain('stack');
}

describe('error mapper', () => {
  test.each([['scan', '/api/scan/t'], ['messaging', '/api/entities/t']] as const)('%s: an internal error is a 500 in the dialect shape, logged with its message, never sent', async (dialect, base) => {
    const res = await req('GET', `${base}/internal`, { headers: { 'x-request-id': `leak-${dialect}` } });
    expectShape(res, dialect, 500, 'internal');
    expect(res.json[dialect === 'scan' ? 'error' : 'reason']).toBe('Internal server error');
    expect(Object.keys(res.json).sort()).toEqual([dialect === 'scan' ? 'error' : 'reason', 'code', 'requestId'].sort());
    expectNoLeak(res);
    const logged = logLines.find((l) => l.requestId === `leak-${dialect}` && l.level === 50);
    expect(JSON.stringify(logged)).toContain('hunter2');
  });

  test.each([['scan', '/api/scan/t'], ['messaging', '/api/entities/t']] as const)('%s: a thrown string is a 500 that does not echo it', async (dialect, base) => {
    const res = await req('GET', `${base}/string`);
    expectShape(res, dialect, 500, 'internal');
    expectNoLeak(res);
  });

  test.each([
    ['exposed500', 500], ['exposed503', 503], ['unexposed400', 400], ['status999', 500],
  ] as const)('a library error (%s) hides its message', async (name, status) => {
    for (const [dialect, base] of [['scan', '/api/scan/t'], ['messaging', '/api/entities/t']] as const) {
      const res = await req('GET', `${base}/${name}`);
      expectShape(res, dialect, status);
      expectNoLeak(res);
    }
  });

  test('a library 4xx error marked expose keeps its message', async () => {
    const res = await req('GET', '/api/scan/t/exposed400');
    expectShape(res, 'scan', 400);
    expect(res.json.error).toBe('Bad range header');
  });

  // Found by an outside probe: every request answered 500 internal while MongoDB was away.
  test.each([['scan', '/api/scan/t'], ['messaging', '/api/entities/t']] as const)('%s: a database that cannot be reached, or is locked, is 503 unavailable; other database errors stay 500', async (dialect, base) => {
    for (const path of ['mongo-down', 'sqlite-busy']) {
      const res = await req('GET', `${base}/${path}`);
      expectShape(res, dialect, 503, 'unavailable');
      expect(res.json[dialect === 'scan' ? 'error' : 'reason']).toBe('The database cannot be reached right now; retry later');
      expectNoLeak(res);
    }
    const other = await req('GET', `${base}/sqlite-constraint`);
    expectShape(other, dialect, 500, 'internal');
    expectNoLeak(other);
  });

  test('an AppError 500 sends its own message and code, not its cause', async () => {
    const res = await req('GET', '/api/entities/t/apperror500');
    expectShape(res, 'messaging', 500, 'store_down');
    expect(res.json.reason).toBe('Scan store unavailable');
    expectNoLeak(res);
  });

  test.each([['scan', '/api/scan/t'], ['messaging', '/api/entities/t']] as const)('%s: plan_required carries feature, current_plan and upgrade', async (dialect, base) => {
    const res = await req('GET', `${base}/plan`);
    expectShape(res, dialect, 403, 'plan_required');
    expect(res.json).toMatchObject({ feature: 'async_scanning', current_plan: 'free', upgrade: true });
  });

  test.each([['scan', '/api/scan/t'], ['messaging', '/api/entities/t']] as const)('%s: 429 carries Retry-After of at least 1 and code rate_limited', async (dialect, base) => {
    const res = await req('GET', `${base}/rate`);
    expectShape(res, dialect, 429, 'rate_limited');
    expect(res.headers['retry-after']).toBe('1');
  });

  // Regression (fixed): a rejection with no value (`throw undefined`, `Promise.reject()`,
  // `reject(null)`) made the mapper itself throw, so Koa's fallback answered a text/plain
  // "Internal Server Error" without the dialect's JSON body or the X-Request-ID header.
  it.each([['scan', '/api/scan/t', 'undefined'], ['messaging', '/api/entities/t', 'null']] as const)(
    '%s: a rejection without a value (%s) is still a 500 in the dialect shape with X-Request-ID', async (dialect, base, what) => {
      const res = await req('GET', `${base}/${what}`, { headers: { 'x-request-id': 'nil-1' } });
      expect(res.status).toBe(500);
      expect(res.headers['x-request-id']).toBe('nil-1');
      expectShape(res, dialect, 500, 'internal');
    },
  );

  test('unknown routes are 404 not_found in the shape of the path\'s dialect', async () => {
    expectShape(await req('GET', '/api/scan/nope/nope'), 'scan', 404, 'not_found');
    expectShape(await req('GET', '/api/account/nope'), 'scan', 404, 'not_found');
    expectShape(await req('GET', '/api/entities/nope/x'), 'messaging', 404, 'not_found');
    expectShape(await req('GET', '/api/roles/x/y/z'), 'messaging', 404, 'not_found');
  });

  test('a known path with another method is 405 method_not_allowed with an Allow header', async () => {
    const res = await req('DELETE', '/api/entities/t/me');
    expectShape(res, 'messaging', 405, 'method_not_allowed');
    expect(res.headers.allow).toContain('GET');
  });

  test.each(['TRACE', 'PUT'])('%s, a method no route has, is 405 with the Allow header (not 501)', async (method) => {
    const res = await req(method, '/api/entities/t/me');
    expectShape(res, 'messaging', 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('HEAD, GET');
  });

  test('a static path owns its methods: GET on a POST-only path is 405 although /:name would match', async () => {
    expect((await req('GET', '/api/entities/t/other')).json).toEqual({ name: 'other' });
    const res = await req('GET', '/api/entities/t/echo');
    expectShape(res, 'messaging', 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('POST, PATCH');
  });

  test('OPTIONS lists exactly the path\'s methods; /healthz and /openapi.json allow GET only', async () => {
    const res = await req('OPTIONS', '/api/entities/t/echo');
    expect(res.status).toBe(204);
    expect(res.headers.allow).toBe('POST, PATCH');
    const put = await req('PUT', '/healthz');
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe('GET, HEAD');
    expect((await req('POST', '/openapi.json')).status).toBe(405);
  });

  // Regression (fixed): every /api/account* path was classified as scanning by prefix, but
  // GET /api/account/notifications is a messaging route, so a 405 there had the scanning shape.
  it('405 on the messaging route /api/account/notifications answers the messaging shape {reason}', async () => {
    const res = await req('POST', '/api/account/notifications');
    expectShape(res, 'messaging', 405, 'method_not_allowed');
  });

  test('errorBody: fields of the dialect, code only when set, extra fields kept', () => {
    expect(errorBody('scan', 'r', 'm', undefined, {})).toEqual({ error: 'm', requestId: 'r' });
    expect(errorBody('messaging', 'r', 'm', 'c', { feature: 'x' })).toEqual({ reason: 'm', requestId: 'r', code: 'c', feature: 'x' });
    expect(dialectOfPath('/api/scan')).toBe('scan');
    expect(dialectOfPath('/api/entities/me')).toBe('messaging');
    expect(dialectOfPath('/healthz')).toBe('system');
  });
});

describe('X-Request-ID', () => {
  test('a sane id is echoed in the header and the error body', async () => {
    for (const id of ['abc-123', 'A.b_c:d-e', 'x'.repeat(128), '0']) {
      const res = await req('GET', '/api/scan/t/plan', { headers: { 'x-request-id': id } });
      expect(res.headers['x-request-id']).toBe(id);
      expect(res.json.requestId).toBe(id);
    }
  });

  test('an absurd id is replaced by a fresh UUID, never echoed', async () => {
    for (const id of ['x'.repeat(129), 'x'.repeat(10_000), 'a b', 'a/b', '<script>', 'abc%0d%0aSet-Cookie:x=1', 'a\tb', 'ü', '"quoted"', 'a,b']) {
      const res = await req('GET', '/api/scan/t/plan', { headers: { 'x-request-id': id } });
      expect(res.headers['x-request-id']).toMatch(UUID_RE);
      expect(res.json.requestId).toBe(res.headers['x-request-id']);
    }
  });

  test('ids are fresh per request when none is sent, and a repeated header is not echoed', async () => {
    const a = await req('GET', '/api/scan/t/plan');
    const b = await req('GET', '/api/scan/t/plan');
    expect(a.headers['x-request-id']).toMatch(UUID_RE);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    const dup = await req('GET', '/api/scan/t/plan', { headers: { 'x-request-id': ['one', 'two'] } });
    expect(dup.headers['x-request-id']).toMatch(UUID_RE);
  });

  test('CRLF, bare CR/LF and control characters never reach the response headers', async () => {
    const cases = [
      'X-Request-ID: abc\r\nSet-Cookie: injected=1\r\n',
      'X-Request-ID: abc\rSet-Cookie: injected=1\r\n',
      'X-Request-ID: abc\u0001def\r\n',
      'X-Request-ID: abc\u007fdef\r\n',
      'X-Request-ID: \u00e9t\u00e9\r\n',
    ];
    for (const h of cases) {
      const out = await raw(`GET /api/scan/t/plan HTTP/1.1\r\nHost: x\r\n${h}Connection: close\r\n\r\n`);
      const head = out.split('\r\n\r\n')[0];
      expect(head).toMatch(/^HTTP\/1\.1 (403|400) /);
      expect(head.toLowerCase()).not.toContain('set-cookie');
      expect(head).not.toContain('injected');
      const echoed = /\r\nX-Request-ID: ([^\r\n]*)/i.exec(head);
      if (echoed) expect(echoed[1] === 'abc' || UUID_RE.test(echoed[1])).toBe(true);
    }
  });
});

describe('authentication header and key kinds', () => {
  test.each([
    ['no header', undefined, 'scan'],
    ['empty bearer', 'Bearer', 'scan'],
    ['Basic scheme', 'Basic YWNjdDp4', 'scan'],
    ['two tokens', 'Bearer acct extra', 'messaging'],
    ['unknown key', 'Bearer nope', 'messaging'],
    ['token without scheme', 'acct', 'messaging'],
  ])('%s is a 401 unauthorized in the dialect shape, before the rate limiter', async (_w, header, dialect) => {
    rateCalls.length = 0;
    const path = dialect === 'scan' ? '/api/scan/t/account' : '/api/entities/t/account';
    const res = await req('GET', path, { headers: header ? { authorization: header } : {} });
    expectShape(res, dialect as 'scan' | 'messaging', 401, 'unauthorized');
    expect(rateCalls).toEqual([]);
  });

  test('scheme in any case and trailing spaces are accepted', async () => {
    expect((await req('GET', '/api/scan/t/account', { headers: { authorization: 'bearer   acct  ' } })).status).toBe(200);
    expect(rateCalls).toContain('scan-read:/api/scan/t/account');
  });

  test('an entity key on an account route and an account key on an entity route are 403', async () => {
    expectShape(await req('GET', '/api/scan/t/account', { headers: { authorization: 'Bearer ent' } }), 'scan', 403, 'forbidden');
    expectShape(await req('GET', '/api/entities/t/me', { headers: { authorization: 'Bearer acct' } }), 'messaging', 403, 'forbidden');
    expect((await req('GET', '/api/entities/t/me', { headers: { authorization: 'Bearer ent' } })).json).toEqual({ ok: true });
  });

  test('a role lacking the permission is 403 permission_denied; the account key holds every permission', async () => {
    expectShape(await req('GET', '/api/entities/t/list', { headers: { authorization: 'Bearer ent' } }), 'messaging', 403, 'permission_denied');
    expect((await req('GET', '/api/entities/t/list', { headers: { authorization: 'Bearer acct' } })).status).toBe(200);
  });

  test('an unauthenticated request with an oversized body is refused as 401 without reading the body', async () => {
    const res = await req('POST', '/api/entities/t/authed', json({ pad: 'x'.repeat(10_000) }));
    expectShape(res, 'messaging', 401, 'unauthorized');
  });
});

describe('JSON bodies', () => {
  test('a valid body within the limit reaches the handler parsed', async () => {
    const res = await req('POST', '/api/entities/t/echo', json({ a: [1, 'é', null], b: { c: true } }));
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ got: { a: [1, 'é', null], b: { c: true } } });
  });

  test('exactly maxBytes is accepted, one byte more is 413 payload_too_large', async () => {
    const exact = JSON.stringify({ p: 'x'.repeat(1024 - 8) });
    expect(Buffer.byteLength(exact)).toBe(1024);
    expect((await req('POST', '/api/entities/t/echo', { headers: { 'content-type': 'application/json' }, body: exact })).status).toBe(200);
    const over = JSON.stringify({ p: 'x'.repeat(1024 - 7) });
    expectShape(await req('POST', '/api/entities/t/echo', { headers: { 'content-type': 'application/json' }, body: over }), 'messaging', 413, 'payload_too_large');
  });

  test('multi-byte characters count as bytes, not characters', async () => {
    const body = JSON.stringify({ p: '\u{1F600}'.repeat(300) }); // 300 characters, 1,200+ bytes
    expectShape(await req('POST', '/api/scan/t/echo', { headers: { 'content-type': 'application/json' }, body }), 'scan', 413, 'payload_too_large');
  });

  test('a chunked body without Content-Length is cut at the limit (413)', async () => {
    const chunk = '"' + 'x'.repeat(500) + '",';
    const res = await req('POST', '/api/entities/t/echo', { headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, chunks: ['{"a":[', chunk, chunk, chunk], body: '"y"]}' });
    expectShape(res, 'messaging', 413, 'payload_too_large');
  });

  test('a gzip body is limited by its decompressed size (no zip bomb past the limit)', async () => {
    const big = Buffer.from(JSON.stringify({ p: 'x'.repeat(200_000) }));
    const gz = gzipSync(big);
    expect(gz.length).toBeLessThan(1024);
    const res = await req('POST', '/api/entities/t/echo', { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gz });
    expectShape(res, 'messaging', 413, 'payload_too_large');
  });

  test('an unsupported Content-Encoding is a client error, not a 500', async () => {
    const res = await req('POST', '/api/entities/t/echo', { headers: { 'content-type': 'application/json', 'content-encoding': 'x-weird' }, body: '{}' });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(typeof res.json.reason).toBe('string');
  });

  test.each([
    ['truncated', '{"a":'],
    ['trailing comma', '{"a":1,}'],
    ['single quotes', "{'a':1}"],
    ['a number', '1'],
    ['a string', '"text"'],
    ['null', 'null'],
    ['two documents', '{}{}'],
    ['NaN', '{"a":NaN}'],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
  ])('malformed or non-object JSON (%s) is 400 invalid_json in the dialect shape', async (_w, body) => {
    const res = await req('POST', '/api/scan/t/echo', { headers: { 'content-type': 'application/json' }, body });
    if (_w === 'invalid UTF-8') {
      // Decoded with replacement characters it is valid JSON: then the schema decides (200 or 400), never 500.
      expect([200, 400]).toContain(res.status);
      return;
    }
    expectShape(res, 'scan', 400, 'invalid_json');
    expectNoLeak(res);
  });

  test.each([
    ['text/plain', 'text/plain'],
    ['form', 'application/x-www-form-urlencoded'],
    ['multipart', 'multipart/form-data; boundary=x'],
    ['json-looking but wrong', 'application/jsonx'],
  ])('Content-Type %s is 400 invalid_json', async (_w, type) => {
    const res = await req('POST', '/api/entities/t/echo', { headers: { 'content-type': type }, body: '{"a":1}' });
    expectShape(res, 'messaging', 400, 'invalid_json');
  });

  test('no Content-Type at all is 400 invalid_json', async () => {
    const res = await req('POST', '/api/entities/t/echo', { body: '{"a":1}' });
    expectShape(res, 'messaging', 400, 'invalid_json');
  });

  test('application/json with a charset parameter is accepted', async () => {
    const res = await req('POST', '/api/entities/t/echo', { headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"a":1}' });
    expect(res.json).toEqual({ got: { a: 1 } });
  });

  // Regression (fixed): the pre-check accepted any `+json` media type, but koa-body only parsed
  // its default jsonTypes, so application/merge-patch+json (the standard type of a JSON merge
  // PATCH) was accepted and then answered 400 "Request body must be JSON".
  it('a +json media type the pre-check accepts is parsed (application/merge-patch+json on PATCH)', async () => {
    const res = await req('PATCH', '/api/entities/t/echo', { headers: { 'content-type': 'application/merge-patch+json' }, body: '{"tags":["a"]}' });
    expect(res.json?.reason).not.toBe('Request body must be JSON');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ got: { tags: ['a'] } });
  });

  test('schema errors are 400 with a readable message naming the field', async () => {
    const res = await req('POST', '/api/scan/t/echo', json({ payload: 'x', extra: 1 }));
    expectShape(res, 'scan', 400, 'bad_request');
    expect(res.json.error).toBe('body has unknown field "extra"');
    const missing = await req('POST', '/api/scan/t/echo', json({}));
    expect(missing.json.error).toBe('body is missing required field "payload"');
  });

  test('nesting: 20 levels pass, 21 levels of objects or arrays are 400 json_too_deep', async () => {
    expect((await req('POST', '/api/entities/t/big', json(nested(20)))).status).toBe(200);
    expectShape(await req('POST', '/api/entities/t/big', json(nested(21))), 'messaging', 400, 'json_too_deep');
    const arrays = '['.repeat(21) + ']'.repeat(21);
    expectShape(await req('POST', '/api/entities/t/big', { headers: { 'content-type': 'application/json' }, body: arrays }), 'messaging', 400, 'json_too_deep');
    const arrays20 = '['.repeat(20) + ']'.repeat(20);
    expect((await req('POST', '/api/entities/t/big', { headers: { 'content-type': 'application/json' }, body: arrays20 })).status).toBe(200);
  });

  test('a million levels of nesting is a 400, not a stack overflow or 500', async () => {
    const body = '['.repeat(1_000_000) + ']'.repeat(1_000_000);
    const res = await req('POST', '/api/entities/t/big', { headers: { 'content-type': 'application/json' }, body });
    expectShape(res, 'messaging', 400);
    expect(['json_too_deep', 'invalid_json']).toContain(res.json.code);
  });

  test('__proto__ keys are refused at any depth; no request pollutes Object.prototype', async () => {
    for (const body of ['{"__proto__":{"polluted":true}}', '{"a":{"__proto__":{"polluted":true}}}', '{"a":[{"__proto__":{"polluted":true}}]}']) {
      const res = await req('POST', '/api/entities/t/echo', { headers: { 'content-type': 'application/json' }, body });
      expectShape(res, 'messaging', 400, 'invalid_json');
    }
    // constructor.prototype is plain data after JSON.parse (only merge helpers make it dangerous)
    const res = await req('POST', '/api/entities/t/echo', { headers: { 'content-type': 'application/json' }, body: '{"constructor":{"prototype":{"polluted":true}}}' });
    expect(res.json).toEqual({ got: { constructor: { prototype: { polluted: true } } } });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('a NUL character is data, in a key as in a value (user objects are stored as JSON text)', async () => {
    expect((await req('POST', '/api/entities/t/echo', { headers: { 'content-type': 'application/json' }, body: '{"x":[{"k\\u0000":1}]}' })).json).toEqual({ got: { x: [{ 'k\u0000': 1 }] } });
    expect((await req('POST', '/api/entities/t/echo', json({ a: 'x\u0000y' }))).json).toEqual({ got: { a: 'x\u0000y' } });
  });

  test('checkJsonShape walks wide and deep values without recursion', () => {
    expect(() => checkJsonShape(nested(20))).not.toThrow();
    expect(() => checkJsonShape(nested(21))).toThrow(/nesting exceeds 20/);
    expect(() => checkJsonShape(nested(200_000))).toThrow(/nesting exceeds 20/);
    expect(() => checkJsonShape({ wide: Array.from({ length: 100_000 }, (_, i) => ({ i })) })).not.toThrow();
    expect(() => checkJsonShape([[[['\u0000']]]])).not.toThrow();
    expect(() => checkJsonShape(null)).not.toThrow();
    // Numbers only when asked (the message pipeline): routes leave them to their schemas.
    expect(() => checkJsonShape({ a: [1, Infinity] })).not.toThrow();
    expect(() => checkJsonShape({ a: [1, { b: Infinity }] }, { numbers: true })).toThrow(/^a\[1\]\.b must be a finite number/);
  });
});

// Found by an outside probe: an aborted export wrote raw multi-line stacks (Koa's default handler)
// beside the JSON log. Errors after the answer started now go to the log as one JSON line; a
// client that went away is only a debug line.
describe('errors after the answer started', () => {
  const fetchPartial = (path: string) => new Promise<void>((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path }, (res) => {
      res.on('data', () => undefined);
      res.on('error', () => resolve());
      res.on('close', () => resolve());
    });
    req.on('error', () => resolve());
  });
  const waitLog = async (pred: (l: Record<string, unknown>) => boolean) => {
    for (let i = 0; i < 100 && !logLines.some(pred); i++) await new Promise((r) => setTimeout(r, 20));
    return logLines.find(pred);
  };

  it('a client that went away is a debug line; another stream error an error line; both JSON', async () => {
    await fetchPartial('/api/entities/t/stream-ECONNRESET');
    const gone = await waitLog((l) => l.msg === 'client went away while the answer was being sent');
    expect(gone).toMatchObject({ level: 20, path: '/api/entities/t/stream-ECONNRESET' });
    await fetchPartial('/api/entities/t/stream-EBOOM');
    const failed = await waitLog((l) => l.msg === 'error after the answer started');
    expect(failed).toMatchObject({ level: 50, path: '/api/entities/t/stream-EBOOM' });
  });
});
