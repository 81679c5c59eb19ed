/**
 * Export memory: 1,000,000 publish messages inserted straight into the service's engine (the
 * embedded store's rows on its DATA_DIR, bench/_messages-direct.ts), then exported over HTTP as CSV and as JSON. Reports time, bytes, the service
 * process's peak RSS (VmHWM from /proc) before and after each export, and checks that each
 * export parses back to 1,000,000 rows, newest first, with the ids that were inserted.
 *
 *   npx tsx bench/run.ts export [--count 1000000]
 */
import http from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parse } from 'csv-parse';
import { startServiceProcess } from '../test/support/service';
import { cliJson, fmt, memoryOf } from './_messaging-common';
import { directTo } from './_messages-direct';

function argOf(args: string[], name: string, dflt: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
}

/** Streams an export, counting rows with a streaming parser; returns rows, bytes, first/last id. */
async function download(url: string, key: string, format: 'csv' | 'json'): Promise<{ rows: number; bytes: number; firstId?: string; lastId?: string; ordered: boolean; ms: number }> {
  const started = Date.now();
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    http.get(url, { headers: { authorization: `Bearer ${key}` } }, resolve).on('error', reject);
  });
  if (res.statusCode !== 200) throw new Error(`export answered ${res.statusCode}`);
  let bytes = 0;
  let rows = 0;
  let firstId: string | undefined;
  let lastId: string | undefined;
  let prevTs = Infinity;
  let ordered = true;
  const count = new Transform({ transform(chunk: Buffer, _e, done) { bytes += chunk.length; done(null, chunk); } });
  const onRow = (id: string, ts: string) => {
    rows++;
    firstId ??= id;
    lastId = id;
    const t = Date.parse(ts);
    if (t > prevTs) ordered = false;
    prevTs = t;
  };
  if (format === 'csv') {
    await pipeline(res, count, parse({ columns: true }), new Writable({
      objectMode: true,
      write(r: Record<string, string>, _e, done) { onRow(r.id, r.timestamp); done(); },
    }));
  } else {
    // One object per line between "[" and "]" (the service's JSON array layout); each line is parsed.
    let buf = '';
    await pipeline(res, count, new Writable({
      write(chunk: Buffer, _e, done) {
        buf += chunk.toString('utf8');
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          let line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line === '[' || line === ']' || line === '[]' || line === '') continue;
          if (line.endsWith(',')) line = line.slice(0, -1);
          const o = JSON.parse(line) as { id: string; timestamp: string };
          onRow(o.id, o.timestamp);
        }
        done();
      },
    }));
  }
  return { rows, bytes, firstId, lastId, ordered, ms: Date.now() - started };
}

export async function run(args: string[]): Promise<void> {
  const count = argOf(args, 'count', 1_000_000);
  const svc = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' } });
  try {
    const env = svc.env;
    const acct = await cliJson(env, 'account', 'create', '--name', 'export-bench', '--plan', 'pro');
    const direct = await directTo(env.databaseEngine, env);
    const t0 = Date.now();
    const ids: string[] = [];
    try {
      await direct.insert(acct.accountId, 0, count, ids, {
        shape: { data: (j) => ({ seq: j, temp: 20 + (j % 50) / 10, note: j % 1000 === 0 ? 'comma, "quote"' : 'ok' }), tags: (j) => ['bench', `shard-${j % 4}`] },
      });
    } finally {
      await direct.close();
    }
    const [firstInserted, lastInserted] = [ids[0], ids[ids.length - 1]];
    const insertSecs = (Date.now() - t0) / 1000;
    console.log(`\ninserted ${count} messages straight into the ${env.databaseEngine} engine in ${fmt(insertSecs)} s (${fmt(count / insertSecs, 0)}/s)`);

    // On MongoDB the local MongoDB-wire server (FerretDB) sorts in its own memory; reported alongside.
    const mongoPidFile = path.join(env.dataDir, 'run', 'mongo.pid');
    const mongoPid = env.databaseEngine === 'mongodb' && existsSync(mongoPidFile) ? (JSON.parse(readFileSync(mongoPidFile, 'utf8')) as { pid: number }).pid : undefined;
    const before = await memoryOf(env.pid);
    const rows: string[] = [];
    for (const format of ['csv', 'json'] as const) {
      // RSS sampled every 500 ms: flat memory means the second half of the download peaks no higher than the first.
      const samples: number[] = [];
      const sampler = setInterval(() => { memoryOf(env.pid).then((m) => samples.push(m.rssMb), () => undefined); }, 500);
      const r = await download(`${env.baseUrl}/api/messages/export?format=${format}`, acct.apiKey, format);
      clearInterval(sampler);
      const half = Math.floor(samples.length / 2);
      const firstHalf = Math.max(...samples.slice(0, half));
      const secondHalf = Math.max(...samples.slice(half));
      const mem = await memoryOf(env.pid);
      const fdb = mongoPid === undefined ? undefined : await memoryOf(mongoPid);
      const okRows = r.rows === count;
      const okIds = r.firstId === lastInserted && r.lastId === firstInserted;
      rows.push(`| ${format} | ${r.rows} | ${fmt(r.bytes / 1024 / 1024)} | ${fmt(r.ms / 1000)} | ${fmt(mem.hwmMb, 0)} | ${fmt(firstHalf, 0)} / ${fmt(secondHalf, 0)} | ${fdb ? fmt(fdb.hwmMb, 0) : '-'} | ${okRows && okIds && r.ordered ? 'yes' : `NO (rows ${okRows}, ids ${okIds}, order ${r.ordered})`} |`);
      if (!(okRows && okIds && r.ordered)) process.exitCode = 1;
    }
    console.log(`service process ${env.pid}: before exports VmHWM ${fmt(before.hwmMb, 0)} MB, VmRSS ${fmt(before.rssMb, 0)} MB\n`);
    console.log('| format | rows | MB | seconds | service VmHWM MB after | service peak RSS MB, 1st / 2nd half of the download | FerretDB VmHWM MB (MongoDB engine) | parses back: all rows, newest first, first/last ids |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const r of rows) console.log(r);
  } finally {
    await svc.stop();
  }
}
