/** HTTP for the messaging API. */
import type { RouteRegistry } from '../http/route';
import { principalOf } from '../http/route';
import type { Services } from '../services';
import { entityInfoSchema } from './schemas';
import { ForbiddenError } from '../http/errors';

export function registerMessagingRoutes(r: RouteRegistry, s: Services): void {
  r.add({
    method: 'GET', path: '/api/entities/me', area: 'messaging', tags: ['entities'], auth: 'entity', rate: 'entity',
    summary: 'The calling entity: name, resource path, key id, and its MQTT topics',
    responses: { 200: { description: 'Entity info', schema: entityInfoSchema } },
    handler: async (ctx) => {
      const p = principalOf(ctx);
      if (p.kind !== 'entity') throw new ForbiddenError('This endpoint requires an entity API key');
      ctx.body = s.messagingInfo.entityInfo(p.account, p.entity);
    },
  });
}
