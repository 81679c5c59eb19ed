/**
 * Starts the roles this process plays (ROLES, default api,worker,mqtt) and, for any part whose
 * address is not configured, the local stack (FerretDB, Temporal dev server, clamd). Prints one
 * line containing `ready` once HTTP, MQTT, MongoDB and Temporal all answer; SIGINT/SIGTERM stop
 * everything this process started.
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { Config, ConfigError, loadConfig, temporalUiOf, usesLocalBlobs, usesLocalMongo, usesLocalTemporal } from './config';
import { createLogger, Logger } from './log';
import { loadSecrets } from './secrets';
import { connectStorage, ensureIndexes, pingStorage, Storage } from './storage/mongo';
import { createServices, Services } from './services';
import { EnginePool } from './scan/pool';
import { cveDatasetPath, yaraRuleDirs } from './scan/datasets';
import { createApp, HealthReport } from './http/app';
import { RouteRegistry } from './http/route';
import { makeRateLimiter } from './http/limits';
import { registerAllRoutes } from './http/routes';
import { dashboardMiddleware } from './dashboard/routes';
import type { EmbeddedBroker } from './mqtt/broker';
import { startMqttRole, MqttRole } from './mqtt/role';
import { startLocalStack, LocalStack } from './stack';
import { canConnect } from './stack/net';
import { connectClient, connectWorker, pingTemporal } from '../temporal/connection';
import { installTemporalRuntime, startWorker, RunningWorker } from '../temporal/worker';
import { ensureFileExpirySchedule } from '../temporal/schedules';
import { enableMetrics, watchMqttConnections, watchRunGauges } from './telemetry/metrics';
import { startMetricsServer } from './telemetry/server';
import { startTracing } from './telemetry/sdk';

const VERSION = (JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
/** How long /healthz waits for one part (MongoDB, Temporal, ...) before reporting it down. */
const HEALTH_PART_TIMEOUT_MS = 5_000;

export interface RunningService {
  config: Config;
  services: Services;
  httpServer?: http.Server;
  broker?: EmbeddedBroker;
  stop(): Promise<void>;
}

export async function startService(config: Config, logger: Logger): Promise<RunningService> {
  const stoppers: Array<() => Promise<void>> = [];
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
    // Telemetry first: spans and database timings of start-up count too; stopped last, so the
    // spans of the shutdown are still sent.
    if (config.traces) {
      const t = startTracing(config.traces, VERSION);
      stoppers.push(() => t.shutdown());
    }
    if (config.metricsPort !== 0) {
      enableMetrics();
      const m = await startMetricsServer({ port: config.metricsPort, host: config.metricsHost, logger });
      stoppers.push(() => m.close());
    }
    // Checked before anything starts: an API without its dashboard bundle fails at once, saying why.
    const dashboard = config.roles.includes('api') ? dashboardMiddleware(undefined, { temporalUi: temporalUiOf(config) }) : undefined;
    const needsTemporal = config.roles.includes('api') || config.roles.includes('worker');
    const startMongo = usesLocalMongo(config);
    const startBlobs = usesLocalBlobs(config);
    const startTemporal = needsTemporal && usesLocalTemporal(config);
    const startClamd = config.clamdHost === undefined && (config.roles.includes('api') || config.roles.includes('worker'));
    let stack: LocalStack | undefined;
    if (startMongo || startBlobs || startTemporal || startClamd) {
      stack = await startLocalStack({
        rootDir: config.rootDir,
        dataDir: config.dataDir,
        mongo: startMongo ? { port: config.mongoPort } : false,
        blobs: startBlobs ? { port: config.mongoBlobPort } : false,
        temporal: startTemporal ? { port: config.temporalPort, uiPort: config.temporalUiPort, namespace: config.temporalNamespace } : false,
        clamd: startClamd ? { port: config.clamdPort, signatureDirs: [path.join(config.rootDir, 'signatures', 'clamav')] } : false,
        logger: logger.child({ component: 'local-stack' }),
      });
      const s = stack;
      stoppers.push(() => s.stop());
      if (startClamd && s.clamdAddress) {
        config.clamdHost = s.clamdAddress.host;
        config.clamdPort = s.clamdAddress.port;
      }
    }

    const secrets = loadSecrets(config);
    const storage: Storage = await connectStorage(config);
    stoppers.push(() => storage.close());
    await ensureIndexes(storage.db);

    let temporal: Client | undefined;
    if (needsTemporal) {
      temporal = await connectClient(config);
      const t = temporal;
      stoppers.push(() => t.connection.close());
    }
    // Processes that scan (api, worker) run the CPU-bound engines on threads; MQTT-only ones do not scan.
    let enginePool: EnginePool | undefined;
    if (config.scanThreads > 0 && (config.roles.includes('api') || config.roles.includes('worker'))) {
      const pool = new EnginePool({ threads: config.scanThreads, minBytes: config.scanThreadMinBytes, deps: { cveDatasetPath: cveDatasetPath(config), yaraRuleDirs: yaraRuleDirs(config) } });
      enginePool = pool;
      stoppers.push(() => pool.close());
      await pool.warm();
    }
    const services = createServices({ config, logger, storage, secrets, temporal, enginePool });
    stoppers.push(() => services.expressions.close());
    watchRunGauges(() => services.admission.gauges());
    // Stoppers run last-in first: this one after HTTP and MQTT stop taking runs, before the
    // Temporal client closes, so no run answered 202 is left without its execution.
    stoppers.push(async () => { await services.admission.drain(); });
    if (config.roles.includes('api') || config.roles.includes('worker')) services.scans.prepareEngines();

    let worker: RunningWorker | undefined;
    if (config.roles.includes('worker')) {
      await installTemporalRuntime(logger);
      const connection = await connectWorker(config);
      worker = await startWorker(config, connection, services, logger.child({ component: 'worker' }));
      if (temporal) await ensureFileExpirySchedule(temporal, config.temporalTaskQueue);
      const w = worker;
      stoppers.push(async () => {
        await w.shutdown();
        await connection.close();
      });
      // Runs whose execution ended without writing its end (the 10-minute timeout) are settled here.
      const sweep = setInterval(() => {
        services.runs.sweep().catch((err: unknown) => logger.warn({ err }, 'workflow run sweep failed'));
      }, 30_000);
      sweep.unref();
      stoppers.push(async () => clearInterval(sweep));
      // The run queue outlives every process: this pass (at start, then every few seconds) expires
      // runs queued for an hour, frees slots of runs whose process died and starts queued runs.
      const promote = () => services.admission.pass().catch((err: unknown) => logger.warn({ err }, 'workflow run admission pass failed'));
      void promote();
      const promoter = setInterval(promote, 5_000);
      promoter.unref();
      stoppers.push(async () => clearInterval(promoter));
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

    const health = async (): Promise<HealthReport> => {
      const parts: HealthReport['parts'] = {};
      const check = async (name: string, fn: () => Promise<void>) => {
        let timer: NodeJS.Timeout | undefined;
        try {
          // A part that does not answer (a Temporal server that is gone retries its connection
          // for about 20 s) is reported down in time for a load balancer's probe.
          await Promise.race([fn(), new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${HEALTH_PART_TIMEOUT_MS / 1000} s`)), HEALTH_PART_TIMEOUT_MS);
          })]);
          parts[name] = { ok: true };
        } catch (err) {
          parts[name] = { ok: false, detail: err instanceof Error ? err.message : String(err) };
        } finally {
          clearTimeout(timer);
        }
      };
      await Promise.all([
        check('mongodb', () => pingStorage(storage.readDb)),
        // The local blobs FerretDB runs at a low priority and may be busy with an upload: that it
        // answers on its port is what health needs, not a round trip queued behind chunk inserts.
        startBlobs
          ? check('blobs', async () => { if (!(await canConnect('127.0.0.1', config.mongoBlobPort))) throw new Error(`nothing answers on the blobs FerretDB's port ${config.mongoBlobPort}`); })
          : config.mongodbBlobUri !== undefined ? check('blobs', () => pingStorage(storage.blobDb)) : Promise.resolve(),
        temporal ? check('temporal', () => pingTemporal(temporal as Client, config.temporalNamespace)) : Promise.resolve(),
        worker ? check('worker', async () => { if (worker?.worker.getState() !== 'RUNNING') throw new Error(`worker is ${worker?.worker.getState()}`); }) : Promise.resolve(),
        config.roles.includes('mqtt') && !config.mqttUrl
          ? check('mqtt', async () => { if (!(await canConnect('127.0.0.1', config.mqttPort))) throw new Error(`nothing answers on MQTT port ${config.mqttPort}`); })
          : Promise.resolve(),
        mqttRole?.bridge
          ? check('mqtt', async () => { if (!mqttRole?.bridge?.client.connected) throw new Error(`the bridge is not connected to ${config.mqttUrl}`); })
          : Promise.resolve(),
      ]);
      const ok = Object.values(parts).every((p) => p.ok);
      return { status: ok ? 'ok' : 'degraded', parts };
    };

    let httpServer: http.Server | undefined;
    if (config.roles.includes('api')) {
      const registry = new RouteRegistry({
        authenticate: (token) => services.accounts.authenticate(token),
        rateLimit: makeRateLimiter(services.limits),
      });
      registerAllRoutes(registry, services);
      const app = createApp({ logger, registry, health, version: VERSION, pages: dashboard });
      httpServer = http.createServer(app.callback());
      httpServer.keepAliveTimeout = 65_000;
      const server = httpServer;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => resolve());
      });
      stoppers.push(() => new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }));
    }

    const report = await health();
    if (report.status !== 'ok') throw new Error(`start-up health check failed: ${JSON.stringify(report.parts)}`);
    if (worker) {
      // A worker that dies after start is fatal for this process: let the supervisor restart it.
      worker.done.catch((err: unknown) => {
        logger.fatal({ err }, 'Temporal worker stopped unexpectedly');
        process.kill(process.pid, 'SIGTERM');
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

    return { config, services, httpServer, broker, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
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
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    // A signal during start-up waits for it, so the parts already started are stopped too.
    startup.then((running) => running.stop(), () => undefined).then(
      () => process.exit(0),
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
