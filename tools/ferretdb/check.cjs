#!/usr/bin/env node
// Checks a MongoDB-wire server (the local FerretDB) with the project's `mongodb` driver.
//   node tools/ferretdb/check.cjs mongodb://127.0.0.1:PORT/          basic operations the service relies on; exit 1 on failure
//   node tools/ferretdb/check.cjs mongodb://127.0.0.1:PORT/ --probe  also probes features FerretDB may lack; prints a JSON table
//   ... --sqlite-dir DIR   also checks that deleted bytes leave DIR (the server's -sqlite-dir)
'use strict';
const { MongoClient, GridFSBucket } = require('mongodb');
const { Readable } = require('node:stream');

const uri = process.argv[2];
const probeMode = process.argv.includes('--probe');
const sqliteDirArg = process.argv.indexOf('--sqlite-dir');
const sqliteDir = sqliteDirArg > 0 ? process.argv[sqliteDirArg + 1] : undefined;
if (!uri) {
  console.error('usage: check.cjs <mongodb-uri> [--probe]');
  process.exit(2);
}

async function gridfsRoundTrip(db) {
  const bucket = new GridFSBucket(db, { bucketName: 'checkfs' });
  const data = Buffer.alloc(600 * 1024);
  for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 0xff;
  const id = await new Promise((resolve, reject) => {
    const up = bucket.openUploadStream('blob.bin', { metadata: { k: 1 } });
    Readable.from([data]).pipe(up).on('error', reject).on('finish', () => resolve(up.id));
  });
  const chunks = [];
  for await (const c of bucket.openDownloadStream(id)) chunks.push(c);
  if (!Buffer.concat(chunks).equals(data)) throw new Error('GridFS download differs from upload');
  await bucket.delete(id);
}

const basic = {
  async insertFind(db) {
    const c = db.collection('items');
    await c.insertMany([{ _id: 'a', n: 1, tags: ['x'] }, { _id: 'b', n: 2, tags: ['y'] }]);
    const docs = await c.find({ n: { $gte: 1 } }).sort({ n: -1 }).toArray();
    if (docs.length !== 2 || docs[0]._id !== 'b') throw new Error(`unexpected find result ${JSON.stringify(docs)}`);
  },
  async findOneAndUpdate(db) {
    const r = await db.collection('counters').findOneAndUpdate(
      { _id: 'c1' }, { $inc: { seq: 1 } }, { upsert: true, returnDocument: 'after' });
    if (!r || r.seq !== 1) throw new Error(`unexpected ${JSON.stringify(r)}`);
  },
  async uniqueIndex(db) {
    const c = db.collection('uniq');
    await c.createIndex({ email: 1 }, { unique: true });
    await c.insertOne({ email: 'a@x' });
    try {
      await c.insertOne({ email: 'a@x' });
    } catch (e) {
      if (e.code === 11000) return;
      throw e;
    }
    throw new Error('duplicate key accepted');
  },
  gridfs: gridfsRoundTrip,
  // tools/ferretdb/id-index.patch: a filter holding an _id equality reads through the _id index.
  async idLookupUsesIndex(db) {
    const c = db.collection('byid');
    await c.insertMany([{ _id: 'k1', a: 1 }, { _id: 'k2', a: 2 }]);
    const plan = await c.find({ _id: 'k2', a: 2 }).explain();
    const text = JSON.stringify(plan.queryPlanner);
    if (plan.filterPushdown !== true || !/USING INDEX/.test(text)) throw new Error(`no index use in ${text}`);
    const docs = await c.find({ _id: 'k2', a: 1 }).toArray();
    if (docs.length !== 0) throw new Error('the rest of the filter was not applied');
  },
};

/** Deleted documents must not stay readable in the database files or their write-ahead logs. */
async function deletedBytesLeaveDisk(db) {
  const fs = require('node:fs');
  const path = require('node:path');
  const marker = `deleted-marker-${process.pid}-${Date.now()}`;
  const c = db.collection('erase');
  await c.insertOne({ _id: 'e1', text: marker.repeat(50) });
  await c.deleteOne({ _id: 'e1' });
  const holders = () => fs.readdirSync(sqliteDir).filter((f) => fs.readFileSync(path.join(sqliteDir, f)).includes(marker));
  for (let i = 0; i < 100; i++) {
    if (holders().length === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`marker still in ${holders().join(', ')}`);
}

// Each probe resolves to 'ok' (or a short note) or throws; the error text goes in the table.
const probes = {
  async setOnInsertUpsert(db) {
    const c = db.collection('p_soi');
    await c.updateOne({ _id: 1 }, { $set: { a: 1 }, $setOnInsert: { created: 1 } }, { upsert: true });
    await c.updateOne({ _id: 1 }, { $set: { a: 2 }, $setOnInsert: { created: 2 } }, { upsert: true });
    const d = await c.findOne({ _id: 1 });
    if (d.a !== 2 || d.created !== 1) throw new Error(JSON.stringify(d));
  },
  async arrayFilters(db) {
    const c = db.collection('p_af');
    await c.insertOne({ _id: 1, items: [{ k: 'a', v: 1 }, { k: 'b', v: 1 }] });
    await c.updateOne({ _id: 1 }, { $set: { 'items.$[it].v': 9 } }, { arrayFilters: [{ 'it.k': 'b' }] });
    const d = await c.findOne({ _id: 1 });
    if (d.items[1].v !== 9) throw new Error(JSON.stringify(d));
  },
  async positionalOperator(db) {
    const c = db.collection('p_pos');
    await c.insertOne({ _id: 1, items: [{ k: 'a', v: 1 }, { k: 'b', v: 1 }] });
    await c.updateOne({ _id: 1, 'items.k': 'b' }, { $set: { 'items.$.v': 7 } });
    const d = await c.findOne({ _id: 1 });
    if (d.items[1].v !== 7) throw new Error(JSON.stringify(d));
  },
  async pushEachSlice(db) {
    const c = db.collection('p_push');
    await c.insertOne({ _id: 1, a: [1, 2, 3] });
    await c.updateOne({ _id: 1 }, { $push: { a: { $each: [4, 5], $slice: -3 } } });
    const d = await c.findOne({ _id: 1 });
    if (JSON.stringify(d.a) !== '[3,4,5]') throw new Error(JSON.stringify(d));
  },
  async addToSetPullIncMinMax(db) {
    const c = db.collection('p_ops');
    await c.insertOne({ _id: 1, s: [1], n: 5, lo: 5, hi: 5 });
    await c.updateOne({ _id: 1 }, { $addToSet: { s: 2 }, $inc: { n: 2 }, $min: { lo: 1 }, $max: { hi: 9 } });
    await c.updateOne({ _id: 1 }, { $pull: { s: 1 }, $unset: { n: '' }, $currentDate: { at: true } });
    const d = await c.findOne({ _id: 1 });
    if (JSON.stringify(d.s) !== '[2]' || d.n !== undefined || d.lo !== 1 || d.hi !== 9 || !(d.at instanceof Date)) throw new Error(JSON.stringify(d));
  },
  async updatePipeline(db) {
    const c = db.collection('p_upipe');
    await c.insertOne({ _id: 1, a: 1 });
    await c.updateOne({ _id: 1 }, [{ $set: { b: { $add: ['$a', 1] } } }]);
    const d = await c.findOne({ _id: 1 });
    if (d.b !== 2) throw new Error(JSON.stringify(d));
  },
  async bulkWrite(db) {
    const r = await db.collection('p_bulk').bulkWrite([
      { insertOne: { document: { _id: 1 } } },
      { updateOne: { filter: { _id: 2 }, update: { $set: { x: 1 } }, upsert: true } },
      { deleteOne: { filter: { _id: 1 } } },
    ]);
    if (r.insertedCount !== 1 || r.upsertedCount !== 1 || r.deletedCount !== 1) throw new Error(JSON.stringify(r));
  },
  async unorderedInsertDuplicates(db) {
    const c = db.collection('p_unord');
    await c.createIndex({ k: 1 }, { unique: true });
    try {
      await c.insertMany([{ k: 1 }, { k: 1 }, { k: 2 }], { ordered: false });
    } catch (e) {
      if (e.code !== 11000) throw e;
    }
    const n = await c.countDocuments();
    if (n !== 2) throw new Error(`count ${n}, expected 2`);
  },
  async countDistinctEstimated(db) {
    const c = db.collection('p_count');
    await c.insertMany([{ g: 'a' }, { g: 'a' }, { g: 'b' }]);
    const n = await c.countDocuments({ g: 'a' });
    const d = await c.distinct('g');
    const e = await c.estimatedDocumentCount();
    if (n !== 2 || d.length !== 2 || e !== 3) throw new Error(JSON.stringify({ n, d, e }));
  },
  async regexQuery(db) {
    const c = db.collection('p_re');
    await c.insertMany([{ name: 'Alpha' }, { name: 'beta' }]);
    const r = await c.find({ name: { $regex: '^al', $options: 'i' } }).toArray();
    if (r.length !== 1) throw new Error(JSON.stringify(r));
  },
  async exprQuery(db) {
    const c = db.collection('p_expr');
    await c.insertMany([{ a: 1, b: 2 }, { a: 3, b: 2 }]);
    const r = await c.find({ $expr: { $gt: ['$a', '$b'] } }).toArray();
    if (r.length !== 1) throw new Error(JSON.stringify(r));
  },
  async logicalAndArrayOperators(db) {
    const c = db.collection('p_logic');
    await c.insertMany([{ t: ['a', 'b'], n: 1 }, { t: ['a'], n: 2 }, { n: 3 }]);
    const r1 = await c.find({ t: { $all: ['a', 'b'] } }).toArray();
    const r2 = await c.find({ $or: [{ n: 1 }, { n: 3 }], t: { $exists: true } }).toArray();
    const r3 = await c.find({ n: { $nin: [1], $ne: 3 }, t: { $size: 1 } }).toArray();
    const r4 = await c.find({ n: { $type: 'number', $mod: [2, 1] } }).toArray();
    if (r1.length !== 1 || r2.length !== 1 || r3.length !== 1 || r4.length !== 2) throw new Error(JSON.stringify({ r1, r2, r3, r4 }));
  },
  async elemMatchOnSubdocuments(db) {
    const c = db.collection('p_em');
    await c.insertMany([{ o: [{ x: 1, y: 2 }] }, { o: [{ x: 1, y: 0 }] }]);
    const r = await c.find({ o: { $elemMatch: { x: 1, y: { $gt: 1 } } } }).toArray();
    if (r.length !== 1) throw new Error(JSON.stringify(r));
  },
  async elemMatchOnScalars(db) {
    const c = db.collection('p_em2');
    await c.insertMany([{ a: [1, 5] }, { a: [2, 3] }]);
    const r = await c.find({ a: { $elemMatch: { $gt: 4 } } }).toArray();
    if (r.length !== 1) throw new Error(JSON.stringify(r));
  },
  async dottedArrayQuery(db) {
    const c = db.collection('p_dot');
    await c.insertMany([{ o: [{ x: 1 }, { x: 2 }] }, { o: [{ x: 3 }] }]);
    const r = await c.find({ 'o.x': 2 }).toArray();
    if (r.length !== 1) throw new Error(JSON.stringify(r));
  },
  async projectionSortSkipLimit(db) {
    const c = db.collection('p_proj');
    await c.insertMany([1, 2, 3, 4, 5].map((i) => ({ i, big: 'x'.repeat(10) })));
    const r = await c.find({}, { projection: { big: 0 } }).sort({ i: -1 }).skip(1).limit(2).toArray();
    if (r.length !== 2 || r[0].i !== 4 || r[0].big !== undefined) throw new Error(JSON.stringify(r));
  },
  async aggregateMatchGroupSort(db) {
    const c = db.collection('p_agg');
    await c.insertMany([{ g: 'a', v: 1 }, { g: 'a', v: 2 }, { g: 'b', v: 5 }]);
    const r = await c.aggregate([{ $match: { v: { $gt: 0 } } }, { $group: { _id: '$g', total: { $sum: '$v' }, n: { $sum: 1 } } }, { $sort: { total: -1 } }]).toArray();
    if (r.length !== 2 || r[0]._id !== 'b' || r[1].total !== 3) throw new Error(JSON.stringify(r));
  },
  async aggregateGroupByDate(db) {
    const c = db.collection('p_aggdate');
    await c.insertMany([{ ts: new Date('2024-01-01T10:00:00Z') }, { ts: new Date('2024-01-01T12:00:00Z') }, { ts: new Date('2024-01-02T00:00:00Z') }]);
    const r = await c.aggregate([{ $group: { _id: { $dateToString: { format: '%Y-%m-%d', date: '$ts' } }, n: { $sum: 1 } } }, { $sort: { _id: 1 } }]).toArray();
    if (r.length !== 2 || r[0].n !== 2) throw new Error(JSON.stringify(r));
  },
  async aggregateUnwindProjectAddFields(db) {
    const c = db.collection('p_agg2');
    await c.insertOne({ _id: 1, a: [1, 2], x: 3 });
    const r = await c.aggregate([{ $unwind: '$a' }, { $addFields: { y: 1 } }, { $project: { a: 1, y: 1 } }, { $skip: 1 }, { $limit: 1 }]).toArray();
    if (r.length !== 1 || r[0].a !== 2 || r[0].y !== 1) throw new Error(JSON.stringify(r));
  },
  async aggregateCount(db) {
    const c = db.collection('p_agg3');
    await c.insertMany([{}, {}]);
    const r = await c.aggregate([{ $count: 'n' }]).toArray();
    if (r[0]?.n !== 2) throw new Error(JSON.stringify(r));
  },
  async aggregateLookup(db) {
    await db.collection('p_lk_a').insertOne({ _id: 1, b: 10 });
    await db.collection('p_lk_b').insertOne({ _id: 10, name: 'x' });
    const r = await db.collection('p_lk_a').aggregate([{ $lookup: { from: 'p_lk_b', localField: 'b', foreignField: '_id', as: 'bs' } }]).toArray();
    if (r[0]?.bs?.[0]?.name !== 'x') throw new Error(JSON.stringify(r));
  },
  async aggregateFacet(db) {
    const c = db.collection('p_facet');
    await c.insertMany([{ v: 1 }, { v: 2 }]);
    const r = await c.aggregate([{ $facet: { total: [{ $count: 'n' }], items: [{ $limit: 1 }] } }]).toArray();
    if (r[0]?.total?.[0]?.n !== 2) throw new Error(JSON.stringify(r));
  },
  async aggregateBucket(db) {
    const c = db.collection('p_bucket');
    await c.insertMany([{ v: 1 }, { v: 5 }]);
    const r = await c.aggregate([{ $bucket: { groupBy: '$v', boundaries: [0, 3, 10] } }]).toArray();
    if (r.length !== 2) throw new Error(JSON.stringify(r));
  },
  async aggregateSortByCountAndSample(db) {
    const c = db.collection('p_sbc');
    await c.insertMany([{ g: 'a' }, { g: 'a' }, { g: 'b' }]);
    const r = await c.aggregate([{ $sortByCount: '$g' }]).toArray();
    if (r[0]?._id !== 'a') throw new Error(JSON.stringify(r));
  },
  async aggregateSample(db) {
    const c = db.collection('p_sample');
    await c.insertMany([{ v: 1 }, { v: 2 }]);
    const r = await c.aggregate([{ $sample: { size: 1 } }]).toArray();
    if (r.length !== 1) throw new Error(JSON.stringify(r));
  },
  async aggregateOut(db) {
    const c = db.collection('p_out_src');
    await c.insertOne({ v: 1 });
    await c.aggregate([{ $out: 'p_out_dst' }]).toArray();
    const n = await db.collection('p_out_dst').countDocuments();
    if (n !== 1) throw new Error(`count ${n}`);
  },
  async aggregateMerge(db) {
    const c = db.collection('p_merge_src');
    await c.insertOne({ _id: 1, v: 1 });
    await c.aggregate([{ $merge: { into: 'p_merge_dst' } }]).toArray();
  },
  async aggregateGroupPush(db) {
    const c = db.collection('p_accpush');
    await c.insertMany([{ g: 1, v: 3 }, { g: 1, v: 7 }]);
    const r = await c.aggregate([{ $group: { _id: '$g', vs: { $push: '$v' } } }]).toArray();
    if (r[0]?.vs?.length !== 2) throw new Error(JSON.stringify(r));
  },
  async aggregateGroupFirstLast(db) {
    const c = db.collection('p_accfirst');
    await c.insertMany([{ g: 1, v: 3 }, { g: 1, v: 7 }]);
    const r = await c.aggregate([{ $sort: { v: 1 } }, { $group: { _id: '$g', first: { $first: '$v' }, last: { $last: '$v' } } }]).toArray();
    if (r[0]?.first !== 3 || r[0]?.last !== 7) throw new Error(JSON.stringify(r));
  },
  async aggregateGroupMinMaxAvg(db) {
    const c = db.collection('p_accmax');
    await c.insertMany([{ g: 1, v: 3 }, { g: 1, v: 7 }]);
    const r = await c.aggregate([{ $group: { _id: '$g', max: { $max: '$v' }, min: { $min: '$v' }, avg: { $avg: '$v' } } }]).toArray();
    if (r[0]?.max !== 7 || r[0]?.min !== 3 || r[0]?.avg !== 5) throw new Error(JSON.stringify(r));
  },
  async aggregateGroupAddToSet(db) {
    const c = db.collection('p_accset');
    await c.insertMany([{ g: 1, v: 3 }, { g: 1, v: 3 }]);
    const r = await c.aggregate([{ $group: { _id: '$g', s: { $addToSet: '$v' } } }]).toArray();
    if (r[0]?.s?.length !== 1) throw new Error(JSON.stringify(r));
  },
  async aggregateGroupNullId(db) {
    const c = db.collection('p_accnull');
    await c.insertMany([{ v: 3 }, { v: 4 }]);
    const r = await c.aggregate([{ $group: { _id: null, total: { $sum: '$v' }, n: { $count: {} } } }]).toArray();
    if (r[0]?.total !== 7 || r[0]?.n !== 2) throw new Error(JSON.stringify(r));
  },
  async aggregateProjectExpressions(db) {
    const c = db.collection('p_pexpr');
    await c.insertOne({ a: 'x', b: 'y', n: [1, 2] });
    const r = await c.aggregate([{ $project: { s: { $concat: ['$a', '$b'] }, t: { $sum: '$n' } } }]).toArray();
    if (r[0]?.s !== 'xy' || r[0]?.t !== 3) throw new Error(JSON.stringify(r));
  },
  async popRenameUpdates(db) {
    const c = db.collection('p_poprn');
    await c.insertOne({ _id: 1, a: [1, 2, 3], old: 1 });
    await c.updateOne({ _id: 1 }, { $pop: { a: -1 }, $rename: { old: 'new' } });
    const d = await c.findOne({ _id: 1 });
    if (JSON.stringify(d.a) !== '[2,3]' || d.new !== 1) throw new Error(JSON.stringify(d));
  },
  async hint(db) {
    const c = db.collection('p_hint');
    await c.createIndex({ a: 1 });
    await c.insertOne({ a: 1 });
    await c.find({ a: 1 }).hint({ a: 1 }).toArray();
  },
  async aggregateCondAndSwitch(db) {
    const c = db.collection('p_cond');
    await c.insertOne({ v: 5 });
    const r = await c.aggregate([{ $project: { big: { $cond: [{ $gt: ['$v', 3] }, 'y', 'n'] } } }]).toArray();
    if (r[0]?.big !== 'y') throw new Error(JSON.stringify(r));
  },
  async ttlIndex(db) {
    await db.collection('p_ttl').createIndex({ at: 1 }, { expireAfterSeconds: 60 });
    return 'index accepted (expiry of documents not verified)';
  },
  async partialIndex(db) {
    await db.collection('p_partial').createIndex({ k: 1 }, { unique: true, partialFilterExpression: { k: { $exists: true } } });
  },
  async sparseUniqueIndex(db) {
    const c = db.collection('p_sparse');
    await c.createIndex({ k: 1 }, { unique: true, sparse: true });
    await c.insertMany([{ a: 1 }, { a: 2 }]);
  },
  async compoundUniqueIndex(db) {
    const c = db.collection('p_compound');
    await c.createIndex({ acc: 1, name: 1 }, { unique: true });
    await c.insertMany([{ acc: 1, name: 'a' }, { acc: 2, name: 'a' }]);
    try {
      await c.insertOne({ acc: 1, name: 'a' });
    } catch (e) {
      if (e.code === 11000) return;
      throw e;
    }
    throw new Error('duplicate accepted');
  },
  async textIndex(db) {
    const c = db.collection('p_text');
    await c.createIndex({ body: 'text' });
    await c.insertOne({ body: 'hello world' });
    const r = await c.find({ $text: { $search: 'hello' } }).toArray();
    if (r.length !== 1) throw new Error(JSON.stringify(r));
  },
  async collation(db) {
    const c = db.collection('p_coll');
    await c.insertOne({ n: 'Abc' });
    const r = await c.find({ n: 'abc' }).collation({ locale: 'en', strength: 2 }).toArray();
    if (r.length !== 1) throw new Error(JSON.stringify(r));
  },
  async listIndexesAndDropIndex(db) {
    const c = db.collection('p_idx');
    await c.createIndex({ a: 1 }, { name: 'a_1' });
    const ix = await c.indexes();
    await c.dropIndex('a_1');
    if (!ix.some((i) => i.name === 'a_1')) throw new Error(JSON.stringify(ix));
  },
  async largeDocument(db) {
    const c = db.collection('p_large');
    await c.insertOne({ _id: 1, blob: Buffer.alloc(15 * 1024 * 1024, 1) });
    const d = await c.findOne({ _id: 1 });
    if (d.blob.length() !== 15 * 1024 * 1024) throw new Error('size mismatch');
  },
  async concurrentWrites(db) {
    const c = db.collection('p_conc');
    await Promise.all(Array.from({ length: 200 }, (_, i) => c.updateOne({ _id: i % 10 }, { $inc: { n: 1 } }, { upsert: true }).catch((e) => {
      if (e.code !== 11000) throw e; // two concurrent upserts of one _id: MongoDB behaves the same
      return c.updateOne({ _id: i % 10 }, { $inc: { n: 1 } });
    })));
    const [r] = await c.aggregate([{ $group: { _id: null, total: { $sum: '$n' } } }]).toArray();
    if (r.total !== 200) throw new Error(`total ${r.total}, expected 200`);
  },
  async findOneAndUpdateWithSort(db) {
    const c = db.collection('p_fsort');
    await c.insertMany([{ q: 1, p: 2, taken: false }, { q: 1, p: 1, taken: false }]);
    const r = await c.findOneAndUpdate({ q: 1, taken: false }, { $set: { taken: true } }, { sort: { p: 1 }, returnDocument: 'after' });
    if (r?.p !== 1) throw new Error(JSON.stringify(r));
  },
  async upsertFromQueryFields(db) {
    const c = db.collection('p_upq');
    await c.updateOne({ acc: 'a', month: '2024-01' }, { $inc: { n: 1 } }, { upsert: true });
    const d = await c.findOne({ acc: 'a' });
    if (d?.month !== '2024-01' || d?.n !== 1) throw new Error(JSON.stringify(d));
  },
  async cursorGetMore(db) {
    const c = db.collection('p_getmore');
    await c.insertMany(Array.from({ length: 1500 }, (_, i) => ({ i })));
    const n = (await c.find({}).batchSize(100).toArray()).length;
    if (n !== 1500) throw new Error(`got ${n}`);
  },
  async jsonSchemaValidator(db) {
    await db.createCollection('p_valid', { validator: { $jsonSchema: { required: ['a'] } } });
    try {
      await db.collection('p_valid').insertOne({ b: 1 });
    } catch (e) {
      if (e.code === 121) return;
      throw e;
    }
    throw new Error('document violating the validator was accepted');
  },
  async deleteManyWithLimitlessFilter(db) {
    const c = db.collection('p_del');
    await c.insertMany([{ a: 1 }, { a: 1 }, { a: 2 }]);
    const r = await c.deleteMany({ a: 1 });
    if (r.deletedCount !== 2) throw new Error(JSON.stringify(r));
  },
  async transactions(db, client) {
    const session = client.startSession();
    try {
      await session.withTransaction(async () => {
        await db.collection('p_tx').insertOne({ a: 1 }, { session });
      });
    } finally {
      await session.endSession();
    }
  },
  async changeStreams(db) {
    const cs = db.collection('p_cs').watch();
    try {
      const next = cs.tryNext();
      await Promise.race([next, new Promise((r) => setTimeout(r, 1000))]);
    } finally {
      await cs.close().catch(() => {});
    }
  },
  async cappedCollection(db) {
    await db.createCollection('p_capped', { capped: true, size: 4096, max: 2 });
    const c = db.collection('p_capped');
    await c.insertMany([{ i: 1 }, { i: 2 }, { i: 3 }]);
    return `capped collection created; ${await c.countDocuments()} docs after inserting 3 with max 2`;
  },
  async renameCollection(db) {
    await db.collection('p_ren').insertOne({ a: 1 });
    await db.collection('p_ren').rename('p_ren2');
  },
  async dateRangeQuery(db) {
    const c = db.collection('p_dates');
    await c.insertMany([{ t: new Date('2024-01-01') }, { t: new Date('2024-02-01') }]);
    const r = await c.find({ t: { $gte: new Date('2024-01-15'), $lt: new Date('2024-03-01') } }).toArray();
    if (r.length !== 1) throw new Error(JSON.stringify(r));
  },
  async nestedFieldSortDotted(db) {
    const c = db.collection('p_nested');
    await c.insertMany([{ m: { k: 2 } }, { m: { k: 1 } }]);
    const r = await c.find({ 'm.k': { $gt: 0 } }).sort({ 'm.k': 1 }).toArray();
    if (r[0].m.k !== 1) throw new Error(JSON.stringify(r));
  },
  async findOneAndDeleteReplace(db) {
    const c = db.collection('p_fodr');
    await c.insertMany([{ _id: 1, a: 1 }, { _id: 2, a: 2 }]);
    const d = await c.findOneAndDelete({ _id: 1 });
    const r = await c.findOneAndReplace({ _id: 2 }, { b: 3 }, { returnDocument: 'after' });
    if (d?.a !== 1 || r?.b !== 3) throw new Error(JSON.stringify({ d, r }));
  },
  async retryableWrites(db) {
    const hello = await db.admin().command({ hello: 1 });
    return `logicalSessionTimeoutMinutes=${hello.logicalSessionTimeoutMinutes}, setName=${hello.setName ?? 'none'}, maxWireVersion=${hello.maxWireVersion}`;
  },
  async serverStatusAndDbStats(db) {
    await db.admin().command({ serverStatus: 1 });
    await db.command({ dbStats: 1 });
  },
};

async function run(tests, db, client) {
  const results = {};
  for (const [name, fn] of Object.entries(tests)) {
    try {
      const note = await fn(db, client);
      results[name] = { ok: true, note: typeof note === 'string' ? note : undefined };
    } catch (e) {
      results[name] = { ok: false, error: `${e.codeName ? e.codeName + ': ' : ''}${String(e.message).split('\n')[0].slice(0, 200)}` };
    }
  }
  return results;
}

(async () => {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 10000 });
  await client.connect();
  const dbName = `check_${process.pid}_${Date.now()}`;
  const db = client.db(dbName);
  let failed = false;
  try {
    const basicResults = await run(sqliteDir ? { ...basic, deletedBytesLeaveDisk } : basic, db, client);
    for (const [name, r] of Object.entries(basicResults)) {
      console.log(`  ${name}: ${r.ok ? 'ok' : 'FAILED'}${r.error ? ' (' + r.error + ')' : ''}`);
      if (!r.ok) failed = true;
    }
    if (probeMode) console.log(JSON.stringify(await run(probes, db, client), null, 2));
  } finally {
    await db.dropDatabase().catch(() => {});
    await client.close();
  }
  process.exit(failed ? 1 : 0);
})().catch((e) => {
  console.error(`check failed: ${e.message}`);
  process.exit(1);
});
