/**
 * Messaging's records (message history, the inbox of pending directed messages, validation
 * services, notifications) and the store interface both engines implement (store/sqlite.ts,
 * store/mongo.ts). Entity state tables are messaging's too, kept on the entity's record (whose
 * other fields, online status included, are entities/records.ts's).
 */
import type { ServiceRule } from './schemas';
import type { MessageExport } from './export';
import type { MessageBox } from './pipeline';
import type { MessagingRecords } from './service';
import type { NotificationLog } from './usage';
import type { ServiceDefinitions } from './validation';
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

/** Everything messaging keeps; each consumer sees the narrow part it declares. */
export interface MessageStore extends MessageBox, MessagingRecords, MessageExport, NotificationLog, ServiceDefinitions, EntityInbox, Omit<ValidationServices, 'findService'> {}
