/**
 * Starts the roles this process plays (ROLES, default api,worker,mqtt) on its database (the
 * embedded store in DATA_DIR/db/ unless MONGODB_URI is set) and, for any part whose address is not
 * configured, the local stack (Temporal dev server, clamd; the FerretDB stand-in only with
 * DATABASE_ENGINE=mongodb and no MONGODB_URI), holding DATA_DIR/run/service.lock meanwhile.
 * Prints one line containing `ready` once HTTP, MQTT, the database and Temporal all answer;
 * SIGINT/SIGTERM stop everything this process started.
 */
import type http from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Config, ConfigError, loadConfig, temporalUiOf, usesLocalBlobs } from './config';
import { createLogger, Logger } from './log';
import { loadSecrets } from './secrets';
import { openDatabase, Database } from './storage/engine';
import { pingStorage } from './storage/mongo';
import { createServices, Services } from './services';
import { EnginePool } from './scan/pool';
import { cveDatasetPath, yaraRuleDirs } from './scan/datasets';
import { dashboardMiddleware } from './dashboard/routes';
import type { EmbeddedBroker } from './mqtt/broker';
import { startMqttRole, MqttRole } from './mqtt/role';
import { canConnect } from './stack/net';
import { clamdCommand } from './stack/clamd';
import { healthCheck, HealthPart } from './health';
import { connectTemporalEngines, TemporalEngines } from './roles/engines';
import { claimDataDir } from './roles/stack';
import { startApiRole } from './roles/api';
import { startWorkerRole, WorkerRole } from './roles/worker';
import { enableMetrics, watchMqttConnections, watchRunGauges } from './telemetry/metrics';
import { startMetricsServer } from './telemetry/server';
import { startTracing } from './telemetry/sdk';

const VERSION = (JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;

export interface RunningService {
  config: Config;
  services: Services;
  httpServer?: http.Server;
  broker?: EmbeddedBroker;
  stop(): Promise<void>;
}

export async function startService(config: Config, logger: Logger): Promise<RunningService> {
  const stoppers: Array<() => Promise<void>> = [];
  let serving = false;
  const stopAll = async () => {
    for (const stop of stoppers.reverse()) {
      try {
        await stop();
      } catch (err) {
        logger.warn({ err }, 'error while stopping');
      }
    }
    stoppers.length = 0;
  };

  try {
    const needsTemporal = config.roles.includes('api') || config.roles.includes('worker');
    // The DATA_DIR's lock before anything binds a port: a second full start refuses, naming the running service.
    const claim = claimDataDir(config, logger);
    if (claim.release) stoppers.push(claim.release);
    // Telemetry first: spans and database timings of start-up count too; stopped last, so the
    // spans of the shutdown are still sent.
    if (config.traces) {
      const t = startTracing(config.traces, VERSION, logger);
      stoppers.push(() => t.shutdown());
    }
    if (config.metricsPort !== 0) {
      enableMetrics();
      const m = await startMetricsServer({ port: config.metricsPort, host: config.metricsHost, logger });
      stoppers.push(() => m.close());
    }
    // Checked before anything starts: an API without its dashboard bundle fails at once, saying why.
    const dashboard = config.roles.includes('api') ? dashboardMiddleware(undefined, { temporalUi: temporalUiOf(config) }) : undefined;
    // A child of the local stack that dies after start (clamd killed by the OOM killer, a FerretDB
    // or Temporal gone) is fatal for this process too: an outside probe's service went on without
    // ClamAV, delivering unscanned transfers, or answered nothing but 5xx, and never recovered.
    // Stopping everything lets the supervisor (or the person at `npm start`) start it whole again.
    const stack = await claim.startStack((part, code, signal) => {
      // During start-up the part's readiness check fails the start with its log's tail instead.
      // A supervisor that signals every process at once (systemd's control group) can stop a child
      // a moment before this process gets its own signal: that is a stop, not a death.
      if (!serving) return;
      setTimeout(() => {
        if (!stopRequested) stopFatally(logger, `${part} of the local stack exited unexpectedly (${signal ?? `code ${code}`})`);
      }, 1_000).unref();
    });
    if (stack) stoppers.push(() => stack.stop());

    const secrets = loadSecrets(config);
    const storage: Database = await openDatabase(config, logger.child({ component: 'storage' }));
    stoppers.push(() => storage.close());

    let temporal: TemporalEngines | undefined;
    if (needsTemporal) {
      const t = await connectTemporalEngines(config);
      temporal = t;
      stoppers.push(() => t.close());
    }
    // Processes that scan (api, worker) run the CPU-bound engines on threads; MQTT-only ones do not scan.
    let enginePool: EnginePool | undefined;
    if (config.scanThreads > 0 && (config.roles.includes('api') || config.roles.includes('worker'))) {
      const pool = new EnginePool({ threads: config.scanThreads, minBytes: config.scanThreadMinBytes, deps: { cveDatasetPath: cveDatasetPath(config), yaraRuleDirs: yaraRuleDirs(config) } });
      enginePool = pool;
      stoppers.push(() => pool.close());
      await pool.warm();
    }
    const services = createServices({ config, logger, storage, secrets, engines: temporal?.engines, enginePool });
    stoppers.push(() => services.expressions.close());
    stoppers.push(() => services.validation.close());
    watchRunGauges(() => services.admission.gauges());
    // Stoppers run last-in first: this one after HTTP and MQTT stop taking runs, before the
    // Temporal client closes, so no run answered 202 is left without its execution.
    stoppers.push(async () => { await services.admission.drain(); });
    if (config.roles.includes('api') || config.roles.includes('worker')) services.scans.prepareEngines();

    let worker: WorkerRole | undefined;
    if (config.roles.includes('worker') && temporal) {
      const w = await startWorkerRole(config, services, temporal, logger);
      worker = w;
      stoppers.push(() => w.stop());
    }

    // Embedded aedes broker when MQTT_URL is unset, else the bridge to the external broker.
    let mqttRole: MqttRole | undefined;
    if (config.roles.includes('mqtt')) {
      mqttRole = await startMqttRole(services, logger);
      const m = mqttRole;
      stoppers.push(() => m.stop());
    }
    const broker = mqttRole?.broker;
    if (broker) watchMqttConnections(() => broker.aedes.connectedClients);

    const health = healthCheck(() => healthParts(config, storage, usesLocalBlobs(config), temporal, worker, mqttRole));

    let httpServer: http.Server | undefined;
    if (config.roles.includes('api')) {
      const api = await startApiRole({ config, services, logger, version: VERSION, health, pages: dashboard });
      httpServer = api.server;
      stoppers.push(() => api.stop());
    }

    const report = await health();
    if (report.status !== 'ok') throw new Error(`start-up health check failed: ${JSON.stringify(report.parts)}`);
    if (worker) {
      // A worker that dies after start is fatal for this process: let the supervisor restart it.
      worker.done.catch((err: unknown) => {
        logger.fatal({ err }, 'Temporal worker stopped unexpectedly');
        stopFatally(logger, 'the Temporal worker stopped unexpectedly');
      });
    }
    const urls = [
      httpServer ? `http://localhost:${config.port}` : undefined,
      broker ? `mqtt://localhost:${config.mqttPort}` : undefined,
      mqttRole?.bridge ? `mqtt-bridge ${config.mqttUrl}` : undefined,
      stack?.temporalUiUrl ? `temporal-ui ${stack.temporalUiUrl}` : undefined,
    ].filter(Boolean);
    logger.info({ roles: config.roles }, 'service started');
    process.stdout.write(`ready (roles ${config.roles.join(',')}) ${urls.join(' ')}\n`);
    serving = true;

    return { config, services, httpServer, broker, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** Set when the process stops because a part of it died: it then exits with status 1, not 0. */
let fatal = false;
/** Set when a stop was asked for (a signal, or a part that died). */
let stopRequested = false;

/** Stops the whole process (as SIGTERM does) after a part of it died, exiting with status 1. */
function stopFatally(logger: Logger, why: string): void {
  if (fatal) return;
  fatal = true;
  logger.fatal(`${why}; stopping the service`);
  process.stderr.write(`${why}; stopping the service\n`);
  process.kill(process.pid, 'SIGTERM');
}

/** The parts this process depends on, by the roles it plays. */
function healthParts(
  config: Config, storage: Database, localBlobs: boolean, temporal: TemporalEngines | undefined, worker: WorkerRole | undefined, mqttRole: MqttRole | undefined,
): HealthPart[] {
  const parts: HealthPart[] = [{ name: storage.engine === 'mongodb' ? 'mongodb' : 'database', probe: () => storage.ping() }];
  // The local blobs FerretDB runs at a low priority and may be busy with an upload: that it
  // answers on its port is what health needs, not a round trip queued behind chunk inserts.
  if (localBlobs) {
    parts.push({ name: 'blobs', probe: async () => { if (!(await canConnect('127.0.0.1', config.mongoBlobPort))) throw new Error(`nothing answers on the blobs FerretDB's port ${config.mongoBlobPort}`); } });
  } else if (storage.engine === 'mongodb' && config.mongodbBlobUri !== undefined) {
    const blobDb = storage.mongo.blobDb;
    parts.push({ name: 'blobs', probe: () => pingStorage(blobDb) });
  }
  if (temporal) parts.push({ name: 'temporal', probe: () => temporal.ping() });
  // The clamd this process scans with (its own stack's, the DATA_DIR holder's, or CLAMD_HOST): an
  // outside probe's API process beside an unreachable clamd looked healthy while every scan went
  // without ClamAV. Optional: scans go on with the other engines, and say so.
  if ((config.roles.includes('api') || config.roles.includes('worker')) && config.clamdHost !== undefined) {
    const { clamdHost: host, clamdPort: port } = config;
    parts.push({
      name: 'clamd', optional: true,
      probe: async () => { const reply = await clamdCommand(host, port, 'PING'); if (reply !== 'PONG') throw new Error(`clamd at ${host}:${port} answered ${JSON.stringify(reply)}`); },
    });
  }
  if (worker) parts.push(worker.health);
  if (config.roles.includes('mqtt') && !config.mqttUrl) {
    parts.push({ name: 'mqtt', probe: async () => { if (!(await canConnect('127.0.0.1', config.mqttPort))) throw new Error(`nothing answers on MQTT port ${config.mqttPort}`); } });
  }
  const bridge = mqttRole?.bridge;
  if (bridge) parts.push({ name: 'mqtt', probe: async () => { if (!bridge.client.connected) throw new Error(`the bridge is not connected to ${config.mqttUrl}`); } });
  return parts;
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    process.stderr.write(`${err instanceof ConfigError ? err.message : String(err)}\n`);
    process.exit(2);
  }
  const logger = createLogger(config.logLevel);
  let stopping = false;
  const startup = startService(config, logger);
  const shutdown = (signal: string) => {
    stopRequested = true;
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    // A signal during start-up waits for it, so the parts already started are stopped too.
    startup.then((running) => running.stop(), () => undefined).then(
      () => process.exit(fatal ? 1 : 0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  // One process serves every account's requests, devices and workflows: a promise rejected
  // where nobody listens is a bug to log loudly, not a reason to drop all of them.
  process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled promise rejection'));
  try {
    await startup;
  } catch (err) {
    logger.fatal({ err }, 'start-up failed');
    process.stderr.write(`start-up failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}

if (require.main === module) void main();
