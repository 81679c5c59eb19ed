/**
 * Traces from outside (docs/contract.md §12): a service started with only the standard OTEL_*
 * variables pointing at a local OTLP/HTTP receiver sends one trace from `POST
 * /api/workflows/{id}/run` (continuing the caller's traceparent) through the Temporal client call,
 * the workflow and each node's activity to the `http` node's outbound request, and the target of
 * that request receives the trace id in its `traceparent`. No key, account id or name rides in a
 * span attribute; the requestId does.
 */
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ROOT, startServiceProcess, StartedService } from '../../support/service';

interface OtlpSpan { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: Array<{ key: string; value: Record<string, unknown> }> }

/** Spans received by the local OTLP/HTTP (JSON) receiver. */
const spans: OtlpSpan[] = [];
const targetHits: Array<{ traceparent?: string; url?: string }> = [];
let receiver: http.Server;
let target: http.Server;
let svc: StartedService;

const listen = (server: http.Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
        for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  target = http.createServer((req, res) => {
    targetHits.push({ traceparent: req.headers.traceparent as string | undefined, url: req.url });
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ temp: 21 }));
  });
  const receiverPort = await listen(receiver);
  await listen(target);
  svc = await startServiceProcess({
    extraEnv: {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiverPort}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '200',
      OTEL_SERVICE_NAME: 'sentinel-trace-test',
      LOG_LEVEL: 'warn',
    },
  });
}, 180_000);

afterAll(async () => {
  await svc?.stop();
  receiver?.close();
  target?.close();
});

async function call(method: string, p: string, key: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${svc.env.baseUrl}${p}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
}

const attrsOf = (s: OtlpSpan): Record<string, unknown> => Object.fromEntries((s.attributes ?? []).map((a) => [a.key, Object.values(a.value)[0]]));

test('POST /api/workflows/{id}/run is one trace down to the http node\'s request, and the target gets its traceparent', async () => {
  const account = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'account', 'create', '--name', 'Trace Holder Ltd', '--plan', 'pro'], {
    cwd: ROOT, env: { ...process.env, ...svc.env.env }, encoding: 'utf8',
  })) as { accountId: string; apiKey: string; apiKeyId: string };
  const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  const created = await call('POST', '/api/workflows', account.apiKey, {
    name: 'Secret Sauce Flow',
    nodes: [
      { id: 'fetch', type: 'http', config: { method: 'GET', url: `${targetUrl}/sensors/{{ input.sensor }}` } },
      { id: 'convert', type: 'transform', config: { expression: '{ "celsius": nodes.fetch.body.temp }' } },
    ],
    edges: [{ from: 'fetch', to: 'convert' }],
  });
  expect(created.status).toBe(201);
  const workflowId = created.body.id as string;

  // The caller's trace is continued: every span below carries this trace id.
  const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
  const started = await call('POST', `/api/workflows/${workflowId}/run`, account.apiKey, { input: { sensor: 'kitchen-7' } }, { traceparent: `00-${callerTrace}-00f067aa0ba902b7-01` });
  expect(started.status).toBe(202);
  const runId = started.body.runId as string;
  const requestId = started.headers.get('x-request-id');

  const until = Date.now() + 120_000;
  let run: Record<string, any>;
  for (;;) {
    run = (await call('GET', `/api/workflows/runs/${runId}`, account.apiKey, undefined)).body;
    if (run.status !== 'running' && run.status !== 'queued') break;
    if (Date.now() > until) throw new Error(`run still ${run.status}`);
    await new Promise((r) => setTimeout(r, 300));
  }
  expect(run.status).toBe('completed');

  // Spans arrive in batches (OTEL_BSP_SCHEDULE_DELAY); wait for the outbound request's span.
  const spanUntil = Date.now() + 30_000;
  while (!spans.some((s) => s.traceId === callerTrace && s.name === 'HTTP GET') || !spans.some((s) => s.traceId === callerTrace && s.name === 'RunWorkflow:flowRun')) {
    if (Date.now() > spanUntil) throw new Error(`spans never arrived: ${JSON.stringify(spans.map((s) => s.name))}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  await new Promise((r) => setTimeout(r, 1_000));
  const trace = spans.filter((s) => s.traceId === callerTrace);
  const byId = new Map(trace.map((s) => [s.spanId, s]));
  const names = trace.map((s) => s.name);

  const server = trace.find((s) => s.name === 'POST /api/workflows/:id/run');
  expect(server).toBeDefined();
  expect(server?.parentSpanId).toBe('00f067aa0ba902b7');
  expect(attrsOf(server as OtlpSpan)).toMatchObject({ 'http.route': '/api/workflows/:id/run', 'http.response.status_code': 202, 'sentinel.request_id': requestId });
  expect(names).toEqual(expect.arrayContaining(['StartWorkflow:flowRun', 'RunWorkflow:flowRun']));
  // Each node ran as an activity of this trace: the http node and the transform.
  expect(names.filter((n) => n === 'RunActivity:runFlowNode')).toHaveLength(2);

  // The outbound request hangs under an activity, under the workflow, under the start, under the server span.
  const outbound = trace.find((s) => s.name === 'HTTP GET') as OtlpSpan;
  const ancestry: string[] = [];
  for (let s = byId.get(outbound.parentSpanId ?? ''); s; s = byId.get(s.parentSpanId ?? '')) ancestry.push(s.name);
  expect(ancestry[0]).toBe('RunActivity:runFlowNode');
  expect(ancestry).toEqual(expect.arrayContaining(['RunWorkflow:flowRun', 'StartWorkflow:flowRun', 'POST /api/workflows/:id/run']));
  expect(ancestry.indexOf('RunWorkflow:flowRun')).toBeLessThan(ancestry.indexOf('StartWorkflow:flowRun'));
  expect(ancestry.indexOf('StartWorkflow:flowRun')).toBeLessThan(ancestry.indexOf('POST /api/workflows/:id/run'));

  // The target received the outbound span as its parent, in the same trace.
  const hit = targetHits.find((h) => h.url === '/sensors/kitchen-7');
  expect(hit?.traceparent).toBe(`00-${callerTrace}-${outbound.spanId}-01`);

  // Ids only: no key, account id, workflow or account name, or input in any attribute of any span.
  const everything = JSON.stringify(spans.map((s) => s.attributes ?? []));
  for (const secret of [account.apiKey, account.apiKeyId, account.accountId, 'Trace Holder Ltd', 'Secret Sauce Flow', 'kitchen-7', targetUrl]) {
    expect(everything).not.toContain(secret);
  }
}, 240_000);
