/**
 * Benches' own way into the service's message history, on either engine: stored publish messages
 * inserted straight into the engine in the shape the message stores write (the embedded rows by
 * this process on the service's DATA_DIR, as a second process may; MongoDB through the driver),
 * and counts of what is stored. Used to seed millions of rows faster than any API would, and to
 * count what MQTT ingest stored.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import path from 'node:path';
import { MongoClient, ObjectId } from 'mongodb';
import { loadConfig } from '../src/config';
import { DocTable, immediate, openSqlite, SqliteDatabase } from '../src/storage/sqlite';
import type { StackEnv } from '../test/support/service';

export type Engine = 'embedded' | 'mongodb';

export const BASE_TIME = Date.UTC(2025, 0, 1);
export const DEVICES_IN_HISTORY = 100;

/** Message `j`'s payload and tags (the rest of the record is the same for every bench). */
export interface MessageShape {
  data(j: number): unknown;
  tags(j: number): string[];
}

const PLAIN: MessageShape = { data: (j) => ({ seq: j, temp: 20 + (j % 50) / 10 }), tags: () => ['bench'] };

/**
 * Stored messages `from` to `to` of the account, one second apart from BASE_TIME; the id of every
 * `keepEvery`th message (and of the last) is pushed onto `ids`.
 */
function messageBatch(accountId: string, from: number, to: number, ids: string[], shape: MessageShape, keepEvery: number) {
  const docs = [];
  for (let j = from; j < to; j++) {
    const id = new ObjectId().toHexString();
    if (j % keepEvery === 0) ids.push(id);
    const data = JSON.stringify(shape.data(j));
    docs.push({
      _id: id, accountId, msgType: 'publish', source: `accounts/${accountId}/entities/dev-${j % DEVICES_IN_HISTORY}`,
      sourceName: `dev-${j % DEVICES_IN_HISTORY}`, destination: null, data,
      tags: shape.tags(j), timestamp: new Date(BASE_TIME + j * 1000), receivedAt: new Date(), validation: { result: 'skipped' }, bytes: Buffer.byteLength(data),
    });
  }
  return docs;
}

/** The engine as this process reaches it: raw inserts of history, and counts of stored publish messages. */
export interface Direct {
  /** Inserts messages `from` to `to`; pushes every `keepEvery`th id onto `ids` (all by default). */
  insert(accountId: string, from: number, to: number, ids: string[], opts?: { shape?: MessageShape; keepEvery?: number }): Promise<void>;
  /** Publish messages of the account (less those `except` sent), or every stored message. */
  count(accountId?: string, except?: string): Promise<number>;
  close(): Promise<void>;
}

export async function directTo(engine: Engine, env: StackEnv): Promise<Direct> {
  const batches = async function* (accountId: string, from: number, to: number, ids: string[], opts: { shape?: MessageShape; keepEvery?: number } = {}) {
    for (let i = from; i < to; i += 5000) yield messageBatch(accountId, i, Math.min(to, i + 5000), ids, opts.shape ?? PLAIN, opts.keepEvery ?? 1);
  };
  if (engine === 'embedded') {
    const db: SqliteDatabase = openSqlite(path.join(env.dataDir, 'db', 'records.sqlite'));
    const messages = new DocTable<ReturnType<typeof messageBatch>[number]>(db, 'messages');
    return {
      insert: async (accountId, from, to, ids, opts) => {
        for await (const docs of batches(accountId, from, to, ids, opts)) {
          immediate(db, () => { for (const d of docs) messages.insert(d); });
          // Between batches the service's MQTT devices get their keep-alives answered.
          await nextTurn();
        }
      },
      count: async (accountId, except) => {
        if (!accountId) return messages.count('1', []);
        return except === undefined
          ? messages.count("account_id = ? AND msg_type = 'publish'", [accountId])
          : messages.count("account_id = ? AND msg_type = 'publish' AND source_name <> ?", [accountId, except]);
      },
      close: async () => { db.close(); },
    };
  }
  const mongo = new MongoClient(`mongodb://127.0.0.1:${env.mongoPort}/`, { maxPoolSize: 1 });
  await mongo.connect();
  const messages = mongo.db(loadConfig({ ...process.env, ...env.env }).mongodbDb).collection('messages');
  return {
    insert: async (accountId, from, to, ids, opts) => {
      for await (const docs of batches(accountId, from, to, ids, opts)) {
        await messages.insertMany(docs.map((d) => ({ ...d, _id: d._id as unknown as ObjectId })), { ordered: false });
      }
    },
    count: async (accountId, except) => (accountId
      ? messages.countDocuments({ accountId, msgType: 'publish', ...(except === undefined ? {} : { sourceName: { $ne: except } }) })
      : messages.estimatedDocumentCount()),
    close: () => mongo.close(),
  };
}

