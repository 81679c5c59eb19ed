/**
 * Outbound calls carry the trace (docs/contract.md §12): a scan webhook and an S3 operation made
 * inside a span send `traceparent` naming their own client span (S3's is signed with the
 * request), and a device's MQTT publish handled by the gateway is a span of its own.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, trace } from '@opentelemetry/api';
import { Resource } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { runS3Operation } from '../../../src/connectors/s3';
import type { Logger } from '../../../src/log';
import { DeviceGateway } from '../../../src/mqtt/gateway';
import { deliverWebhook } from '../../../src/scan/webhook';
import type { Services } from '../../../src/services';
import { tracingStarted } from '../../../src/telemetry/tracing';

const exporter = new InMemorySpanExporter();
const received: Array<{ method?: string; url?: string; headers: http.IncomingHttpHeaders }> = [];
let server: http.Server;
let base: string;

beforeAll(async () => {
  const spanProcessor = new SimpleSpanProcessor(exporter);
  const provider = new NodeTracerProvider({ spanProcessors: [spanProcessor] });
  provider.register();
  tracingStarted({ spanProcessor, resource: Resource.empty(), shutdown: () => provider.shutdown() });
  // Answers a webhook with 204 and any S3 request with an empty object body.
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push({ method: req.method, url: req.url, headers: req.headers });
      if (req.url?.startsWith('/hook')) res.writeHead(204).end();
      else res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2', etag: '"x"' }).end('hi');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());
beforeEach(() => {
  exporter.reset();
  received.length = 0;
});

/** Runs `fn` as a child of a fresh span (an activity's, in the service); returns that span's trace id. */
async function inActivity(fn: () => Promise<unknown>): Promise<string> {
  const parent = trace.getTracer('test').startSpan('RunActivity:test');
  await context.with(trace.setSpan(context.active(), parent), fn);
  parent.end();
  return parent.spanContext().traceId;
}

test('a webhook delivery is a client span whose traceparent the receiver gets', async () => {
  let outcome: Awaited<ReturnType<typeof deliverWebhook>> | undefined;
  const traceId = await inActivity(async () => {
    outcome = await deliverWebhook({ url: `${base}/hook`, authType: 'none', headers: {} }, Buffer.from('{}'), 'req-1', { timeoutMs: 5_000, allowHosts: ['127.0.0.1:*'] });
  });
  expect(outcome).toMatchObject({ ok: true, status: 204 });
  const span = exporter.getFinishedSpans().find((s) => s.name === 'webhook POST');
  expect(span?.spanContext().traceId).toBe(traceId);
  expect(span?.attributes).toEqual({ 'http.request.method': 'POST', 'http.response.status_code': 204 });
  expect(received[0].headers.traceparent).toBe(`00-${traceId}-${span?.spanContext().spanId}-01`);
});

test('an S3 operation is one client span, and its traceparent is among the signed headers', async () => {
  let got: unknown;
  const traceId = await inActivity(async () => {
    got = await runS3Operation({ region: 'us-east-1', endpoint: base, accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-real-secret' },
      { operation: 'get', bucket: 'private-bucket-name', key: 'customer/secret-report.txt' }, { allowHosts: ['127.0.0.1:*'] });
  });
  expect(got).toMatchObject({ operation: 'get' });
  const span = exporter.getFinishedSpans().find((s) => s.name === 'S3 GetObjectCommand');
  expect(span?.spanContext().traceId).toBe(traceId);
  expect(span?.attributes).toEqual({ 'rpc.system': 'aws-api', 'rpc.service': 'S3', 'rpc.method': 'GetObjectCommand', 'http.response.status_code': 200 });
  const headers = received[0].headers;
  expect(headers.traceparent).toBe(`00-${traceId}-${span?.spanContext().spanId}-01`);
  expect(String(headers.authorization)).toMatch(/SignedHeaders=[^,]*traceparent/);
  expect(JSON.stringify(span?.attributes)).not.toMatch(/private-bucket-name|secret-report|AKIDEXAMPLE/);
});

test('an MQTT publish handled by the gateway is a consumer span of its own', async () => {
  const services = {
    limits: { hit: async () => ({ allowed: true, retryAfterSeconds: 0, counts: {} }) },
    messagePipeline: {
      loadSender: async () => ({ account: { _id: 'acc1' }, entity: { name: 'sensor-1', apiKeyId: 'key1' }, permissions: new Set() }),
      process: async () => ({ code: 200, content: 'id' }),
    },
  };
  const gw = new DeviceGateway(services as unknown as Services, { send: async () => undefined }, { subscribedDevice: async () => undefined }, { error: jest.fn(), warn: jest.fn() } as unknown as Logger);
  await gw.handlePublish({ accountId: 'acc1', region: 'local', apiKeyId: 'key1', entityName: 'sensor-1' }, Buffer.from(JSON.stringify({ msg_type: 'publish', data: { t: 1 } })));
  const [span] = exporter.getFinishedSpans();
  expect(span.name).toBe('mqtt publish');
  expect(span.parentSpanId).toBeUndefined();
  expect(span.attributes).toEqual({ 'messaging.system': 'mqtt', 'messaging.operation.type': 'process' });
});
