/**
 * The aws.s3 node's operations with the official AWS SDK v3 S3 client, configured as the contract
 * (docs/contract.md §7 "Connectors and vault") fixes it: connect timeout 10 s, read timeout 30 s,
 * at most 2 retries (3 attempts). Outputs
 * are plain JSON. The endpoint host is checked against internal addresses before each call and
 * again at connect time (DNS rebinding), unless it is in WEBHOOK_ALLOW_HOSTS.
 */
import http from 'node:http';
import https from 'node:https';
import {
  DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client,
} from '@aws-sdk/client-s3';
import { assertPublicHost, portOf, safeLookup } from '../net/safe-target';
import type { S3OperationConfig } from './schemas';
import { inClientSpan } from '../telemetry/tracing';

/** The connector timeouts and retries of docs/contract.md §7 "Connectors and vault". */
export const S3_CLIENT_POLICY = { connectionTimeoutMs: 10_000, readTimeoutMs: 30_000, maxAttempts: 3 } as const;
export type S3ClientPolicy = { connectionTimeoutMs: number; readTimeoutMs: number; maxAttempts: number };

/** Largest object `get` reads; larger ones fail instead of filling memory (a node output is at most 10 MB). */
export const S3_GET_MAX_BYTES = 10 * 1024 * 1024;
const LIST_MAX_KEYS = 1_000;

export interface S3Settings {
  region: string;
  endpoint?: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/** One HTTP attempt of an operation, for the run log. */
export interface S3Attempt {
  attempt: number;
  durationMs: number;
  ok: boolean;
  status?: number;
  error?: string;
}

export interface S3CallOptions {
  policy?: S3ClientPolicy;
  /** Hosts allowed although internal (config.webhookAllowHosts). */
  allowHosts: readonly string[];
  /** Called after every attempt (the run log shows them). */
  onAttempt?: (a: S3Attempt) => void;
  signal?: AbortSignal;
  getMaxBytes?: number;
}

export class S3OperationError extends Error {
  constructor(message: string, readonly attempts: number) {
    super(message);
    this.name = 'S3OperationError';
  }
}

export type S3Output =
  | { operation: 'get'; bucket: string; key: string; body: string; encoding: 'utf8' | 'base64'; contentType: string | null; size: number; etag: string | null; lastModified: string | null }
  | { operation: 'put'; bucket: string; key: string; etag: string | null; size: number }
  | { operation: 'list'; bucket: string; prefix: string; keys: Array<{ key: string; size: number; etag: string | null; lastModified: string | null }>; truncated: boolean }
  | { operation: 'delete'; bucket: string; key: string; deleted: true };

export function createS3Client(settings: S3Settings, opts: S3CallOptions): S3Client {
  const policy = opts.policy ?? S3_CLIENT_POLICY;
  // No endpoint: AWS itself, over https.
  const lookup = safeLookup(opts.allowHosts, settings.endpoint ? portOf(new URL(settings.endpoint)) : 443);
  const client = new S3Client({
    region: settings.region,
    ...(settings.endpoint ? { endpoint: settings.endpoint, forcePathStyle: true } : {}),
    credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
    maxAttempts: policy.maxAttempts,
    // The SDK builds its NodeHttpHandler from these options.
    requestHandler: {
      connectionTimeout: policy.connectionTimeoutMs,
      // A read timeout: the socket may stay silent this long before the attempt fails.
      socketTimeout: policy.readTimeoutMs,
      httpAgent: new http.Agent({ keepAlive: false, lookup }),
      httpsAgent: new https.Agent({ keepAlive: false, lookup }),
    },
    // Checksums of streamed bodies need no extra round trip; plain JSON bodies are small.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  // One client span per operation (all its attempts); the build step runs before signing, so the traceparent is signed too.
  client.middlewareStack.add((next, context) => (args) => inClientSpan(
    `S3 ${context.commandName ?? 'command'}`, { 'rpc.system': 'aws-api', 'rpc.service': 'S3', 'rpc.method': context.commandName ?? 'unknown' },
    (args.request as { headers?: Record<string, string> }).headers ?? {}, () => next(args), (out) => (out.response as { statusCode?: number }).statusCode,
  ), { step: 'build', name: 'sentinelTrace' });
  if (opts.onAttempt) {
    const onAttempt = opts.onAttempt;
    let attempt = 0;
    // The deserialize step runs inside the retry loop: once per HTTP attempt.
    client.middlewareStack.add((next) => async (args) => {
      attempt += 1;
      const started = Date.now();
      try {
        const out = await next(args);
        onAttempt({ attempt, durationMs: Date.now() - started, ok: true, status: (out.response as { statusCode?: number }).statusCode });
        return out;
      } catch (err) {
        const e = err as Error & { $metadata?: { httpStatusCode?: number } };
        onAttempt({ attempt, durationMs: Date.now() - started, ok: false, status: e.$metadata?.httpStatusCode, error: `${e.name}: ${e.message}` });
        throw err;
      }
    }, { step: 'deserialize', name: 'sentinelRecordAttempt', priority: 'high' });
  }
  return client;
}

const isUtf8 = (b: Buffer) => Buffer.from(b.toString('utf8'), 'utf8').equals(b);

function bodyBytes(body: unknown): { bytes: Buffer; contentType: string } {
  if (typeof body === 'string') return { bytes: Buffer.from(body, 'utf8'), contentType: 'text/plain; charset=utf-8' };
  return { bytes: Buffer.from(JSON.stringify(body ?? null), 'utf8'), contentType: 'application/json' };
}

/** Runs one operation with a fresh client (its retry budget is this call's alone). */
export async function runS3Operation(settings: S3Settings, op: Omit<S3OperationConfig, 'connector_id'>, opts: S3CallOptions): Promise<S3Output> {
  if (settings.endpoint) {
    const endpoint = new URL(settings.endpoint);
    await assertPublicHost(endpoint.hostname, portOf(endpoint), opts.allowHosts);
  }
  const send = { abortSignal: opts.signal };
  let attempts = 0;
  const counted = createS3Client(settings, { ...opts, onAttempt: (a) => { attempts = a.attempt; opts.onAttempt?.(a); } });
  try {
    switch (op.operation) {
      case 'get': {
        const key = requireKey(op);
        const res = await counted.send(new GetObjectCommand({ Bucket: op.bucket, Key: key }), send);
        const max = opts.getMaxBytes ?? S3_GET_MAX_BYTES;
        if ((res.ContentLength ?? 0) > max) {
          (res.Body as { destroy?: () => void } | undefined)?.destroy?.();
          throw new S3OperationError(`s3 get ${op.bucket}/${key}: object of ${res.ContentLength} bytes exceeds ${max} bytes`, attempts);
        }
        const bytes = Buffer.from(res.Body ? await res.Body.transformToByteArray() : new Uint8Array());
        const text = isUtf8(bytes);
        return {
          operation: 'get', bucket: op.bucket, key,
          body: bytes.toString(text ? 'utf8' : 'base64'), encoding: text ? 'utf8' : 'base64',
          contentType: res.ContentType ?? null, size: bytes.length, etag: res.ETag ?? null,
          lastModified: res.LastModified?.toISOString() ?? null,
        };
      }
      case 'put': {
        const key = requireKey(op);
        const { bytes, contentType } = bodyBytes(op.body);
        const res = await counted.send(new PutObjectCommand({ Bucket: op.bucket, Key: key, Body: bytes, ContentType: contentType, ContentLength: bytes.length }), send);
        return { operation: 'put', bucket: op.bucket, key, etag: res.ETag ?? null, size: bytes.length };
      }
      case 'list': {
        const prefix = op.key ?? '';
        const res = await counted.send(new ListObjectsV2Command({ Bucket: op.bucket, Prefix: prefix || undefined, MaxKeys: LIST_MAX_KEYS }), send);
        return {
          operation: 'list', bucket: op.bucket, prefix,
          keys: (res.Contents ?? []).map((o) => ({ key: o.Key ?? '', size: o.Size ?? 0, etag: o.ETag ?? null, lastModified: o.LastModified?.toISOString() ?? null })),
          truncated: res.IsTruncated === true,
        };
      }
      case 'delete': {
        const key = requireKey(op);
        await counted.send(new DeleteObjectCommand({ Bucket: op.bucket, Key: key }), send);
        return { operation: 'delete', bucket: op.bucket, key, deleted: true };
      }
    }
  } catch (err) {
    if (err instanceof S3OperationError) throw err;
    const e = err as Error & { $metadata?: { httpStatusCode?: number; attempts?: number } };
    const status = e.$metadata?.httpStatusCode ? ` (HTTP ${e.$metadata.httpStatusCode})` : '';
    const n = Math.max(attempts, e.$metadata?.attempts ?? 0);
    throw new S3OperationError(`s3 ${op.operation} ${op.bucket}${op.key ? `/${op.key}` : ''} failed after ${n} attempt${n === 1 ? '' : 's'}${status}: ${e.name}: ${e.message}`, n);
  } finally {
    counted.destroy();
  }
}

function requireKey(op: { operation: string; key?: string }): string {
  if (!op.key) throw new S3OperationError(`s3 ${op.operation}: key is required`, 0);
  return op.key;
}
