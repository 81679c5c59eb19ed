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
import { CounterStore } from './limits/store';
import { LimitService } from './limits/service';
import { MessagingInfo } from './messaging/service';
import { ScanStore } from './scan/store';
import { ProfileService } from './scan/profiles';
import { ScanService } from './scan/service';
import { mongoFeedLookup } from './scan/engines/feeds';

export interface Services {
  config: Config;
  logger: Logger;
  storage: Storage;
  accounts: AccountService;
  audit: AuditLog;
  limits: LimitService;
  messagingInfo: MessagingInfo;
  scans: ScanService;
  /** Present in processes that talk to Temporal (api, worker). */
  temporal?: Client;
}

export function createServices(opts: { config: Config; logger: Logger; storage: Storage; secrets: Secrets; temporal?: Client }): Services {
  const { config, logger, storage, secrets } = opts;
  const db = storage.db;
  const limits = new LimitService(new CounterStore(db));
  const scanStore = new ScanStore(db);
  const scans = new ScanService(
    scanStore,
    new ProfileService(scanStore, secrets.dataEncryptionKey, config.webhookAllowHosts),
    limits,
    {
      clamd: { host: config.clamdHost ?? '127.0.0.1', port: config.clamdPort },
      feedLookup: mongoFeedLookup(db),
      yaraRuleDirs: [path.join(config.rootDir, 'rules', 'yara'), ...(config.yaraRulesDir ? [config.yaraRulesDir] : [])],
    },
    opts.temporal,
    { taskQueue: config.temporalTaskQueue, allowHosts: config.webhookAllowHosts, webhookTimeoutMs: 10_000 },
    logger.child({ component: 'scan' }),
  );
  return {
    config,
    logger,
    storage,
    accounts: new AccountService(new AccountStore(db), secrets, config.region),
    audit: new AuditLog(db),
    limits,
    scans,
    messagingInfo: new MessagingInfo(config.publicMqttUrl),
    temporal: opts.temporal,
  };
}
