/**
 * The audit log: append-only entries per account, listed newest first. `userEmail` names the
 * actor; this service has no dashboard users, so it holds the acting key ("api_key:<id>") or "cli".
 * Storage is the AuditStore of records.ts.
 */
import { randomUUID } from 'node:crypto';

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

/** Entries read a page at a time as they are consumed; closed when the reader stops early. */
export type AuditCursor = AsyncIterable<AuditEntry[]> & { close(): Promise<void> };

/** Where entries are kept. */
export interface AuditEntries {
  insert(doc: AuditEntry): Promise<void>;
  /** Newest first; pages are read `batchSize` entries at a time. */
  cursor(accountId: string, f: AuditFilter, batchSize: number): AuditCursor;
  list(accountId: string, f: AuditFilter, limit: number): Promise<AuditEntry[]>;
}

export class AuditLog {
  constructor(private readonly entries: AuditEntries, private readonly now: () => Date = () => new Date()) {}

  async record(entry: Omit<AuditEntry, '_id' | 'timestamp'> & { timestamp?: Date }): Promise<AuditEntry> {
    const doc: AuditEntry = { _id: randomUUID(), timestamp: this.now(), ...entry };
    await this.entries.insert(doc);
    return doc;
  }

  /** Newest first; pages are read `batchSize` entries at a time. */
  cursor(accountId: string, f: AuditFilter, batchSize: number): AuditCursor {
    return this.entries.cursor(accountId, f, batchSize);
  }

  list(accountId: string, f: AuditFilter, limit: number): Promise<AuditEntry[]> {
    return this.entries.list(accountId, f, limit);
  }
}
