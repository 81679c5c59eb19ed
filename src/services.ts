/**
 * The service objects of one process, built once from config and storage, handed to HTTP
 * routes, the MQTT broker, the CLI and activities: a rule exists once, whoever calls it.
 * The composition root: the only module outside the stores that names the MongoDB store classes;
 * everything it hands out sees a store only through the interface its service declares.
 */
import type { Client } from '@temporalio/client';
import type { Config } from './config';
import type { Logger } from './log';
import type { Secrets } from './secrets';
import type { Storage } from './storage/mongo';
import { FIXED_LIMITS } from './accounts/plans';
import { AccountStore } from './accounts/store';
import { AccountService } from './accounts/service';
import { AuditLog } from './accounts/audit';
import { AuditStore } from './accounts/audit-store';
import { CustomRoles } from './accounts/custom-roles';
import { AccountUsage } from './accounts/usage';
import { CounterStore } from './limits/store';
import { LimitService } from './limits/service';
import { MessagingInfo, MessagingService } from './messaging/service';
import { EntityService } from './entities/service';
import { MessagePipeline, MessagingEvents } from './messaging/pipeline';
import { MessageStore } from './messaging/store';
import type { MessageExport } from './messaging/export';
import { MqttStore } from './mqtt/store';
import { MqttSignals } from './mqtt/signals';
import { MqttService } from './mqtt/service';
import { ServiceValidator } from './messaging/validation';
import { MessagingUsage } from './messaging/usage';
import { ScanStore } from './scan/store';
import { ProfileService } from './scan/profiles';
import { ScanService } from './scan/service';
import { FeedStore } from './scan/feed-store';
import type { FeedEntrySink } from './scan/engines/feeds';
import { cveDatasetPath, yaraRuleDirs } from './scan/datasets';
import type { EnginePool } from './scan/pool';
import { VaultService } from './vault/service';
import { VaultStore } from './vault/store';
import { ConnectorService } from './connectors/service';
import { ConnectorStore } from './connectors/store';
import { FileStore } from './files/store';
import { FileService } from './files/service';
import { ClipMaker } from './files/clip';
import { OutputStore, RunStore, SlotStore, WorkflowStore } from './flows/store';
import { FlowService, RunService } from './flows/service';
import { RunAdmission } from './flows/admission';
import { DeviceEventTriggers } from './flows/triggers';
import { NodeRunner } from './flows/node-runner';
import { ExpressionPool } from './flows/expression-pool';
import { objectStorage, payloadScanner, snippetRunner } from './flows/adapters';
import { TemporalRunEngine } from '../temporal/runs';

export interface Services {
  config: Config;
  logger: Logger;
  storage: Storage;
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
  /** Entity registration and management (src/entities/service.ts). */
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
  /** Present in processes that talk to Temporal (api, worker). */
  temporal?: Client;
}

export function createServices(opts: {
  config: Config; logger: Logger; storage: Storage; secrets: Secrets; temporal?: Client;
  /** Threads for the CPU-bound scan engines; the caller owns it (starts and closes it). */
  enginePool?: EnginePool;
}): Services {
  const { config, logger, storage, secrets } = opts;
  const { db, readDb, blobDb, buckets } = storage;
  const limits = new LimitService(new CounterStore(db, readDb));
  const scanStore = new ScanStore(db, readDb, buckets.scanUploads);
  const feedStore = new FeedStore(db);
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
    opts.temporal,
    { taskQueue: config.temporalTaskQueue, allowHosts: config.webhookAllowHosts, webhookTimeoutMs: FIXED_LIMITS.webhookTimeoutMs },
    logger.child({ component: 'scan' }),
  );
  const accountStore = new AccountStore(db, readDb);
  const accounts = new AccountService(accountStore, secrets, config.region);
  const audit = new AuditLog(new AuditStore(db));
  const messageStore = new MessageStore(db, readDb);
  const messagingEvents = new MessagingEvents();
  const validator = new ServiceValidator(messageStore);
  const messagingLog = logger.child({ component: 'messaging' });
  const mqttStore = new MqttStore(db);
  const mqttSignals = new MqttSignals(mqttStore, logger.child({ component: 'mqtt-signals' }));
  mqttSignals.attach(accounts.events, messagingEvents);
  const files = new FileService({
    store: new FileStore(db, blobDb, buckets.fileBlobs),
    scanner: scans,
    recipients: accounts,
    workflows: {
      startFileWorkflow: async (fileId) => {
        if (!opts.temporal) throw new Error('file transfer needs a Temporal client in this process');
        await opts.temporal.workflow.start('fileTransfer', { taskQueue: config.temporalTaskQueue, workflowId: `file-${fileId}`, args: [{ fileId }] });
      },
    },
    clips: new ClipMaker({ concurrency: 2 }),
    logger: logger.child({ component: 'files' }),
  });
  const messagePipeline = new MessagePipeline({
    store: messageStore, accounts, validator, events: messagingEvents, logger: messagingLog,
    usage: new MessagingUsage(limits, messageStore, messagingLog),
  });
  const workflowStore = new WorkflowStore(db, readDb);
  const runStore = new RunStore(db, readDb);
  const outputStore = new OutputStore(db, buckets.workflowOutputs);
  const flows = new FlowService({ workflows: workflowStore });
  const vault = new VaultService(new VaultStore(db), secrets.dataEncryptionKey);
  const connectors = new ConnectorService(new ConnectorStore(db), secrets.dataEncryptionKey, config.webhookAllowHosts);
  const engine = opts.temporal ? new TemporalRunEngine(opts.temporal, config.temporalTaskQueue) : undefined;
  const expressions = new ExpressionPool({ threads: config.expressionThreads });
  const admission = new RunAdmission({ queue: runStore, slots: new SlotStore(db, readDb), engine, logger: logger.child({ component: 'admission' }) });
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
    roles: new CustomRoles(accountStore, audit),
    usage: new AccountUsage(limits, undefined, admission),
    limits,
    scans,
    threatFeeds: feedStore,
    files,
    messagingInfo: new MessagingInfo(config.publicMqttUrl),
    messageExport: messageStore,
    messagingEvents,
    messagePipeline,
    messaging: new MessagingService({ store: messageStore, accounts, audit, validator, events: messagingEvents }),
    entities: new EntityService({ accounts, audit, inbox: messageStore, validationServices: messageStore }),
    mqtt: new MqttService({
      keys: accounts, status: messageStore, presence: mqttStore, signals: mqttSignals,
      settings: {
        authSecret: config.mqttAuthSecret, bridgeUsername: config.mqttBridgeUsername, bridgePassword: config.mqttBridgePassword,
        shareGroup: config.mqttShareGroup, presenceTtlMs: config.mqttPresenceTtlSeconds * 1000,
      },
    }),
    mqttSignals,
    vault,
    connectors,
    temporal: opts.temporal,
    flows,
    runs,
    admission,
    expressions,
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
