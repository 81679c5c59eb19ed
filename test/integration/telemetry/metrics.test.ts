/**
 * Metrics from outside (docs/contract.md §12): after a file scan, a payload scan, a publish, a
 * poll and a workflow run, GET /metrics on METRICS_PORT has the series per route template,
 * engine, message type and run status, and the Temporal SDK's worker series; no key, account id
 * or name appears in it; and a real Prometheus (Debian's `prometheus`, started here on a free
 * port) scrapes it and answers queries for those series. Every series the Grafana dashboard
 * queries is in the exposition.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, cli, newAccount, stack } from '../../support/env';
import { upload } from '../../support/multipart';
import { pickPorts } from '../../support/service';
import { findOnPath } from '../../support/tools';
import { createWorkflow, startRun, waitForRun } from '../workflows/helpers';
import { exposedSeries, seriesOf } from '../../support/promql';
import { dashboardQueries } from '../../../tools/grafana-dashboard';

const metricsUrl = () => `http://127.0.0.1:${stack().metricsPort}/metrics`;
let prometheus: ChildProcess | undefined;
let promDir: string | undefined;

afterAll(async () => {
  if (prometheus && prometheus.exitCode === null) {
    await new Promise<void>((resolve) => {
      prometheus?.once('exit', () => resolve());
      prometheus?.kill('SIGTERM');
    });
  }
  if (promDir) rmSync(promDir, { recursive: true, force: true });
});

/** Polls Prometheus' query API until the query returns at least one series (bounded). */
async function query(base: string, promql: string, timeoutMs = 60_000): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`).catch(() => undefined);
    if (res?.ok) {
      const body = (await res.json()) as { status: string; data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
      if (body.status === 'success' && body.data.result.length > 0) return body.data.result;
    }
    if (Date.now() > until) throw new Error(`Prometheus returned nothing for ${promql}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

test('after each kind of traffic /metrics has its series, bounded labels only, and Prometheus scrapes them', async () => {
  const account = await newAccount('pro', 'Metrics Labels Inc');
  const key = account.apiKey;
  const entity = await cli('entity', 'create', '--account', account.accountId, '--name', 'boiler-room-sensor');
  expect(entity.code).toBe(0);
  const entityKey = entity.json?.apiKey as string;

  expect((await upload(key, Buffer.from('just a harmless text file\n'), 'quarterly-report.txt')).status).toBe(200);
  expect((await api('POST', '/api/scan/payload', { key, body: { payload: 'hello from the metrics test' } })).status).toBe(200);
  expect((await api('POST', '/api/entities/message', { key: entityKey, body: { msg_type: 'publish', data: { temp: 21 } } })).status).toBe(200);
  expect((await api('GET', '/api/entities/check_messages?limit=5', { key: entityKey })).status).toBe(200);
  const wf = await createWorkflow(key, { name: 'Confidential Flow Name', nodes: [{ id: 'only', type: 'transform', config: { expression: '1 + 1' } }], edges: [] });
  const runId = await startRun(key, wf);
  expect((await waitForRun(key, runId)).status).toBe('completed');

  // The run's record is final once its last activity wrote it; the workflow task that completes
  // the execution (and the SDK's counter of it) follows a moment later.
  let text = '';
  for (const until = Date.now() + 30_000; ;) {
    text = await (await fetch(metricsUrl())).text();
    if (/^temporal_workflow_completed_total\{.*workflow_type="flowRun".*\} \d+/m.test(text) || Date.now() > until) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  expect(text).toContain('http_requests_total{method="POST",route="/api/scan",status="200"}');
  expect(text).toContain('http_requests_total{method="POST",route="/api/workflows/:id/run",status="202"}');
  expect(text).toContain('http_requests_total{method="GET",route="/api/workflows/runs/:runId",status="200"}');
  expect(text).toMatch(/^http_request_duration_seconds_bucket\{le="0\.1",method="POST",route="\/api\/scan\/payload",status="200"\} \d+/m);
  expect(text).toMatch(/^scans_total\{type="file",verdict="\w+"\} \d+/m);
  expect(text).toMatch(/^scans_total\{type="payload",verdict="\w+"\} \d+/m);
  expect(text).toMatch(/^scan_engine_duration_seconds_count\{engine="yara",status="ok"\} \d+/m);
  expect(text).toMatch(/^messages_total\{type="publish",transport="http",outcome="accepted"\} \d+/m);
  expect(text).toMatch(/^workflow_runs_total\{status="completed"\} \d+/m);
  expect(text).toMatch(/^workflow_run_queue_depth \d+/m);
  expect(text).toMatch(/^mqtt_connections \d+/m);
  expect(text).toMatch(/^db_operation_duration_seconds_count\{pool="records",command="insert",outcome="ok"\} \d+/m);
  expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds /m);
  expect(text).toMatch(/^nodejs_heap_size_used_bytes /m);
  expect(text).toMatch(/^temporal_workflow_completed_total\{.*workflow_type="flowRun".*\} \d+/m);
  expect(text).toMatch(/^temporal_activity_execution_latency_bucket\{/m);
  // Every series the Grafana dashboard reads is in the live exposition, the SDK's temporal_* ones included.
  const exposed = exposedSeries(text);
  const missing = dashboardQueries().flatMap(seriesOf).filter((series) => !exposed.has(series));
  expect(missing).toEqual([]);
  for (const secret of [account.apiKey, account.apiKeyId, account.accountId, entityKey, 'Metrics Labels Inc', 'boiler-room-sensor', 'quarterly-report', 'Confidential Flow Name', wf, runId]) {
    expect(text).not.toContain(secret);
  }

  // Part of the stack `npm run setup` installs: missing, the test fails saying so rather than passing without it.
  const binary = findOnPath('prometheus');
  if (!binary) throw new Error('prometheus is not on PATH: install the Debian package prometheus (npm run setup does)');
  const [port] = await pickPorts(1);
  promDir = mkdtempSync(path.join(os.tmpdir(), 'sentinel-prometheus-'));
  const configFile = path.join(promDir, 'prometheus.yml');
  writeFileSync(configFile, [
    'global:', '  scrape_interval: 1s', 'scrape_configs:', '  - job_name: sentinel', '    static_configs:',
    `      - targets: ['127.0.0.1:${stack().metricsPort}']`, '',
  ].join('\n'));
  prometheus = spawn(binary, [
    `--config.file=${configFile}`, `--storage.tsdb.path=${path.join(promDir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`,
  ], { stdio: 'ignore' });
  const base = `http://127.0.0.1:${port}`;
  const up = await query(base, 'up{job="sentinel"} == 1');
  expect(up[0].metric.instance).toBe(`127.0.0.1:${stack().metricsPort}`);
  const runs = await query(base, 'http_requests_total{route="/api/workflows/:id/run"}');
  expect(Number(runs[0].value[1])).toBeGreaterThanOrEqual(1);
  expect((await query(base, 'sum by (verdict) (scans_total{type="payload"})')).length).toBeGreaterThan(0);
  expect((await query(base, 'workflow_runs_total{status="completed"}')).length).toBe(1);
  expect((await query(base, 'temporal_workflow_completed_total')).length).toBeGreaterThan(0);
}, 240_000);
