/**
 * The download claim (src/files/records.ts, claimDownload) raced from several processes on the
 * embedded store, as several service processes sharing one DATA_DIR race for a file: each file
 * goes to exactly one. The processes open the test stack's own store, beside the running service.
 *
 * Claims on the MongoDB stores are covered in one process by the store contract suite
 * (test/integration/storage/contract/files.test.ts). Their cross-process race is not run here: the
 * only MongoDB-wire server the tests have is the FerretDB v1 stand-in, whose updates across
 * connections are not atomic (issue 29's measurements), so a result on it says nothing about MongoDB.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EngineSpec, inOtherProcess, openEngine, OpenEngine } from '../../support/engines';
import { stack } from '../../support/env';

// Each race starts its processes afresh (node with tsx): minutes on a busy machine.
jest.setTimeout(300_000);

const PROCESSES = 4;
// Every process claims every file in the same order, so the processes race on each one for as
// long as they run.
const FILES = 200;

describe('file download claims across processes (embedded store)', () => {
  let spec: EngineSpec;
  let here: OpenEngine;
  beforeAll(async () => {
    spec = { engine: 'embedded', dataDir: stack().dataDir };
    here = await openEngine(spec);
  });
  afterAll(async () => {
    await here?.close();
  });

  const newFiles = (label: string) => Array.from({ length: FILES }, (_, i) => `${label}-${randomBytes(6).toString('hex')}-${i}`);

  /** The processes claim all of `fileIds` from one start line, process p as token `p<p>`; the files each got. */
  async function race(fileIds: string[], until: Date, now: Date): Promise<string[][]> {
    const barrier = { dir: mkdtempSync(path.join(os.tmpdir(), 'claims-race-')), parties: PROCESSES };
    try {
      return await Promise.all(Array.from({ length: PROCESSES }, (_, p) => inOtherProcess<string[]>(spec, {
        kind: 'claimDownload', fileIds, token: `p${p}`, until: until.getTime(), now: now.getTime(), startAt: 0, barrier,
      })));
    } finally {
      rmSync(barrier.dir, { recursive: true, force: true });
    }
  }

  const expectEachOnce = (won: string[][], fileIds: string[]) => {
    expect(won.flat().sort()).toEqual([...fileIds].sort());
  };

  it(`gives each of ${FILES} files to exactly one of ${PROCESSES} processes claiming them all at once, and again once released`, async () => {
    const ids = newFiles('claim');
    const now = new Date();
    const until = new Date(now.getTime() + 60_000);
    const won = await race(ids, until, now);
    expectEachOnce(won, ids);
    // The claims really raced: more than one process got files.
    expect(won.filter((w) => w.length > 0).length).toBeGreaterThan(1);
    // Held: a release by someone else does nothing, and a claim from this process is refused.
    for (const id of ids) await here.stores.files.releaseDownloadClaim(id, 'not-the-holder');
    for (const id of ids) expect(await here.stores.files.claimDownload(id, 'here', until, now)).toBe(false);

    // Released by their holders: free for the next race.
    for (const [p, got] of won.entries()) for (const id of got) await here.stores.files.releaseDownloadClaim(id, `p${p}`);
    expectEachOnce(await race(ids, until, now), ids);
    for (const id of ids) await here.stores.files.remove(id);
  });

  it('refuses claims from other processes while held, and lets them take over once lapsed', async () => {
    const ids = newFiles('lapse');
    const t0 = new Date();
    for (const id of ids) expect(await here.stores.files.claimDownload(id, 'first', new Date(t0.getTime() + 1_000), t0)).toBe(true);
    expect((await race(ids, new Date(t0.getTime() + 5_000), t0)).flat()).toEqual([]);
    const later = new Date(t0.getTime() + 2_000);
    expectEachOnce(await race(ids, new Date(later.getTime() + 60_000), later), ids);
    for (const id of ids) await here.stores.files.remove(id);
    expect(await here.stores.files.claimDownload(ids[0], 'after-remove', new Date(later.getTime() + 60_000), later)).toBe(true);
    await here.stores.files.remove(ids[0]);
  });
});
