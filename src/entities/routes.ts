/**
 * HTTP for entity registration and management by the account: bulk registration, list, get,
 * change, delete and key rotation. Registered after the messaging routes, whose fixed paths
 * under /api/entities/ (me, messages, status-table, check_messages) come before `:name`.
 */
import { actorOf } from '../accounts/service';
import type { RouteRegistry } from '../http/route';
import { bodyOf, principalOf, queryOf } from '../http/route';
import type { EntityService } from './service';
import {
  BulkRequest, bulkBodySchema, bulkResultSchema, entityListQuerySchema, entityListSchema, EntityPatch, entityPatchSchema, entityViewSchema,
  rotatedKeySchema,
} from './schemas';

export function registerEntityRoutes(r: RouteRegistry, s: { entities: EntityService }): void {
  r.add({
    method: 'POST', path: '/api/entities/bulk', dialect: 'messaging', tags: ['entities'], auth: 'account', rate: 'account-messaging',
    summary: 'Register up to 1,000 devices: count + prefix, or an explicit list (which takes precedence)',
    description: 'Each device gets its own API key, shown once. A taken or invalid name, or the plan\'s entity quota, fails that entry only. One audit entry (bulk_create) per request.',
    body: { schema: bulkBodySchema, maxBytes: 512 * 1024 },
    responses: { 200: { description: '{created, failed, results}', schema: bulkResultSchema } },
    handler: async (ctx) => {
      const p = principalOf(ctx);
      ctx.body = await s.entities.bulkRegister(p.account, bodyOf<BulkRequest>(ctx), actorOf(p));
      // Keys shown once: no cache on the way may keep a copy.
      ctx.set('Cache-Control', 'no-store');
    },
  });

  r.add({
    method: 'GET', path: '/api/entities', dialect: 'messaging', tags: ['entities'], auth: 'account', rate: 'account-messaging',
    summary: 'Entities of the account by name',
    query: entityListQuerySchema,
    responses: { 200: { description: '{entities, next_cursor}', schema: entityListSchema } },
    handler: async (ctx) => {
      const q = queryOf<{ limit: number; offset: number }>(ctx);
      ctx.body = await s.entities.listEntities(principalOf(ctx).account._id, q.offset, q.limit);
    },
  });
  r.add({
    method: 'GET', path: '/api/entities/:name', dialect: 'messaging', tags: ['entities'], auth: 'account', rate: 'account-messaging',
    summary: 'One entity',
    responses: { 200: { description: 'Entity', schema: entityViewSchema }, 404: { description: 'No such entity in this account' } },
    handler: async (ctx) => {
      ctx.body = await s.entities.getEntity(principalOf(ctx).account._id, ctx.params.name);
    },
  });
  r.add({
    method: 'PATCH', path: '/api/entities/:name', dialect: 'messaging', tags: ['entities'], auth: 'account', rate: 'account-messaging',
    summary: 'Change tags, metadata (replaced), role or validation service (null removes it)',
    body: { schema: entityPatchSchema, maxBytes: 64 * 1024 },
    responses: { 200: { description: 'The entity after the change', schema: entityViewSchema }, 404: { description: 'No such entity in this account' } },
    handler: async (ctx) => {
      const p = principalOf(ctx);
      ctx.body = await s.entities.updateEntity(p.account, ctx.params.name, bodyOf<EntityPatch>(ctx), actorOf(p));
    },
  });
  r.add({
    method: 'DELETE', path: '/api/entities/:name', dialect: 'messaging', tags: ['entities'], auth: 'account', rate: 'account-messaging',
    summary: 'Delete an entity: its key stops working at once (HTTP and MQTT) and its pending messages are dropped',
    responses: { 204: { description: 'Deleted' }, 404: { description: 'No such entity in this account' } },
    handler: async (ctx) => {
      const p = principalOf(ctx);
      await s.entities.deleteEntity(p.account._id, ctx.params.name, actorOf(p));
      ctx.status = 204;
    },
  });
  r.add({
    method: 'POST', path: '/api/entities/:name/keys/rotate', dialect: 'messaging', tags: ['entities'], auth: 'account', rate: 'account-messaging',
    summary: 'Revoke the entity\'s key at once and issue a new one (shown once)',
    responses: { 200: { description: 'The new key', schema: rotatedKeySchema }, 404: { description: 'No such entity in this account' } },
    handler: async (ctx) => {
      const p = principalOf(ctx);
      ctx.body = await s.entities.rotateKey(p.account._id, ctx.params.name, actorOf(p));
      ctx.set('Cache-Control', 'no-store');
    },
  });
}
