/** The only code that speaks MongoDB for the audit log. */
import { Collection, Db, Filter } from 'mongodb';
import { COLLECTIONS, pagesOf } from '../../storage/mongo';
import type { AuditCursor, AuditEntry, AuditFilter } from '../audit';
import type { AuditStore } from '../records';

export class MongoAuditStore implements AuditStore {
  private readonly col: Collection<AuditEntry>;

  constructor(db: Db) {
    this.col = db.collection<AuditEntry>(COLLECTIONS.auditLog);
  }

  async insert(doc: AuditEntry): Promise<void> {
    await this.col.insertOne(doc);
  }

  private filterOf(accountId: string, f: AuditFilter): Filter<AuditEntry> {
    const q: Filter<AuditEntry> = { accountId };
    if (f.resourceType) q.resourceType = f.resourceType;
    if (f.action) q.action = f.action;
    if (f.from || f.to) q.timestamp = { ...(f.from ? { $gte: f.from } : {}), ...(f.to ? { $lt: f.to } : {}) };
    return q;
  }

  cursor(accountId: string, f: AuditFilter, batchSize: number): AuditCursor {
    return pagesOf(this.col.find(this.filterOf(accountId, f)).sort({ timestamp: -1, _id: -1 }).batchSize(batchSize), (e) => e);
  }

  list(accountId: string, f: AuditFilter, limit: number): Promise<AuditEntry[]> {
    return this.col.find(this.filterOf(accountId, f)).sort({ timestamp: -1, _id: -1 }).limit(limit).toArray();
  }
}
