/**
 * The audit log: append-only entries per account, listed newest first. `userEmail` names the
 * actor; this service has no dashboard users, so it holds the acting key ("api_key:<id>") or "cli".
 */
import { randomUUID } from 'node:crypto';
import { Collection, Db, Filter, FindCursor } from 'mongodb';
import { COLLECTIONS } from '../storage/mongo';

export interface AuditEntry {
  _id: string;
  accountId: string;
  action: string;
  resourceType: string;
  resourceId: string;
  resourceName: string;
  userEmail: string;
  timestamp: Date;
  details: Record<string, unknown>;
}

export interface AuditFilter { resourceType?: string; action?: string; from?: Date; to?: Date }

export class AuditLog {
  private readonly col: Collection<AuditEntry>;
  constructor(db: Db) {
    this.col = db.collection<AuditEntry>(COLLECTIONS.auditLog);
  }

  async record(entry: Omit<AuditEntry, '_id' | 'timestamp'> & { timestamp?: Date }): Promise<AuditEntry> {
    const doc: AuditEntry = { _id: randomUUID(), timestamp: new Date(), ...entry };
    await this.col.insertOne(doc);
    return doc;
  }

  private filterOf(accountId: string, f: AuditFilter): Filter<AuditEntry> {
    const q: Filter<AuditEntry> = { accountId };
    if (f.resourceType) q.resourceType = f.resourceType;
    if (f.action) q.action = f.action;
    if (f.from || f.to) q.timestamp = { ...(f.from ? { $gte: f.from } : {}), ...(f.to ? { $lt: f.to } : {}) };
    return q;
  }

  /** Newest first; pages are read `batchSize` documents at a time. */
  cursor(accountId: string, f: AuditFilter, batchSize: number): FindCursor<AuditEntry> {
    return this.col.find(this.filterOf(accountId, f)).sort({ timestamp: -1, _id: -1 }).batchSize(batchSize);
  }

  list(accountId: string, f: AuditFilter, limit: number): Promise<AuditEntry[]> {
    return this.col.find(this.filterOf(accountId, f)).sort({ timestamp: -1, _id: -1 }).limit(limit).toArray();
  }
}
