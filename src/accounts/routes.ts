/** HTTP for the account: its entity roles, and the scanning API's usage answer. */
import type { RouteRegistry } from '../http/route';
import { actorOf } from './service';
import { bodyOf, principalOf } from '../http/route';
import type { CustomRoles } from './custom-roles';
import { PERMISSIONS, Permission } from './roles';
import { usageSchema } from './schemas';
import type { AccountUsage } from './usage';

const roleSchema = {
  type: 'object',
  properties: { name: { type: 'string' }, permissions: { type: 'array', items: { type: 'string', enum: [...PERMISSIONS] } }, builtIn: { type: 'boolean' }, createdAt: { type: ['string', 'null'] } },
};
const permissionsSchema = { type: 'array', items: { type: 'string', enum: [...PERMISSIONS] }, uniqueItems: true, maxItems: PERMISSIONS.length };

export function registerAccountRoutes(r: RouteRegistry, s: { roles: CustomRoles; usage: AccountUsage }): void {
  r.add({
    method: 'GET', path: '/api/roles', dialect: 'messaging', tags: ['roles'], auth: 'account', rate: 'account-messaging',
    summary: 'Entity roles of the account: the built-in default role and custom roles',
    responses: { 200: { description: 'Roles', schema: { type: 'object', properties: { roles: { type: 'array', items: roleSchema } } } } },
    handler: async (ctx) => {
      ctx.body = { roles: await s.roles.list(principalOf(ctx).account) };
    },
  });
  r.add({
    method: 'POST', path: '/api/roles', dialect: 'messaging', tags: ['roles'], auth: 'account', rate: 'account-messaging',
    summary: 'Create a custom role (Standard and Pro; elsewhere 403 plan_required, feature custom_roles)',
    body: { schema: { type: 'object', required: ['name', 'permissions'], additionalProperties: false, properties: { name: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' }, permissions: permissionsSchema } }, maxBytes: 16 * 1024 },
    responses: { 201: { description: 'Created', schema: roleSchema }, 409: { description: 'Name taken' } },
    handler: async (ctx) => {
      ctx.status = 201;
      ctx.body = await s.roles.create(principalOf(ctx).account, bodyOf<{ name: string; permissions: Permission[] }>(ctx), actorOf(principalOf(ctx)));
    },
  });
  r.add({
    method: 'GET', path: '/api/roles/:name', dialect: 'messaging', tags: ['roles'], auth: 'account', rate: 'account-messaging',
    summary: 'One role', responses: { 200: { description: 'Role', schema: roleSchema } },
    handler: async (ctx) => {
      ctx.body = await s.roles.get(principalOf(ctx).account, ctx.params.name);
    },
  });
  r.add({
    method: 'PATCH', path: '/api/roles/:name', dialect: 'messaging', tags: ['roles'], auth: 'account', rate: 'account-messaging',
    summary: 'Replace a custom role\'s permissions (entities holding it get them on their next request)',
    body: { schema: { type: 'object', required: ['permissions'], additionalProperties: false, properties: { permissions: permissionsSchema } }, maxBytes: 16 * 1024 },
    responses: { 200: { description: 'Role', schema: roleSchema }, 409: { description: 'The built-in default role cannot be changed' } },
    handler: async (ctx) => {
      ctx.body = await s.roles.update(principalOf(ctx).account, ctx.params.name, bodyOf<{ permissions: Permission[] }>(ctx).permissions, actorOf(principalOf(ctx)));
    },
  });
  r.add({
    method: 'DELETE', path: '/api/roles/:name', dialect: 'messaging', tags: ['roles'], auth: 'account', rate: 'account-messaging',
    summary: 'Delete a custom role that no entity holds', responses: { 204: { description: 'Deleted' }, 409: { description: 'Still assigned, or the built-in default role' } },
    handler: async (ctx) => {
      await s.roles.remove(principalOf(ctx).account, ctx.params.name, actorOf(principalOf(ctx)));
      ctx.status = 204;
    },
  });

  r.add({
    method: 'GET', path: '/api/account/usage', dialect: 'scan', tags: ['account'], auth: 'account', rate: 'scan-read',
    summary: 'Scan usage of the current month and the last 30 days',
    responses: { 200: { description: 'Usage object', schema: usageSchema } },
    handler: async (ctx) => {
      ctx.body = await s.usage.scanUsage(principalOf(ctx).account);
    },
  });
}
