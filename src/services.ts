/**
 * The service objects of one process, built once from config and storage, handed to HTTP
 * routes, the MQTT broker, the CLI and activities: a rule exists once, whoever calls it.
 * The composition root: the only module outside the stores that names the store classes (both
 * engines'); everything it hands out sees a store only through the interfaces of records.ts.
 */
import type { Config } from './config';
import type { Logger } from './log';
import type { Secrets } from './secrets';
import type { Database } from './storage/engine';
import { FIXED_LIMITS } from './accounts/plans';
import { AccountService } from './accounts/service';
import { AuditLog } from './accounts/audit';
import { CustomRoles } from './accounts/custom-roles';
import { AccountUsage } from './accounts/usage';
import { LimitService } from './limits/service';
import { MessagingInfo, MessagingService } from './messaging/service';
import { EntityService } from './entities/service';
import { MessagePipeline, MessagingEvents } from './messaging/pipeline';
import type { MessageExport, MessageStore } from './messaging/records';
import { MqttSignals } from './mqtt/signals';
import { MqttService } from './mqtt/service';
import { ServiceValidator } from './messaging/validation';
import { ValidationPool } from './messaging/validation-pool';
import { MessagingUsage } from './messaging/usage';
import { ProfileService } from './scan/profiles';
import { ScanService, type ScanWorkflows } from './scan/service';
import type { FeedEntrySink } from './scan/engines/feeds';
import { cveDatasetPath, yaraRuleDirs } from './scan/datasets';
import type { EnginePool } from './scan/pool';
import { VaultService } from './vault/service';
import { ConnectorService } from './connectors/service';
import { FileService, type FileWorkflows } from './files/service';
import { ClipMaker } from './files/clip';
import { FlowService, RunService, type RunEngine } from './flows/service';
import { RunAdmission } from './flows/admission';
import { DeviceEventTriggers } from './flows/triggers';
import { NodeRunner } from './flows/node-runner';
import { ExpressionPool } from './flows/expression-pool';
import { objectStorage, payloadScanner, snippetRunner } from './flows/adapters';
import { MongoAccountStore } from './accounts/store/mongo';
import { MongoEntityStore } from './entities/store/mongo';
import { MongoAuditStore } from './accounts/store/audit-mongo';
import { MongoCounterStore } from './limits/store/mongo';
import { MongoMessageStore } from './messaging/store/mongo';
import { MongoMqttStore } from './mqtt/store/mongo';
import { MongoScanStore } from './scan/store/mongo';
import { MongoFeedStore } from './scan/store/feed-mongo';
import { MongoVaultStore } from './vault/store/mongo';
import { MongoConnectorStore } from './connectors/store/mongo';
import { MongoFileStore } from './files/store/mongo';
import { MongoOutputStore, MongoRunStore, MongoSlotStore, MongoWorkflowStore } from './flows/store/mongo';
import { SqliteAccountStore, SqliteAuditStore } from './accounts/store/sqlite';
import { SqliteEntityStore } from './entities/store/sqlite';
import { SqliteCounterStore } from './limits/store/sqlite';
import { SqliteMessageStore } from './messaging/store/sqlite';
import { SqliteMqttStore } from './mqtt/store/sqlite';
import { SqliteFeedStore, SqliteScanStore } from './scan/store/sqlite';
import { SqliteVaultStore } from './vault/store/sqlite';
import { SqliteConnectorStore } from './connectors/store/sqlite';
import { SqliteFileStore } from './files/store/sqlite';
import { SqliteOutputStore, SqliteRunStore, SqliteSlotStore, SqliteWorkflowStore } from './flows/store/sqlite';
import type { AccountStore, AuditStore } from './accounts/records';
import type { EntityStore } from './entities/records';
import type { CounterStore } from './limits/records';
import type { MqttStore } from './mqtt/records';
import type { FeedStore, ScanStore } from './scan/records';
import type { VaultStore } from './vault/records';
import type { ConnectorStore } from './connectors/records';
import type { FileStore } from './files/records';
import type { OutputStore, RunStore, SlotStore, WorkflowStore } from './flows/records';

/** Every store of a process, on one engine. */
export interface Stores {
  accounts: AccountStore;
  entities: EntityStore;
  audit: AuditStore;
  counters: CounterStore;
  messages: MessageStore;
  mqtt: MqttStore;
  scans: ScanStore;
  feeds: FeedStore;
  vault: VaultStore;
  connectors: ConnectorStore;
  files: FileStore;
  workflows: WorkflowStore;
  runs: RunStore;
  outputs: OutputStore;
  slots: SlotStore;
}

export function storesOf(database: Database): Stores {
  if (database.engine === 'embedded') {
    const { db, blobs } = database.embedded;
    return {
      accounts: new SqliteAccountStore(db), entities: new SqliteEntityStore(db), audit: new SqliteAuditStore(db), counters: new SqliteCounterStore(db),
      messages: new SqliteMessageStore(db), mqtt: new SqliteMqttStore(db), scans: new SqliteScanStore(db, blobs),
      feeds: new SqliteFeedStore(db), vault: new SqliteVaultStore(db), connectors: new SqliteConnectorStore(db),
      files: new SqliteFileStore(db, blobs), workflows: new SqliteWorkflowStore(db), runs: new SqliteRunStore(db),
      outputs: new SqliteOutputStore(db, blobs), slots: new SqliteSlotStore(db),
    };
  }
  const { db, readDb, blobDb, buckets } = database.mongo;
  return {
    accounts: new MongoAccountStore(db, readDb), entities: new MongoEntityStore(db, readDb), audit: new MongoAuditStore(db), counters: new MongoCounterStore(db, readDb),
    messages: new MongoMessageStore(db, readDb), mqtt: new MongoMqttStore(db), scans: new MongoScanStore(db, readDb, buckets.scanUploads),
    feeds: new MongoFeedStore(db), vault: new MongoVaultStore(db), connectors: new MongoConnectorStore(db),
    files: new MongoFileStore(db, blobDb, buckets.fileBlobs), workflows: new MongoWorkflowStore(db, readDb), runs: new MongoRunStore(db, readDb),
    outputs: new MongoOutputStore(db, buckets.workflowOutputs), slots: new MongoSlotStore(db, readDb),
  };
}

export interface Services {
  config: Config;
  logger: Logger;
  storage: Database;
  accounts: AccountService;
  audit: AuditLog;
  roles: CustomRoles;
  /** The account's scan usage answer (GET /api/account/usage). */
  usage: AccountUsage;
  limits: LimitService;
  messagingInfo: MessagingInfo;
  /** Message history as exports read it. */
  messageExport: MessageExport;
  /** THE message pipeline (HTTP and MQTT); set `messagePipeline.flowTrigger` to run flows on device events. */
  messagePipeline: MessagePipeline;
  /** `messageQueued` / `stateChanged` for the MQTT bridge. */
  messagingEvents: MessagingEvents;
  messaging: MessagingService;
  /** Entities: registration, management, keys and online status (src/entities/service.ts). */
  entities: EntityService;
  /** Broker-auth decisions, device online status and external-broker presence (src/mqtt/service.ts). */
  mqtt: MqttService;
  /** Records key revocations, queued messages and state changes for the MQTT processes (src/mqtt/signals.ts). */
  mqttSignals: MqttSignals;
  scans: ScanService;
  /** Where `feeds load` (CLI) upserts threat-feed hashes. */
  threatFeeds: FeedEntrySink;
  /** Sealed secrets of workflows; `reveal` only inside the activity that uses them. */
  vault: VaultService;
  /** Connectors (aws); `runS3` is the aws.s3 node's operation. */
  connectors: ConnectorService;
  /** File transfer between entities and the clip gallery. */
  files: FileService;
  /** User workflow definitions, their runs, and what the interpreter's activities call. */
  flows: FlowService;
  runs: RunService;
  /** Concurrency slots and the FIFO queue of workflow runs; the worker runs its `pass`. */
  admission: RunAdmission;
  nodeRunner: NodeRunner;
  /** Threads for workflow expressions; started on first use, closed by the process at stop. */
  expressions: ExpressionPool;
  /** Threads for validation services' rules on device messages; started on first use, closed at stop. */
  validation: ValidationPool;
}

/** What starts durable work, one engine per capability (temporal/engines/); absent in MQTT-only processes. */
export interface WorkflowEngines {
  scans: ScanWorkflows;
  files: FileWorkflows;
  runs: RunEngine;
}

export function createServices(opts: {
  config: Config; logger: Logger; storage: Database; secrets: Secrets; engines?: WorkflowEngines;
  /** Threads for the CPU-bound scan engines; the caller owns it (starts and closes it). */
  enginePool?: EnginePool;
}): Services {
  const { config, logger, storage, secrets } = opts;
  const stores = storesOf(storage);
  const limits = new LimitService(stores.counters);
  const scanStore = stores.scans;
  const feedStore = stores.feeds;
  const scans = new ScanService(
    scanStore,
    new ProfileService(scanStore, secrets.dataEncryptionKey, config.webhookAllowHosts),
    limits,
    {
      clamd: { host: config.clamdHost ?? '127.0.0.1', port: config.clamdPort },
      feedLookup: feedStore.lookup,
      yaraRuleDirs: yaraRuleDirs(config),
      cveDatasetPath: cveDatasetPath(config),
      pool: opts.enginePool,
    },
    opts.engines?.scans,
    {
      allowHosts: config.webhookAllowHosts, webhookTimeoutMs: FIXED_LIMITS.webhookTimeoutMs,
      planOf: async (accountId) => (await stores.accounts.findAccount(accountId))?.plan,
    },
    logger.child({ component: 'scan' }),
  );
  const accountStore = stores.accounts;
  const accounts = new AccountService(accountStore, stores.entities, secrets, config.region);
  const audit = new AuditLog(stores.audit);
  const messageStore = stores.messages;
  // A deleted entity's pending messages and the files waiting for it go with it (files is made
  // below: it needs entities as its recipients).
  let files: FileService | undefined;
  const inbox = {
    purgeInbox: async (accountId: string, name: string) => {
      await messageStore.purgeInbox(accountId, name);
      await files?.dropForRecipient(accountId, name);
    },
  };
  const entities = new EntityService({ store: stores.entities, accounts, secrets, audit, inbox, validationServices: messageStore });
  const messagingEvents = new MessagingEvents();
  const validation = new ValidationPool();
  const validator = new ServiceValidator(messageStore, validation);
  const messagingLog = logger.child({ component: 'messaging' });
  const mqttStore = stores.mqtt;
  const mqttSignals = new MqttSignals(mqttStore, logger.child({ component: 'mqtt-signals' }));
  mqttSignals.attach(accounts.events, messagingEvents);
  files = new FileService({
    store: stores.files,
    scanner: scans,
    recipients: entities,
    workflows: opts.engines?.files ?? {
      startFileWorkflow: async () => { throw new Error('file transfer needs a Temporal client in this process'); },
    },
    clips: new ClipMaker({ concurrency: 2 }),
    logger: logger.child({ component: 'files' }),
  });
  const messagePipeline = new MessagePipeline({
    store: messageStore, accounts, entities, validator, events: messagingEvents, logger: messagingLog,
    usage: new MessagingUsage(limits, messageStore, messagingLog),
  });
  const workflowStore = stores.workflows;
  const runStore = stores.runs;
  const outputStore = stores.outputs;
  const flows = new FlowService({ workflows: workflowStore });
  const vault = new VaultService(stores.vault, secrets.dataEncryptionKey);
  const connectors = new ConnectorService(stores.connectors, secrets.dataEncryptionKey, config.webhookAllowHosts);
  const engine = opts.engines?.runs;
  const expressions = new ExpressionPool({ threads: config.expressionThreads });
  const admission = new RunAdmission({ queue: runStore, slots: stores.slots, engine, logger: logger.child({ component: 'admission' }) });
  const runs = new RunService({
    flows, runs: runStore, outputs: outputStore, engine, admission,
    quota: { reserveRun: (id, max) => limits.reserveWorkflowRun(id, max), releaseRun: (id) => limits.releaseWorkflowRun(id), workflowUsage: (id) => limits.workflowUsageThisMonth(id) },
  });
  messagePipeline.flowTrigger = new DeviceEventTriggers({
    workflows: workflowStore, runs, accounts, limits, logger: logger.child({ component: 'flow-triggers' }),
  });
  return {
    config,
    logger,
    storage,
    accounts,
    audit,
    roles: new CustomRoles(accountStore, stores.entities, audit, accounts.events),
    usage: new AccountUsage(limits, undefined, admission),
    limits,
    scans,
    threatFeeds: feedStore,
    files,
    messagingInfo: new MessagingInfo(config.publicMqttUrl),
    messageExport: messageStore,
    messagingEvents,
    messagePipeline,
    messaging: new MessagingService({ store: messageStore, entities, audit, validator, events: messagingEvents }),
    entities,
    mqtt: new MqttService({
      keys: accounts, status: entities, presence: mqttStore, signals: mqttSignals,
      settings: {
        authSecret: config.mqttAuthSecret, bridgeUsername: config.mqttBridgeUsername, bridgePassword: config.mqttBridgePassword,
        shareGroup: config.mqttShareGroup, presenceTtlMs: config.mqttPresenceTtlSeconds * 1000,
      },
    }),
    mqttSignals,
    vault,
    connectors,
    flows,
    runs,
    admission,
    expressions,
    validation,
    nodeRunner: new NodeRunner({
      outputs: outputStore, runs: runStore, workflows: workflowStore, vault,
      compute: { charge: (accountId, units) => limits.addComputeUnits(accountId, units) },
      runEnded: (runId) => admission.ended(runId),
      nodes: {
        expressions,
        allowHosts: config.webhookAllowHosts, messenger: messagePipeline, scanner: payloadScanner(scans, accounts, files),
        snippets: snippetRunner(accounts),
        storage: objectStorage(connectors, { connectMs: config.s3ConnectTimeoutMs, readMs: config.s3ReadTimeoutMs }),
        logger: logger.child({ component: 'flows' }),
      },
    }),
  };
}
