/**
 * Deleted upload bytes do not outlive their scan on disk (issue 19): after a deferred scan of a
 * file holding a unique marker completes, no file under DATA_DIR (database files and their
 * write-ahead logs, Temporal's store, logs, temporary files) holds the marker, raw or in the
 * base64 the local FerretDB stores binary data as.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { api, newAccount, stack } from '../../support/env';
import { upload } from '../../support/multipart';
import { until } from '../mqtt/support';

/** The marker as raw bytes and as base64 at each of the three byte alignments it can fall on. */
function needles(marker: Buffer): Buffer[] {
  const out = [marker];
  for (let o = 0; o < 3; o++) {
    const whole = Math.floor((marker.length - o) / 3) * 3;
    out.push(Buffer.from(marker.subarray(o, o + whole).toString('base64')));
  }
  return out;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return filesUnder(p);
    return e.isFile() ? [p] : [];
  });
}

function holders(dir: string, find: Buffer[]): string[] {
  return filesUnder(dir).filter((f) => {
    if (statSync(f, { throwIfNoEntry: false }) === undefined) return false;
    let bytes: Buffer;
    try {
      bytes = readFileSync(f);
    } catch {
      return false; // removed between the listing and the read: it holds nothing
    }
    return find.some((n) => bytes.includes(n));
  });
}

it('a deferred scan\'s upload is nowhere under DATA_DIR once the scan completed', async () => {
  const acct = await newAccount('pro');
  // Letters only, so no engine reports it and no excerpt of it is kept in the result.
  const marker = Buffer.from(`erasemarker${[...randomBytes(24)].map((b) => String.fromCharCode(97 + (b % 26))).join('')}`);
  const line = Buffer.concat([Buffer.from('The quick brown fox jumps over the lazy dog '), marker, Buffer.from('\n')]);
  const content = Buffer.concat(Array.from({ length: Math.ceil((3 * 1024 * 1024) / line.length) }, () => line));
  const find = needles(marker);

  const r = await upload(acct.apiKey, content, 'notes.txt', { query: '?defer=true' });
  expect(r.status).toBe(202);
  await until(async () => {
    const s = await api('GET', `/api/scan/${r.body.scanId}`, { key: acct.apiKey });
    return s.body.status === 'complete' ? true : undefined;
  }, 60_000, 'the deferred scan to complete');

  const dataDir = stack().dataDir;
  // The local FerretDB checkpoints and truncates its write-ahead log every 2 s.
  let left: string[] = [];
  await until(async () => {
    left = holders(dataDir, find);
    return left.length === 0 ? true : undefined;
  }, 30_000, 'no file under DATA_DIR holding the marker').catch((err: Error) => {
    throw new Error(`${err.message}; still in ${left.join(', ')}`);
  });
});
