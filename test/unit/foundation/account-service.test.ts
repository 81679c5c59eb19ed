/**
 * AccountService authentication on an in-memory AccountStore: account keys (unknown id, wrong
 * secret, revoked, deleted account), entity keys (rotation and deletion fail at once, forged or
 * foreign tokens, the legacy key-record path), the per-process account cache (a plan change seen
 * within ACCOUNT_CACHE_MS by every replica), role permissions, and the entity creation rules of
 * EntityService (src/entities/service.ts), which writes the records this authentication reads.
 */
import { SignJWT } from 'jose';
import { MongoServerError } from 'mongodb';
import { signEntityKey, sha256Hex, resourcePathOf, newAccountKey } from '../../../src/accounts/keys';
import type { PlanTier } from '../../../src/accounts/plans';
import { DEFAULT_ROLE_PERMISSIONS, PERMISSIONS, Permission } from '../../../src/accounts/roles';
import { ACCOUNT_CACHE_MS, AccountService, Principal, actorOf } from '../../../src/accounts/service';
import type { AuditLog } from '../../../src/accounts/audit';
import type { AccountDoc, AccountStore, ApiKeyDoc, RoleDoc } from '../../../src/accounts/records';
import type { EntityDoc, EntityKeyDoc, EntityStore } from '../../../src/entities/records';
import { EntityService } from '../../../src/entities/service';
import { AppError } from '../../../src/errors';
import type { Secrets } from '../../../src/secrets';

const dup = () => new MongoServerError({ message: 'E11000 duplicate key', code: 11000 });

/** The AccountStore and EntityStore methods AccountService and EntityService use, over Maps, counting reads. */
class MemoryAccountStore {
  accounts = new Map<string, AccountDoc>();
  apiKeys = new Map<string, ApiKeyDoc>();
  entities = new Map<string, EntityDoc>();
  entityKeys = new Map<string, EntityKeyDoc>();
  roles: RoleDoc[] = [];
  reads = { findAccount: 0, findApiKey: 0, findEntity: 0 };

  async insertAccount(d: AccountDoc) { if (this.accounts.has(d._id)) throw dup(); this.accounts.set(d._id, structuredClone(d)); }
  async findAccount(id: string) { this.reads.findAccount++; const a = this.accounts.get(id); return a ? structuredClone(a) : null; }
  async setPlan(id: string, plan: PlanTier) { const a = this.accounts.get(id); if (!a) return false; a.plan = plan; return true; }
  async insertApiKey(d: ApiKeyDoc) { this.apiKeys.set(d._id, structuredClone(d)); }
  async findApiKey(id: string) { this.reads.findApiKey++; const k = this.apiKeys.get(id); return k ? structuredClone(k) : null; }
  async reserveEntitySlot(id: string, max: number) { const a = this.accounts.get(id); if (!a || a.entityCount >= max) return false; a.entityCount++; return true; }
  async releaseEntitySlot(id: string) { const a = this.accounts.get(id); if (a && a.entityCount > 0) a.entityCount--; }
  async insertEntity(d: EntityDoc) { if (this.entities.has(d._id)) throw dup(); this.entities.set(d._id, structuredClone(d)); }
  async findEntity(acc: string, name: string) { this.reads.findEntity++; const e = this.entities.get(`${acc}/${name}`); return e ? structuredClone(e) : null; }
  async deleteEntity(acc: string, name: string) { return this.entities.delete(`${acc}/${name}`); }
  async setEntityKey(acc: string, name: string, apiKeyId: string, apiKeyHash: string) { const e = this.entities.get(`${acc}/${name}`); if (e) Object.assign(e, { apiKeyId, apiKeyHash }); }
  async insertEntityKey(d: EntityKeyDoc) { this.entityKeys.set(d._id, structuredClone(d)); }
  async findEntityKey(id: string) { const k = this.entityKeys.get(id); return k ? structuredClone(k) : null; }
  async revokeEntityKeys(acc: string, name: string, at: Date) {
    const ids: string[] = [];
    for (const k of this.entityKeys.values()) if (k.accountId === acc && k.entityName === name && !k.revokedAt) { k.revokedAt = at; ids.push(k._id); }
    return ids;
  }
  async deadEntityKeys(ids: string[]) { return ids.filter((id) => !this.entityKeys.get(id) || this.entityKeys.get(id)!.revokedAt); }
  async findRole(acc: string, name: string) { const r = this.roles.find((x) => x.accountId === acc && x.name === name); return r ? structuredClone(r) : null; }
}

const SECRETS: Secrets = { entityKeySecret: new TextEncoder().encode('x'.repeat(32) + '-unit-entity-secret'), dataEncryptionKey: Buffer.alloc(32, 7) };

/** The EntityService beside each AccountService of a test, on the same store. */
const entityServices = new Map<AccountService, EntityService>();
const ents = (svc: AccountService): EntityService => entityServices.get(svc)!;
const ACTOR = 'api_key:test';

function replicaOf(store: MemoryAccountStore): AccountService {
  return new AccountService(store as unknown as AccountStore, store, SECRETS, 'local');
}

function setup() {
  const store = new MemoryAccountStore();
  const svc = replicaOf(store);
  entityServices.set(svc, new EntityService({
    store: store as unknown as EntityStore, accounts: svc, secrets: SECRETS,
    audit: { record: async (e: unknown) => e } as unknown as AuditLog,
    inbox: { purgeInbox: async () => undefined }, validationServices: { findService: async () => null },
  }));
  return { store, svc };
}

async function accountPrincipal(svc: AccountService, key: string) {
  const p = await svc.authenticate(key);
  expect(p?.kind).toBe('account');
  return p as Extract<Principal, { kind: 'account' }>;
}

async function rejected(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

afterEach(() => jest.restoreAllMocks());

describe('account keys', () => {
  test('a new account key authenticates as the account with every permission', async () => {
    const { svc } = setup();
    const { accountId, apiKey, apiKeyId } = await svc.createAccount({ name: ' acme ', plan: 'free' });
    const p = await accountPrincipal(svc, apiKey);
    expect(p.account._id).toBe(accountId);
    expect(p.account.name).toBe('acme');
    expect(p.apiKeyId).toBe(apiKeyId);
    expect([...p.permissions].sort()).toEqual([...PERMISSIONS].sort());
    expect(actorOf(p)).toBe(`api_key:${apiKeyId}`);
  });

  test('an unknown key id of the right shape is refused, after the same store read a known id costs', async () => {
    const { svc, store } = setup();
    await svc.createAccount({ name: 'acme', plan: 'free' });
    const before = store.reads.findApiKey;
    expect(await svc.authenticate(newAccountKey().apiKey)).toBeUndefined();
    expect(store.reads.findApiKey).toBe(before + 1);
  });

  test('the right key id with another secret is refused', async () => {
    const { svc } = setup();
    const { apiKey } = await svc.createAccount({ name: 'acme', plan: 'free' });
    const otherSecret = newAccountKey().apiKey.split('.')[1];
    expect(await svc.authenticate(`${apiKey.split('.')[0]}.${otherSecret}`)).toBeUndefined();
  });

  test('a revoked key and a key of a deleted account are refused; the account\'s other key still works', async () => {
    const { svc, store } = setup();
    const { accountId, apiKey } = await svc.createAccount({ name: 'acme', plan: 'free' });
    const second = await svc.createAccountKey(accountId);
    store.apiKeys.get(apiKey.slice(3, 19))!.revokedAt = new Date();
    expect(await svc.authenticate(apiKey)).toBeUndefined();
    expect((await svc.authenticate(second.apiKey))?.kind).toBe('account');

    const other = await svc.createAccount({ name: 'gone', plan: 'pro' });
    store.accounts.delete(other.accountId);
    expect(await svc.authenticate(other.apiKey)).toBeUndefined();
  });

  test.each([
    ['empty', ''], ['missing dot', 'sk_0123456789abcdef'], ['extra dot', 'sk_0123456789abcdef.a.b'],
    ['unicode', 'sk_0123456789abcdef.\u00e9\u00e9'], ['10 kB', `sk_0123456789abcdef.${'A'.repeat(10_000)}`],
  ])('a malformed key (%s) is refused without a store read', async (_w, token) => {
    const { svc, store } = setup();
    expect(await svc.authenticate(token)).toBeUndefined();
    expect(store.reads.findApiKey + store.reads.findEntity).toBe(0);
  });

  test('createAccount refuses an unknown plan and an empty or 201-character name', async () => {
    const { svc } = setup();
    expect((await rejected(svc.createAccount({ name: 'acme', plan: 'enterprise' }))).status).toBe(400);
    expect((await rejected(svc.createAccount({ name: 'acme', plan: 'FREE' }))).status).toBe(400);
    expect((await rejected(svc.createAccount({ name: '   ', plan: 'free' }))).status).toBe(400);
    expect((await rejected(svc.createAccount({ name: 'a'.repeat(201), plan: 'free' }))).status).toBe(400);
    await expect(svc.createAccount({ name: 'a'.repeat(200), plan: 'free' })).resolves.toHaveProperty('accountId');
  });
});

describe('entity keys', () => {
  async function withEntity(plan: PlanTier = 'free') {
    const s = setup();
    const { accountId, apiKey: accountKey } = await s.svc.createAccount({ name: 'acme', plan });
    const created = await ents(s.svc).createEntity(accountId, { name: 'sensor-1' });
    return { ...s, accountId, accountKey, created };
  }

  test('a new entity key authenticates as that entity with the default role', async () => {
    const { svc, accountId, created } = await withEntity();
    expect(created.resourcePath).toBe(resourcePathOf(accountId, 'sensor-1'));
    const p = await svc.authenticate(created.apiKey);
    expect(p?.kind).toBe('entity');
    if (p?.kind !== 'entity') return;
    expect(p.entity.name).toBe('sensor-1');
    expect(p.account._id).toBe(accountId);
    expect(p.apiKeyId).toBe(created.apiKeyId);
    expect([...p.permissions].sort()).toEqual([...DEFAULT_ROLE_PERMISSIONS].sort());
    expect(p.permissions.has('entity:ListMessages')).toBe(false);
    expect(actorOf(p)).toBe('entity:sensor-1');
  });

  test('the entity stores only hashes of its key, never the token', async () => {
    const { store, created } = await withEntity();
    const dump = JSON.stringify([...store.entities.values(), ...store.entityKeys.values()]);
    expect(dump).not.toContain(created.apiKey);
    expect(dump).toContain(sha256Hex(created.apiKey));
  });

  test('rotation refuses the old key at once (its verified claims are cached) and emits its revocation', async () => {
    const { svc, accountId, created } = await withEntity();
    expect(await svc.authenticate(created.apiKey)).toBeDefined(); // claims of the old token now cached
    const revoked: string[] = [];
    svc.events.on('entityKeyRevoked', (id: string) => revoked.push(id));
    const next = await ents(svc).rotateKey(accountId, 'sensor-1', ACTOR);
    expect(next.apiKeyId).not.toBe(created.apiKeyId);
    expect(await svc.authenticate(created.apiKey)).toBeUndefined();
    expect((await svc.authenticate(next.apiKey))?.apiKeyId).toBe(next.apiKeyId);
    expect(revoked).toEqual([created.apiKeyId]);
    expect(await svc.entityOfKey(created.apiKeyId)).toBeUndefined();
    expect((await svc.entityOfKey(next.apiKeyId))?.entity.name).toBe('sensor-1');
    expect(await svc.deadEntityKeys([created.apiKeyId, next.apiKeyId])).toEqual([created.apiKeyId]);
  });

  test('a second replica sharing the store refuses a key the first replica rotated, at once', async () => {
    const { svc, store, accountId, created } = await withEntity();
    const replica = replicaOf(store);
    expect(await replica.authenticate(created.apiKey)).toBeDefined();
    await ents(svc).rotateKey(accountId, 'sensor-1', ACTOR);
    expect(await replica.authenticate(created.apiKey)).toBeUndefined();
  });

  test('deleting the entity refuses its key, and re-creating the name does not revive the old key', async () => {
    const { svc, accountId, created } = await withEntity();
    await ents(svc).deleteEntity(accountId, 'sensor-1', ACTOR);
    expect(await svc.authenticate(created.apiKey)).toBeUndefined();
    const again = await ents(svc).createEntity(accountId, { name: 'sensor-1' });
    expect(await svc.authenticate(created.apiKey)).toBeUndefined();
    expect(await svc.authenticate(again.apiKey)).toBeDefined();
  });

  test('a token with valid signature and current key id but not the issued token (other iat) is refused', async () => {
    const { svc, created, accountId } = await withEntity();
    // Same claims, another iat: a different token (and hash) for the current key id.
    const twin = await new SignJWT({ acc: accountId }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(created.resourcePath).setJti(created.apiKeyId).setIssuedAt(Math.floor(Date.now() / 1000) - 3600).sign(SECRETS.entityKeySecret);
    expect(twin).not.toBe(created.apiKey);
    expect(await svc.authenticate(twin)).toBeUndefined();
  });

  test('a token naming another account\'s entity, or mixing two accounts, is refused', async () => {
    const { svc, store, accountId, created } = await withEntity();
    const b = await svc.createAccount({ name: 'other', plan: 'free' });
    const bEntity = await ents(svc).createEntity(b.accountId, { name: 'sensor-1' });
    const sign = (c: { resourcePath: string; apiKeyId: string; accountId: string }) => signEntityKey(SECRETS.entityKeySecret, c);
    // A's key id against B's entity of the same name, and B's path under A's account claim.
    expect(await svc.authenticate(await sign({ resourcePath: resourcePathOf(b.accountId, 'sensor-1'), apiKeyId: created.apiKeyId, accountId: b.accountId }))).toBeUndefined();
    expect(await svc.authenticate(await sign({ resourcePath: resourcePathOf(b.accountId, 'sensor-1'), apiKeyId: bEntity.apiKeyId, accountId }))).toBeUndefined();
    expect(await svc.authenticate(await sign({ resourcePath: `accounts/${accountId}/entities/../${b.accountId}/entities/sensor-1`, apiKeyId: bEntity.apiKeyId, accountId }))).toBeUndefined();
    expect(await svc.authenticate(await sign({ resourcePath: `${created.resourcePath}/x`, apiKeyId: created.apiKeyId, accountId }))).toBeUndefined();
    // Each account's own key still answers for its own entity.
    const pb = await svc.authenticate(bEntity.apiKey);
    expect(pb?.account._id).toBe(b.accountId);
    expect(store.entities.size).toBe(2);
  });

  test('a token signed with another secret is refused before any store read', async () => {
    const { svc, store, created, accountId } = await withEntity();
    const forged = await signEntityKey(new TextEncoder().encode('y'.repeat(40)), { resourcePath: created.resourcePath, apiKeyId: created.apiKeyId, accountId });
    const reads = store.reads.findEntity;
    expect(await svc.authenticate(forged)).toBeUndefined();
    expect(store.reads.findEntity).toBe(reads);
  });

  test('legacy entity without a stored hash: the key record decides (revoked, other token, other account)', async () => {
    const { svc, store, accountId, created } = await withEntity();
    const e = store.entities.get(`${accountId}/sensor-1`)!;
    delete e.apiKeyHash;
    expect((await svc.authenticate(created.apiKey))?.kind).toBe('entity');
    store.entityKeys.get(created.apiKeyId)!.accountId = 'someone-else';
    expect(await svc.authenticate(created.apiKey)).toBeUndefined();
    store.entityKeys.get(created.apiKeyId)!.accountId = accountId;
    store.entityKeys.get(created.apiKeyId)!.revokedAt = new Date();
    expect(await svc.authenticate(created.apiKey)).toBeUndefined();
    store.entityKeys.delete(created.apiKeyId);
    expect(await svc.authenticate(created.apiKey)).toBeUndefined();
  });

  test('an account key is never taken for an entity principal and vice versa', async () => {
    const { svc, accountKey, created } = await withEntity();
    expect((await svc.authenticateEntityKey(accountKey))).toBeUndefined();
    expect((await svc.authenticateAccountKey(created.apiKey))).toBeUndefined();
    expect((await svc.authenticate(accountKey))?.kind).toBe('account');
    expect((await svc.authenticate(created.apiKey))?.kind).toBe('entity');
  });
});

describe('account cache', () => {
  test(`a plan change by another replica is seen within ACCOUNT_CACHE_MS (${ACCOUNT_CACHE_MS} ms), and the cache saves reads before that`, async () => {
    const { svc, store } = setup();
    const { accountId, apiKey } = await svc.createAccount({ name: 'acme', plan: 'free' });
    const replica = replicaOf(store);
    let t = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => t);
    expect((await accountPrincipal(svc, apiKey)).account.plan).toBe('free');
    const reads = store.reads.findAccount;
    await replica.setPlan(accountId, 'pro');
    t += ACCOUNT_CACHE_MS - 1;
    expect((await accountPrincipal(svc, apiKey)).account.plan).toBe('free'); // still cached: allowed
    expect(store.reads.findAccount).toBe(reads);
    t += 1;
    expect((await accountPrincipal(svc, apiKey)).account.plan).toBe('pro');
  });

  test('a plan change made through this process is seen on the next request', async () => {
    const { svc } = setup();
    const { accountId, apiKey } = await svc.createAccount({ name: 'acme', plan: 'free' });
    expect((await accountPrincipal(svc, apiKey)).account.plan).toBe('free');
    await svc.setPlan(accountId, 'standard');
    expect((await accountPrincipal(svc, apiKey)).account.plan).toBe('standard');
  });

  test('setPlan refuses an unknown plan and an unknown account', async () => {
    const { svc } = setup();
    const { accountId } = await svc.createAccount({ name: 'acme', plan: 'free' });
    expect((await rejected(svc.setPlan(accountId, 'platinum'))).status).toBe(400);
    expect((await rejected(svc.setPlan('nope', 'pro'))).status).toBe(404);
  });
});

describe('roles and permissions', () => {
  async function proWithRole(permissions: string[]) {
    const s = setup();
    const { accountId, apiKey } = await s.svc.createAccount({ name: 'acme', plan: 'pro' });
    s.store.roles.push({ _id: 'r1', accountId, name: 'reader', permissions: permissions as Permission[], createdAt: new Date() });
    return { ...s, accountId, apiKey };
  }

  test('a custom role grants exactly its permissions, unknown strings in the stored role are dropped', async () => {
    const { svc, accountId } = await proWithRole(['entity:ListMessages', 'entity:Admin', 'entity:Publish ']);
    const e = await ents(svc).createEntity(accountId, { name: 'r', role: 'reader' });
    const p = await svc.authenticate(e.apiKey);
    expect([...(p?.permissions ?? [])]).toEqual(['entity:ListMessages']);
  });

  test('after a downgrade below Standard a custom role falls back to the default role', async () => {
    const { svc, accountId } = await proWithRole(['entity:ListMessages']);
    const e = await ents(svc).createEntity(accountId, { name: 'r', role: 'reader' });
    await svc.setPlan(accountId, 'starter');
    const p = await svc.authenticate(e.apiKey);
    expect([...(p?.permissions ?? [])].sort()).toEqual([...DEFAULT_ROLE_PERMISSIONS].sort());
  });

  test('a custom role on Free or Starter is 403 plan_required with feature custom_roles; an unknown role on Pro is 400', async () => {
    const s = setup();
    for (const plan of ['free', 'starter'] as const) {
      const { accountId } = await s.svc.createAccount({ name: plan, plan });
      const err = await rejected(ents(s.svc).createEntity(accountId, { name: 'x', role: 'reader' }));
      expect(err.status).toBe(403);
      expect(err.code).toBe('plan_required');
      expect(err.extra).toEqual({ feature: 'custom_roles', current_plan: plan, upgrade: true });
      expect(s.store.accounts.get(accountId)!.entityCount).toBe(0);
    }
    const { accountId } = await s.svc.createAccount({ name: 'p', plan: 'pro' });
    expect((await rejected(ents(s.svc).createEntity(accountId, { name: 'x', role: 'nope' }))).status).toBe(400);
  });
});

describe('entity creation rules', () => {
  test.each([
    ['empty', ''], ['65 characters', 'a'.repeat(65)], ['slash', 'a/b'], ['space', 'a b'], ['unicode letter', 'caf\u00e9'],
    ['trailing newline', 'sensor\n'], ['NUL', 'a\u0000'], ['MQTT wildcard +', 'a+'], ['MQTT wildcard #', '#'],
    ['reserved "me"', 'me'], ['reserved "bulk"', 'bulk'], ['reserved "check_messages"', 'check_messages'],
  ])('%s is refused with 400 and takes no slot', async (_w, name) => {
    const { svc, store } = setup();
    const { accountId } = await svc.createAccount({ name: 'acme', plan: 'free' });
    expect((await rejected(ents(svc).createEntity(accountId, { name }))).status).toBe(400);
    expect(store.accounts.get(accountId)!.entityCount).toBe(0);
  });

  test('the plan\'s entity quota holds (Free: 10), a taken name is 409 and gives its slot back', async () => {
    const { svc, store } = setup();
    const { accountId } = await svc.createAccount({ name: 'acme', plan: 'free' });
    await ents(svc).createEntity(accountId, { name: 'e0' });
    const conflict = await rejected(ents(svc).createEntity(accountId, { name: 'e0' }));
    expect(conflict.status).toBe(409);
    expect(store.accounts.get(accountId)!.entityCount).toBe(1);
    for (let i = 1; i < 10; i++) await ents(svc).createEntity(accountId, { name: `e${i}` });
    const full = await rejected(ents(svc).createEntity(accountId, { name: 'e10' }));
    expect(full.status).toBe(403);
    expect(full.code).toBe('entity_limit_reached');
    await ents(svc).deleteEntity(accountId, 'e3', ACTOR);
    await expect(ents(svc).createEntity(accountId, { name: 'e10' })).resolves.toHaveProperty('apiKey');
    expect(store.accounts.get(accountId)!.entityCount).toBe(10);
  });
});
