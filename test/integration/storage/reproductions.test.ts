/** The small reproductions of issue 19, from outside, each answered as it should be instead of 500 or garbled. */
import http from 'node:http';
import { api, newAccount, stack } from '../../support/env';
import { upload } from '../../support/multipart';
import { withStackRecords } from '../../support/db';

let acct: { accountId: string; apiKey: string };
beforeAll(async () => {
  acct = await newAccount('pro');
});

it('renaming a service to a taken name is 409', async () => {
  const rules = [{ name: 'r', schema: { type: 'object' } }];
  const a = await api('POST', '/api/services', { key: acct.apiKey, body: { name: 'first', rules } });
  const b = await api('POST', '/api/services', { key: acct.apiKey, body: { name: 'second', rules } });
  expect([a.status, b.status]).toEqual([201, 201]);
  const clash = await api('PATCH', `/api/services/${b.body.id}`, { key: acct.apiKey, body: { name: 'first' } });
  expect(clash.status).toBe(409);
  expect(clash.body.reason).toBe('service "first" already exists');
});

it.each(['/api/entities/messages?offset=9223372036854775807', '/api/entities?offset=9223372036854775807'])('%s is a 400, not a 500', async (p) => {
  const r = await api('GET', p, { key: acct.apiKey });
  expect(r.status).toBe(400);
  expect(r.body.reason).toMatch(/offset/);
});

it('a search with a huge offset is a 400', async () => {
  const r = await api('POST', '/api/entities/messages/search', { key: acct.apiKey, body: { offset: 9223372036854775807 } });
  expect(r.status).toBe(400);
});

it('a non-ASCII upload file name comes back as sent', async () => {
  const name = 'отчёт-年度-ü.txt';
  const r = await upload(acct.apiKey, Buffer.from('plain text'), name);
  expect(r.status).toBe(200);
  expect(r.body.name).toBe(name);
});

it('a card number written with dots is found and kept only redacted', async () => {
  const card = '4111.1111.1111.1111';
  const r = await api('POST', '/api/scan/payload', { key: acct.apiKey, body: { payload: `please charge card ${card} today` } });
  expect(r.status).toBe(200);
  expect(r.body.sensitiveData.findings).toEqual([expect.objectContaining({ type: 'payment_card', redacted: '****.****.****.1111' })]);
  expect(JSON.stringify(r.body)).not.toContain(card);
  const stored = await withStackRecords(({ stores }) => stores.scans.findScanById(r.body.scanId));
  expect(stored).not.toBeNull();
  expect(JSON.stringify(stored)).not.toContain(card);
});

it('TRACE is 405 with an Allow header', async () => {
  // fetch refuses to send TRACE, so a plain http request.
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    http.request(`${stack().baseUrl}/api/entities/messages`, { method: 'TRACE', headers: { authorization: `Bearer ${acct.apiKey}` } }, (r) => {
      r.resume();
      r.on('end', () => resolve(r));
    }).on('error', reject).end();
  });
  expect(res.statusCode).toBe(405);
  // GET lists history, POST sends a batch.
  expect(res.headers.allow).toBe('POST, HEAD, GET');
});
