/**
 * Messaging's records (message history, the inbox of pending directed messages, validation
 * services, notifications) and the store interface both engines implement (store/sqlite.ts,
 * store/mongo.ts). Entity state tables are messaging's too, kept on the entity's record (whose
 * other fields, online status included, are entities/records.ts's).
 */
import type { ServiceRule } from './schemas';
import type { UserJsonText } from '../storage/user-json';
import type { EntityInbox, ValidationServices } from '../entities/service';

export type ValidationResult = 'passed' | 'failed' | 'skipped';

export interface ActionResult { rule: string; passed: boolean; errors: string[] }

export interface ValidationOutcome { result: ValidationResult; actionResults?: ActionResult[] }

export interface MessageDoc {
  _id: string;
  accountId: string;
  msgType: 'publish' | 'client_cmd_resp';
  /** Sender resource path. */
  source: string;
  sourceName: string;
  /** Destination entity name of a directed message. */
  destination: string | null;
  data: Record<string, unknown>;
  tags: string[];
  /** The message's own timestamp (RFC 3339 from the sender, else server time). */
  timestamp: Date;
  receivedAt: Date;
  validation: ValidationOutcome;
  bytes: number;
}

/** A message as an entity receives it (check_messages, MQTT messages topic). */
export interface DeliveredMessage {
  id: string;
  msg_type: string;
  data: Record<string, unknown>;
  tags: string[];
  source: string;
  timestamp: string;
}

export interface InboxDoc {
  _id: string; // the message id
  accountId: string;
  dest: string;
  queuedAt: Date;
  message: DeliveredMessage;
}

export interface ServiceDoc {
  _id: string;
  accountId: string;
  name: string;
  rules: ServiceRule[];
  /** Bumped on every change, so compiled validators cached by (id, version) never go stale. */
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export type NotificationKind = 'data_limit_80' | 'data_limit_100';

export interface NotificationDoc {
  _id: string; // `${accountId}:${period}:${kind}`: raised once per month
  accountId: string;
  kind: NotificationKind;
  period: string;
  message: string;
  usedBytes: number;
  limitBytes: number;
  createdAt: Date;
}

export interface MessageFilter { accountId: string; sourceName?: string; tags?: string[]; from?: Date; to?: Date }

/** Message history as an export reads it (messaging/records.ts). */
/**
 * A publish message as exports read it: `data` is the JSON text it is stored as (storage/user-json.ts:
 * JSON.stringify's output), written out as it is instead of parsed and written again.
 */
export type ExportedMessage = Pick<MessageDoc, '_id' | 'source' | 'destination' | 'msgType' | 'tags' | 'timestamp'> & { data: UserJsonText | undefined };

/** What an export reads: pages of records pulled one at a time, closed when the client goes away. */
export type ExportSource<D> = AsyncIterable<D[]> & { close(): Promise<void> };

export interface MessageExport {
  /** The account's publish messages newest first, in pages of `batchSize` at most. */
  exportCursor(f: MessageFilter, batchSize: number): ExportSource<ExportedMessage>;
}

/** What the pipeline writes: history, the inbox and state tables (messaging/records.ts). */
export interface MessageBox {
  insertMessage(doc: MessageDoc): Promise<void>;
  enqueue(doc: InboxDoc): Promise<void>;
  /** The new table, or undefined when the entity is gone. */
  replaceStatusTable(accountId: string, name: string, table: Record<string, unknown>): Promise<Record<string, unknown> | undefined>;
  /** Shallow merge of `patch`; the new table, or undefined when the entity is gone. */
  mergeStatusTable(accountId: string, name: string, patch: Record<string, unknown>): Promise<Record<string, unknown> | undefined>;
}

/** What messaging reads and changes outside the pipeline (messaging/records.ts). */
export interface MessagingRecords {
  /** Publish messages newest first, one page by offset. */
  listPublished(f: MessageFilter, offset: number, limit: number): Promise<MessageDoc[]>;
  findPublished(accountId: string, id: string): Promise<MessageDoc | null>;
  /** Takes the oldest pending message of an entity, or null; exactly once however many race. */
  claimNext(accountId: string, dest: string): Promise<InboxDoc | null>;
  /** Takes one named pending message; null when another claim took it. */
  claimForDelivery(messageId: string): Promise<InboxDoc | null>;
  getStatusTable(accountId: string, name: string): Promise<Record<string, unknown> | undefined>;
  replaceStatusTable(accountId: string, name: string, table: Record<string, unknown>): Promise<Record<string, unknown> | undefined>;
  mergeStatusTable(accountId: string, name: string, patch: Record<string, unknown>): Promise<Record<string, unknown> | undefined>;
  insertService(doc: ServiceDoc): Promise<void>;
  findService(accountId: string, id: string): Promise<ServiceDoc | null>;
  listServices(accountId: string): Promise<ServiceDoc[]>;
  /** Bumps the version; the service after, or null when there is none. */
  updateService(accountId: string, id: string, set: Partial<Pick<ServiceDoc, 'name' | 'rules'>>): Promise<ServiceDoc | null>;
  deleteService(accountId: string, id: string): Promise<boolean>;
  listNotifications(accountId: string): Promise<NotificationDoc[]>;
}

/** In-app notifications, each raised once (messaging/records.ts). */
export interface NotificationLog {
  /** Inserts the notification unless it exists already; true when it was new. */
  raiseNotification(doc: NotificationDoc): Promise<boolean>;
}

/** Where validation services are read from (messaging/records.ts). */
export interface ServiceDefinitions {
  findService(accountId: string, id: string): Promise<ServiceDoc | null>;
}

/** Everything messaging keeps; each consumer sees the narrow part it declares. */
export interface MessageStore extends MessageBox, MessagingRecords, MessageExport, NotificationLog, ServiceDefinitions, EntityInbox, Omit<ValidationServices, 'findService'> {}
