/** The only code that speaks MongoDB for threat feeds: `threat_feed_hashes`, one document per hash (`_id` = lowercase hex). */
import { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '../../storage/mongo';
import type { FeedEntry, FeedLookup, HashAlgo } from '../engines/feeds';
import type { FeedStore } from '../records';

interface FeedDoc { _id: string; algo: HashAlgo; name?: string; source: string; addedAt: Date }

export class MongoFeedStore implements FeedStore {
  private readonly col: Collection<FeedDoc>;

  constructor(db: Db, private readonly batch = 1000) {
    this.col = db.collection<FeedDoc>(COLLECTIONS.threatFeedHashes);
  }

  /** Upserts feed entries; returns how many documents were inserted or changed. */
  async upsert(entries: FeedEntry[]): Promise<{ upserted: number; modified: number }> {
    let upserted = 0;
    let modified = 0;
    const now = new Date();
    for (let i = 0; i < entries.length; i += this.batch) {
      const ops = entries.slice(i, i + this.batch).map((e) => ({
        updateOne: {
          filter: { _id: e.hash },
          update: {
            $set: { algo: e.algo, source: e.source, ...(e.name ? { name: e.name } : {}) },
            $setOnInsert: { addedAt: now },
          },
          upsert: true,
        },
      }));
      const r = await this.col.bulkWrite(ops, { ordered: false });
      upserted += r.upsertedCount;
      modified += r.modifiedCount;
    }
    return { upserted, modified };
  }

  /** One `_id $in` query for the three hashes. */
  readonly lookup: FeedLookup = async ({ sha256, md5, sha1 }) => {
    const docs = await this.col.find({ _id: { $in: [sha256, md5, sha1].map((h) => h.toLowerCase()) } }).toArray();
    return docs.map((d) => ({ hash: d._id, algo: d.algo, source: d.source, ...(d.name ? { name: d.name } : {}) }));
  };
}
