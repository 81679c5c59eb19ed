/**
 * The scanning routes (src/scan/routes.ts) and their request schemas (src/scan/schemas.ts).
 * Schemas are validated the way src/http/route.ts does (bodies strict, query strings coerced);
 * handlers are called directly with a fake context and a fake ScanService that records what it
 * is asked to scan, so these check the HTTP-to-service translation: base64 decoding, the 10 MB
 * decoded limit, labels, profile ids, defer, and the early 413 on a declared Content-Length.
 */
import { PassThrough } from 'node:stream';
import type { RouteDef, RouteRegistry } from '../../../src/http/route';
import { validatorFor } from '../../../src/http/schema';
import { registerScanRoutes } from '../../../src/scan/routes';
import { historyQuerySchema, payloadBodySchema, profileCreateSchema, profilePatchSchema, scanQuerySchema } from '../../../src/scan/schemas';
import { ScanService, type ScanRequest } from '../../../src/scan/service';
import { appErr } from './support/app-err';

const MB = 1024 * 1024;

const body = (schema: Record<string, unknown>) => {
  const v = validatorFor(schema);
  return (x: unknown) => {
    const copy = structuredClone(x);
    return { ok: v(copy), value: copy as Record<string, unknown> };
  };
};
const query = (schema: Record<string, unknown>) => {
  const v = validatorFor(schema, true);
  return (q: Record<string, unknown>) => {
    const copy = { ...q };
    return { ok: v(copy), value: copy };
  };
};

describe('payload body schema', () => {
  const check = body(payloadBodySchema);
  it('payload is required and must be a string; encoding defaults to raw', () => {
    expect(check({}).ok).toBe(false);
    expect(check({ payload: 5 }).ok).toBe(false);
    expect(check({ payload: null }).ok).toBe(false);
    expect(check({ payload: ['a'] }).ok).toBe(false);
    const r = check({ payload: '' });
    expect(r).toEqual({ ok: true, value: { payload: '', encoding: 'raw' } });
  });
  it('encoding is raw or base64 only; unknown fields are refused', () => {
    expect(check({ payload: 'x', encoding: 'base64' }).ok).toBe(true);
    expect(check({ payload: 'x', encoding: 'hex' }).ok).toBe(false);
    expect(check({ payload: 'x', encoding: 'BASE64' }).ok).toBe(false);
    expect(check({ payload: 'x', filename: 'a' }).ok).toBe(false);
  });
  it('label is a string of at most 255 characters', () => {
    expect(check({ payload: 'x', label: 'a'.repeat(255) }).ok).toBe(true);
    expect(check({ payload: 'x', label: 'a'.repeat(256) }).ok).toBe(false);
    expect(check({ payload: 'x', label: 3 }).ok).toBe(false);
  });
});

describe('history query schema', () => {
  const check = query(historyQuerySchema);
  it('defaults to page 1, limit 25', () => {
    expect(check({})).toEqual({ ok: true, value: { page: 1, limit: 25 } });
  });
  it('coerces query text to integers', () => {
    expect(check({ limit: '100', page: '3' })).toEqual({ ok: true, value: { limit: 100, page: 3 } });
  });
  it.each([['limit', '0'], ['limit', '101'], ['limit', '-1'], ['limit', '2.5'], ['limit', 'abc'], ['limit', ''], ['page', '0'], ['page', '-3'], ['page', '100001'], ['page', '1e300'], ['page', '1.5'], ['page', 'x']])(
    'refuses %s=%j', (k, v) => {
      expect(check({ [k]: v }).ok).toBe(false);
    },
  );
});

describe('scan query schema', () => {
  const check = query(scanQuerySchema);
  it('defer coerces to a boolean and defaults to false; other text is refused', () => {
    expect(check({}).value.defer).toBe(false);
    expect(check({ defer: 'true' }).value.defer).toBe(true);
    expect(check({ defer: 'false' }).value.defer).toBe(false);
    expect(check({ defer: 'yes' }).ok).toBe(false);
  });
});

describe('profile schemas', () => {
  const create = body(profileCreateSchema);
  const patch = body(profilePatchSchema);
  it('name 1..100 is required on create; patch needs at least one field', () => {
    expect(create({}).ok).toBe(false);
    expect(create({ name: '' }).ok).toBe(false);
    expect(create({ name: 'a'.repeat(101) }).ok).toBe(false);
    expect(create({ name: 'ok' }).ok).toBe(true);
    expect(patch({}).ok).toBe(false);
    expect(patch({ webhook: null }).ok).toBe(true);
  });
  it('allowedTypes are the file type names, unique', () => {
    expect(create({ name: 'a', allowedTypes: ['pdf', 'pe'] }).ok).toBe(true);
    expect(create({ name: 'a', allowedTypes: ['exe'] }).ok).toBe(false);
    expect(create({ name: 'a', allowedTypes: ['pdf', 'pdf'] }).ok).toBe(false);
  });
  it('webhook: url required, known auth types, at most 20 string headers, no unknown fields', () => {
    expect(create({ name: 'a', webhook: { authType: 'none' } }).ok).toBe(false);
    expect(create({ name: 'a', webhook: { url: 'https://x', authType: 'basic' } }).ok).toBe(false);
    expect(create({ name: 'a', webhook: { url: 'https://x', secret: 's' } }).ok).toBe(false);
    expect(create({ name: 'a', webhook: { url: 'https://x', headers: { a: 1 } } }).ok).toBe(false);
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`x-h${i}`, 'v']));
    expect(create({ name: 'a', webhook: { url: 'https://x', headers: many } }).ok).toBe(false);
    expect(create({ name: 'a', webhook: { url: 'https://x', value: 'v'.repeat(4097), authType: 'bearer' } }).ok).toBe(false);
    const r = create({ name: 'a', webhook: { url: 'https://x' } });
    expect(r.ok).toBe(true);
    expect((r.value.webhook as Record<string, unknown>).authType).toBe('none');
  });
});

// ---------------------------------------------------------------------------------------------
// Handlers with a fake context

const account = { _id: 'acc-1', name: 'acme', plan: 'free' as const, region: 'local', entityCount: 0, createdAt: new Date(0) };

function setup(plan: 'free' | 'pro' = 'free') {
  const routes = new Map<string, RouteDef>();
  const registry = { add: (def: RouteDef) => routes.set(`${def.method} ${def.path}`, def) };
  const calls: ScanRequest[] = [];
  const services = {
    scans: {
      scan: jest.fn(async (req: ScanRequest) => {
        calls.push(req);
        return { kind: 'complete', result: { scanId: 's', name: req.name } };
      }),
      // The real rule: the route applies the service's limit while streaming.
      fileSizeLimit: ScanService.prototype.fileSizeLimit,
      // Entitlement and quota before the upload: nothing refused here (scan-api service tests cover it).
      refuseBeforeUpload: jest.fn(async () => undefined),
    },
  };
  registerScanRoutes(registry as unknown as RouteRegistry, services as unknown as { scans: ScanService });
  const principal = { kind: 'account', account: { ...account, plan }, apiKeyId: 'k', permissions: new Set() };

  async function payload(b: Record<string, unknown>, q: Record<string, unknown> = {}) {
    const def = routes.get('POST /api/scan/payload')!;
    const ctx = { state: { requestId: 'req-1', principal, query: { defer: false, ...q } }, request: { body: { encoding: 'raw', ...b } }, status: 404, body: undefined as unknown };
    await def.handler(ctx as never);
    return ctx;
  }
  async function file(raw: Buffer, headers: Record<string, string>, q: Record<string, unknown> = {}) {
    const def = routes.get('POST /api/scan')!;
    const req = Object.assign(new PassThrough(), { headers });
    const ctx = {
      state: { requestId: 'req-2', principal, query: { defer: false, ...q } }, req, status: 404, body: undefined as unknown,
      get: (name: string) => headers[name.toLowerCase()] ?? '',
    };
    const done = def.handler(ctx as never);
    req.end(raw);
    await done;
    return { ctx, req };
  }
  return { calls, payload, file, routes };
}


describe('POST /api/scan/payload handler', () => {
  it('raw payloads are scanned as their UTF-8 bytes; label becomes the name, none gives ""', async () => {
    const { calls, payload } = setup();
    await payload({ payload: 'héllo ✓', label: 'notes.md' });
    await payload({ payload: 'x' });
    expect(calls[0]).toMatchObject({ name: 'notes.md', scanType: 'payload', requestId: 'req-1', defer: false });
    expect(calls[0].content.equals(Buffer.from('héllo ✓', 'utf8'))).toBe(true);
    expect(calls[1].name).toBe('');
  });

  it('base64: standard, URL-safe, unpadded and line-wrapped forms decode to the same bytes', async () => {
    const { calls, payload } = setup();
    const bytes = Buffer.from([0xfb, 0xff, 0xbf, 0x00, 0x41, 0x42]);
    const std = bytes.toString('base64'); // "+/+/AEFC"
    await payload({ payload: std, encoding: 'base64' });
    await payload({ payload: bytes.toString('base64url'), encoding: 'base64' });
    await payload({ payload: `${std.slice(0, 4)}\r\n${std.slice(4)}\n`, encoding: 'base64' });
    await payload({ payload: Buffer.from('ab').toString('base64').replace(/=+$/, ''), encoding: 'base64' });
    for (const c of calls.slice(0, 3)) expect(c.content.equals(bytes)).toBe(true);
    expect(calls[3].content.toString()).toBe('ab');
  });

  it.each(['not base64!', 'QUJD$', 'QQ==QQ==', 'QQ===', '<script>', 'QUJD\u0000'])('invalid base64 %j is 400 invalid_base64, nothing scanned', async (p) => {
    const { calls, payload } = setup();
    const e = await appErr(payload({ payload: p, encoding: 'base64' }));
    expect(e).toMatchObject({ status: 400, code: 'invalid_base64' });
    expect(calls).toHaveLength(0);
  });

  // Regression (fixed): the base64 check is a character-class regex only. A string whose length is 1 mod 4
  // ("A", "QUJDR") can never be valid base64, but it passes and Buffer.from silently drops the
  // dangling character: the client is charged a scan of different bytes (here: empty / "ABC").
  it('base64 of an impossible length (1 mod 4) is refused, not silently truncated', async () => {
    const { calls, payload } = setup();
    for (const p of ['A', 'QUJDR']) {
      const e = await appErr(payload({ payload: p, encoding: 'base64' }));
      expect(e).toMatchObject({ status: 400, code: 'invalid_base64' });
    }
    expect(calls).toHaveLength(0);
  });

  it('decoded size: exactly 10 MB is scanned, one byte more is 413 (raw and base64)', async () => {
    const { calls, payload } = setup();
    await payload({ payload: 'a'.repeat(10 * MB) });
    expect(calls[0].content.length).toBe(10 * MB);
    expect((await appErr(payload({ payload: 'a'.repeat(10 * MB + 1) }))).status).toBe(413);
    const b64 = Buffer.alloc(10 * MB + 1, 7).toString('base64');
    expect((await appErr(payload({ payload: b64, encoding: 'base64' }))).status).toBe(413);
    expect(calls).toHaveLength(1);
  });

  it('the limit counts bytes, not characters: multi-byte text over 10 MB of UTF-8 is 413', async () => {
    const { calls, payload } = setup();
    const e = await appErr(payload({ payload: 'é'.repeat(5 * MB + 1) })); // 5M+1 characters, 10 MB + 2 bytes
    expect(e.status).toBe(413);
    expect(calls).toHaveLength(0);
  });

  it('profile_id from the body wins over the query; defer only when the coerced query says true', async () => {
    const { calls, payload } = setup();
    await payload({ payload: 'x', profile_id: 'body-prof' }, { profile_id: 'query-prof', defer: true });
    await payload({ payload: 'x' }, { profile_id: 'query-prof' });
    expect(calls[0]).toMatchObject({ profileId: 'body-prof', defer: true });
    expect(calls[1]).toMatchObject({ profileId: 'query-prof', defer: false });
  });
});

describe('POST /api/scan handler', () => {
  const B = 'RouteBoundary';
  const multipart = (data: Buffer, extra = '') => Buffer.concat([
    Buffer.from(`${extra}--${B}\r\nContent-Disposition: form-data; name="file"; filename="dir/../sample.bin"\r\n\r\n`), data, Buffer.from(`\r\n--${B}--\r\n`),
  ]);

  it('streams the file into a scan with its name, digests, and the profile field over the query', async () => {
    const { calls, file } = setup();
    const raw = Buffer.concat([
      Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="profile_id"\r\n\r\nfield-prof\r\n`),
      multipart(Buffer.from('content')),
    ]);
    const { ctx } = await file(raw, { 'content-type': `multipart/form-data; boundary=${B}`, 'content-length': String(raw.length) }, { profile_id: 'query-prof' });
    expect(calls[0]).toMatchObject({ name: 'sample.bin', scanType: 'file', profileId: 'field-prof', requestId: 'req-2' });
    expect(calls[0].content.toString()).toBe('content');
    expect(calls[0].hashes?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(ctx.body).toEqual({ scanId: 's', name: 'sample.bin' });
  });

  it('a declared Content-Length far over the plan limit is 413 before reading, and the body is drained', async () => {
    const { calls, routes } = setup('free');
    const def = routes.get('POST /api/scan')!;
    const req = Object.assign(new PassThrough(), { headers: { 'content-type': `multipart/form-data; boundary=${B}` } });
    const headers: Record<string, string> = { 'content-length': String(10 * MB + 64 * 1024 + 1) };
    const ctx = { state: { requestId: 'r', principal: { kind: 'account', account, apiKeyId: 'k', permissions: new Set() }, query: {} }, req, get: (n: string) => headers[n.toLowerCase()] ?? '' };
    const e = await appErr(def.handler(ctx as never));
    expect(e.status).toBe(413);
    expect(e.message).toMatch(/10 MB/);
    expect(req.readableFlowing).toBe(true);
    expect(calls).toHaveLength(0);
  });

  it('without a Content-Length the limit still applies while streaming (Free: 10 MB)', async () => {
    const { calls, file } = setup('free');
    const e = await appErr(file(multipart(Buffer.alloc(10 * MB + 1)), { 'content-type': `multipart/form-data; boundary=${B}` }));
    expect(e.status).toBe(413);
    expect(calls).toHaveLength(0);
  });
});
