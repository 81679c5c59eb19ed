/**
 * The service objects of one process, built once from config and storage, handed to HTTP
 * routes, the MQTT broker, the CLI and activities: a rule exists once, whoever calls it.
 */
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Config } from './config';
import type { Logger } from './log';
import type { Secrets } from './secrets';
import type { Storage } from './storage/mongo';
import { AccountStore } from './accounts/store';
import { AccountService } from './accounts/service';
import { AuditLog } from './accounts/audit';
import { CustomRoles } from './accounts/custom-roles';
import { CounterStore } from './limits/store';
import { LimitService } from './limits/service';
import { MessagingInfo, MessagingService } from './messaging/service';
import { MessagePipeline, MessagingEvents } from './messaging/pipeline';
import { MessageStore } from './messaging/store';
import { MqttStore } from './mqtt/store';
import { MqttSignals } from './mqtt/signals';
import { ServiceValidator } from './messaging/validation';
import { MessagingUsage } from './messaging/usage';
import { ScanStore } from './scan/store';
import { ProfileService } from './scan/profiles';
import { ScanService } from './scan/service';
import { mongoFeedLookup } from './scan/engines/feeds';
import { cveDatasetPath } from './scan/datasets';
import type { EnginePool } from './scan/pool';

export interface Services {
  config: Config;
  logger: Logger;
  storage: Storage;
  accounts: AccountService;
  audit: AuditLog;
  roles: CustomRoles;
  limits: LimitService;
  messagingInfo: MessagingInfo;
  messageStore: MessageStore;
  /** THE message pipeline (HTTP and MQTT); set `messagePipeline.flowTrigger` to run flows on device events. */
  messagePipeline: MessagePipeline;
  /** `messageQueued` / `stateChanged` for the MQTT bridge. */
  messagingEvents: MessagingEvents;
  messaging: MessagingService;
  mqttStore: MqttStore;
  /** Records key revocations, queued messages and state changes for the MQTT processes (src/mqtt/signals.ts). */
  mqttSignals: MqttSignals;
  scans: ScanService;
  /** Present in processes that talk to Temporal (api, worker). */
  temporal?: Client;
}

export function createServices(opts: {
  config: Config; logger: Logger; storage: Storage; secrets: Secrets; temporal?: Client;
  /** Threads for the CPU-bound scan engines; the caller owns it (starts and closes it). */
  enginePool?: EnginePool;
}): Services {
  const { config, logger, storage, secrets } = opts;
  const db = storage.db;
  const limits = new LimitService(new CounterStore(db));
  const scanStore = new ScanStore(db, storage.readDb);
  const scans = new ScanService(
    scanStore,
    new ProfileService(scanStore, secrets.dataEncryptionKey, config.webhookAllowHosts),
    limits,
    {
      clamd: { host: config.clamdHost ?? '127.0.0.1', port: config.clamdPort },
      feedLookup: mongoFeedLookup(db),
      yaraRuleDirs: [path.join(config.rootDir, 'rules', 'yara'), ...(config.yaraRulesDir ? [config.yaraRulesDir] : [])],
      cveDatasetPath: cveDatasetPath(config),
      pool: opts.enginePool,
    },
    opts.temporal,
    { taskQueue: config.temporalTaskQueue, allowHosts: config.webhookAllowHosts, webhookTimeoutMs: 10_000 },
    logger.child({ component: 'scan' }),
  );
  const accountStore = new AccountStore(db, storage.readDb);
  const accounts = new AccountService(accountStore, secrets, config.region);
  const audit = new AuditLog(db);
  const messageStore = new MessageStore(db, storage.readDb);
  const messagingEvents = new MessagingEvents();
  const validator = new ServiceValidator(messageStore);
  const messagingLog = logger.child({ component: 'messaging' });
  const mqttStore = new MqttStore(db);
  const mqttSignals = new MqttSignals(mqttStore, logger.child({ component: 'mqtt-signals' }));
  mqttSignals.attach(accounts.events, messagingEvents);
  return {
    config,
    logger,
    storage,
    accounts,
    audit,
    roles: new CustomRoles(accountStore, audit),
    limits,
    scans,
    messagingInfo: new MessagingInfo(config.publicMqttUrl),
    messageStore,
    messagingEvents,
    messagePipeline: new MessagePipeline({
      store: messageStore, accounts, validator, events: messagingEvents, logger: messagingLog,
      usage: new MessagingUsage(limits, messageStore, messagingLog),
    }),
    messaging: new MessagingService({ store: messageStore, accounts, audit, validator, events: messagingEvents }),
    mqttStore,
    mqttSignals,
    temporal: opts.temporal,
  };
}
