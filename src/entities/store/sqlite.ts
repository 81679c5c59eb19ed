/** The embedded store of entities, entity keys and online status (heartbeats). */
import { DocTable, immediate, placeholders, SqliteDatabase } from '../../storage/sqlite';
import { decodeUserJson, encodeUserJson, UserJsonText } from '../../storage/user-json';
import type { EntityChanges, EntityDoc, EntityKeyDoc, EntityStore } from '../records';

/**
 * As stored: the user-controlled metadata and state table are JSON text (user-json.ts). The state
 * table and its write count are messaging's (messaging/store/sqlite.ts), on the same row.
 */
export type StoredEntity = Omit<EntityDoc, 'metadata' | 'statusTable'> & { metadata: UserJsonText; statusTable?: UserJsonText; stateVersion?: number };

const entityOf = ({ stateVersion: _v, ...e }: StoredEntity): EntityDoc => ({
  ...e, metadata: decodeUserJson(e.metadata), statusTable: decodeUserJson(e.statusTable ?? '{}'),
});

export class SqliteEntityStore implements EntityStore {
  private readonly entities: DocTable<StoredEntity>;
  private readonly entityKeys: DocTable<EntityKeyDoc>;

  constructor(private readonly db: SqliteDatabase) {
    this.entities = new DocTable(db, 'entities');
    this.entityKeys = new DocTable(db, 'entity_keys');
  }

  async insertEntity(doc: EntityDoc): Promise<void> {
    this.entities.insert({ ...doc, metadata: encodeUserJson(doc.metadata), statusTable: encodeUserJson(doc.statusTable ?? {}) });
  }
  async findEntity(accountId: string, name: string): Promise<EntityDoc | null> {
    const e = this.entities.get(`${accountId}/${name}`);
    return e && entityOf(e);
  }
  async deleteEntity(accountId: string, name: string): Promise<boolean> { return this.entities.delete(`${accountId}/${name}`); }
  async setEntityKey(accountId: string, name: string, apiKeyId: string, apiKeyHash: string): Promise<void> {
    this.entities.update(`${accountId}/${name}`, (e) => ({ ...e, apiKeyId, apiKeyHash }));
  }
  async listEntities(accountId: string, offset: number, limit: number): Promise<EntityDoc[]> {
    return this.entities.find('account_id = ?', [accountId], { order: 'name', offset, limit }).map(entityOf);
  }
  async updateEntity(accountId: string, name: string, patch: EntityChanges, unset: Array<'serviceId'>): Promise<EntityDoc | null> {
    const e = this.entities.update(`${accountId}/${name}`, (cur) => {
      const next: StoredEntity = { ...cur, ...patch, metadata: patch.metadata !== undefined ? encodeUserJson(patch.metadata) : cur.metadata };
      for (const f of unset) delete next[f];
      return next;
    });
    return e && entityOf(e);
  }
  async clearEntityService(accountId: string, serviceId: string): Promise<void> {
    this.entities.updateWhere('account_id = ? AND service_id = ?', [accountId, serviceId], ({ serviceId: _s, ...e }) => e);
  }
  async roleInUse(accountId: string, role: string): Promise<boolean> {
    return this.entities.count('account_id = ? AND role = ?', [accountId, role]) > 0;
  }

  async insertEntityKey(doc: EntityKeyDoc): Promise<void> { this.entityKeys.insert(doc); }
  async findEntityKey(jti: string): Promise<EntityKeyDoc | null> { return this.entityKeys.get(jti); }
  async deadEntityKeys(ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const alive = new Set(this.entityKeys.ids(`id IN (${placeholders(ids.length)}) AND revoked = 0`, ids));
    return ids.filter((id) => !alive.has(id));
  }
  async revokeEntityKeys(accountId: string, entityName: string, at: Date): Promise<string[]> {
    return immediate(this.db, () => {
      const live = this.entityKeys.ids('account_id = ? AND entity_name = ? AND revoked = 0', [accountId, entityName]);
      for (const id of live) this.entityKeys.update(id, (k) => ({ ...k, revokedAt: at }));
      return live;
    });
  }

  async recordHeartbeat(accountId: string, name: string, at: Date, metrics: Record<string, number>): Promise<void> {
    this.entities.update(`${accountId}/${name}`, (cur) => ({ ...cur, online: true, lastSeenAt: at, metrics: { ...cur.metrics, ...metrics } }));
  }

  async recordDisconnect(accountId: string, name: string, at: Date): Promise<void> {
    this.entities.update(`${accountId}/${name}`, (cur) => ({ ...cur, online: false, lastDisconnectAt: at }));
  }
}
