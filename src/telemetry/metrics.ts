/**
 * The service's Prometheus series (prom-client), one registry per process. Recording is off until
 * `enableMetrics` (main.ts, when METRICS_PORT is not 0): a process without the endpoint (the CLI,
 * METRICS_PORT=0) pays nothing but a flag check. Every label value goes through labels.ts.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { MESSAGE_TYPES } from '../messaging/schemas';
import { DB_COMMANDS, dbCommandLabel, methodLabel, oneOf, statusLabel } from './labels';

export const registry = new Registry();
let enabled = false;

export const metricsEnabled = (): boolean => enabled;

/** Turns recording on and adds the process series (event-loop lag, heap, GC, CPU, handles). Once per process. */
export function enableMetrics(): void {
  if (enabled) return;
  enabled = true;
  collectDefaultMetrics({ register: registry });
}

/** Seconds buckets from 1 ms to 30 s: API answers, engine runs and database round trips share them. */
const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

const httpRequests = new Counter({
  name: 'http_requests_total', help: 'HTTP requests answered, by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const, registers: [registry],
});
const httpDuration = new Histogram({
  name: 'http_request_duration_seconds', help: 'Time from a request arriving to its answer, by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const, buckets: SECONDS, registers: [registry],
});

/** One answered request; `route` is already a label (labels.routeLabel). */
export function observeHttp(method: string, route: string, status: number, seconds: number): void {
  if (!enabled) return;
  const labels = { method: methodLabel(method), route, status: statusLabel(status) };
  httpRequests.inc(labels);
  httpDuration.observe(labels, seconds);
}

export const scans = new Counter({
  name: 'scans_total', help: 'Completed scans by scan type (file, payload) and verdict (threat level)',
  labelNames: ['type', 'verdict'] as const, registers: [registry],
});
export const scanEngineDuration = new Histogram({
  name: 'scan_engine_duration_seconds', help: 'Time each engine took within a scan, by engine and outcome (ok, timeout, error, unavailable, skipped)',
  labelNames: ['engine', 'status'] as const, buckets: SECONDS, registers: [registry],
});

const TRANSPORTS = ['http', 'mqtt'] as const;
const messages = new Counter({
  name: 'messages_total', help: 'Device messages judged by the message pipeline, by message type, transport and outcome (accepted, refused, failed)',
  labelNames: ['type', 'transport', 'outcome'] as const, registers: [registry],
});

/** The message type of a raw message as a label: a known msg_type or `other`. */
export const messageTypeLabel = (raw: unknown): string =>
  oneOf(raw !== null && typeof raw === 'object' ? (raw as { msg_type?: unknown }).msg_type : undefined, MESSAGE_TYPES);

/** `status`: the HTTP status the message was answered with (200 accepted, 4xx refused, 5xx failed). */
export function observeMessage(transport: (typeof TRANSPORTS)[number], raw: unknown, status: number): void {
  if (!enabled) return;
  const outcome = status < 400 ? 'accepted' : status < 500 ? 'refused' : 'failed';
  messages.inc({ type: messageTypeLabel(raw), transport, outcome });
}

/** Runs one message through `judge` (the pipeline) and counts it by its answer. */
export async function countMessage<T>(transport: (typeof TRANSPORTS)[number], raw: unknown, judge: () => Promise<T>): Promise<T> {
  try {
    const result = await judge();
    observeMessage(transport, raw, 200);
    return result;
  } catch (err) {
    const status = (err as { status?: unknown } | null)?.status;
    observeMessage(transport, raw, typeof status === 'number' ? status : 500);
    throw err;
  }
}

const spansLost = new Counter({
  name: 'trace_spans_lost_total', help: 'Spans the trace exporter could not send (the collector down or refusing them) and dropped',
  registers: [registry],
});
export function observeSpansLost(count: number): void {
  if (enabled) spansLost.inc(count);
}

/** Read at scrape time from whatever the process runs (the embedded broker's client count). */
let mqttConnectionCount: (() => number) | undefined;
new Gauge({
  name: 'mqtt_connections', help: 'MQTT clients connected to the embedded broker of this process',
  registers: [registry],
  collect() { if (mqttConnectionCount) this.set(mqttConnectionCount()); },
});
const mqttTakeovers = new Counter({
  name: 'mqtt_session_takeovers_total', help: 'MQTT connections that took the session of a live connection with the same key (two devices sharing one key, or a reconnect racing its old socket)',
  registers: [registry],
});
export function observeMqttTakeover(): void {
  if (enabled) mqttTakeovers.inc();
}
export function watchMqttConnections(count: () => number): void {
  mqttConnectionCount = count;
}

const RUN_STATUSES = ['completed', 'failed', 'cancelled', 'expired'] as const;
const runsEnded = new Counter({
  name: 'workflow_runs_total', help: 'Workflow runs that reached a final status, by status',
  labelNames: ['status'] as const, registers: [registry],
});
const runTimeouts = new Counter({
  name: 'workflow_run_timeouts_total', help: 'Workflow runs failed with "Workflow execution timed out" (the 10-minute execution timeout)',
  registers: [registry],
});

/** One run's final status was written (`count` runs at once for a bulk expiry). */
export function observeRunEnded(status: string, timedOut: boolean, count = 1): void {
  if (!enabled || count === 0) return;
  runsEnded.inc({ status: oneOf(status, RUN_STATUSES) }, count);
  if (timedOut) runTimeouts.inc(count);
}

/** What the run gauges read at scrape time (RunAdmission.gauges). */
export interface RunGauges { queued: number; deepestAccountQueue: number; slotsHeld: number }
let runGauges: (() => Promise<RunGauges>) | undefined;
let lastRunGauges: Promise<RunGauges> | undefined;
/** One read per scrape serves the three gauges. */
const readRunGauges = (): Promise<RunGauges> | undefined => {
  if (!runGauges) return undefined;
  lastRunGauges ??= runGauges().finally(() => { setImmediate(() => { lastRunGauges = undefined; }); });
  return lastRunGauges;
};
const runGauge = (name: string, help: string, pick: (g: RunGauges) => number) => new Gauge({
  name, help, registers: [registry],
  async collect() {
    const g = await readRunGauges()?.catch(() => undefined);
    if (g) this.set(pick(g));
  },
});
runGauge('workflow_run_queue_depth', 'Workflow runs waiting in the queue, all accounts (the service-wide cap is 10,000)', (g) => g.queued);
runGauge('workflow_run_queue_depth_max_account', 'Queued runs of the account with the longest queue (the per-account cap is 500)', (g) => g.deepestAccountQueue);
runGauge('workflow_run_slots_in_use', 'Concurrency slots held by running workflow runs, all accounts', (g) => g.slotsHeld);
export function watchRunGauges(read: () => Promise<RunGauges>): void {
  runGauges = read;
}

const dbDuration = new Histogram({
  name: 'db_operation_duration_seconds', help: 'Database operations (MongoDB command round trips; statements of the embedded store), by pool (records, reads, blobs), command and outcome',
  labelNames: ['pool', 'command', 'outcome'] as const, buckets: SECONDS, registers: [registry],
});
const DB_POOLS = ['records', 'reads', 'blobs'] as const;


/** One statement of the embedded store (storage/sqlite.ts), timed where it runs; `command` in MongoDB's words. */
export function observeDbOperation(command: (typeof DB_COMMANDS)[number], outcome: 'ok' | 'error', seconds: number): void {
  if (enabled) dbDuration.observe({ pool: 'records', command, outcome }, seconds);
}

/** What of a MongoClient the timing needs (only src/storage/ and stores import the driver). */
export interface CommandEvents {
  on(event: 'commandSucceeded' | 'commandFailed', listener: (e: { commandName: string; duration: number }) => void): unknown;
}

/**
 * Times every command of a client (the driver's command monitoring, which the client must have
 * been created with: `monitorCommands: metricsEnabled()`).
 */
export function watchDbCommands(client: CommandEvents, pool: (typeof DB_POOLS)[number]): void {
  if (!enabled) return;
  client.on('commandSucceeded', (e) => dbDuration.observe({ pool, command: dbCommandLabel(e.commandName), outcome: 'ok' }, e.duration / 1000));
  client.on('commandFailed', (e) => dbDuration.observe({ pool, command: dbCommandLabel(e.commandName), outcome: 'error' }, e.duration / 1000));
}
