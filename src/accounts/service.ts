/**
 * Accounts, account keys and authentication (account keys and entity keys): the rules, called by
 * HTTP, MQTT and the CLI. Entities themselves are EntityService's (src/entities/service.ts); this
 * reads their records only to resolve an entity key.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { BadRequestError, NotFoundError, PlanRequiredError } from '../errors';
import type { Secrets } from '../secrets';
import { hashesEqual, looksLikeJwt, newAccountKey, parseAccountKey, sha256Hex, EntityKeyClaims, verifyEntityKey } from './keys';
import { PlanTier, hasEntitlement, isPlanTier } from './plans';
import { DEFAULT_ROLE, DEFAULT_ROLE_PERMISSIONS, Permission, PERMISSIONS, isPermission } from './roles';
import type { AccountDoc, AccountRecords } from './records';
import type { EntityDoc, EntityStore } from '../entities/records';

/** How long an account document (plan) may be served from a process's cache. */
export const ACCOUNT_CACHE_MS = 2_000;

/** The entity name of `accounts/{accountId}/entities/{name}`, or undefined for any other shape. */
function entityNameOf(resourcePath: string, accountId: string): string | undefined {
  const prefix = `accounts/${accountId}/entities/`;
  if (!resourcePath.startsWith(prefix)) return undefined;
  const name = resourcePath.slice(prefix.length);
  return ENTITY_NAME_RE.test(name) ? name : undefined;
}

export const ENTITY_NAME_RE = /^[A-Za-z0-9_.-]{1,64}$/;

export type Principal =
  | { kind: 'account'; account: AccountDoc; apiKeyId: string; permissions: ReadonlySet<Permission> }
  | { kind: 'entity'; account: AccountDoc; entity: EntityDoc; apiKeyId: string; permissions: ReadonlySet<Permission> };

/** How the audit log names who acted (`userEmail`): the account key, or the entity. */
export const actorOf = (p: Principal): string => (p.kind === 'account' ? `api_key:${p.apiKeyId}` : `entity:${p.entity.name}`);

/**
 * Emits `entityKeyRevoked` (apiKeyId) so live sessions (MQTT) can be cut at once. EntityService
 * revokes the keys; the sessions listen here, beside the authentication they passed. Emits
 * `entityPermissionsChanged` (accountId) when what an account's entity keys may do can have changed
 * (an entity's role, a custom role's permissions, the plan): live sessions re-read theirs.
 */
export class AccountEvents extends EventEmitter {}

const ALL_PERMISSIONS: ReadonlySet<Permission> = new Set(PERMISSIONS);


/** What authentication reads of entities and their keys (entities/records.ts). */
export type EntityKeyRecords = Pick<EntityStore, 'findEntity' | 'findEntityKey' | 'deadEntityKeys'>;

export class AccountService {
  readonly events = new AccountEvents();
  private readonly accountCache = new Map<string, { doc: AccountDoc; at: number }>();
  private readonly claimsCache = new Map<string, EntityKeyClaims>();

  constructor(
    private readonly store: AccountRecords,
    private readonly entities: EntityKeyRecords,
    private readonly secrets: Pick<Secrets, 'entityKeySecret'>,
    private readonly region: string,
  ) {}

  async createAccount(input: { name: string; plan: string }): Promise<{ accountId: string; apiKey: string; apiKeyId: string }> {
    const name = input.name.trim();
    if (!name || name.length > 200) throw new BadRequestError('account name must be 1-200 characters');
    // It shows in the dashboard, the audit log and exports: no line breaks or other control characters.
    if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(name)) throw new BadRequestError('account name must not contain line breaks or other control characters');
    if (!isPlanTier(input.plan)) throw new BadRequestError(`plan must be one of free, starter, standard, pro`);
    const accountId = randomUUID();
    await this.store.insertAccount({ _id: accountId, name, plan: input.plan, region: this.region, entityCount: 0, createdAt: new Date() });
    const key = await this.createAccountKey(accountId);
    return { accountId, ...key };
  }

  async setPlan(accountId: string, plan: string): Promise<{ accountId: string; plan: PlanTier }> {
    if (!isPlanTier(plan)) throw new BadRequestError('plan must be one of free, starter, standard, pro');
    if (!(await this.store.setPlan(accountId, plan))) throw new NotFoundError('Account');
    this.accountCache.delete(accountId);
    // Custom roles stop (or start) applying with the plan's entitlement.
    this.events.emit('entityPermissionsChanged', accountId);
    return { accountId, plan };
  }

  async getAccount(accountId: string): Promise<AccountDoc> {
    const account = await this.store.findAccount(accountId);
    if (!account) throw new NotFoundError('Account');
    return account;
  }

  async createAccountKey(accountId: string): Promise<{ apiKey: string; apiKeyId: string }> {
    await this.getAccount(accountId);
    const { apiKey, apiKeyId, hash } = newAccountKey();
    await this.store.insertApiKey({ _id: apiKeyId, accountId, hash, createdAt: new Date() });
    return { apiKey, apiKeyId };
  }

  /** Resolves a bearer token of either kind; undefined for anything invalid or revoked. */
  async authenticate(token: string): Promise<Principal | undefined> {
    return looksLikeJwt(token) ? this.authenticateEntityKey(token) : this.authenticateAccountKey(token);
  }

  async authenticateAccountKey(token: string): Promise<Principal | undefined> {
    const parsed = parseAccountKey(token);
    if (!parsed) return undefined;
    const key = await this.store.findApiKey(parsed.apiKeyId);
    // Compare even when the key is unknown so timing does not reveal which key ids exist.
    const ok = hashesEqual(sha256Hex(parsed.secret), key?.hash ?? '0'.repeat(64));
    if (!key || !ok || key.revokedAt) return undefined;
    const account = await this.cachedAccount(key.accountId);
    if (!account) return undefined;
    return { kind: 'account', account, apiKeyId: key._id, permissions: ALL_PERMISSIONS };
  }

  /**
   * One database read per request: the entity document names its current key id and that key's
   * SHA-256, so a rotated (superseded) or deleted key fails here at once, in every replica.
   * The account document comes from a cache of at most ACCOUNT_CACHE_MS.
   */
  async authenticateEntityKey(token: string): Promise<Principal | undefined> {
    const tokenHash = sha256Hex(token);
    const claims = await this.verifiedClaims(token, tokenHash);
    if (!claims) return undefined;
    const name = entityNameOf(claims.resourcePath, claims.accountId);
    if (name === undefined) return undefined;
    const entity = await this.entities.findEntity(claims.accountId, name);
    if (!entity || entity.apiKeyId !== claims.apiKeyId || entity.resourcePath !== claims.resourcePath) return undefined;
    if (entity.apiKeyHash !== undefined) {
      if (!hashesEqual(tokenHash, entity.apiKeyHash)) return undefined;
    } else {
      // Entities created before the hash was kept on the entity: check the key record.
      const key = await this.entities.findEntityKey(claims.apiKeyId);
      if (!key || key.revokedAt || key.accountId !== claims.accountId || !hashesEqual(tokenHash, key.tokenHash)) return undefined;
    }
    const account = await this.cachedAccount(claims.accountId);
    if (!account) return undefined;
    return { kind: 'entity', account, entity, apiKeyId: claims.apiKeyId, permissions: await this.permissionsOf(account, entity.role) };
  }

  /**
   * The signature check of a token gives the same answer every time, so a valid token's claims
   * are remembered (keyed by its SHA-256); revocation is decided by the entity read, never here.
   */
  private async verifiedClaims(token: string, tokenHash: string): Promise<EntityKeyClaims | undefined> {
    const known = this.claimsCache.get(tokenHash);
    if (known) return known;
    const claims = await verifyEntityKey(this.secrets.entityKeySecret, token);
    if (claims) {
      if (this.claimsCache.size >= 50_000) this.claimsCache.clear();
      this.claimsCache.set(tokenHash, claims);
    }
    return claims;
  }

  /**
   * Account documents change rarely (plan changes); a short per-process cache saves a read on
   * every request. A plan change is seen by every replica within ACCOUNT_CACHE_MS.
   */
  async cachedAccount(accountId: string): Promise<AccountDoc | null> {
    const hit = this.accountCache.get(accountId);
    const now = Date.now();
    if (hit && now - hit.at < ACCOUNT_CACHE_MS) return hit.doc;
    const doc = await this.store.findAccount(accountId);
    if (this.accountCache.size >= 10_000) this.accountCache.clear();
    if (doc) this.accountCache.set(accountId, { doc, at: now });
    return doc;
  }

  /**
   * The entity behind a live key id, without the token (the broker ACL endpoint, where the broker
   * already checked the password at CONNECT); undefined when revoked, superseded or unknown.
   */
  async entityOfKey(apiKeyId: string): Promise<{ account: AccountDoc; entity: EntityDoc; permissions: ReadonlySet<Permission> } | undefined> {
    const key = await this.entities.findEntityKey(apiKeyId);
    if (!key || key.revokedAt) return undefined;
    const [account, entity] = await Promise.all([this.store.findAccount(key.accountId), this.entities.findEntity(key.accountId, key.entityName)]);
    if (!account || !entity || entity.apiKeyId !== key._id) return undefined;
    return { account, entity, permissions: await this.permissionsOf(account, entity.role) };
  }

  /** Key ids among `ids` that no longer authenticate (revoked or deleted). */
  deadEntityKeys(ids: string[]): Promise<string[]> {
    return this.entities.deadEntityKeys(ids);
  }

  async permissionsOf(account: AccountDoc, role: string): Promise<ReadonlySet<Permission>> {
    if (role === DEFAULT_ROLE) return new Set(DEFAULT_ROLE_PERMISSIONS);
    const custom = await this.store.findRole(account._id, role);
    // A custom role stops working if the plan loses the entitlement: fall back to the default role.
    if (!custom || !hasEntitlement(account.plan, 'custom_roles')) return new Set(DEFAULT_ROLE_PERMISSIONS);
    return new Set(custom.permissions.filter(isPermission));
  }

  async validateRole(account: AccountDoc, role: string | undefined): Promise<string> {
    if (role === undefined || role === DEFAULT_ROLE) return DEFAULT_ROLE;
    if (!hasEntitlement(account.plan, 'custom_roles')) throw new PlanRequiredError('custom_roles', account.plan);
    if (!(await this.store.findRole(account._id, role))) throw new BadRequestError(`role "${role}" does not exist`);
    return role;
  }

  /** Reserves one of the plan's entity slots; false when the account is full. */
  reserveEntitySlot(accountId: string, max: number): Promise<boolean> {
    return this.store.reserveEntitySlot(accountId, max);
  }

  releaseEntitySlot(accountId: string): Promise<void> {
    return this.store.releaseEntitySlot(accountId);
  }
}
