/**
 * The accounts capability's records (accounts, account keys, entities, entity keys, custom roles,
 * audit entries) and the store interfaces both engines implement (store/sqlite.ts, store/mongo.ts).
 * No driver types here: services and the other capabilities see only these.
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

export interface EntityDoc {
  _id: string; // `${accountId}/${name}`
  accountId: string;
  name: string;
  resourcePath: string;
  apiKeyId: string;
  /** SHA-256 of the current key, so authentication needs only this document. */
  apiKeyHash?: string;
  role: string;
  tags: string[];
  metadata: Record<string, unknown>;
  directoryId?: string;
  serviceId?: string;
  online: boolean;
  lastSeenAt?: Date;
  metrics?: Record<string, number>;
  statusTable: Record<string, unknown>;
  createdAt: Date;
}

export interface EntityKeyDoc {
  _id: string; // jti = apiKeyId
  accountId: string;
  entityName: string;
  tokenHash: string;
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

/** Accounts, their keys, entities, entity keys and custom roles. */
export interface AccountStore extends AccountRecords, RoleRecords {}

/** The audit log's entries. */
export type AuditStore = AuditEntries;
