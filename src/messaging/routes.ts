/** HTTP for the messaging API: translates requests to the pipeline and MessagingService and back (entity management: entities/routes.ts). */
import { actorOf } from '../accounts/service';
import { FIXED_LIMITS, hasEntitlement } from '../accounts/plans';
import { type AppContext, bodyOf, principalOf, queryOf, type RouteRegistry } from '../http/route';
import { ForbiddenError, PlanRequiredError } from '../errors';
import { checkJsonShape } from '../json-schema';
import type { AuditLog } from '../accounts/audit';
import type { Logger } from '../log';
import { exportAuditLog, exportMessages, ExportStream } from './export';
import type { MessageExport } from './records';
import type { MessagePipeline, Sender } from './pipeline';
import type { MessagingInfo, MessagingService } from './service';
import { countMessage, observeMessage } from '../telemetry/metrics';
import {
  auditExportQuerySchema, batchBodySchema, batchResultSchema, checkMessagesQuerySchema, checkMessagesResultSchema, entityInfoSchema,
  AuditExportQuery, MessagesExportQuery, messageItemSchema, messageListQuerySchema, messageListSchema, MessageSearch, messageSchema, messageSearchSchema,
  messagesExportQuerySchema, notificationsSchema, publishResultSchema, serviceBodySchema, ServiceInput, serviceListSchema, ServicePatch,
  servicePatchSchema, serviceViewSchema, statusTableBodySchema, statusTableSchema,
} from './schemas';

const BATCH_BODY_BYTES = 1024 * 1024;

function entityOf(ctx: AppContext): Sender {
  const p = principalOf(ctx);
  if (p.kind !== 'entity') throw new ForbiddenError('This endpoint requires an entity API key');
  return { account: p.account, entity: p.entity, permissions: p.permissions };
}

function sendExport(ctx: AppContext, e: ExportStream): void {
  ctx.set('Content-Disposition', `attachment; filename="${e.filename}"`);
  ctx.type = e.contentType;
  ctx.body = e.body;
}

/** Only the messaging services (and the audit log the audit export reads). */
export interface MessagingRouteServices {
  messaging: MessagingService; messagePipeline: MessagePipeline; messagingInfo: MessagingInfo; messageExport: MessageExport; audit: AuditLog; logger: Logger;
}

export function registerMessagingRoutes(r: RouteRegistry, s: MessagingRouteServices): void {
  const m = s.messaging;

  // --- entity side ---------------------------------------------------------------------------

  r.add({
    method: 'GET', path: '/api/entities/me', dialect: 'messaging', tags: ['entities'], auth: 'entity', rate: 'entity',
    summary: 'The calling entity: name, resource path, key id, and its MQTT topics',
    responses: { 200: { description: 'Entity info', schema: entityInfoSchema } },
    handler: async (ctx) => {
      const e = entityOf(ctx);
      ctx.body = s.messagingInfo.entityInfo(e.account, e.entity);
    },
  });

  r.add({
    method: 'POST', path: '/api/entities/message', dialect: 'messaging', tags: ['messages'], auth: 'entity', permission: 'entity:Publish', rate: 'entity',
    summary: 'Send one message (publish, heartbeat, state_new, state_update, client_cmd_resp)',
    description: 'A heartbeat is answered 200 with an empty body. state_new/state_update also need entity:State. A publish over the monthly data limit is refused with 429 code data_limit_exceeded; other types keep flowing. Unknown destination: 404.',
    body: { schema: messageSchema, maxBytes: FIXED_LIMITS.messageBodyBytes },
    responses: {
      200: { description: '{code: 200, content: message id}; empty body for a heartbeat', schema: publishResultSchema, otherContent: { 'text/plain': { type: 'string', maxLength: 0 } } },
      404: { description: 'Destination entity not found' },
    },
    handler: async (ctx) => {
      const result = await countMessage('http', bodyOf<unknown>(ctx), () => s.messagePipeline.process(entityOf(ctx), bodyOf<unknown>(ctx)));
      ctx.status = 200;
      ctx.body = bodyOf<{ msg_type?: string }>(ctx).msg_type === 'heartbeat' ? '' : result;
    },
  });

  r.add({
    method: 'POST', path: '/api/entities/messages', dialect: 'messaging', tags: ['messages'], auth: 'entity', permission: 'entity:Publish', rate: 'entity',
    summary: 'Send up to 100 messages; each is judged on its own',
    body: { schema: batchBodySchema, maxBytes: BATCH_BODY_BYTES },
    responses: { 200: { description: 'Positional results', schema: batchResultSchema } },
    handler: async (ctx) => {
      const results = await s.messagePipeline.processBatch(entityOf(ctx), bodyOf<unknown[]>(ctx));
      results.forEach((r, i) => observeMessage('http', bodyOf<unknown[]>(ctx)[i], r.code));
      ctx.body = { results };
    },
  });

  r.add({
    method: 'GET', path: '/api/entities/status-table', dialect: 'messaging', tags: ['state'], auth: 'entity', permission: 'entity:State', rate: 'entity',
    summary: 'The calling entity\'s state table',
    responses: { 200: { description: '{statusTable}', schema: statusTableSchema } },
    handler: async (ctx) => {
      const e = entityOf(ctx);
      ctx.body = { statusTable: await m.getStatusTable(e.account._id, e.entity.name) };
    },
  });
  for (const method of ['PATCH', 'PUT'] as const) {
    r.add({
      method, path: '/api/entities/status-table', dialect: 'messaging', tags: ['state'], auth: 'entity', permission: 'entity:State', rate: 'entity',
      summary: method === 'PATCH' ? 'Merge keys into the state table (omitted keys unchanged)' : 'Replace the whole state table',
      description: 'Immediate, without message processing (no validation, flows or data accounting). Answers the full table after the change.',
      body: { schema: statusTableBodySchema, maxBytes: FIXED_LIMITS.messageBodyBytes },
      responses: {
        200: { description: '{statusTable}: the whole table after the change', schema: statusTableSchema },
        409: { description: 'Other changes of the table kept winning the race (code `conflict`); retry' },
      },
      handler: async (ctx) => {
        const e = entityOf(ctx);
        const table = bodyOf<Record<string, unknown>>(ctx);
        // Stored exactly as sent, so a number JSON cannot keep (1e309 parses as Infinity and
        // would be stored as null) is refused, as in a state message.
        checkJsonShape(table, { numbers: true });
        ctx.body = { statusTable: await m.writeStatusTable(e.entity, table, method === 'PATCH' ? 'merge' : 'replace') };
      },
    });
  }

  r.add({
    method: 'GET', path: '/api/entities/check_messages', dialect: 'messaging', tags: ['messages'], auth: 'entity', permission: 'entity:CheckMessages', rate: 'entity',
    summary: 'Take pending messages addressed to the calling entity (each is delivered once)',
    query: checkMessagesQuerySchema,
    responses: { 200: { description: '{messages}: oldest first; null when none are pending', schema: checkMessagesResultSchema } },
    handler: async (ctx) => {
      const e = entityOf(ctx);
      ctx.body = { messages: await m.checkMessages(e.account._id, e.entity.name, queryOf<{ limit: number }>(ctx).limit) };
    },
  });

  // --- history (entity key with entity:ListMessages, or account key) ------------------------

  r.add({
    method: 'GET', path: '/api/entities/messages', dialect: 'messaging', tags: ['messages'], auth: 'any', permission: 'entity:ListMessages', rate: 'account-messaging',
    summary: 'Publish messages of the account, newest first',
    query: messageListQuerySchema,
    responses: { 200: { description: '{messages, next_cursor}', schema: messageListSchema } },
    handler: async (ctx) => {
      ctx.body = await m.listMessages(principalOf(ctx).account._id, queryOf<{ entity_name?: string; limit: number; offset: number }>(ctx));
    },
  });
  r.add({
    method: 'POST', path: '/api/entities/messages/search', dialect: 'messaging', tags: ['messages'], auth: 'any', permission: 'entity:ListMessages', rate: 'account-messaging',
    summary: 'Search publish messages by sender, tags (any of) and time range',
    body: { schema: messageSearchSchema, maxBytes: 16 * 1024 },
    responses: { 200: { description: '{messages, next_cursor}', schema: messageListSchema } },
    handler: async (ctx) => {
      ctx.body = await m.searchMessages(principalOf(ctx).account._id, bodyOf<MessageSearch>(ctx));
    },
  });
  r.add({
    method: 'GET', path: '/api/entities/messages/:id', dialect: 'messaging', tags: ['messages'], auth: 'any', permission: 'entity:ListMessages', rate: 'account-messaging',
    summary: 'One publish message',
    responses: { 200: { description: 'Message', schema: messageItemSchema }, 404: { description: 'Unknown id, another account\'s, or not a publish' } },
    handler: async (ctx) => {
      ctx.body = await m.getMessage(principalOf(ctx).account._id, ctx.params.id);
    },
  });

  // --- account side --------------------------------------------------------------------------

  r.add({
    method: 'GET', path: '/api/entities/:name/status-table', dialect: 'messaging', tags: ['state'], auth: 'account', rate: 'account-messaging',
    summary: 'An entity\'s state table, read by its account (the dashboard\'s device page)',
    responses: { 200: { description: '{statusTable}', schema: statusTableSchema }, 404: { description: 'No such entity in this account' } },
    handler: async (ctx) => {
      ctx.body = { statusTable: await m.getStatusTable(principalOf(ctx).account._id, ctx.params.name) };
    },
  });

  r.add({
    method: 'GET', path: '/api/services', dialect: 'messaging', tags: ['services'], auth: 'account', rate: 'account-messaging',
    summary: 'Validation services of the account',
    responses: { 200: { description: '{services}', schema: serviceListSchema } },
    handler: async (ctx) => { ctx.body = await m.listServices(principalOf(ctx).account._id); },
  });
  r.add({
    method: 'POST', path: '/api/services', dialect: 'messaging', tags: ['services'], auth: 'account', rate: 'account-messaging',
    summary: 'Create a validation service: named rules, each a JSON Schema for a publish\'s data',
    body: { schema: serviceBodySchema, maxBytes: 256 * 1024 },
    responses: { 201: { description: 'The service', schema: serviceViewSchema }, 409: { description: 'A service of that name exists' } },
    handler: async (ctx) => {
      const p = principalOf(ctx);
      ctx.status = 201;
      ctx.body = await m.createService(p.account._id, bodyOf<ServiceInput>(ctx), actorOf(p));
    },
  });
  r.add({
    method: 'GET', path: '/api/services/:id', dialect: 'messaging', tags: ['services'], auth: 'account', rate: 'account-messaging',
    summary: 'One validation service',
    responses: { 200: { description: 'The service', schema: serviceViewSchema }, 404: { description: 'Unknown or another account\'s' } },
    handler: async (ctx) => { ctx.body = await m.getService(principalOf(ctx).account._id, ctx.params.id); },
  });
  r.add({
    method: 'PATCH', path: '/api/services/:id', dialect: 'messaging', tags: ['services'], auth: 'account', rate: 'account-messaging',
    summary: 'Rename a service or replace its rules',
    body: { schema: servicePatchSchema, maxBytes: 256 * 1024 },
    responses: {
      200: { description: 'The service after the change', schema: serviceViewSchema }, 404: { description: 'Unknown or another account\'s' },
      409: { description: 'A service of that name exists' },
    },
    handler: async (ctx) => {
      const p = principalOf(ctx);
      ctx.body = await m.updateService(p.account._id, ctx.params.id, bodyOf<ServicePatch>(ctx), actorOf(p));
    },
  });
  r.add({
    method: 'DELETE', path: '/api/services/:id', dialect: 'messaging', tags: ['services'], auth: 'account', rate: 'account-messaging',
    summary: 'Delete a service; entities using it are unassigned',
    responses: { 204: { description: 'Deleted' }, 404: { description: 'Unknown or another account\'s' } },
    handler: async (ctx) => {
      const p = principalOf(ctx);
      await m.deleteService(p.account._id, ctx.params.id, actorOf(p));
      ctx.status = 204;
    },
  });

  r.add({
    method: 'GET', path: '/api/account/notifications', dialect: 'messaging', tags: ['account'], auth: 'account', rate: 'account-messaging',
    summary: 'In-app warnings: 80% and 100% of the monthly messaging data limit, each once per month',
    responses: { 200: { description: '{notifications}, newest first', schema: notificationsSchema } },
    handler: async (ctx) => { ctx.body = await m.notifications(principalOf(ctx).account._id); },
  });

  r.add({
    method: 'GET', path: '/api/messages/export', dialect: 'messaging', tags: ['exports'], auth: 'account', rate: 'account-messaging',
    summary: 'Download every publish message of the account, newest first, as CSV (header row) or a JSON array',
    query: messagesExportQuerySchema,
    responses: { 200: { description: 'Attachment; CSV columns id, source, destination, msgType, data (JSON), tags (JSON), timestamp; or the same rows as a JSON array', contentType: 'text/csv', otherContent: { 'application/json': { type: 'array', items: { type: 'object' } } } } },
    handler: async (ctx) => {
      const q = queryOf<MessagesExportQuery>(ctx);
      sendExport(ctx, exportMessages(s.messageExport, s.logger, principalOf(ctx).account._id, {
        format: q.format, from: q.from ? new Date(q.from) : undefined, to: q.to ? new Date(q.to) : undefined,
      }));
    },
  });
  r.add({
    method: 'GET', path: '/api/audit-log/export', dialect: 'messaging', tags: ['exports'], auth: 'account', rate: 'account-messaging',
    summary: 'Download the audit log (Standard and Pro), newest first, as CSV or a JSON array; writes an audit entry',
    query: auditExportQuerySchema,
    responses: { 200: { description: 'Attachment; CSV columns id, action, resourceType, resourceId, resourceName, userEmail, timestamp, details (JSON); or the same rows as a JSON array', contentType: 'text/csv', otherContent: { 'application/json': { type: 'array', items: { type: 'object' } } } } },
    handler: async (ctx) => {
      const p = principalOf(ctx);
      if (!hasEntitlement(p.account.plan, 'audit_log')) throw new PlanRequiredError('audit_log', p.account.plan);
      const q = queryOf<AuditExportQuery>(ctx);
      // Recorded before streaming, so an export cut short is still on record (and appears in itself).
      await s.audit.record({
        accountId: p.account._id, action: 'export', resourceType: 'audit_log', resourceId: ctx.state.requestId, resourceName: 'audit log',
        userEmail: actorOf(p), details: { format: q.format, resourceType: q.resourceType ?? null, action: q.action ?? null, from: q.from ?? null, to: q.to ?? null },
      });
      sendExport(ctx, exportAuditLog(s.audit, s.logger, p.account._id, {
        format: q.format, resourceType: q.resourceType, action: q.action, from: q.from ? new Date(q.from) : undefined, to: q.to ? new Date(q.to) : undefined,
      }));
    },
  });
}
