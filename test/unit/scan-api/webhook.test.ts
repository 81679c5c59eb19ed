/**
 * Scan webhooks (src/scan/webhook.ts): the payload of docs/contract.md §5 "Webhooks", the auth headers per auth
 * type, the HMAC over the exact raw body bytes keyed by the credential as entered, additional
 * headers outside the signature, and delivery against a local receiver (allow-listed 127.0.0.1):
 * bytes on the wire, status handling, no redirects, the timeout, and the connect-time DNS check.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookTarget } from '../../../src/scan/profiles';
import type { SafetyScore } from '../../../src/scan/types';
import { deliverWebhook, signBody, webhookHeaders, webhookPayload, type ScanResultBody } from '../../../src/scan/webhook';

const hmac = (secret: string, body: Buffer) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

const score = (threatLevel: SafetyScore['threatLevel'], s = 50): SafetyScore => ({
  score: s, threatLevel, confidence: 'High', confidenceScore: 0.9, confidenceReason: 'r', primaryThreat: 'X', threatSummary: 's',
  enginesUsed: ['yara'], recommendedAction: threatLevel === 'Malicious' ? 'Block' : 'Review', coverage: 'partial',
});
const result = (threatLevel: SafetyScore['threatLevel'], scanTimeMs = 1234): ScanResultBody => ({
  requestId: 'req-1', name: 'a.exe', hash: 'ab'.repeat(32), size: 42, contentType: 'application/x-msdownload', safetyScore: score(threatLevel), scanTimeMs,
});

describe('webhookPayload', () => {
  it('has the spec fields: requestId, file.*, scanResult.safetyScore, threatLevel, isMalicious, isSuspicious, ISO timestamp, duration in s', () => {
    const at = new Date('2026-03-04T05:06:07.089Z');
    const p = webhookPayload(result('Malicious', 1234), at);
    expect(p).toEqual({
      requestId: 'req-1',
      file: { name: 'a.exe', size: 42, hash: 'ab'.repeat(32), contentType: 'application/x-msdownload' },
      scanResult: { safetyScore: score('Malicious') },
      threatLevel: 'Malicious', isMalicious: true, isSuspicious: false,
      timestamp: '2026-03-04T05:06:07.089Z',
      scanDuration: '1.23s',
    });
  });
  it.each([
    ['Clean', false, false], ['Informational', false, false], ['Suspicious', false, true], ['Malicious', true, false], ['Rejected', false, false], ['Error', false, false],
  ] as const)('%s -> isMalicious %s, isSuspicious %s', (level, mal, sus) => {
    const p = webhookPayload(result(level), new Date(0));
    expect(p.isMalicious).toBe(mal);
    expect(p.isSuspicious).toBe(sus);
    expect(p.threatLevel).toBe(level);
  });
  it('scanDuration is seconds with an s suffix', () => {
    expect(webhookPayload(result('Clean', 0), new Date(0)).scanDuration).toBe('0.00s');
    expect(webhookPayload(result('Clean', 61_005), new Date(0)).scanDuration).toMatch(/^61\.0\ds$/);
  });
});

describe('signature and headers', () => {
  const body = Buffer.from('{"requestId":"r","file":{"name":"ü.txt"},  "x" : 1}\n');

  it('signBody is HMAC-SHA256 hex over the exact bytes, keyed by the credential as entered', () => {
    expect(signBody('tok', body)).toBe(hmac('tok', body));
    // Re-serialised JSON is different bytes and so a different signature.
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(body.toString())));
    expect(signBody('tok', reserialised)).not.toBe(signBody('tok', body));
    // Not keyed by "Bearer tok".
    expect(signBody('tok', body)).not.toBe(hmac('Bearer tok', body));
  });

  it('authType none: no authorization, no signature, no request id; additional headers pass', () => {
    const h = webhookHeaders({ url: 'https://x/', authType: 'none', headers: { 'X-Tenant': 't1' } }, body, 'req-9');
    expect(h).toEqual({ 'X-Tenant': 't1', 'content-type': 'application/json', 'user-agent': 'sentinel-webhook/1' });
  });

  it('auth type without a value counts as not configured: no signature', () => {
    const h = webhookHeaders({ url: 'https://x/', authType: 'bearer', value: '', headers: {} }, body, 'req-9');
    expect(h).not.toHaveProperty('authorization');
    expect(h).not.toHaveProperty('x-scanner-signature');
    expect(h).not.toHaveProperty('x-scanner-request-id');
  });

  it.each(['api_key', 'bearer'] as const)('%s: Authorization Bearer <value>, signature keyed by the value alone, request id', (authType) => {
    const h = webhookHeaders({ url: 'https://x/', authType, value: 'k3y', headers: {} }, body, 'req-9');
    expect(h.authorization).toBe('Bearer k3y');
    expect(h['x-scanner-signature']).toBe(hmac('k3y', body));
    expect(h['x-scanner-request-id']).toBe('req-9');
  });

  it('custom_header: the named header carries the value; no Authorization', () => {
    const h = webhookHeaders({ url: 'https://x/', authType: 'custom_header', value: 'v@l', headerName: 'X-Api-Key', headers: {} }, body, 'req-9');
    expect(h['X-Api-Key']).toBe('v@l');
    expect(h).not.toHaveProperty('authorization');
    expect(h['x-scanner-signature']).toBe(hmac('v@l', body));
  });

  it('additional headers play no part in signing', () => {
    const base: WebhookTarget = { url: 'https://x/', authType: 'bearer', value: 'k', headers: {} };
    const a = webhookHeaders(base, body, 'r');
    const b = webhookHeaders({ ...base, headers: { 'X-A': '1', 'X-B': 'two' } }, body, 'r');
    expect(b['x-scanner-signature']).toBe(a['x-scanner-signature']);
    expect(b).toMatchObject({ 'X-A': '1', 'X-B': 'two' });
  });
});

interface Received { method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer }
describe('deliverWebhook against a local receiver', () => {
  let server: http.Server;
  let port: number;
  const received: Received[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        const path = new URL(req.url ?? '/', 'http://x').pathname;
        if (path === '/ok') res.writeHead(204).end();
        else if (path === '/fail') res.writeHead(500).end('no');
        else if (path === '/redirect') res.writeHead(302, { location: `http://127.0.0.1:${port}/redirected` }).end();
        else if (path === '/silent') { /* never answers */ } else if (path === '/drip') {
          res.writeHead(200);
          const t = setInterval(() => res.write('.'), 40);
          res.on('close', () => clearInterval(t));
        } else res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  beforeEach(() => { received.length = 0; });
  afterEach(() => jest.restoreAllMocks());

  // Deliveries expected to succeed get room on a loaded machine (a first request there took over
  // 300 ms in CI); the timeout tests use the short limit, which only has to pass.
  const opts = { timeoutMs: 10_000, allowHosts: ['127.0.0.1:*'] };
  const shortLimit = { timeoutMs: 300, allowHosts: ['127.0.0.1:*'] };
  const body = Buffer.from(JSON.stringify(webhookPayload(result('Suspicious'), new Date(0))).replace('{', '{ '));

  it('POSTs the exact bytes; the receiver can verify the signature over its raw body with timingSafeEqual', async () => {
    const target: WebhookTarget = { url: `http://127.0.0.1:${port}/ok?x=1`, authType: 'api_key', value: 'secret-key', headers: { 'X-Extra': 'e' } };
    const out = await deliverWebhook(target, body, 'req-1', opts);
    expect(out).toMatchObject({ ok: true, status: 204 });
    expect(received).toHaveLength(1);
    const r = received[0];
    expect(r.method).toBe('POST');
    expect(r.url).toBe('/ok?x=1');
    expect(r.body.equals(body)).toBe(true);
    expect(r.headers['content-length']).toBe(String(body.length));
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers.authorization).toBe('Bearer secret-key');
    expect(r.headers['x-extra']).toBe('e');
    expect(r.headers['x-scanner-request-id']).toBe('req-1');
    const expected = Buffer.from(hmac('secret-key', r.body));
    expect(timingSafeEqual(Buffer.from(String(r.headers['x-scanner-signature'])), expected)).toBe(true);
  });

  it('no auth: the receiver sees neither signature nor request-id header', async () => {
    await deliverWebhook({ url: `http://127.0.0.1:${port}/ok`, authType: 'none', headers: {} }, body, 'req-1', opts);
    expect(received[0].headers).not.toHaveProperty('x-scanner-signature');
    expect(received[0].headers).not.toHaveProperty('x-scanner-request-id');
    expect(received[0].headers).not.toHaveProperty('authorization');
  });

  it('a non-2xx answer is a failure with its status; a redirect is not followed', async () => {
    expect(await deliverWebhook({ url: `http://127.0.0.1:${port}/fail`, authType: 'none', headers: {} }, body, 'r', opts)).toMatchObject({ ok: false, status: 500 });
    received.length = 0;
    // Delivery settles only after any followed request, so none can arrive after this.
    expect(await deliverWebhook({ url: `http://127.0.0.1:${port}/redirect`, authType: 'none', headers: {} }, body, 'r', opts)).toMatchObject({ ok: false, status: 302 });
    expect(received.map((x) => x.url)).toEqual(['/redirect']);
  });

  it('a receiver that never answers ends in a timeout failure', async () => {
    const out = await deliverWebhook({ url: `http://127.0.0.1:${port}/silent`, authType: 'none', headers: {} }, body, 'r', shortLimit);
    expect(out.ok).toBe(false);
    expect(out.error).toMatch(/300 ms/);
  });

  // Regression (fixed): `timeout` on http.request is a socket *idle* timeout. A receiver that answers 200 and
  // then trickles its body (one byte every 40 ms) never lets it fire, and the delivery promise
  // never settles: the activity times out in Temporal but this request, its socket and the
  // promise live on in the worker for as long as the receiver wants.
  // Before the fix this delivery never settled, and the test ran into its timeout.
  it('a receiver that trickles its answer forever still ends with the timeout failure', async () => {
    const out = await deliverWebhook({ url: `http://127.0.0.1:${port}/drip`, authType: 'none', headers: {} }, body, 'r', shortLimit);
    expect(out).toMatchObject({ ok: false, error: expect.stringMatching(/300 ms/) });
  });

  it('a header value http.request refuses (stored before values were checked) is a failed delivery, not a rejection', async () => {
    const out = await deliverWebhook({ url: `http://127.0.0.1:${port}/ok`, authType: 'none', headers: { 'X-Bad': 'a\r\nb' } }, body, 'r', opts);
    expect(out.ok).toBe(false);
    expect(out.error).toMatch(/header/i);
  });

  it('a literal internal IP that is not allow-listed is refused without connecting', async () => {
    const out = await deliverWebhook({ url: `http://127.0.0.1:${port}/ok`, authType: 'bearer', value: 'k', headers: {} }, body, 'r', { timeoutMs: 10_000, allowHosts: [] });
    expect(out.ok).toBe(false);
    expect(out.error).toMatch(/internal address/);
    expect(received).toHaveLength(0);
  });

  it('DNS rebinding: a name public at the pre-check but internal at connect time is refused at connect', async () => {
    jest.spyOn(dns.promises, 'lookup').mockImplementation((async () => [{ address: '93.184.216.34', family: 4 }]) as unknown as typeof dns.promises.lookup);
    jest.spyOn(dns, 'lookup').mockImplementation(((_h: string, _o: unknown, cb: (e: Error | null, a: dns.LookupAddress[]) => void) => {
      process.nextTick(() => cb(null, [{ address: '127.0.0.1', family: 4 }]));
    }) as unknown as typeof dns.lookup);
    const out = await deliverWebhook({ url: `http://rebind.test:${port}/ok`, authType: 'none', headers: {} }, body, 'r', { timeoutMs: 10_000, allowHosts: ['127.0.0.1:*'] });
    expect(out.ok).toBe(false);
    expect(out.error).toMatch(/internal address/);
    expect(received).toHaveLength(0);
  });

  it('an allow-listed name is connected to through the same lookup', async () => {
    jest.spyOn(dns, 'lookup').mockImplementation(((_h: string, _o: unknown, cb: (e: Error | null, a: dns.LookupAddress[]) => void) => {
      process.nextTick(() => cb(null, [{ address: '127.0.0.1', family: 4 }]));
    }) as unknown as typeof dns.lookup);
    const out = await deliverWebhook({ url: `http://hook.local.test:${port}/ok`, authType: 'none', headers: {} }, body, 'r', { timeoutMs: 10_000, allowHosts: [`hook.local.test:${port}`] });
    expect(out).toMatchObject({ ok: true, status: 204 });
    expect(received).toHaveLength(1);
  });
});
