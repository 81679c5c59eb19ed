/**
 * Every environment variable the service reads, validated in one place.
 * A bad value stops start-up with a message naming the variable and what it accepts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllowEntry } from './net/safe-target';
import { tracesExporterFromEnv, type TracesExporter } from './telemetry/otel-env';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS } from '../workflows/heartbeat';

/**
 * Expression threads of a worker process unless EXPRESSION_THREADS says otherwise: with one account
 * holding fewer than half (src/flows/fair-slots.ts), three accounts' runaway expressions still
 * leave one free.
 */
// The AWS SDK (the S3 connector) prints a nine-line notice to stderr, outside the JSON logs, on a
// worker's first S3 call under Node < 22: its versions published from January 2027 will need Node
// 22. The versions pinned here run on Node 20.19 (README); an operator who sets the variable keeps it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export const DEFAULT_EXPRESSION_THREADS = 4;

export type Role = 'api' | 'worker' | 'mqtt';
const ALL_ROLES: readonly Role[] = ['api', 'worker', 'mqtt'];

export interface Config {
  /** Roles this process plays. Default: all three (the local single-process mode). */
  roles: Role[];
  /** HTTP port serving both the scanning and the messaging base addresses. Default 8080. */
  port: number;
  /** Address the HTTP server binds. Default 0.0.0.0. */
  host: string;
  /** Embedded MQTT broker port. Default 1883. */
  mqttPort: number;
  /** External MQTT broker URL; unset = embedded aedes broker. */
  mqttUrl?: string;
  /** The bridge's own credentials at the external broker (MQTT_BRIDGE_USERNAME / MQTT_BRIDGE_PASSWORD). */
  mqttBridgeUsername?: string;
  mqttBridgePassword?: string;
  /** Shared-subscription group of the bridge replicas. Default `sentinel`. */
  mqttShareGroup: string;
  /** External broker: how long a device counts as subscribed without news of it. Default 300 s. */
  mqttPresenceTtlSeconds: number;
  /** Shared secret an external broker presents to /api/mqtt/auth|acl|superuser; unset = those endpoints are off. */
  mqttAuthSecret?: string;
  /** MQTT URL devices are told to use in GET /api/entities/me. Default mqtt://localhost:<mqttPort> or mqttUrl. */
  publicMqttUrl: string;
  /**
   * Which engine keeps the records (docs/contract.md §11): `embedded` (SQLite in the process, files
   * in DATA_DIR/db/), the default when MONGODB_URI is unset, or `mongodb` (MONGODB_URI). DATABASE_ENGINE=mongodb
   * without MONGODB_URI starts the legacy local FerretDB, kept as the tests' MongoDB-wire stand-in.
   */
  databaseEngine: 'embedded' | 'mongodb';
  /** Test hook (SENTINEL_TEST_IMPORT_HALT_AFTER): the FerretDB import stops the process after this many records, as a kill would. */
  importHaltAfter?: number;
  /** External MongoDB URI (scale-out). Unset: the embedded store, or with DATABASE_ENGINE=mongodb the local FerretDB stand-in on mongoPort. */
  mongodbUri?: string;
  mongoPort: number;
  /** Database name. Default `sentinel`. */
  mongodbDb: string;
  /** The database that holds the GridFS buckets (uploads, file parts, workflow outputs). */
  mongodbBlobDb: string;
  /**
   * Server of MONGODB_BLOB_DB. Unset: MONGODB_URI's server, or on the FerretDB stand-in (no
   * MONGODB_URI) its second server on mongoBlobPort, run at a lower CPU priority.
   */
  mongodbBlobUri?: string;
  mongoBlobPort: number;
  /** External Temporal frontend address; unset = local `temporal server start-dev` on temporalPort. */
  temporalAddress?: string;
  temporalPort: number;
  temporalUiPort: number;
  /** Public address of the Temporal Web UI the dashboard links runs to; unset: the local UI, if any. */
  temporalUiUrl?: string;
  temporalNamespace: string;
  temporalTaskQueue: string;
  /**
   * How long a deferred scan's or a file transfer's activity may go without a heartbeat (they beat
   * every 5 s) before Temporal retries it on another worker: how soon a killed worker's work moves.
   */
  activityHeartbeatTimeoutMs: number;
  temporalTls?: { certPath?: string; keyPath?: string; caPath?: string; serverName?: string };
  temporalApiKey?: string;
  /** clamd address; unset = the local clamd started by the service (when ClamAV is installed). */
  clamdHost?: string;
  clamdPort: number;
  /** Worker threads for the CPU-bound scan engines (src/scan/pool.ts); 0 = main thread. Default: cores - 1, 1 to 4. */
  scanThreads: number;
  /** Content below this many bytes is analysed on the main thread. Default 65536. */
  scanThreadMinBytes: number;
  /** Threads for workflow expressions and templates (src/flows/expression-pool.ts), in worker processes. Default 4, at least 1. */
  expressionThreads: number;
  /** Directory of operator YARA rules loaded next to the bundled ones. */
  yaraRulesDir?: string;
  /** Data directory of the local stack (absolute). Default ./data. */
  dataDir: string;
  /** Region segment of MQTT topics and account records. Default `local`. */
  region: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** HMAC secret for entity JWTs. Unset = generated once into DATA_DIR/secrets.json (local mode only). */
  entityKeySecret?: string;
  /** 32-byte key (hex or base64) for AES-256-GCM of webhook credentials. Same local default. */
  dataEncryptionKey?: string;
  /**
   * Targets a webhook, connector or http node may reach although they resolve to internal
   * addresses: `host:port`, `host:*` (every port), or a bare `host` (ports 80 and 443 only).
   */
  webhookAllowHosts: string[];
  /**
   * Overrides of the aws.s3 client's timeouts (docs/contract.md §7: connect 10 s, read 30 s), for test stacks
   * that must see a dead endpoint fail quickly. Unset in production.
   */
  s3ConnectTimeoutMs?: number;
  s3ReadTimeoutMs?: number;
  /** Port of the Prometheus endpoint (GET /metrics); 0 = no endpoint and no recording. Default 9464. */
  metricsPort: number;
  /** Address the metrics endpoint binds. Default 127.0.0.1. */
  metricsHost: string;
  /** Trace exporter asked for by the standard OTEL_* variables; unset = tracing off. */
  traces?: TracesExporter;
  /** Repository root (where .tools/, signatures/ and rules/ live). */
  rootDir: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const str = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  /** Decimal digits only: Number() also reads `0x50` and `1e3`, which an outside probe got started on. */
  const int = (v: string): number => (/^-?\d+$/.test(v) ? Number(v) : Number.NaN);
  const port = (name: string, dflt: number): number => {
    const v = str(name);
    if (v === undefined) return dflt;
    const n = int(v);
    if (!Number.isInteger(n) || n < 1 || n > 65535) {
      problems.push(`${name}="${v}" must be a TCP port (an integer 1-65535)`);
      return dflt;
    }
    return n;
  };
  const url = (name: string, protocols: string[]): string | undefined => {
    const v = str(name);
    if (v === undefined) return undefined;
    try {
      const u = new URL(v);
      if (!protocols.includes(u.protocol)) {
        problems.push(`${name}="${v}" must use one of ${protocols.join(', ')}`);
      }
    } catch {
      problems.push(`${name}="${v}" is not a URL`);
    }
    return v;
  };

  const positiveInt = (name: string, dflt: number): number => {
    const v = str(name);
    if (v === undefined) return dflt;
    const n = int(v);
    if (!Number.isInteger(n) || n < 1) {
      problems.push(`${name}="${v}" must be a positive integer`);
      return dflt;
    }
    return n;
  };

  const nonNegativeInt = (name: string, dflt: number): number => {
    const v = str(name);
    if (v === undefined) return dflt;
    const n = int(v);
    if (!Number.isInteger(n) || n < 0) {
      problems.push(`${name}="${v}" must be a non-negative integer`);
      return dflt;
    }
    return n;
  };

  const rolesRaw = str('ROLES');
  let roles: Role[] = [...ALL_ROLES];
  if (rolesRaw !== undefined) {
    const parts = rolesRaw.split(',').map((r) => r.trim()).filter(Boolean);
    const bad = parts.filter((r) => !ALL_ROLES.includes(r as Role));
    if (bad.length || parts.length === 0) {
      problems.push(`ROLES="${rolesRaw}" must be a comma-separated subset of ${ALL_ROLES.join(',')}`);
    } else {
      roles = [...new Set(parts as Role[])];
    }
  }

  const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
  const logLevelRaw = str('LOG_LEVEL') ?? 'info';
  let logLevel: Config['logLevel'] = 'info';
  if ((logLevels as readonly string[]).includes(logLevelRaw)) logLevel = logLevelRaw as Config['logLevel'];
  else problems.push(`LOG_LEVEL="${logLevelRaw}" must be one of ${logLevels.join(', ')}`);

  const rootDir = path.resolve(__dirname, '..');
  const dataDir = path.resolve(str('DATA_DIR') ?? path.join(rootDir, 'data'));

  const mongodbUri = url('MONGODB_URI', ['mongodb:', 'mongodb+srv:']);
  const engineRaw = str('DATABASE_ENGINE') ?? (mongodbUri === undefined ? 'embedded' : 'mongodb');
  let databaseEngine: Config['databaseEngine'] = 'mongodb';
  if (engineRaw === 'embedded' || engineRaw === 'mongodb') databaseEngine = engineRaw;
  else problems.push(`DATABASE_ENGINE="${engineRaw}" must be embedded or mongodb`);
  if (databaseEngine === 'embedded' && mongodbUri !== undefined) problems.push('DATABASE_ENGINE=embedded and MONGODB_URI contradict each other: set one');
  const mongodbBlobUri = url('MONGODB_BLOB_URI', ['mongodb:', 'mongodb+srv:']);
  const mqttUrl = url('MQTT_URL', ['mqtt:', 'mqtts:', 'tcp:', 'ssl:', 'ws:', 'wss:']);
  const mqttPort = port('MQTT_PORT', 1883);
  const publicMqttUrl = url('PUBLIC_MQTT_URL', ['mqtt:', 'mqtts:', 'ws:', 'wss:']) ?? mqttUrl ?? `mqtt://localhost:${mqttPort}`;

  const dataEncryptionKey = str('DATA_ENCRYPTION_KEY');
  if (dataEncryptionKey !== undefined && decodeKey(dataEncryptionKey) === undefined) {
    problems.push('DATA_ENCRYPTION_KEY must be 32 bytes, written as 64 hex characters or base64');
  }
  const entityKeySecret = str('ENTITY_KEY_SECRET');
  if (entityKeySecret !== undefined && entityKeySecret.length < 32) {
    problems.push('ENTITY_KEY_SECRET must be at least 32 characters');
  }

  const certPath = str('TEMPORAL_TLS_CERT');
  const keyPath = str('TEMPORAL_TLS_KEY');
  const caPath = str('TEMPORAL_TLS_CA');
  const serverName = str('TEMPORAL_TLS_SERVER_NAME');
  if ((certPath === undefined) !== (keyPath === undefined)) {
    problems.push('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together');
  }
  let traces: TracesExporter | undefined;
  try {
    traces = tracesExporterFromEnv(env);
  } catch (err) {
    problems.push((err as Error).message);
  }
  const metricsPortRaw = str('METRICS_PORT');
  const metricsPort = metricsPortRaw === '0' ? 0 : port('METRICS_PORT', 9464);

  const tlsWanted = certPath || caPath || serverName || str('TEMPORAL_TLS') === 'true';

  const webhookAllowHosts = (str('WEBHOOK_ALLOW_HOSTS') ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean);
  for (const entry of webhookAllowHosts) {
    if (!parseAllowEntry(entry)) problems.push(`WEBHOOK_ALLOW_HOSTS entry "${entry}" must be host, host:port, host:* or [ipv6]:port`);
  }

  const config: Config = {
    roles,
    port: port('PORT', 8080),
    host: str('HOST') ?? '0.0.0.0',
    mqttPort,
    mqttUrl,
    publicMqttUrl,
    mqttBridgeUsername: str('MQTT_BRIDGE_USERNAME'),
    mqttBridgePassword: str('MQTT_BRIDGE_PASSWORD'),
    mqttShareGroup: str('MQTT_SHARE_GROUP') ?? 'sentinel',
    mqttPresenceTtlSeconds: positiveInt('MQTT_PRESENCE_TTL_SECONDS', 300),
    mqttAuthSecret: str('MQTT_AUTH_SECRET'),
    databaseEngine,
    importHaltAfter: str('SENTINEL_TEST_IMPORT_HALT_AFTER') === undefined ? undefined : positiveInt('SENTINEL_TEST_IMPORT_HALT_AFTER', 1),
    mongodbUri,
    mongoPort: port('MONGO_PORT', 27017),
    mongodbDb: str('MONGODB_DB') ?? 'sentinel',
    mongodbBlobDb: str('MONGODB_BLOB_DB') ?? `${str('MONGODB_DB') ?? 'sentinel'}_blobs`,
    mongodbBlobUri,
    mongoBlobPort: port('MONGO_BLOB_PORT', 27018),
    temporalAddress: str('TEMPORAL_ADDRESS'),
    temporalPort: port('TEMPORAL_PORT', 7233),
    temporalUiPort: port('TEMPORAL_UI_PORT', 8233),
    temporalUiUrl: url('TEMPORAL_UI_URL', ['http:', 'https:'])?.replace(/\/+$/, ''),
    temporalNamespace: str('TEMPORAL_NAMESPACE') ?? 'default',
    temporalTaskQueue: str('TEMPORAL_TASK_QUEUE') ?? 'sentinel',
    activityHeartbeatTimeoutMs: 1000 * positiveInt('ACTIVITY_HEARTBEAT_TIMEOUT_S', DEFAULT_HEARTBEAT_TIMEOUT_MS / 1000),
    temporalTls: tlsWanted ? { certPath, keyPath, caPath, serverName } : undefined,
    temporalApiKey: str('TEMPORAL_API_KEY'),
    clamdHost: str('CLAMD_HOST'),
    clamdPort: port('CLAMD_PORT', 3310),
    scanThreads: nonNegativeInt('SCAN_THREADS', Math.max(1, Math.min(4, os.availableParallelism() - 1))),
    scanThreadMinBytes: nonNegativeInt('SCAN_THREAD_MIN_BYTES', 65_536),
    expressionThreads: positiveInt('EXPRESSION_THREADS', DEFAULT_EXPRESSION_THREADS),
    yaraRulesDir: str('YARA_RULES_DIR') ? path.resolve(str('YARA_RULES_DIR') as string) : undefined,
    dataDir,
    region: str('REGION') ?? 'local',
    logLevel,
    entityKeySecret,
    dataEncryptionKey,
    webhookAllowHosts,
    s3ConnectTimeoutMs: str('S3_CONNECT_TIMEOUT_MS') === undefined ? undefined : nonNegativeInt('S3_CONNECT_TIMEOUT_MS', 0),
    s3ReadTimeoutMs: str('S3_READ_TIMEOUT_MS') === undefined ? undefined : nonNegativeInt('S3_READ_TIMEOUT_MS', 0),
    metricsPort,
    metricsHost: str('METRICS_HOST') ?? '127.0.0.1',
    traces,
    rootDir,
  };
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(config.mqttShareGroup)) problems.push(`MQTT_SHARE_GROUP="${config.mqttShareGroup}" must match [A-Za-z0-9_-]{1,64}`);
  if (config.mqttAuthSecret !== undefined && config.mqttAuthSecret.length < 16) problems.push('MQTT_AUTH_SECRET must be at least 16 characters');
  if ((config.mqttBridgeUsername === undefined) !== (config.mqttBridgePassword === undefined)) {
    problems.push('MQTT_BRIDGE_USERNAME and MQTT_BRIDGE_PASSWORD must be set together');
  }
  if (config.activityHeartbeatTimeoutMs < 15_000) problems.push('ACTIVITY_HEARTBEAT_TIMEOUT_S must be at least 15 (the activities beat every 5 s)');
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(config.region)) problems.push(`REGION="${config.region}" must match [A-Za-z0-9_-]{1,32}`);
  // The ports this process itself listens on must differ (a clash read as another program's).
  const listens: Array<[string, number]> = [];
  if (config.roles.includes('api')) listens.push(['PORT', config.port]);
  if (config.roles.includes('mqtt') && config.mqttUrl === undefined) listens.push(['MQTT_PORT', config.mqttPort]);
  if (config.metricsPort !== 0) listens.push(['METRICS_PORT', config.metricsPort]);
  for (let i = 0; i < listens.length; i++) {
    for (let j = i + 1; j < listens.length; j++) {
      if (listens[i][1] === listens[j][1]) problems.push(`${listens[i][0]} and ${listens[j][0]} are both ${listens[i][1]}: this process listens on each, so they must differ`);
    }
  }
  if (config.scanThreads > MAX_SCAN_THREADS) problems.push(`SCAN_THREADS=${config.scanThreads} must be at most ${MAX_SCAN_THREADS} (each thread takes 30-50 MB and a core)`);
  if (config.yaraRulesDir !== undefined && !isDirectory(config.yaraRulesDir)) problems.push(`YARA_RULES_DIR="${config.yaraRulesDir}" must be an existing directory of YARA rules`);
  if (problems.length) throw new ConfigError(problems);
  return config;
}

const MAX_SCAN_THREADS = 64;

function isDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** Decodes a 32-byte key written as hex or base64; undefined when it is neither. */
export function decodeKey(text: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  const b = Buffer.from(text, 'base64');
  return b.length === 32 ? b : undefined;
}

/** True when this process should start the local stack's MongoDB-wire server. */
export const usesLocalMongo = (c: Config): boolean => c.databaseEngine === 'mongodb' && c.mongodbUri === undefined;
export const usesLocalTemporal = (c: Config): boolean => c.temporalAddress === undefined;

/**
 * Where the dashboard links a run in the Temporal Web UI: TEMPORAL_UI_URL; else the local dev
 * server's UI on TEMPORAL_UI_PORT of the host the browser reached the dashboard on; else (a
 * remote Temporal without TEMPORAL_UI_URL) nowhere, and the dashboard shows no link.
 */
export type TemporalUiLink = { url: string; namespace: string } | { port: number; namespace: string } | null;
export const temporalUiOf = (c: Config): TemporalUiLink => {
  if (c.temporalUiUrl) return { url: c.temporalUiUrl, namespace: c.temporalNamespace };
  return usesLocalTemporal(c) ? { port: c.temporalUiPort, namespace: c.temporalNamespace } : null;
};
export const mongoUriOf = (c: Config): string => c.mongodbUri ?? `mongodb://127.0.0.1:${c.mongoPort}/`;
/** True when this process should start the local stack's second FerretDB, the one for stored bytes. */
export const usesLocalBlobs = (c: Config): boolean => usesLocalMongo(c) && c.mongodbBlobUri === undefined;
export const mongoBlobUriOf = (c: Config): string => c.mongodbBlobUri ?? c.mongodbUri ?? `mongodb://127.0.0.1:${c.mongoBlobPort}/`;
export const temporalAddressOf = (c: Config): string => c.temporalAddress ?? `127.0.0.1:${c.temporalPort}`;
