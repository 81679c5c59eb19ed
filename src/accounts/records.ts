/**
 * The accounts capability's records (accounts, account keys, custom roles, audit entries) and the
 * store interfaces both engines implement (store/sqlite.ts, store/mongo.ts). No driver types here:
 * services and the other capabilities see only these. Entities and their keys are
 * entities/records.ts's.
 */
import type { PlanTier } from './plans';
import type { Permission } from './roles';
import type { AuditEntries } from './audit';

export interface AccountDoc {
  _id: string;
  name: string;
  plan: PlanTier;
  region: string;
  entityCount: number;
  createdAt: Date;
}

export interface ApiKeyDoc {
  _id: string; // apiKeyId
  accountId: string;
  hash: string;
  createdAt: Date;
  revokedAt?: Date;
}

export interface RoleDoc {
  _id: string;
  accountId: string;
  name: string;
  permissions: Permission[];
  createdAt: Date;
}

/** Where accounts and their keys are kept (accounts/records.ts). */
export interface AccountRecords {
  insertAccount(doc: AccountDoc): Promise<void>;
  findAccount(id: string): Promise<AccountDoc | null>;
  /** False when there is no such account. */
  setPlan(id: string, plan: PlanTier): Promise<boolean>;
  insertApiKey(doc: ApiKeyDoc): Promise<void>;
  findApiKey(id: string): Promise<ApiKeyDoc | null>;
  /** Reserves one entity slot under `max`; false when the account is full. */
  reserveEntitySlot(accountId: string, max: number): Promise<boolean>;
  releaseEntitySlot(accountId: string): Promise<void>;
  findRole(accountId: string, name: string): Promise<RoleDoc | null>;
}

/** Where custom roles are kept (accounts/records.ts). */
export interface RoleRecords {
  listRoles(accountId: string): Promise<RoleDoc[]>;
  findRole(accountId: string, name: string): Promise<RoleDoc | null>;
  insertRole(doc: RoleDoc): Promise<void>;
  setRolePermissions(accountId: string, name: string, permissions: Permission[]): Promise<RoleDoc | null>;
  deleteRole(accountId: string, name: string): Promise<boolean>;
}

/** Accounts, their keys and custom roles. */
export interface AccountStore extends AccountRecords, RoleRecords {}

/** The audit log's entries. */
export type AuditStore = AuditEntries;
