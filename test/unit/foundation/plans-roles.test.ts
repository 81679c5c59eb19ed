/**
 * The one plans table (docs/contract.md §3; each number written out below), the plan gates, and custom roles
 * (entitlement, name validation, the built-in default role, conflicts) on an in-memory store.
 */
import { MongoServerError } from 'mongodb';
import { CustomRoles } from '../../../src/accounts/custom-roles';
import type { AuditLog } from '../../../src/accounts/audit';
import { FIXED_LIMITS, PLANS, PLAN_TIERS, Entitlement, hasEntitlement, isPlanTier, planOf } from '../../../src/accounts/plans';
import { DEFAULT_ROLE_PERMISSIONS, PERMISSIONS, isPermission, Permission } from '../../../src/accounts/roles';
import type { AccountDoc, AccountStore, RoleDoc } from '../../../src/accounts/records';
import { AppError, PlanRequiredError } from '../../../src/errors';

const MB = 1024 * 1024;
const GB = 1024 * MB;

describe('plans table (docs/contract.md §3)', () => {
  test.each([
    ['free', 100, 10, 10, 10, 50 * MB, 5, 1_000, 2, 2, 5, 1 * MB],
    ['starter', 2_000, 50, 60, 100, 1 * GB, 25, 10_000, 5, 10, 25, 2 * MB],
    ['standard', 20_000, 75, 200, 1_000, 10 * GB, 100, 100_000, 20, 50, 100, 5 * MB],
    ['pro', 100_000, 100, 500, 10_000, 100 * GB, 500, 1_000_000, 50, 200, 500, 10 * MB],
  ] as const)('%s', (tier, scans, fileMb, rpm, entities, bytes, workflows, runs, concurrent, connectors, vault, py) => {
    expect(planOf(tier)).toMatchObject({
      tier, scansPerMonth: scans, maxFileSizeMb: fileMb, scanRequestsPerMinute: rpm, maxEntities: entities, messagingBytesPerMonth: bytes,
      maxWorkflows: workflows, workflowRunsPerMonth: runs, concurrentWorkflowRuns: concurrent, maxConnectors: connectors,
      maxVaultEntries: vault, pythonSnippetOutputBytes: py,
    });
  });

  const ALL: Entitlement[] = ['webhooks', 'async_scanning', 'audit_log', 'analytics', 'custom_roles', 'blocked_ips'];
  test.each([
    ['free', []],
    ['starter', ['webhooks']],
    ['standard', ALL],
    ['pro', ALL],
  ] as const)('%s entitlements', (tier, expected) => {
    for (const e of ALL) expect(hasEntitlement(tier, e)).toBe((expected as readonly string[]).includes(e));
  });

  test('limits that every plan shares match the spec', () => {
    expect(FIXED_LIMITS).toMatchObject({
      scanWritesPerMinute: 30, scanReadsPerMinute: 60, autoDeferBytes: 25 * MB, maxPayloadDecodedBytes: 10 * MB,
      historyPageDefault: 25, historyPageMax: 100, messageDataBytes: 5 * 1024, messagingRequestsPerSecondPerKey: 50,
      tagsPerMessage: 10, messagesPageDefault: 10, checkMessagesDefault: 1, exportPageRows: 1_000, jsonNestingDepth: 20,
      workflowWritesPerMinute: 30, workflowRunsPerMinute: 60,
    });
  });

  test('plans grow monotonically from free to pro', () => {
    const numeric = Object.keys(PLANS.free).filter((k) => typeof (PLANS.free as unknown as Record<string, unknown>)[k] === 'number');
    expect(numeric.length).toBeGreaterThanOrEqual(11);
    for (let i = 1; i < PLAN_TIERS.length; i++) {
      const lo = PLANS[PLAN_TIERS[i - 1]] as unknown as Record<string, number>;
      const hi = PLANS[PLAN_TIERS[i]] as unknown as Record<string, number>;
      for (const k of numeric) expect(hi[k]).toBeGreaterThanOrEqual(lo[k]);
    }
  });

  test.each([['FREE'], [' free'], ['free '], ['Pro'], ['enterprise'], [''], ['constructor'], ['__proto__'], ['toString'], [null], [undefined], [1], [['free']], [{}]])(
    'isPlanTier(%p) is false', (v) => {
      expect(isPlanTier(v)).toBe(false);
    },
  );

  test('isPlanTier accepts exactly the four tiers', () => {
    expect(PLAN_TIERS.filter(isPlanTier)).toEqual(['free', 'starter', 'standard', 'pro']);
  });

  test('permissions: exactly five, the default role lacks only ListMessages, isPermission is exact', () => {
    expect([...PERMISSIONS].sort()).toEqual(['entity:CheckMessages', 'entity:Files', 'entity:ListMessages', 'entity:Publish', 'entity:State']);
    expect(PERMISSIONS.filter((p) => !DEFAULT_ROLE_PERMISSIONS.includes(p))).toEqual(['entity:ListMessages']);
    for (const v of ['entity:publish', 'entity:Publish ', 'entity:*', '*', 'Publish', '', null, 0]) expect(isPermission(v)).toBe(false);
  });

  test('PlanRequiredError carries the documented body fields', () => {
    const e = new PlanRequiredError('async_scanning', 'starter');
    expect(e.status).toBe(403);
    expect(e.code).toBe('plan_required');
    expect(e.extra).toEqual({ feature: 'async_scanning', current_plan: 'starter', upgrade: true });
    expect(e.message).toContain('async scanning');
  });
});

class MemoryRoles {
  roles: RoleDoc[] = [];
  entityRoles: string[] = [];
  async listRoles(acc: string) { return this.roles.filter((r) => r.accountId === acc).sort((a, b) => (a.name < b.name ? -1 : 1)); }
  async findRole(acc: string, name: string) { return this.roles.find((r) => r.accountId === acc && r.name === name) ?? null; }
  async insertRole(d: RoleDoc) {
    if (this.roles.some((r) => r.accountId === d.accountId && r.name === d.name)) throw new MongoServerError({ message: 'E11000', code: 11000 });
    this.roles.push(d);
  }
  async setRolePermissions(acc: string, name: string, permissions: Permission[]) {
    const r = this.roles.find((x) => x.accountId === acc && x.name === name);
    if (!r) return null;
    r.permissions = permissions;
    return r;
  }
  async deleteRole(acc: string, name: string) { const n = this.roles.length; this.roles = this.roles.filter((r) => !(r.accountId === acc && r.name === name)); return n !== this.roles.length; }
  async roleInUse(_acc: string, role: string) { return this.entityRoles.includes(role); }
}

function rolesSetup(plan: AccountDoc['plan'] = 'standard') {
  const store = new MemoryRoles();
  const audit: unknown[] = [];
  const roles = new CustomRoles(store as unknown as AccountStore, store, { record: async (e: unknown) => { audit.push(e); return e; } } as unknown as AuditLog);
  const account: AccountDoc = { _id: 'acc-1', name: 'acme', plan, region: 'local', entityCount: 0, createdAt: new Date(0) };
  return { store, audit, roles, account };
}

async function rejected(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('custom roles', () => {
  test.each(['free', 'starter'] as const)('on %s, create and update are 403 plan_required (custom_roles) and write nothing', async (plan) => {
    const { roles, account, store, audit } = rolesSetup(plan);
    for (const p of [roles.create(account, { name: 'r', permissions: ['entity:Publish'] }, 'cli'), roles.update(account, 'r', ['entity:State'], 'cli')]) {
      const err = await rejected(p);
      expect(err.status).toBe(403);
      expect(err.code).toBe('plan_required');
      expect(err.extra).toMatchObject({ feature: 'custom_roles', current_plan: plan, upgrade: true });
    }
    expect(store.roles).toHaveLength(0);
    expect(audit).toHaveLength(0);
  });

  test('create stores the permissions de-duplicated, audits it, and the list shows the built-in default first', async () => {
    const { roles, account, audit } = rolesSetup('pro');
    const v = await roles.create(account, { name: 'ops.team_1-a', permissions: ['entity:State', 'entity:State', 'entity:ListMessages'] }, 'api_key:k');
    expect(v).toMatchObject({ name: 'ops.team_1-a', permissions: ['entity:State', 'entity:ListMessages'], builtIn: false });
    expect(audit).toEqual([expect.objectContaining({ action: 'create', resourceType: 'role', resourceName: 'ops.team_1-a', userEmail: 'api_key:k' })]);
    const list = await roles.list(account);
    expect(list.map((r) => [r.name, r.builtIn])).toEqual([['default', true], ['ops.team_1-a', false]]);
    expect(list[0].permissions).toEqual([...DEFAULT_ROLE_PERMISSIONS]);
  });

  test.each([
    [''], ['a'.repeat(65)], ['a b'], ['a/b'], ['r\n'], ['\nr'], ['r\u0000'], ['r\u00f4le'], ['$where'], ['a:b'], ['../x'],
  ])('role name %p is refused with 400', async (name) => {
    const { roles, account, store } = rolesSetup();
    expect((await rejected(roles.create(account, { name, permissions: [] }, 'cli'))).status).toBe(400);
    expect(store.roles).toHaveLength(0);
  });

  test('a 64-character name is accepted, the name "default" is 409, a taken name is 409', async () => {
    const { roles, account } = rolesSetup();
    await expect(roles.create(account, { name: 'a'.repeat(64), permissions: [] }, 'cli')).resolves.toMatchObject({ name: 'a'.repeat(64) });
    expect((await rejected(roles.create(account, { name: 'default', permissions: ['entity:ListMessages'] }, 'cli'))).status).toBe(409);
    expect((await rejected(roles.create(account, { name: 'a'.repeat(64), permissions: [] }, 'cli'))).status).toBe(409);
  });

  test('the default role cannot be changed or deleted, and get("default") answers the built-in view', async () => {
    const { roles, account } = rolesSetup();
    expect((await rejected(roles.update(account, 'default', ['entity:ListMessages'], 'cli'))).status).toBe(409);
    expect((await rejected(roles.remove(account, 'default', 'cli'))).status).toBe(409);
    expect(await roles.get(account, 'default')).toMatchObject({ name: 'default', builtIn: true, createdAt: null });
  });

  test('update and delete of an unknown role are 404; delete of a role in use is 409 and keeps it', async () => {
    const { roles, account, store } = rolesSetup();
    expect((await rejected(roles.update(account, 'ghost', [], 'cli'))).status).toBe(404);
    expect((await rejected(roles.remove(account, 'ghost', 'cli'))).status).toBe(404);
    expect((await rejected(roles.get(account, 'ghost'))).status).toBe(404);
    await roles.create(account, { name: 'used', permissions: ['entity:Publish'] }, 'cli');
    store.entityRoles.push('used');
    expect((await rejected(roles.remove(account, 'used', 'cli'))).status).toBe(409);
    expect(store.roles.map((r) => r.name)).toEqual(['used']);
    store.entityRoles = [];
    await roles.remove(account, 'used', 'cli');
    expect(store.roles).toHaveLength(0);
  });

  test('roles of another account are invisible (404), not shared', async () => {
    const { roles, account, store } = rolesSetup();
    await roles.create(account, { name: 'mine', permissions: ['entity:Publish'] }, 'cli');
    const other: AccountDoc = { ...account, _id: 'acc-2' };
    expect((await rejected(roles.get(other, 'mine'))).status).toBe(404);
    expect((await rejected(roles.update(other, 'mine', ['entity:ListMessages'], 'cli'))).status).toBe(404);
    expect(store.roles[0].permissions).toEqual(['entity:Publish']);
    expect((await roles.list(other)).map((r) => r.name)).toEqual(['default']);
  });
});
