/** HTTP for the vault: list, create or replace, delete. Values are never in a response. */
import { bodyOf, principalOf, RouteRegistry } from '../http/route';
import { publicVaultEntry, type VaultService } from './service';
import { vaultEntrySchema, vaultListSchema, vaultPutSchema, VaultPut } from './schemas';

export function registerVaultRoutes(r: RouteRegistry, s: { vault: VaultService }): void {
  r.add({
    method: 'GET', path: '/api/vault', dialect: 'scan', tags: ['vault'], auth: 'account', rate: 'none',
    summary: 'Vault entries of the account (names only; values are never returned)',
    responses: { 200: { description: 'Entries', schema: vaultListSchema } },
    handler: async (ctx) => {
      ctx.body = { entries: (await s.vault.list(principalOf(ctx).account._id)).map(publicVaultEntry) };
    },
  });

  r.add({
    method: 'POST', path: '/api/vault', dialect: 'scan', tags: ['vault'], auth: 'account', rate: 'workflow-write',
    summary: 'Store a secret (201), or replace the value of an existing name (200)',
    description: 'Workflows use it as `{{ vault.NAME }}`; the value is resolved only inside the activity that needs it and replaced by `[vault:NAME]` anywhere it would be reported.',
    body: { schema: vaultPutSchema, maxBytes: 64 * 1024 },
    responses: { 201: { description: 'Created', schema: vaultEntrySchema }, 200: { description: 'Replaced', schema: vaultEntrySchema }, 403: { description: 'The plan\'s vault entries are used up: `{error, code: "limit_reached", usage, limit, plan}`' } },
    handler: async (ctx) => {
      const body = bodyOf<VaultPut>(ctx);
      const { account } = principalOf(ctx);
      const { entry, created } = await s.vault.put(account._id, body.name, body.value, account.plan);
      ctx.status = created ? 201 : 200;
      ctx.body = publicVaultEntry(entry);
    },
  });

  r.add({
    method: 'DELETE', path: '/api/vault/:name', dialect: 'scan', tags: ['vault'], auth: 'account', rate: 'workflow-write',
    summary: 'Delete a vault entry',
    responses: { 204: { description: 'Deleted' } },
    handler: async (ctx) => {
      await s.vault.remove(principalOf(ctx).account._id, ctx.params.name);
      ctx.status = 204;
    },
  });
}
