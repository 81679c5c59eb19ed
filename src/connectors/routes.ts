/** HTTP for connectors: CRUD; credentials go in, never out (`credentials.configured`). */
import { bodyOf, principalOf, RouteRegistry } from '../http/route';
import { publicConnector, type ConnectorService } from './service';
import { connectorCreateSchema, connectorListSchema, connectorReplaceSchema, connectorSchema, ConnectorCreate, ConnectorReplace } from './schemas';

const BODY_MAX_BYTES = 16 * 1024;

export function registerConnectorRoutes(r: RouteRegistry, s: { connectors: ConnectorService }): void {
  r.add({
    method: 'GET', path: '/api/connectors', dialect: 'scan', tags: ['connectors'], auth: 'account', rate: 'none',
    summary: 'Connectors of the account',
    responses: { 200: { description: 'Connectors', schema: connectorListSchema } },
    handler: async (ctx) => {
      ctx.body = { connectors: (await s.connectors.list(principalOf(ctx).account._id)).map(publicConnector) };
    },
  });

  r.add({
    method: 'POST', path: '/api/connectors', dialect: 'scan', tags: ['connectors'], auth: 'account', rate: 'workflow-write',
    summary: 'Create a connector (type aws: S3 with a region, an optional S3-compatible endpoint and an access key)',
    body: { schema: connectorCreateSchema, maxBytes: BODY_MAX_BYTES },
    responses: {
      201: { description: 'Created', schema: connectorSchema },
      403: { description: 'The plan\'s connectors are used up: `{error, code: "limit_reached", usage, limit, plan}`' },
      409: { description: 'A connector of that name exists' },
    },
    handler: async (ctx) => {
      ctx.status = 201;
      const { account } = principalOf(ctx);
      ctx.body = publicConnector(await s.connectors.create(account._id, bodyOf<ConnectorCreate>(ctx), account.plan));
    },
  });

  r.add({
    method: 'GET', path: '/api/connectors/:id', dialect: 'scan', tags: ['connectors'], auth: 'account', rate: 'none',
    summary: 'One connector (credentials never shown)',
    responses: { 200: { description: 'Connector', schema: connectorSchema } },
    handler: async (ctx) => {
      ctx.body = publicConnector(await s.connectors.get(principalOf(ctx).account._id, ctx.params.id));
    },
  });

  r.add({
    method: 'PUT', path: '/api/connectors/:id', dialect: 'scan', tags: ['connectors'], auth: 'account', rate: 'workflow-write',
    summary: 'Replace a connector; access_key_id / secret_access_key left out keep their stored values',
    body: { schema: connectorReplaceSchema, maxBytes: BODY_MAX_BYTES },
    responses: { 200: { description: 'Connector', schema: connectorSchema }, 409: { description: 'Another connector has that name' } },
    handler: async (ctx) => {
      ctx.body = publicConnector(await s.connectors.replace(principalOf(ctx).account._id, ctx.params.id, bodyOf<ConnectorReplace>(ctx)));
    },
  });

  r.add({
    method: 'DELETE', path: '/api/connectors/:id', dialect: 'scan', tags: ['connectors'], auth: 'account', rate: 'workflow-write',
    summary: 'Delete a connector',
    responses: { 204: { description: 'Deleted' } },
    handler: async (ctx) => {
      await s.connectors.remove(principalOf(ctx).account._id, ctx.params.id);
      ctx.status = 204;
    },
  });
}
