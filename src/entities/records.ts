/**
 * The entities capability's records (entities, their keys, online status) and the store interface
 * both engines implement (store/sqlite.ts, store/mongo.ts). No driver types here: services and the
 * other capabilities see only these. The entity's state table is messaging's (messaging/records.ts),
 * though it is kept on the same record.
 */

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

/** The fields of an entity its account may change. */
export type EntityChanges = Partial<Pick<EntityDoc, 'tags' | 'metadata' | 'role' | 'serviceId'>>;

/** Where entities, their keys and their online status are kept. */
export interface EntityStore {
  insertEntity(doc: EntityDoc): Promise<void>;
  findEntity(accountId: string, name: string): Promise<EntityDoc | null>;
  /** Entities of an account by name, one page by offset. */
  listEntities(accountId: string, offset: number, limit: number): Promise<EntityDoc[]>;
  /** Sets `patch` and removes the `unset` fields; null when there is no such entity. */
  updateEntity(accountId: string, name: string, patch: EntityChanges, unset: Array<'serviceId'>): Promise<EntityDoc | null>;
  /** True when the entity existed. */
  deleteEntity(accountId: string, name: string): Promise<boolean>;
  /** Removes a deleted validation service from every entity of the account that named it. */
  clearEntityService(accountId: string, serviceId: string): Promise<void>;
  /** True when some entity of the account still has this role. */
  roleInUse(accountId: string, role: string): Promise<boolean>;
  /** Makes this key the entity's current one (the only one that authenticates). */
  setEntityKey(accountId: string, name: string, apiKeyId: string, apiKeyHash: string): Promise<void>;
  insertEntityKey(doc: EntityKeyDoc): Promise<void>;
  findEntityKey(jti: string): Promise<EntityKeyDoc | null>;
  /** Which of these key ids are revoked or gone. */
  deadEntityKeys(ids: string[]): Promise<string[]>;
  /** Revokes the entity's live keys; returns their ids. */
  revokeEntityKeys(accountId: string, entityName: string, at: Date): Promise<string[]>;
  /** Online from now; `metrics` are merged into the last ones, key by key. */
  recordHeartbeat(accountId: string, name: string, at: Date, metrics: Record<string, number>): Promise<void>;
  /** MQTT disconnect: offline until the next heartbeat or connect. */
  recordDisconnect(accountId: string, name: string, at: Date): Promise<void>;
}
