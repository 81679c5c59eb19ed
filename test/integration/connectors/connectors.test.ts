/** Connectors over HTTP against the real stack, and runS3 on what the service stored. */
import http from 'node:http';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { api, newAccount, stack } from '../../support/env';
import { withStackRecords } from '../../support/db';
import { stackDataKey } from '../../support/keys';
import { startMoto, MotoServer } from '../../support/moto';
import { decryptSecret } from '../../../src/crypto';
import { ConnectorService } from '../../../src/connectors/service';
import { createS3Client } from '../../../src/connectors/s3';

const KEY_ID = `AKIA${Date.now()}XY`;
const SECRET = `sEcReT/${Date.now()}+abc`;

let moto: MotoServer;
let a: { accountId: string; apiKey: string };
let b: { accountId: string; apiKey: string };
beforeAll(async () => {
  moto = await startMoto();
  a = await newAccount('starter', `conn-a-${Date.now()}`);
  b = await newAccount('starter', `conn-b-${Date.now()}`);
});
afterAll(async () => {
  await moto?.stop();
});

function expectNoCredentials(text: string) {
  expect(text).not.toContain(KEY_ID);
  expect(text).not.toContain(SECRET);
}

describe('connectors API', () => {
  let id: string;

  it('creates a connector and returns no credentials', async () => {
    const r = await api('POST', '/api/connectors', { key: a.apiKey, body: { name: 'local s3', type: 'aws', region: 'us-east-1', endpoint: moto.endpoint, access_key_id: KEY_ID, secret_access_key: SECRET } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'local s3', type: 'aws', region: 'us-east-1', endpoint: moto.endpoint,
      credentials: { configured: true }, createdAt: expect.any(String), updatedAt: expect.any(String),
    });
    expectNoCredentials(r.text);
    id = r.body.id;
  });

  it('lists and reads it, still without credentials', async () => {
    const list = await api('GET', '/api/connectors', { key: a.apiKey });
    expect(list.body.connectors.map((c: { id: string }) => c.id)).toEqual([id]);
    expectNoCredentials(list.text);
    const one = await api('GET', `/api/connectors/${id}`, { key: a.apiKey });
    expect(one.status).toBe(200);
    expectNoCredentials(one.text);
  });

  it('replaces it with PUT; omitted credentials keep the stored ones', async () => {
    const r = await api('PUT', `/api/connectors/${id}`, { key: a.apiKey, body: { name: 'renamed', type: 'aws', region: 'eu-west-1', endpoint: moto.endpoint } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id, name: 'renamed', region: 'eu-west-1', credentials: { configured: true } });
    const doc = await withStackRecords(({ stores }) => stores.connectors.find(a.accountId, id));
    if (!doc) throw new Error(`connector ${id} is not in the store`);
    expect(doc).toMatchObject({ name: 'renamed', region: 'eu-west-1' });
    expectNoCredentials(JSON.stringify(doc));
    expect(JSON.parse(decryptSecret(stackDataKey(), doc.credentialsSealed))).toEqual({ accessKeyId: KEY_ID, secretAccessKey: SECRET });
  });

  it('refuses invalid bodies and internal endpoints', async () => {
    const base = { name: 'n', type: 'aws', region: 'us-east-1', access_key_id: 'k', secret_access_key: 's' };
    for (const body of [{ ...base, type: 'gcp' }, { ...base, region: 'US EAST' }, { name: 'n', type: 'aws', region: 'us-east-1' }, { ...base, endpoint: 'ftp://x' }]) {
      expect((await api('POST', '/api/connectors', { key: a.apiKey, body })).status).toBe(400);
    }
    for (const endpoint of ['http://10.1.2.3:9000', 'http://169.254.169.254', 'http://[fd00::1]']) {
      const r = await api('POST', '/api/connectors', { key: a.apiKey, body: { ...base, endpoint } });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('connector_target_refused');
    }
  });

  it('answers 409, as the OpenAPI document says, for a name another connector has', async () => {
    const base = { type: 'aws', region: 'us-east-1', endpoint: moto.endpoint, access_key_id: 'k', secret_access_key: 's' };
    const other = await api('POST', '/api/connectors', { key: a.apiKey, body: { ...base, name: 'second' } });
    expect(other.status).toBe(201);
    const dup = await api('POST', '/api/connectors', { key: a.apiKey, body: { ...base, name: 'renamed' } });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ error: 'a connector named "renamed" already exists', code: 'conflict' });
    const rename = await api('PUT', `/api/connectors/${other.body.id}`, { key: a.apiKey, body: { name: 'renamed', type: 'aws', region: 'us-east-1' } });
    expect(rename.status).toBe(409);
    const doc = await api('GET', '/openapi.json');
    expect(Object.keys(doc.body.paths['/api/connectors'].post.responses)).toContain('409');
    expect(Object.keys(doc.body.paths['/api/connectors/{id}'].put.responses)).toContain('409');
    expect((await api('DELETE', `/api/connectors/${other.body.id}`, { key: a.apiKey })).status).toBe(204);
  });

  it("answers 404 for another account's connector", async () => {
    for (const [method, body] of [['GET', undefined], ['PUT', { name: 'x', type: 'aws', region: 'us-east-1' }], ['DELETE', undefined]] as const) {
      const r = await api(method, `/api/connectors/${id}`, { key: b.apiKey, body });
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ error: 'Connector not found', code: 'not_found' });
    }
    expect((await api('GET', '/api/connectors', { key: b.apiKey })).body.connectors).toEqual([]);
  });

  it('runs S3 operations through the stored connector (the aws.s3 entry point)', async () => {
    const admin = createS3Client({ region: 'us-east-1', endpoint: moto.endpoint, accessKeyId: 'x', secretAccessKey: 'y' }, { allowHosts: ['127.0.0.1:*'] });
    await admin.send(new CreateBucketCommand({ Bucket: 'conn-bucket' }));
    admin.destroy();
    await withStackRecords(async ({ stores }) => {
      const svc = new ConnectorService(stores.connectors, stackDataKey(), ['127.0.0.1:*']);
      await svc.runS3(a.accountId, { connector_id: id, operation: 'put', bucket: 'conn-bucket', key: 'v.json', body: { answer: 42 } });
      const got = await svc.runS3(a.accountId, { connector_id: id, operation: 'get', bucket: 'conn-bucket', key: 'v.json' });
      expect(got).toMatchObject({ body: '{"answer":42}' });
      await expect(svc.runS3(b.accountId, { connector_id: id, operation: 'list', bucket: 'conn-bucket' })).rejects.toThrow('Connector not found');
    });
  });

  it('keeps credentials a server echoes back out of errors and attempt records', async () => {
    // A server that quotes the request's Authorization header (with the access key id) in its error.
    const echo = http.createServer((req, res) => {
      res.writeHead(403, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>denied for ${req.headers.authorization} and ${SECRET}</Message></Error>`);
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
    const endpoint = `http://127.0.0.1:${(echo.address() as net.AddressInfo).port}`;
    try {
      const created = await api('POST', '/api/connectors', { key: a.apiKey, body: { name: 'echo', type: 'aws', region: 'us-east-1', endpoint, access_key_id: KEY_ID, secret_access_key: SECRET } });
      const records: unknown[] = [];
      const err = await withStackRecords(({ stores }) => new ConnectorService(stores.connectors, stackDataKey(), ['127.0.0.1:*'])
        .runS3(a.accountId, { connector_id: created.body.id, operation: 'get', bucket: 'bkt', key: 'k' }, { onAttempt: (r) => records.push(r) })
        .catch((e: Error) => e));
      expect((err as Error).message).toMatch(/AccessDenied: denied for .*\[connector:access_key_id\]/);
      expect((err as Error).message).toContain('[connector:secret_access_key]');
      expectNoCredentials(`${(err as Error).message} ${JSON.stringify(err)} ${JSON.stringify(records)}`);
      expect(records.length).toBeGreaterThan(0);
    } finally {
      echo.close();
    }
  });

  // Found by an outside probe: a `get` from a server that answers with the request it got put the
  // access key id (in the SigV4 Authorization header) into the node's output.
  it('keeps credentials a server echoes in an object body out of the output', async () => {
    const echo = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(JSON.stringify({ authorization: req.headers.authorization, also: SECRET }));
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
    const endpoint = `http://127.0.0.1:${(echo.address() as net.AddressInfo).port}`;
    try {
      const created = await api('POST', '/api/connectors', { key: a.apiKey, body: { name: 'echo-body', type: 'aws', region: 'us-east-1', endpoint, access_key_id: KEY_ID, secret_access_key: SECRET } });
      const out = await withStackRecords(({ stores }) => new ConnectorService(stores.connectors, stackDataKey(), ['127.0.0.1:*'])
        .runS3(a.accountId, { connector_id: created.body.id, operation: 'get', bucket: 'bkt', key: 'k' }));
      expect(JSON.stringify(out)).toContain('Credential=[connector:access_key_id]');
      expectNoCredentials(JSON.stringify(out));
    } finally {
      echo.close();
    }
  });

  it('deletes it', async () => {
    expect((await api('DELETE', `/api/connectors/${id}`, { key: a.apiKey })).status).toBe(204);
    expect((await api('GET', `/api/connectors/${id}`, { key: a.apiKey })).status).toBe(404);
  });

  it('documents the routes in OpenAPI and answers unknown paths in the scanning error shape', async () => {
    const doc = await api('GET', '/openapi.json');
    expect(Object.keys(doc.body.paths['/api/connectors/{id}'] ?? {}).sort()).toEqual(['delete', 'get', 'put']);
    expect(Object.keys(doc.body.paths['/api/vault'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(doc.body.paths['/api/vault/{name}'].delete).toBeDefined();
    for (const p of ['/api/connectors/a/b', '/api/vault/a/b']) {
      const r = await api('GET', p, { key: a.apiKey });
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ error: expect.any(String), code: 'not_found' });
    }
  });

  it('never writes credentials to the service log', () => {
    expectNoCredentials(readFileSync(stack().logFile, 'utf8'));
  });
});
