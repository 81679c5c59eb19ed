/**
 * THE message pipeline: the only place a message from an entity is judged, for HTTP
 * (POST /api/entities/message[s]) and MQTT (the bridge calls `process` with the decoded payload)
 * alike. It takes a plain sender and message and returns a result or throws AppErrors; no Koa.
 *
 * Steps: JSON depth and format (ajv), msg_type (400 listing the allowed types), permission, data
 * size (413 above 5 KB), then by type:
 * - heartbeat: online status and device metrics only;
 * - state_new / state_update: replace / merge the state table, then `stateChanged`;
 * - publish: monthly data limit (429 data_limit_exceeded), service-rule validation, stored in
 *   history; a directed publish is queued for its destination (`messageQueued`); publishes that
 *   did not fail validation go to the flow trigger;
 * - client_cmd_resp: stored (not listed), queued for the command's sender.
 *
 * Seams for other capabilities:
 * - `flowTrigger` (FlowTrigger): set by the workflow capability; called for every publish that
 *   passed or skipped validation and every state message. Unset = no flows run.
 * - `events` (MessagingEvents): `messageQueued` when a message awaits an entity (MQTT delivers it
 *   after `MessagingService.claimForDelivery(id)` succeeds), `stateChanged` after every
 *   state-table change (here and via PATCH/PUT) with the full table.
 */
import { EventEmitter } from 'node:events';
import { newTimeOrderedId } from '../storage/ids';
import type { AccountDoc } from '../accounts/records';
import type { EntityDoc } from '../entities/records';
import type { AccountService } from '../accounts/service';
import type { EntityService } from '../entities/service';
import { resourcePathOf } from '../accounts/keys';
import type { Permission } from '../accounts/roles';
import { FIXED_LIMITS } from '../accounts/plans';
import { AppError, BadRequestError, ForbiddenError, NotFoundError } from '../errors';
import { checkJsonShape, describeAjvError, jsonBytesWithin, validatorFor } from '../json-schema';
import type { Logger } from '../log';
import { isDuplicateKey } from '../storage/errors';
import { InboundMessage, MESSAGE_TYPES, MessageType, messageSchema } from './schemas';
import type { DeliveredMessage, InboxDoc, MessageBox, ValidationOutcome } from './records';
import type { ServiceValidator } from './validation';
import type { MessagingUsage } from './usage';

/** Who sends: an authenticated entity (HTTP principal or MQTT session, loaded fresh). */
export interface Sender { account: AccountDoc; entity: EntityDoc; permissions: ReadonlySet<Permission> }

/** `content` is the message id; "" for heartbeats. */
export interface PipelineResult { code: 200; content: string }
export type BatchEntry = PipelineResult | { code: number; reason: string; errorCode?: string };

/** A device event handed to the workflow capability. */
export interface DeviceEvent {
  id: string;
  msgType: 'publish' | 'state_new' | 'state_update';
  accountId: string;
  entityName: string;
  /** Sender resource path. */
  source: string;
  destination: string | null;
  data: Record<string, unknown>;
  tags: string[];
  timestamp: Date;
  validation: ValidationOutcome['result'];
}

/** The single seam through which messages trigger flows (set by the workflow capability). */
export interface FlowTrigger {
  onDeviceEvent(event: DeviceEvent): Promise<void>;
}

export interface MessageQueuedEvent { accountId: string; destName: string; messageId: string; message: DeliveredMessage }
export interface StateChangedEvent { accountId: string; entityName: string; apiKeyId: string; statusTable: Record<string, unknown> }

export interface MessagingEvents {
  on(event: 'messageQueued', listener: (e: MessageQueuedEvent) => void): this;
  on(event: 'stateChanged', listener: (e: StateChangedEvent) => void): this;
  emit(event: 'messageQueued', e: MessageQueuedEvent): boolean;
  emit(event: 'stateChanged', e: StateChangedEvent): boolean;
}
export class MessagingEvents extends EventEmitter {}

const ALLOWED_TYPES_TEXT = MESSAGE_TYPES.join(', ');
const HEARTBEAT_METRICS = ['mem_free', 'mem_total', 'disk_free', 'disk_size'] as const;
const validateMessage = validatorFor(messageSchema);

/** Message ids sort by creation time. */
const newMessageId = newTimeOrderedId;


const dataTooLarge = (bytes: number): string => `Message data is ${bytes} bytes; the limit is ${FIXED_LIMITS.messageDataBytes} bytes (5 KB)`;

export class MessagePipeline {
  /** Set by the workflow capability; unset means publishes trigger no flows. */
  flowTrigger?: FlowTrigger;

  constructor(private readonly deps: {
    store: MessageBox;
    accounts: AccountService;
    /** Senders and destinations, and the heartbeats that keep an entity online (src/entities/service.ts). */
    entities: Pick<EntityService, 'entity' | 'recordHeartbeat'>;
    validator: ServiceValidator;
    usage: MessagingUsage;
    events: MessagingEvents;
    logger: Logger;
    now?: () => Date;
  }) {}

  private now(): Date {
    return this.deps.now ? this.deps.now() : new Date();
  }

  /** Loads a sender fresh (for MQTT sessions: role, plan and service may have changed). */
  async loadSender(accountId: string, entityName: string): Promise<Sender> {
    const [cached, entity] = await Promise.all([this.deps.accounts.cachedAccount(accountId), this.deps.entities.entity(accountId, entityName)]);
    const account = cached ?? (await this.deps.accounts.getAccount(accountId));
    return { account, entity, permissions: await this.deps.accounts.permissionsOf(account, entity.role) };
  }

  /** Judges and applies one message; throws AppError for anything refused. */
  async process(sender: Sender, raw: unknown): Promise<PipelineResult> {
    const msg = this.check(sender, raw);
    const type = msg.msg_type as MessageType;
    const data = msg.data ?? {};
    const bytes = jsonBytesWithin(JSON.stringify(data), FIXED_LIMITS.messageDataBytes, dataTooLarge);
    const timestamp = msg.timestamp ? new Date(msg.timestamp) : this.now();
    const tags = msg.context?.tags ?? [];
    switch (type) {
      case 'heartbeat': return this.heartbeat(sender, data, bytes, timestamp);
      case 'state_new':
      case 'state_update': return this.state(sender, type, data, bytes, tags, timestamp);
      case 'publish': return this.publish(sender, msg, data, bytes, tags, timestamp);
      case 'client_cmd_resp': return this.commandResponse(sender, msg, data, bytes, tags, timestamp);
    }
  }

  /** Each message judged on its own; results in input order. */
  async processBatch(sender: Sender, raws: unknown[]): Promise<BatchEntry[]> {
    return Promise.all(raws.map(async (raw): Promise<BatchEntry> => {
      try {
        return await this.process(sender, raw);
      } catch (err) {
        if (err instanceof AppError) return { code: err.status, reason: err.message, ...(err.code ? { errorCode: err.code } : {}) };
        this.deps.logger.error({ err }, 'batch message failed');
        return { code: 500, reason: 'Internal server error' };
      }
    }));
  }

  private check(sender: Sender, raw: unknown): InboundMessage {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new BadRequestError('A message must be a JSON object');
    // `data` is free-form: no schema refuses 1e309 there, so the walk does.
    checkJsonShape(raw, { numbers: true });
    const type = (raw as { msg_type?: unknown }).msg_type;
    if (typeof type !== 'string' || !(MESSAGE_TYPES as readonly string[]).includes(type)) {
      const what = type === undefined ? 'msg_type is missing' : `Unsupported msg_type ${JSON.stringify(type)}`;
      throw new BadRequestError(`${what}; allowed types: ${ALLOWED_TYPES_TEXT}`, { allowedTypes: [...MESSAGE_TYPES] }, 'unsupported_msg_type');
    }
    if (!validateMessage(raw)) throw new BadRequestError(`Invalid message: ${describeAjvError('message', validateMessage.errors)}`);
    const msg = raw as InboundMessage;
    if (type !== 'heartbeat' && msg.data === undefined) throw new BadRequestError(`data is required for msg_type ${type}`);
    const needed: Permission = type === 'state_new' || type === 'state_update' ? 'entity:State' : 'entity:Publish';
    if (!sender.permissions.has(needed)) throw new ForbiddenError(`The key's role lacks the permission ${needed}`, 'permission_denied');
    return msg;
  }

  private async heartbeat(sender: Sender, data: Record<string, unknown>, bytes: number, at: Date): Promise<PipelineResult> {
    const metrics: Record<string, number> = {};
    for (const k of HEARTBEAT_METRICS) {
      const v = data[k];
      if (v === undefined) continue;
      if (typeof v !== 'number' || !Number.isFinite(v)) throw new BadRequestError(`heartbeat data.${k} must be a number`);
      metrics[k] = v;
    }
    await this.deps.usage.charge(sender.account, bytes, false);
    await this.deps.entities.recordHeartbeat(sender.account._id, sender.entity.name, at, metrics);
    return { code: 200, content: '' };
  }

  private async state(sender: Sender, type: 'state_new' | 'state_update', data: Record<string, unknown>, bytes: number, tags: string[], at: Date): Promise<PipelineResult> {
    await this.deps.usage.charge(sender.account, bytes, false);
    const { account, entity } = sender;
    const table = type === 'state_new'
      ? await this.deps.store.replaceStatusTable(account._id, entity.name, data)
      : await this.deps.store.mergeStatusTable(account._id, entity.name, data);
    if (!table) throw new NotFoundError('Entity');
    this.deps.events.emit('stateChanged', { accountId: account._id, entityName: entity.name, apiKeyId: entity.apiKeyId, statusTable: table });
    const id = newMessageId();
    this.trigger({
      id, msgType: type, accountId: account._id, entityName: entity.name, source: entity.resourcePath, destination: null,
      data, tags, timestamp: at, validation: 'skipped',
    });
    return { code: 200, content: id };
  }

  /** `dest` may be a name or a resource path in the sender's account; the entity must exist. */
  private async resolveDest(account: AccountDoc, dest: string): Promise<string> {
    const prefix = resourcePathOf(account._id, '');
    const name = dest.startsWith(prefix) ? dest.slice(prefix.length) : dest;
    try {
      return (await this.deps.entities.entity(account._id, name)).name;
    } catch (err) {
      if (err instanceof NotFoundError) throw new NotFoundError(`Destination entity "${dest}"`);
      throw err;
    }
  }

  private async publish(sender: Sender, msg: InboundMessage, data: Record<string, unknown>, bytes: number, tags: string[], at: Date): Promise<PipelineResult> {
    const { account, entity } = sender;
    const dest = msg.dest !== undefined ? await this.resolveDest(account, msg.dest) : null;
    // Rules first: a message refused because too many of the account's wait for their rules
    // (429, validation-pool.ts) is not charged.
    const validation: ValidationOutcome = entity.serviceId
      ? await this.deps.validator.validate(account._id, entity.serviceId, data)
      : { result: 'skipped' };
    await this.deps.usage.charge(account, bytes, true);
    const id = newMessageId();
    await this.deps.store.insertMessage({
      _id: id, accountId: account._id, msgType: 'publish', source: entity.resourcePath, sourceName: entity.name,
      destination: dest, data, tags, timestamp: at, receivedAt: this.now(), validation, bytes,
    });
    if (dest) {
      const delivered = validation.result === 'failed'
        ? { ...data, validation: { result: 'failed', actionResults: validation.actionResults } }
        : data;
      await this.queue(account._id, dest, { id, msg_type: 'publish', data: delivered, tags, source: entity.resourcePath, timestamp: at.toISOString() });
    }
    if (validation.result !== 'failed') {
      this.trigger({
        id, msgType: 'publish', accountId: account._id, entityName: entity.name, source: entity.resourcePath, destination: dest,
        data, tags, timestamp: at, validation: validation.result,
      });
    }
    return { code: 200, content: id };
  }

  private async commandResponse(sender: Sender, msg: InboundMessage, data: Record<string, unknown>, bytes: number, tags: string[], at: Date): Promise<PipelineResult> {
    if (msg.dest === undefined) throw new BadRequestError('client_cmd_resp needs dest: the name or resource path of the command\'s sender');
    const { account, entity } = sender;
    const dest = await this.resolveDest(account, msg.dest);
    await this.deps.usage.charge(account, bytes, false);
    const id = newMessageId();
    await this.deps.store.insertMessage({
      _id: id, accountId: account._id, msgType: 'client_cmd_resp', source: entity.resourcePath, sourceName: entity.name,
      destination: dest, data, tags, timestamp: at, receivedAt: this.now(), validation: { result: 'skipped' }, bytes,
    });
    await this.queue(account._id, dest, { id, msg_type: 'client_cmd_resp', data, tags, source: entity.resourcePath, timestamp: at.toISOString() });
    return { code: 200, content: id };
  }

  /**
   * A message from a workflow (`device.send`) to an entity of the account: the same size and tag
   * rules, stored in history and queued like a directed publish. The caller picks the id; a
   * repeated send with the same id (a retried activity) finds it stored and sends nothing again.
   */
  async sendToEntity(req: { accountId: string; entity: string; data: Record<string, unknown>; tags: string[]; messageId: string; source: string }): Promise<{ messageId: string; duplicate: boolean }> {
    checkJsonShape(req.data, { numbers: true });
    const bytes = jsonBytesWithin(JSON.stringify(req.data), FIXED_LIMITS.messageDataBytes, dataTooLarge);
    if (req.tags.length > FIXED_LIMITS.tagsPerMessage) throw new BadRequestError(`At most ${FIXED_LIMITS.tagsPerMessage} tags per message`);
    const account = (await this.deps.accounts.cachedAccount(req.accountId)) ?? (await this.deps.accounts.getAccount(req.accountId));
    const dest = await this.resolveDest(account, req.entity);
    const at = this.now();
    try {
      await this.deps.store.insertMessage({
        _id: req.messageId, accountId: account._id, msgType: 'publish', source: req.source, sourceName: req.source.split('/').pop() ?? req.source,
        destination: dest, data: req.data, tags: req.tags, timestamp: at, receivedAt: at, validation: { result: 'skipped' }, bytes,
      });
    } catch (err) {
      if (isDuplicateKey(err)) return { messageId: req.messageId, duplicate: true };
      throw err;
    }
    await this.queue(account._id, dest, { id: req.messageId, msg_type: 'publish', data: req.data, tags: req.tags, source: req.source, timestamp: at.toISOString() });
    return { messageId: req.messageId, duplicate: false };
  }

  private async queue(accountId: string, dest: string, message: DeliveredMessage): Promise<void> {
    const doc: InboxDoc = { _id: message.id, accountId, dest, queuedAt: this.now(), message };
    await this.deps.store.enqueue(doc);
    this.deps.events.emit('messageQueued', { accountId, destName: dest, messageId: message.id, message });
  }

  /** Fire-and-forget (docs/contract.md §13): a failing flow never fails the message. */
  private trigger(event: DeviceEvent): void {
    const t = this.flowTrigger;
    if (!t) return;
    t.onDeviceEvent(event).catch((err: unknown) => this.deps.logger.error({ err, messageId: event.id }, 'flow trigger failed'));
  }
}
