/**
 * The aws.s3 operations with the official SDK client against a real S3-compatible server (moto),
 * a server that accepts connections and never answers, and the SSRF guard.
 */
import http from 'node:http';
import net from 'node:net';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { createS3Client, runS3Operation, S3_CLIENT_POLICY, S3Attempt, S3OperationError, S3Settings } from '../../../src/connectors/s3';
import { UnsafeTargetError } from '../../../src/net/safe-target';
import { startMoto, MotoServer } from '../../support/moto';

const ALLOW = ['127.0.0.1:*'];
let moto: MotoServer;
let settings: S3Settings;
const bucket = `sentinel-${Date.now()}`;

beforeAll(async () => {
  moto = await startMoto();
  settings = { region: 'us-east-1', endpoint: moto.endpoint, accessKeyId: 'AKIATESTKEY0001', secretAccessKey: 'test-secret-access-key' };
  const client = createS3Client(settings, { allowHosts: ALLOW });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  client.destroy();
});
afterAll(async () => {
  await moto?.stop();
});

describe('aws.s3 operations against moto', () => {
  it('puts, gets, lists and deletes an object, one attempt each', async () => {
    const attempts: S3Attempt[] = [];
    const opts = { allowHosts: ALLOW, onAttempt: (a: S3Attempt) => attempts.push(a) };
    const put = await runS3Operation(settings, { operation: 'put', bucket, key: 'reports/a.txt', body: 'hello s3' }, opts);
    expect(put).toMatchObject({ operation: 'put', bucket, key: 'reports/a.txt', size: 8 });
    expect(put.operation === 'put' && put.etag).toBeTruthy();

    const got = await runS3Operation(settings, { operation: 'get', bucket, key: 'reports/a.txt' }, opts);
    expect(got).toMatchObject({ operation: 'get', body: 'hello s3', encoding: 'utf8', size: 8, contentType: 'text/plain; charset=utf-8' });

    await runS3Operation(settings, { operation: 'put', bucket, key: 'reports/b.json', body: { n: 1, tags: ['x'] } }, opts);
    const listed = await runS3Operation(settings, { operation: 'list', bucket, key: 'reports/' }, opts);
    expect(listed.operation === 'list' && listed.keys.map((k) => k.key).sort()).toEqual(['reports/a.txt', 'reports/b.json']);
    expect(listed).toMatchObject({ prefix: 'reports/', truncated: false });

    const json = await runS3Operation(settings, { operation: 'get', bucket, key: 'reports/b.json' }, opts);
    expect(json).toMatchObject({ body: '{"n":1,"tags":["x"]}', contentType: 'application/json' });

    expect(await runS3Operation(settings, { operation: 'delete', bucket, key: 'reports/a.txt' }, opts)).toEqual({ operation: 'delete', bucket, key: 'reports/a.txt', deleted: true });
    const after = await runS3Operation(settings, { operation: 'list', bucket, key: 'reports/' }, opts);
    expect(after.operation === 'list' && after.keys.map((k) => k.key)).toEqual(['reports/b.json']);

    expect(attempts).toHaveLength(7);
    expect(attempts.every((a) => a.ok && a.attempt === 1 && a.status !== undefined && a.status < 300)).toBe(true);
  });

  it('returns a body that is not UTF-8 as base64', async () => {
    const client = createS3Client(settings, { allowHosts: ALLOW });
    const { PutObjectCommand } = await import('@aws-sdk/client-s3');
    const bytes = Buffer.from([0xff, 0x00, 0xfe, 0x80]);
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'bin', Body: bytes }));
    client.destroy();
    const got = await runS3Operation(settings, { operation: 'get', bucket, key: 'bin' }, { allowHosts: ALLOW });
    expect(got).toMatchObject({ encoding: 'base64', body: bytes.toString('base64'), size: 4 });
  });

  it('refuses to read an object larger than the output limit', async () => {
    await runS3Operation(settings, { operation: 'put', bucket, key: 'big', body: 'x'.repeat(2048) }, { allowHosts: ALLOW });
    await expect(runS3Operation(settings, { operation: 'get', bucket, key: 'big' }, { allowHosts: ALLOW, getMaxBytes: 1024 }))
      .rejects.toThrow(/object of 2048 bytes exceeds 1024 bytes/);
  });

  it('fails a missing key at once: a 404 is not retried', async () => {
    const attempts: S3Attempt[] = [];
    const err = await runS3Operation(settings, { operation: 'get', bucket, key: 'nope' }, { allowHosts: ALLOW, onAttempt: (a) => attempts.push(a) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(S3OperationError);
    expect((err as Error).message).toMatch(/^s3 get .*\/nope failed after 1 attempt \(HTTP 404\): NoSuchKey/);
    expect(attempts).toHaveLength(1);
  });
});

describe('aws.s3 timeouts and retries', () => {
  it('the production client has connect timeout 10 s, read timeout 30 s and 3 attempts', async () => {
    const client = createS3Client(settings, { allowHosts: ALLOW });
    expect(S3_CLIENT_POLICY).toEqual({ connectionTimeoutMs: 10_000, readTimeoutMs: 30_000, maxAttempts: 3 });
    expect(await client.config.maxAttempts()).toBe(3);
    // The SDK's NodeHttpHandler resolves the options it was built from on first use.
    const handler = client.config.requestHandler as unknown as { configProvider: Promise<Record<string, unknown>> };
    expect(await handler.configProvider).toMatchObject({ connectionTimeout: 10_000, socketTimeout: 30_000 });
    client.destroy();
  });

  it('an endpoint that accepts and never answers fails after the read timeout with 3 attempts recorded', async () => {
    const sockets = new Set<net.Socket>();
    let connections = 0;
    const silent = net.createServer((s) => { connections++; sockets.add(s); s.on('error', () => undefined); });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const port = (silent.address() as net.AddressInfo).port;
    const attempts: S3Attempt[] = [];
    try {
      const err = await runS3Operation(
        { ...settings, endpoint: `http://127.0.0.1:${port}` },
        { operation: 'get', bucket, key: 'k' },
        { allowHosts: ALLOW, policy: { connectionTimeoutMs: 500, readTimeoutMs: 400, maxAttempts: 3 }, onAttempt: (a) => attempts.push(a) },
      ).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(S3OperationError);
      expect((err as S3OperationError).attempts).toBe(3);
      expect((err as Error).message).toMatch(/failed after 3 attempts: TimeoutError: .*timed out after 400 ms of inactivity/);
      expect(attempts.map((a) => [a.attempt, a.ok])).toEqual([[1, false], [2, false], [3, false]]);
      expect(attempts.every((a) => /TimeoutError/.test(a.error ?? ''))).toBe(true);
      expect(connections).toBe(3);
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });
});

describe('aws.s3 endpoint guard', () => {
  it('refuses an internal endpoint that is not allow-listed, before any request', async () => {
    let hits = 0;
    const server = http.createServer((_req, res) => { hits++; res.end(); });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as net.AddressInfo).port;
    try {
      for (const endpoint of [`http://127.0.0.1:${port}`, `http://localhost:${port}`, 'http://169.254.169.254', 'http://[::1]:9000']) {
        await expect(runS3Operation({ ...settings, endpoint }, { operation: 'list', bucket }, { allowHosts: [] })).rejects.toBeInstanceOf(UnsafeTargetError);
      }
      expect(hits).toBe(0);
    } finally {
      server.close();
    }
  });
});
