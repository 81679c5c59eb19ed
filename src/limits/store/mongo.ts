/**
 * Counters in MongoDB, so every API replica sees the same numbers: fixed-window rate counters
 * and calendar counters (monthly quotas, daily volumes). One round trip per check.
 */
import { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '../../storage/mongo';
import { isDuplicateKey } from '../../storage/errors';
import type { CounterStore, UsageDoc, UsageField } from '../records';

interface WindowDoc { _id: string; c: Record<string, number>; expiresAt: Date }
export class MongoCounterStore implements CounterStore {
  private readonly windows: Collection<WindowDoc>;
  private readonly usage: Collection<UsageDoc>;
  /** Usage documents read (quota checks) on the read pool (see Storage.readDb). */
  private readonly usageReads: Collection<UsageDoc>;

  constructor(db: Db, readDb: Db = db) {
    this.windows = db.collection<WindowDoc>(COLLECTIONS.rateCounters);
    this.usage = db.collection<UsageDoc>(COLLECTIONS.usageDaily);
    this.usageReads = readDb.collection<UsageDoc>(COLLECTIONS.usageDaily);
  }

  /** Adds the given amounts to the named counters of the window and returns the new values. */
  async hitWindow(id: string, amounts: Record<string, number>, expiresAt: Date): Promise<Record<string, number>> {
    const inc: Record<string, number> = {};
    for (const [f, n] of Object.entries(amounts)) inc[`c.${f}`] = n;
    const hit = () => this.windows.findOneAndUpdate(
      { _id: id },
      { $inc: inc, $setOnInsert: { expiresAt } },
      { upsert: true, returnDocument: 'after' },
    );
    let doc;
    try {
      doc = await hit();
    } catch (err) {
      // Two writers (connections or replicas) upserted the new window at once; it exists now.
      if (!isDuplicateKey(err)) throw err;
      doc = await hit();
    }
    return doc?.c ?? {};
  }

  /** Removes windows that have ended (a TTL index does this on MongoDB; this keeps other servers tidy too). */
  async sweepWindows(now: Date): Promise<void> {
    await this.windows.deleteMany({ expiresAt: { $lt: now } });
  }

  /**
   * Adds `amount` to a usage counter only while it stays at or below `max`; returns the new
   * value, or undefined when the increment would pass the maximum.
   */
  async incrementUsageBounded(doc: Omit<UsageDoc, UsageField>, field: UsageField, amount: number, max: number): Promise<number | undefined> {
    // A charge bigger than the whole limit never fits, even on a month with no counter yet (the
    // `$exists: false` branch of the filter would let it through).
    if (amount > max) return undefined;
    const filter = { _id: doc._id, $or: [{ [field]: { $exists: false } }, { [field]: { $lte: max - amount } }] };
    const bump = () => this.usage.findOneAndUpdate(
      filter,
      { $inc: { [field]: amount }, $setOnInsert: { accountId: doc.accountId, period: doc.period, kind: doc.kind, ...(doc.date ? { date: doc.date } : {}) } },
      { upsert: true, returnDocument: 'after' },
    );
    for (let attempt = 0; ; attempt++) {
      try {
        const r = await bump();
        return r?.[field] ?? undefined;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        // The filter did not match an existing document, so the upsert collided with it: either
        // the counter is over the limit, or another writer created the month's document a moment
        // ago (concurrent first upserts). One retry tells the two apart.
        if (attempt >= 1) return undefined;
      }
    }
  }

  async incrementUsage(doc: Omit<UsageDoc, UsageField>, field: UsageField, amount: number): Promise<number> {
    const bump = () => this.usage.findOneAndUpdate(
      { _id: doc._id },
      { $inc: { [field]: amount }, $setOnInsert: { accountId: doc.accountId, period: doc.period, kind: doc.kind, ...(doc.date ? { date: doc.date } : {}) } },
      { upsert: true, returnDocument: 'after' },
    );
    let r;
    try {
      r = await bump();
    } catch (err) {
      if (!isDuplicateKey(err)) throw err; // a concurrent first upsert created it: update it now
      r = await bump();
    }
    return r?.[field] ?? amount;
  }

  getUsage(id: string): Promise<UsageDoc | null> { return this.usageReads.findOne({ _id: id }); }

  listDaily(accountId: string, fromDate: string, toDate: string): Promise<UsageDoc[]> {
    return this.usage.find({ accountId, kind: 'day', date: { $gte: fromDate, $lte: toDate } }).toArray();
  }
}
