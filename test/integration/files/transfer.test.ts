/** File transfer from outside: device A sends to device B through the API, scanned before delivery. */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { Client, Connection } from '@temporalio/client';
import type { FileRecord } from '../../../src/files/records';
import { withStackRecords } from '../../support/db';
import { api, cli, newAccount, stack } from '../../support/env';
import { fleet, Fleet } from '../messaging/helpers';
import { filesHoldingAfterCleanup, sendFile, partsLeftAfterCleanup, settled, zipOf } from './helpers';

const EICAR = Buffer.from('X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function download(key: string, id: string) {
  const res = await fetch(`${stack().baseUrl}/api/entities/files/download/${id}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

describe('file transfer between devices', () => {
  let f: Fleet;
  let a: string;
  let b: string;
  beforeAll(async () => {
    f = await fleet('pro', ['a', 'b']);
    a = f.devices.a.apiKey;
    b = f.devices.b.apiKey;
  });

  it('delivers a clean PDF to B, who downloads the same bytes once; A cannot download it', async () => {
    const sent = await sendFile(a, PDF, 'report.pdf', { dest: 'b', tags: JSON.stringify(['daily']), meta: JSON.stringify({ $odd: 'kept', 'a.b': 1 }) });
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ id: expect.any(String), status: 'scanning', filename: 'report.pdf', size: PDF.length, sha256: sha256(PDF) });
    const id = sent.body.id as string;
    const done = await settled(a, id);
    expect(done).toMatchObject({ id, status: 'delivered', source: 'a', dest: 'b', kind: 'file', tags: ['daily'], meta: { $odd: 'kept', 'a.b': 1 }, contentType: 'application/pdf' });
    expect(done.verdict).toMatchObject({ threatLevel: 'Clean', score: expect.any(Number), primaryThreat: expect.any(String) });

    const inbox = await api('GET', '/api/entities/files?limit=50', { key: b });
    expect(inbox.status).toBe(200);
    expect(inbox.body.files).toEqual([{ id, filename: 'report.pdf', size: PDF.length, contentType: 'application/pdf', sha256: sha256(PDF), source: 'a', tags: ['daily'], kind: 'file', createdAt: expect.any(String) }]);
    // The sender's inbox does not hold it, and the sender cannot download it.
    expect((await api('GET', '/api/entities/files', { key: a })).body.files).toEqual([]);
    expect((await download(a, id)).status).toBe(404);

    const got = await download(b, id);
    expect(got.status).toBe(200);
    expect(sha256(got.bytes)).toBe(sha256(PDF));
    expect(got.headers.get('content-disposition')).toContain('filename="report.pdf"');
    // Consumed once the body was sent: poll the bounded window in which the consume runs.
    let again = await download(b, id);
    for (let i = 0; again.status === 200 && i < 50; i++) {
      await new Promise((res) => setTimeout(res, 100));
      again = await download(b, id);
    }
    expect(again.status).toBe(404);
    expect((await api('GET', `/api/entities/files/${id}`, { key: a })).body.status).toBe('downloaded');
    expect(await partsLeftAfterCleanup(id)).toEqual([]);
    expect((await api('GET', '/api/entities/files', { key: b })).body.files).toEqual([]);
  });

  it('counts the transfer as one scan of the account, kept in its scan history', async () => {
    const acct = await newAccount('pro');
    const r = await api('POST', '/api/entities/bulk', { key: acct.apiKey, body: { entities: [{ name: 's' }, { name: 'r' }] } });
    const [s] = r.body.results;
    const sent = await sendFile(s.apiKey, Buffer.from('plain text for r\n'), 'note.txt', { dest: 'r' });
    await settled(s.apiKey, sent.body.id);
    const usage = await api('GET', '/api/account/usage', { key: acct.apiKey });
    expect(usage.body.scans_used).toBe(1);
    const history = await api('GET', '/api/account/history', { key: acct.apiKey });
    expect(history.body.items).toHaveLength(1);
    expect(history.body.items[0]).toMatchObject({ name: 'note.txt', hash: sha256(Buffer.from('plain text for r\n')), scanType: 'file' });
  });

  it.each([
    ['EICAR', async () => EICAR, 'eicar.com'],
    ['EICAR inside a zip', () => zipOf([['docs/readme.txt', Buffer.from('hello')], ['docs/eicar.com', EICAR]]), 'bundle.zip'],
  ])('blocks %s: the sender sees the verdict, B never sees it, the bytes are gone', async (_label, make, name) => {
    const content = await make();
    const sent = await sendFile(a, content, name, { dest: 'b' });
    expect(sent.status).toBe(202);
    const id = sent.body.id as string;
    const done = await settled(a, id);
    expect(done.status).toBe('blocked');
    expect(done.verdict.threatLevel).toBe('Malicious');
    expect((await api('GET', '/api/entities/files', { key: b })).body.files.map((x: { id: string }) => x.id)).not.toContain(id);
    expect((await download(b, id)).status).toBe(404);
    expect(await partsLeftAfterCleanup(id)).toEqual([]);
  });

  it('leaves the file in place when the download is cut short', async () => {
    const content = Buffer.from('line of a long clean text file\n'.repeat(400_000)); // about 12 MB
    const sent = await sendFile(a, content, 'big.txt', { dest: 'b' });
    const id = sent.body.id as string;
    expect((await settled(a, id)).status).toBe('delivered');
    await new Promise<void>((resolve, reject) => {
      const req = http.get(`${stack().baseUrl}/api/entities/files/download/${id}`, { headers: { authorization: `Bearer ${b}` } }, (res) => {
        res.once('data', () => { req.destroy(); resolve(); });
      });
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    });
    // The cut download did not consume it: its bytes are still stored, and a whole download still gets every byte.
    expect(await partsLeftAfterCleanup(id, 0)).toEqual(['raw']);
    const got = await download(b, id);
    expect(got.status).toBe(200);
    expect(sha256(got.bytes)).toBe(sha256(content));
  });

  // Found by an outside probe: the whole body fitted in the socket buffers, the client read half of
  // it and went away, and the file was consumed.
  it('leaves the file in place when every byte was handed over but the client reset the connection unread', async () => {
    const content = Buffer.from('a line of a clean text file of about one megabyte\n'.repeat(20_000));
    const sent = await sendFile(a, content, 'half.txt', { dest: 'b' });
    const id = sent.body.id as string;
    expect((await settled(a, id)).status).toBe('delivered');
    const { port } = new URL(stack().baseUrl);
    await new Promise<void>((resolve, reject) => {
      const sock = net.connect(Number(port), '127.0.0.1', () => {
        sock.write(`GET /api/entities/files/download/${id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${b}\r\n\r\n`);
      });
      let got = 0;
      sock.on('data', (chunk: Buffer) => {
        got += chunk.length;
        // Stop reading a quarter in; the server hands over the rest into the kernel's buffers.
        if (got > content.length / 4 && !sock.isPaused()) {
          sock.pause();
          setTimeout(() => { sock.resetAndDestroy(); resolve(); }, 1_000);
        }
      });
      sock.on('error', reject);
    });
    const status = async () => (await api('GET', `/api/entities/files/${id}`, { key: a })).body.status as string;
    await new Promise((r) => setTimeout(r, 500));
    expect(await status()).toBe('delivered');
    const got = await download(b, id);
    expect(got.status).toBe(200);
    expect(sha256(got.bytes)).toBe(sha256(content));
  });

  it('a keep-alive client that got every byte consumes the file with its next request on the connection', async () => {
    const content = Buffer.from('keep-alive download line\n'.repeat(1_000));
    const sent = await sendFile(a, content, 'ka.txt', { dest: 'b' });
    const id = sent.body.id as string;
    expect((await settled(a, id)).status).toBe('delivered');
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = (path: string) => new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
      http.get(`${stack().baseUrl}${path}`, { agent, headers: { authorization: `Bearer ${b}` } }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts) }));
      }).on('error', reject);
    });
    try {
      const first = await get(`/api/entities/files/download/${id}`);
      expect(sha256(first.body)).toBe(sha256(content));
      expect((await get(`/api/entities/files/download/${id}`)).status).toBe(404); // the same connection: proof of receipt
      const status = async () => (await api('GET', `/api/entities/files/${id}`, { key: a })).body.status as string;
      for (let i = 0; i < 300 && (await status()) !== 'downloaded'; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await status()).toBe('downloaded');
    } finally {
      agent.destroy();
    }
  });

  it('delivers a file once to two simultaneous downloads: one 200 with the bytes, one 404', async () => {
    const content = Buffer.from('simultaneous download line\n'.repeat(40_000)); // about 1 MB
    const sent = await sendFile(a, content, 'twice.txt', { dest: 'b' });
    const id = sent.body.id as string;
    expect((await settled(a, id)).status).toBe('delivered');
    const both = await Promise.all([download(b, id), download(b, id)]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 404]);
    const ok = both.find((r) => r.status === 200)!;
    expect(sha256(ok.bytes)).toBe(sha256(content));
    const missing = both.find((r) => r.status === 404)!;
    expect(JSON.parse(missing.bytes.toString('utf8'))).toMatchObject({ reason: 'File not found', code: 'not_found' });
  });

  it('answers HEAD on the download URL with the headers and consumes nothing', async () => {
    const sent = await sendFile(a, PDF, 'head.pdf', { dest: 'b' });
    const id = sent.body.id as string;
    expect((await settled(a, id)).status).toBe('delivered');
    const url = `${stack().baseUrl}/api/entities/files/download/${id}`;
    const head = await fetch(url, { method: 'HEAD', headers: { authorization: `Bearer ${b}` } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(PDF.length));
    expect(head.headers.get('content-disposition')).toContain('filename="head.pdf"');
    // Nothing was claimed or consumed: a HEAD again, then the GET, get the file.
    expect((await fetch(url, { method: 'HEAD', headers: { authorization: `Bearer ${b}` } })).status).toBe(200);
    const got = await download(b, id);
    expect(got.status).toBe(200);
    expect(sha256(got.bytes)).toBe(sha256(PDF));
    expect((await fetch(url, { method: 'HEAD', headers: { authorization: `Bearer ${a}` } })).status).toBe(404);
  });

  it('refuses an upload with two file parts (400 invalid_upload) and stores nothing of it', async () => {
    const form = new FormData();
    form.append('dest', 'b');
    form.append('file', new Blob([PDF]), 'one.pdf');
    form.append('file', new Blob([Buffer.from('second part')]), 'two.txt');
    const res = await fetch(`${stack().baseUrl}/api/entities/files`, { method: 'POST', headers: { authorization: `Bearer ${a}` }, body: form });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'invalid_upload' });
    expect((await api('GET', '/api/entities/files', { key: b })).body.files.map((x: { filename: string }) => x.filename)).not.toContain('one.pdf');
  });

  it('refuses an unknown recipient (400) and a missing dest on a plain file (400)', async () => {
    expect((await sendFile(a, PDF, 'x.pdf', { dest: 'nobody' })).status).toBe(400);
    expect((await sendFile(a, PDF, 'x.pdf')).status).toBe(400);
    expect((await sendFile(a, PDF, 'x.pdf', { dest: 'b', tags: 'not json' })).status).toBe(400);
  });

  it('answers another account\'s file id with 404 everywhere', async () => {
    const sent = await sendFile(a, PDF, 'mine.pdf', { dest: 'b' });
    const id = sent.body.id as string;
    await settled(a, id);
    const other = await fleet('pro', ['x']);
    expect((await api('GET', `/api/entities/files/${id}`, { key: other.devices.x.apiKey })).status).toBe(404);
    expect((await api('GET', `/api/entities/files/${id}`, { key: other.apiKey })).status).toBe(404);
    expect((await download(other.devices.x.apiKey, id)).status).toBe(404);
    expect((await api('GET', `/api/files/${id}/raw`, { key: other.apiKey })).status).toBe(404);
    // The recipient is not the sender: its status view is 404 too; the account key sees it.
    expect((await api('GET', `/api/entities/files/${id}`, { key: b })).status).toBe(404);
    expect((await api('GET', `/api/entities/files/${id}`, { key: f.apiKey })).body.status).toBe('delivered');
  });

  it('documents every file endpoint in the OpenAPI document', async () => {
    const doc = await api('GET', '/openapi.json');
    const paths = doc.body.paths;
    expect(paths['/api/entities/files'].post.responses['202']).toBeDefined();
    expect(paths['/api/entities/files'].get).toBeDefined();
    expect(paths['/api/entities/files/{id}'].get).toBeDefined();
    expect(paths['/api/entities/files/download/{id}'].get).toBeDefined();
    expect(paths['/api/files'].get.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['kind', 'limit', 'offset', 'entity_name']));
    expect(Object.keys(paths['/api/files/{id}/video'].get.responses)).toEqual(expect.arrayContaining(['200', '206', '416']));
    expect(paths['/api/files/{id}/poster'].get).toBeDefined();
    expect(paths['/api/files/{id}/raw'].get).toBeDefined();
  });

  it('answers 413 while streaming a file over the plan\'s limit (Free: 10 MB)', async () => {
    const free = await fleet('free', ['p', 'q']);
    // A marker of this upload alone: found nowhere under DATA_DIR/db afterwards, nothing of it was kept.
    const marker = Buffer.from(`too-large-${randomBytes(8).toString('hex')}`);
    const content = Buffer.alloc(10 * 1024 * 1024 + 1, marker);
    const r = await sendFile(free.devices.p.apiKey, content, 'big.bin', { dest: 'q' });
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ code: 'payload_too_large', reason: expect.stringContaining('10 MB') });
    expect(await filesHoldingAfterCleanup(marker)).toEqual([]);
  });

  it('answers 402 quota_exceeded at upload once the month\'s scans are used up', async () => {
    const free = await fleet('free', ['p', 'q']);
    const month = new Date().toISOString().slice(0, 7);
    await withStackRecords(({ stores }) => stores.counters.incrementUsage({ _id: `${free.accountId}:${month}`, accountId: free.accountId, period: month, kind: 'month' }, 'scans', 100));
    const r = await sendFile(free.devices.p.apiKey, PDF, 'x.pdf', { dest: 'q' });
    expect(r.status).toBe(402);
    expect(r.body.code).toBe('quota_exceeded');
  });

  it('answers 403 to an entity whose role lacks entity:Files', async () => {
    const std = await fleet('standard', ['keep']);
    expect((await api('POST', '/api/roles', { key: std.apiKey, body: { name: 'nofiles', permissions: ['entity:Publish'] } })).status).toBe(201);
    const created = await cli('entity', 'create', '--account', std.accountId, '--name', 'limited', '--role', 'nofiles');
    const limited = created.json?.apiKey as string;
    expect((await sendFile(limited, PDF, 'x.pdf', { dest: 'keep' })).status).toBe(403);
    expect((await api('GET', '/api/entities/files', { key: limited })).status).toBe(403);
    // The account key is not an entity: the device endpoints refuse it.
    expect((await sendFile(std.apiKey, PDF, 'x.pdf', { dest: 'keep' })).status).toBe(403);
  });

  it('deletes files past their expiry when the files-expiry schedule runs', async () => {
    const sent = await sendFile(a, PDF, 'old.pdf', { dest: 'b' });
    const id = sent.body.id as string;
    await settled(a, id);
    await withStackRecords(async ({ table }) => table<FileRecord>('files').update(id, (doc) => ({ ...doc, expiresAt: new Date(Date.now() - 1000) })));
    const connection = await Connection.connect({ address: `127.0.0.1:${stack().temporalPort}` });
    try {
      await new Client({ connection }).schedule.getHandle('files-expiry').trigger();
    } finally {
      await connection.close();
    }
    const until = Date.now() + 60_000;
    while ((await api('GET', `/api/entities/files/${id}`, { key: a })).status !== 404 && Date.now() < until) await new Promise((res) => setTimeout(res, 300));
    expect((await api('GET', `/api/entities/files/${id}`, { key: a })).status).toBe(404);
    expect(await partsLeftAfterCleanup(id)).toEqual([]);
  });
});
