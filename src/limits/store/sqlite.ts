/**
 * The embedded store of counters: fixed-window rate counters and calendar usage counters. Every
 * increment reads and writes its row under the write lock (an immediate transaction), so counts
 * are exact however many connections and processes add to them.
 */
import { DocTable, immediate, SqliteDatabase } from '../../storage/sqlite';
import type { CounterStore, UsageDoc, UsageField } from '../records';

interface WindowDoc { _id: string; c: Record<string, number>; expiresAt: Date }

export class SqliteCounterStore implements CounterStore {
  private readonly windows: DocTable<WindowDoc>;
  private readonly usage: DocTable<UsageDoc>;

  constructor(private readonly db: SqliteDatabase) {
    this.windows = new DocTable(db, 'rate_counters');
    this.usage = new DocTable(db, 'usage');
  }

  async hitWindow(id: string, amounts: Record<string, number>, expiresAt: Date): Promise<Record<string, number>> {
    return immediate(this.db, () => {
      const doc = this.windows.get(id) ?? { _id: id, c: {}, expiresAt };
      for (const [f, n] of Object.entries(amounts)) doc.c[f] = (doc.c[f] ?? 0) + n;
      this.windows.put(doc);
      return doc.c;
    });
  }

  async sweepWindows(now: Date): Promise<void> {
    this.windows.deleteWhere('expires_at < ?', [now.getTime()]);
  }

  private bump(doc: Omit<UsageDoc, UsageField>, field: UsageField, amount: number, max: number): number | undefined {
    return immediate(this.db, () => {
      const cur = this.usage.get(doc._id) ?? { _id: doc._id, accountId: doc.accountId, period: doc.period, kind: doc.kind, ...(doc.date ? { date: doc.date } : {}) };
      const next = (cur[field] ?? 0) + amount;
      if (next > max) return undefined;
      this.usage.put({ ...cur, [field]: next });
      return next;
    });
  }

  async incrementUsageBounded(doc: Omit<UsageDoc, UsageField>, field: UsageField, amount: number, max: number): Promise<number | undefined> {
    return this.bump(doc, field, amount, max);
  }

  async incrementUsage(doc: Omit<UsageDoc, UsageField>, field: UsageField, amount: number): Promise<number> {
    return this.bump(doc, field, amount, Number.POSITIVE_INFINITY) as number;
  }

  async getUsage(id: string): Promise<UsageDoc | null> { return this.usage.get(id); }

  async listDaily(accountId: string, fromDate: string, toDate: string): Promise<UsageDoc[]> {
    return this.usage.find("account_id = ? AND kind = 'day' AND day >= ? AND day <= ?", [accountId, fromDate, toDate]);
  }
}
