/**
 * The accounts capability's records (accounts, account keys, custom roles, audit entries) and the
 * store interfaces both engines implement (store/sqlite.ts, store/mongo.ts). No driver types here:
 * services and the other capabilities see only these. Entities and their keys are
 * entities/records.ts's.
 */
import type { PlanTier } from './plans';
import type { Permission } from './roles';
import type { AccountRecords } from './service';
import type { RoleRecords } from './custom-roles';
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

/** Accounts, their keys and custom roles. */
export interface AccountStore extends AccountRecords, RoleRecords {}

/** The audit log's entries. */
export type AuditStore = AuditEntries;
