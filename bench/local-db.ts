/**
 * The local database at scale (issues 19, 29): 1,000,000 publish messages of one account inserted
 * straight into the engine in the shape the service stores, then over HTTP on the local stack,
 * for each engine (`--engine embedded|mongodb`, default both, embedded first; the embedded rows
 * are written by this process on the service's DATA_DIR, as a second process may):
 * - GET /api/entities/messages/{id} for random stored ids (a lookup by _id: the patched FerretDB
 *   reads it through the _id index);
 * - the first page of the list, and of a search by sender, once each (FerretDB v1 uses no other
 *   index, so these read and sort the whole collection);
 * - a full CSV export (time to the first byte and to the end).
 *
 *   npm run bench -- local-db [--count 1000000] [--lookups 500] [--engine embedded|mongodb]
 */
import http from 'node:http';
import path from 'node:path';
import { MongoClient, ObjectId } from 'mongodb';
import { DocTable, immediate, openSqlite } from '../src/storage/sqlite';
import { startServiceProcess, StackEnv } from '../test/support/service';
import { cliJson, fmt, httpClient, percentile } from './_messaging-common';

function argOf(args: string[], name: string, dflt: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
}

const summary = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return `p50 ${fmt(percentile(s, 50))} ms, p99 ${fmt(percentile(s, 99))} ms, max ${fmt(s[s.length - 1])} ms (n=${s.length})`;
};

function exportTimes(url: string, key: string): Promise<{ firstByteMs: number; totalMs: number; bytes: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    http.get(url, { headers: { authorization: `Bearer ${key}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`export answered ${res.statusCode}`));
      let firstByteMs = -1;
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        if (firstByteMs < 0) firstByteMs = Date.now() - started;
        bytes += c.length;
      });
      res.on('end', () => resolve({ firstByteMs, totalMs: Date.now() - started, bytes }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

type Engine = 'embedded' | 'mongodb';

/** Stored messages of the account, in the shape the message stores write (data as JSON text). */
function messageBatch(accountId: string, from: number, to: number, ids: string[]) {
  const base = Date.UTC(2025, 0, 1);
  const docs = [];
  for (let j = from; j < to; j++) {
    const id = new ObjectId().toHexString();
    ids.push(id);
    docs.push({
      _id: id, accountId, msgType: 'publish', source: `accounts/${accountId}/entities/dev-${j % 100}`,
      sourceName: `dev-${j % 100}`, destination: null, data: JSON.stringify({ seq: j, temp: 20 + (j % 50) / 10 }),
      tags: ['bench'], timestamp: new Date(base + j * 1000), receivedAt: new Date(), validation: { result: 'skipped' }, bytes: 30,
    });
  }
  return docs;
}

/** Inserts `count` messages straight into the engine; returns their ids. */
async function insertMessages(engine: Engine, env: StackEnv, accountId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  if (engine === 'embedded') {
    const db = openSqlite(path.join(env.dataDir, 'db', 'records.sqlite'));
    const messages = new DocTable<ReturnType<typeof messageBatch>[number]>(db, 'messages');
    for (let i = 0; i < count; i += 5000) {
      const docs = messageBatch(accountId, i, Math.min(count, i + 5000), ids);
      immediate(db, () => { for (const d of docs) messages.insert(d); });
    }
    db.close();
    return ids;
  }
  const mongo = new MongoClient(`mongodb://127.0.0.1:${env.mongoPort}/`, { maxPoolSize: 1 });
  await mongo.connect();
  const messages = mongo.db('sentinel').collection('messages');
  for (let i = 0; i < count; i += 5000) {
    const docs = messageBatch(accountId, i, Math.min(count, i + 5000), ids);
    await messages.insertMany(docs.map((d) => ({ ...d, _id: d._id as unknown as ObjectId })), { ordered: false });
  }
  await mongo.close();
  return ids;
}

export async function run(args: string[]): Promise<void> {
  const i = args.indexOf('--engine');
  const engines: Engine[] = i >= 0 ? [args[i + 1] as Engine] : ['embedded', 'mongodb'];
  for (const engine of engines) {
    if (engine !== 'embedded' && engine !== 'mongodb') throw new Error(`--engine ${engine}: embedded or mongodb`);
    console.log(`\n## engine: ${engine}`);
    await runOn(engine, args);
  }
}

async function runOn(engine: Engine, args: string[]): Promise<void> {
  const count = argOf(args, 'count', 1_000_000);
  const lookups = argOf(args, 'lookups', 500);
  const svc = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn', DATABASE_ENGINE: engine } });
  try {
    const env = svc.env;
    const acct = await cliJson(env, 'account', 'create', '--name', 'local-db-bench', '--plan', 'pro');
    const t0 = Date.now();
    const ids = await insertMessages(engine, env, acct.accountId, count);
    const insertSecs = (Date.now() - t0) / 1000;
    console.log(`\ninserted ${count} messages in ${fmt(insertSecs)} s (${fmt(count / insertSecs, 0)}/s)`);

    const client = httpClient(env.baseUrl, 1);
    const get: number[] = [];
    let next = Date.now();
    for (let i = 0; i < lookups; i++) {
      // One request per 25 ms at most: the key's rate limit is 50 requests per second.
      await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
      next = Date.now() + 25;
      const id = ids[Math.floor(Math.random() * ids.length)];
      const r = await client.request('GET', `/api/entities/messages/${id}`, acct.apiKey);
      if (r.status !== 200 || (JSON.parse(r.body) as { id: string }).id !== id) throw new Error(`GET message ${id}: ${r.status} ${r.body.slice(0, 200)}`);
      get.push(r.ms);
    }
    // Each figure is printed as soon as it is measured: at this size a full-collection query can
    // run into the HTTP server's 300 s request timeout.
    console.log(`\n| request (${count} messages stored) | time |`);
    console.log('|---|---|');
    console.log(`| GET /api/entities/messages/{id}, ${lookups} random ids, one at a time | ${summary(get)} |`);
    const missing = await client.request('GET', `/api/entities/messages/${new ObjectId().toHexString()}`, acct.apiKey);
    console.log(`| GET /api/entities/messages/{unknown id} (404) | ${fmt(missing.ms)} ms (status ${missing.status}) |`);
    const timed = async (what: string, fn: () => Promise<string>) => {
      const started = Date.now();
      try {
        console.log(`| ${what} | ${await fn()} |`);
      } catch (err) {
        console.log(`| ${what} | failed after ${fmt((Date.now() - started) / 1000)} s: ${(err as Error).message} |`);
      }
    };
    await timed('GET /api/entities/messages?limit=10 (first page)', async () => {
      const l = await client.request('GET', '/api/entities/messages?limit=10', acct.apiKey);
      return `${fmt(l.ms / 1000)} s (status ${l.status})`;
    });
    await timed('POST /api/entities/messages/search {entity_name, limit 10}', async () => {
      const r = await client.request('POST', '/api/entities/messages/search', acct.apiKey, { entity_name: 'dev-7', limit: 10 });
      return `${fmt(r.ms / 1000)} s (status ${r.status})`;
    });
    client.agent.destroy();
    await timed('GET /api/messages/export?format=csv (all rows)', async () => {
      const ex = await exportTimes(`${env.baseUrl}/api/messages/export?format=csv`, acct.apiKey);
      return `first byte ${fmt(ex.firstByteMs / 1000)} s, complete ${fmt(ex.totalMs / 1000)} s, ${fmt(ex.bytes / 1024 / 1024)} MB`;
    });
  } finally {
    await svc.stop();
  }
}
