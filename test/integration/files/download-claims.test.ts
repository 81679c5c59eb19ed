/**
 * The download claim (src/files/records.ts, claimDownload) raced from several processes on the
 * embedded store, as several service processes sharing one DATA_DIR race for one file: exactly one
 * wins. The processes open the test stack's own store, beside the running service.
 *
 * Claims on the MongoDB stores are covered in one process by the store contract suite
 * (test/integration/storage/contract/files.test.ts). Their cross-process race is not run here: the
 * only MongoDB-wire server the tests have is the FerretDB v1 stand-in, whose updates across
 * connections are not atomic (issue 29's measurements), so a result on it says nothing about MongoDB.
 */
import { randomBytes } from 'node:crypto';
import { EngineSpec, inOtherProcess, openEngine, OpenEngine } from '../../support/engines';
import { stack } from '../../support/env';

const PROCESSES = 4;
const CLAIMS_PER_PROCESS = 5;

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

  /** Every process claims `fileId` for each of its tokens at the same moment; the winning tokens of all. */
  async function race(fileId: string, label: string, until: Date, now: Date): Promise<string[]> {
    const startAt = Date.now() + 1500;
    const won = await Promise.all(Array.from({ length: PROCESSES }, (_, p) => inOtherProcess<string[]>(spec, {
      kind: 'claimDownload', fileId, tokens: Array.from({ length: CLAIMS_PER_PROCESS }, (__, i) => `${label}-p${p}-${i}`),
      until: until.getTime(), now: now.getTime(), startAt,
    })));
    return won.flat();
  }

  it(`gives one file to exactly one of ${PROCESSES * CLAIMS_PER_PROCESS} simultaneous claims from ${PROCESSES} processes, again once released`, async () => {
    const id = `claim-test-${randomBytes(6).toString('hex')}`;
    const now = new Date();
    const until = new Date(now.getTime() + 60_000);
    for (let round = 0; round < 3; round++) {
      const won = await race(id, `t${round}`, until, now);
      expect(won).toHaveLength(1);
      // Held: a claim from this process is refused until the holder releases it.
      expect(await here.stores.files.claimDownload(id, 'here', until, now)).toBe(false);
      await here.stores.files.releaseDownloadClaim(id, won[0]);
    }
    expect(await here.stores.files.claimDownload(id, 'here', until, now)).toBe(true);
    await here.stores.files.remove(id);
  });

  it('lets the other processes take over a claim only once it has lapsed, and a release by someone else does nothing', async () => {
    const id = `claim-lapse-${randomBytes(6).toString('hex')}`;
    const t0 = new Date();
    expect(await here.stores.files.claimDownload(id, 'first', new Date(t0.getTime() + 1_000), t0)).toBe(true);
    await here.stores.files.releaseDownloadClaim(id, 'not-the-holder');
    expect(await race(id, 'early', new Date(t0.getTime() + 5_000), t0)).toEqual([]);
    const later = new Date(t0.getTime() + 2_000);
    const won = await race(id, 'late', new Date(later.getTime() + 60_000), later);
    expect(won).toHaveLength(1);
    await here.stores.files.remove(id);
    expect(await here.stores.files.claimDownload(id, 'after-remove', new Date(later.getTime() + 60_000), later)).toBe(true);
    await here.stores.files.releaseDownloadClaim(id, 'after-remove');
  });
});
