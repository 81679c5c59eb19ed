/**
 * The Grafana dashboard over the service's Prometheus series, typed against @grafana/schema's
 * dashboard model (the schema version it declares is that package's). docs/grafana/sentinel-service.json
 * is this object as JSON, the file operators import; regenerate it after a change with
 * `node --import tsx tools/grafana-dashboard.ts` (a unit test fails while the two differ).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Dashboard, Panel, RowPanel } from '@grafana/schema';

export const DASHBOARD_FILE = path.join(__dirname, '..', 'docs', 'grafana', 'sentinel-service.json');

/** Every panel queries the Prometheus data source picked in the dashboard's `datasource` variable. */
const datasource = { type: 'prometheus', uid: '${datasource}' };

let nextId = 1;
let y = 0;
let x = 0;

function row(title: string): RowPanel {
  if (x !== 0) y += 8;
  x = 0;
  const r: RowPanel = { type: 'row', id: nextId++, title, collapsed: false, panels: [], gridPos: { h: 1, w: 24, x: 0, y } };
  y += 1;
  return r;
}

/** A time series panel, two to a row. `queries`: [legend, PromQL]. */
function graph(title: string, description: string, unit: string, queries: Array<[string, string]>): Panel {
  const p: Panel = {
    type: 'timeseries', id: nextId++, title, description, datasource,
    gridPos: { h: 8, w: 12, x, y },
    fieldConfig: { defaults: { unit }, overrides: [] },
    targets: queries.map(([legendFormat, expr], i) => ({ refId: String.fromCharCode(65 + i), datasource, expr, legendFormat })),
  };
  if (x === 0) x = 12;
  else {
    x = 0;
    y += 8;
  }
  return p;
}

export const dashboard: Dashboard = {
  title: 'Sentinel service',
  uid: 'sentinel-service',
  description: 'HTTP, scans, device messages, workflow runs, Temporal workers and the Node.js processes of the sentinel service (docs/operations.md, "Metrics and traces").',
  tags: ['sentinel'],
  editable: true,
  schemaVersion: 42,
  time: { from: 'now-6h', to: 'now' },
  refresh: '30s',
  templating: {
    list: [{ type: 'datasource', name: 'datasource', label: 'Prometheus', query: 'prometheus' }],
  },
  panels: [
    row('HTTP API'),
    graph('Requests per second by route', 'http_requests_total by route template and status', 'reqps', [
      ['{{route}} {{status}}', 'sum by (route, status) (rate(http_requests_total[5m]))'],
    ]),
    graph('Error ratio (5xx)', 'Share of answers with a 5xx status; alert above 1% for 10 minutes', 'percentunit', [
      ['5xx', 'sum(rate(http_requests_total{status=~"5.."}[5m])) / sum(rate(http_requests_total[5m]))'],
    ]),
    graph('p99 latency by route', 'histogram_quantile over http_request_duration_seconds', 's', [
      ['{{route}}', 'histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket[5m])))'],
    ]),
    graph('Rate-limited and refused requests', '429 and 4xx answers by route', 'reqps', [
      ['{{route}} {{status}}', 'sum by (route, status) (rate(http_requests_total{status=~"4.."}[5m]))'],
    ]),
    row('Scans'),
    graph('Scans by verdict', 'scans_total by scan type and threat level', 'ops', [
      ['{{type}} {{verdict}}', 'sum by (type, verdict) (rate(scans_total[5m]))'],
    ]),
    graph('Engine p95 time', 'scan_engine_duration_seconds by engine', 's', [
      ['{{engine}}', 'histogram_quantile(0.95, sum by (le, engine) (rate(scan_engine_duration_seconds_bucket[5m])))'],
    ]),
    graph('Engine timeouts and errors', 'Engine runs that did not end ok, by engine and outcome', 'ops', [
      ['{{engine}} {{status}}', 'sum by (engine, status) (rate(scan_engine_duration_seconds_count{status!="ok"}[5m]))'],
    ]),
    row('Device messages'),
    graph('Messages by type and transport', 'messages_total judged by the message pipeline', 'ops', [
      ['{{type}} {{transport}} {{outcome}}', 'sum by (type, transport, outcome) (rate(messages_total[5m]))'],
    ]),
    graph('MQTT connections', 'Clients connected to the embedded broker', 'short', [
      ['connections', 'sum(mqtt_connections)'],
    ]),
    row('Workflow runs'),
    graph('Runs ended by status', 'workflow_runs_total', 'ops', [
      ['{{status}}', 'sum by (status) (rate(workflow_runs_total[5m]))'],
      ['timed out', 'sum(rate(workflow_run_timeouts_total[5m]))'],
    ]),
    graph('Queue and slots', 'Queue caps: 500 per account, 10,000 in all', 'short', [
      ['queued (all)', 'max(workflow_run_queue_depth)'],
      ['longest account queue', 'max(workflow_run_queue_depth_max_account)'],
      ['slots in use', 'max(workflow_run_slots_in_use)'],
    ]),
    row('Temporal workers'),
    graph('Task slots', 'temporal_worker_task_slots_available and _used by worker type', 'short', [
      ['available {{worker_type}}', 'sum by (worker_type) (temporal_worker_task_slots_available)'],
      ['used {{worker_type}}', 'sum by (worker_type) (temporal_worker_task_slots_used)'],
    ]),
    graph('Schedule-to-start p95', 'How long tasks wait for a worker: rising means too few workers', 's', [
      ['workflow tasks', 'histogram_quantile(0.95, sum by (le) (rate(temporal_workflow_task_schedule_to_start_latency_bucket[5m])))'],
      ['activities', 'histogram_quantile(0.95, sum by (le) (rate(temporal_activity_schedule_to_start_latency_bucket[5m])))'],
    ]),
    graph('Activity execution p95 by type', 'temporal_activity_execution_latency', 's', [
      ['{{activity_type}}', 'histogram_quantile(0.95, sum by (le, activity_type) (rate(temporal_activity_execution_latency_bucket[5m])))'],
    ]),
    graph('Workflows completed', 'temporal_workflow_completed_total by workflow type', 'ops', [
      ['{{workflow_type}}', 'sum by (workflow_type) (rate(temporal_workflow_completed_total[5m]))'],
    ]),
    row('Processes and database'),
    graph('Event-loop lag p99', 'nodejs_eventloop_lag_p99_seconds per process', 's', [
      ['{{instance}}', 'max by (instance) (nodejs_eventloop_lag_p99_seconds)'],
    ]),
    graph('Heap used', 'nodejs_heap_size_used_bytes per process', 'bytes', [
      ['{{instance}}', 'sum by (instance) (nodejs_heap_size_used_bytes)'],
    ]),
    graph('GC time', 'Share of time in garbage collection, by kind', 'percentunit', [
      ['{{kind}}', 'sum by (kind) (rate(nodejs_gc_duration_seconds_sum[5m]))'],
    ]),
    graph('Database p99 by command', 'db_operation_duration_seconds by pool and command', 's', [
      ['{{pool}} {{command}}', 'histogram_quantile(0.99, sum by (le, pool, command) (rate(db_operation_duration_seconds_bucket[5m])))'],
    ]),
  ],
};

/** Every PromQL expression of the dashboard, for the tests. */
export function dashboardQueries(d: Dashboard = dashboard): string[] {
  const out: string[] = [];
  for (const p of d.panels ?? []) {
    for (const t of ('targets' in p ? p.targets ?? [] : [])) if (typeof t.expr === 'string') out.push(t.expr);
  }
  return out;
}

export const dashboardJson = (): string => `${JSON.stringify(dashboard, null, 2)}\n`;

if (require.main === module) {
  writeFileSync(DASHBOARD_FILE, dashboardJson());
  process.stdout.write(`wrote ${DASHBOARD_FILE}\n`);
}
