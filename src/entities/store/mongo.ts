/** MongoDB access for entities, entity keys and online status (heartbeats). */
import { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '../../storage/mongo';
import { decodeUserJson, encodeUserJson, UserJsonText } from '../../storage/user-json';
import type { EntityChanges, EntityDoc, EntityKeyDoc, EntityStore } from '../records';

/** An entity's metadata is stored as JSON text (user-json.ts); older documents hold it native. */
type StoredEntity = Omit<EntityDoc, 'metadata'> & { metadata: EntityDoc['metadata'] | UserJsonText };
const decodeEntity = (e: StoredEntity): EntityDoc =>
  ({ ...e, metadata: typeof e.metadata === 'string' ? decodeUserJson<EntityDoc['metadata']>(e.metadata) : e.metadata });
const entityOf = (e: StoredEntity | null): EntityDoc | null => e && decodeEntity(e);

export class MongoEntityStore implements EntityStore {
  private readonly entities: Collection<StoredEntity>;
  private readonly entityKeys: Collection<EntityKeyDoc>;
  /** The same collections for the reads of authentication (see Storage.readDb). */
  private readonly reads: { entities: Collection<StoredEntity>; entityKeys: Collection<EntityKeyDoc> };

  constructor(db: Db, readDb: Db = db) {
    this.reads = {
      entities: readDb.collection<StoredEntity>(COLLECTIONS.entities),
      entityKeys: readDb.collection<EntityKeyDoc>(COLLECTIONS.entityKeys),
    };
    this.entities = db.collection<StoredEntity>(COLLECTIONS.entities);
    this.entityKeys = db.collection<EntityKeyDoc>(COLLECTIONS.entityKeys);
  }

  async insertEntity(doc: EntityDoc): Promise<void> { await this.entities.insertOne({ ...doc, metadata: encodeUserJson(doc.metadata) }); }
  async findEntity(accountId: string, name: string): Promise<EntityDoc | null> { return entityOf(await this.reads.entities.findOne({ _id: `${accountId}/${name}` })); }
  /** True when the entity existed. */
  async deleteEntity(accountId: string, name: string): Promise<boolean> {
    return (await this.entities.deleteOne({ _id: `${accountId}/${name}` })).deletedCount === 1;
  }
  async setEntityKey(accountId: string, name: string, apiKeyId: string, apiKeyHash: string): Promise<void> {
    await this.entities.updateOne({ _id: `${accountId}/${name}` }, { $set: { apiKeyId, apiKeyHash } });
  }

  async listEntities(accountId: string, offset: number, limit: number): Promise<EntityDoc[]> {
    return (await this.reads.entities.find({ accountId }).sort({ name: 1 }).skip(offset).limit(limit).toArray()).map(decodeEntity);
  }
  async updateEntity(accountId: string, name: string, patch: EntityChanges, unset: Array<'serviceId'>): Promise<EntityDoc | null> {
    const set = { ...patch, ...(patch.metadata !== undefined ? { metadata: encodeUserJson(patch.metadata) } : {}) };
    return entityOf(await this.entities.findOneAndUpdate(
      { _id: `${accountId}/${name}` },
      { ...(Object.keys(set).length ? { $set: set } : {}), ...(unset.length ? { $unset: Object.fromEntries(unset.map((f) => [f, ''])) } : {}) },
      { returnDocument: 'after' },
    ));
  }
  async clearEntityService(accountId: string, serviceId: string): Promise<void> {
    await this.entities.updateMany({ accountId, serviceId }, { $unset: { serviceId: '' } });
  }
  async roleInUse(accountId: string, role: string): Promise<boolean> {
    return (await this.entities.findOne({ accountId, role }, { projection: { _id: 1 } })) !== null;
  }

  async insertEntityKey(doc: EntityKeyDoc): Promise<void> { await this.entityKeys.insertOne(doc); }
  findEntityKey(jti: string): Promise<EntityKeyDoc | null> { return this.reads.entityKeys.findOne({ _id: jti }); }
  /** Which of these key ids are revoked or gone (MQTT re-checks its live sessions with this). */
  async deadEntityKeys(ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const live = await this.entityKeys.find({ _id: { $in: ids }, revokedAt: { $exists: false } }).project<{ _id: string }>({ _id: 1 }).toArray();
    const alive = new Set(live.map((k) => k._id));
    return ids.filter((id) => !alive.has(id));
  }
  async revokeEntityKeys(accountId: string, entityName: string, at: Date): Promise<string[]> {
    const live = await this.entityKeys.find({ accountId, entityName, revokedAt: { $exists: false } }).project<{ _id: string }>({ _id: 1 }).toArray();
    if (live.length) await this.entityKeys.updateMany({ _id: { $in: live.map((k) => k._id) } }, { $set: { revokedAt: at } });
    return live.map((k) => k._id);
  }

  async recordHeartbeat(accountId: string, name: string, at: Date, metrics: Record<string, number>): Promise<void> {
    const set: Record<string, unknown> = { online: true, lastSeenAt: at };
    for (const [k, v] of Object.entries(metrics)) set[`metrics.${k}`] = v;
    await this.entities.updateOne({ _id: `${accountId}/${name}` }, { $set: set });
  }

  async recordDisconnect(accountId: string, name: string, at: Date): Promise<void> {
    await this.entities.updateOne({ _id: `${accountId}/${name}` }, { $set: { online: false, lastDisconnectAt: at } });
  }
}
