/**
 * The download claim in the database (src/files/store.ts) from several connections at once, as
 * several service processes sharing one database would race for one file: exactly one wins.
 */
import { GridFSBucket, MongoClient } from 'mongodb';
import { FileStore } from '../../../src/files/store';
import { stack } from '../../support/env';
import { MAIN_DB } from '../../support/mongo';

const CONNECTIONS = 4;

describe('file download claims across connections', () => {
  const clients: MongoClient[] = [];
  let stores: FileStore[];
  beforeAll(async () => {
    for (let i = 0; i < CONNECTIONS; i++) {
      const c = new MongoClient(`mongodb://127.0.0.1:${stack().mongoPort}/?maxPoolSize=1`);
      await c.connect();
      clients.push(c);
    }
    stores = clients.map((c) => new FileStore(c.db(MAIN_DB), c.db(MAIN_DB), new GridFSBucket(c.db(MAIN_DB))));
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
  });

  it('gives one file to exactly one of 20 simultaneous claims from 4 connections, again once released', async () => {
    const id = `claim-test-${process.pid}-${Date.now()}`;
    const now = new Date();
    const until = new Date(now.getTime() + 60_000);
    for (let round = 0; round < 3; round++) {
      const won = await Promise.all(Array.from({ length: 20 }, (_, i) => stores[i % CONNECTIONS].claimDownload(id, `t${round}-${i}`, until, now)));
      expect(won.filter(Boolean)).toHaveLength(1);
      await stores[0].releaseDownloadClaim(id, `t${round}-${won.indexOf(true)}`);
    }
  });

  it('lets another take over a claim only once it has lapsed, and a release by someone else does nothing', async () => {
    const id = `claim-lapse-${process.pid}-${Date.now()}`;
    const t0 = new Date();
    expect(await stores[0].claimDownload(id, 'first', new Date(t0.getTime() + 1_000), t0)).toBe(true);
    await stores[1].releaseDownloadClaim(id, 'not-the-holder');
    expect(await stores[1].claimDownload(id, 'second', new Date(t0.getTime() + 5_000), t0)).toBe(false);
    const later = new Date(t0.getTime() + 2_000);
    const won = await Promise.all(stores.map((s, i) => s.claimDownload(id, `late-${i}`, new Date(later.getTime() + 60_000), later)));
    expect(won.filter(Boolean)).toHaveLength(1);
    await stores[0].remove(id);
    expect(await stores[2].claimDownload(id, 'after-remove', new Date(later.getTime() + 60_000), later)).toBe(true);
    await stores[2].releaseDownloadClaim(id, 'after-remove');
  });
});
