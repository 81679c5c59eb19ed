/**
 * A worker killed (SIGKILL) in the middle of a deferred scan: after a new worker starts, the scan
 * completes, once, and its stored upload is gone. Runs its own stack on each storage engine: an
 * api process that owns the local stack, and worker processes pointed at it, as a scaled-out
 * deployment would run them.
 */
import { Connection, Client } from '@temporalio/client';
import { MongoClient } from 'mongodb';
import { storesOf, Stores } from '../../../src/services';
import { filesHolding } from '../../support/db';
import { activityStarted, SplitStack, startSplitStack } from '../../support/split-stack';

jest.setTimeout(240_000);

/** The killed worker's activity moves after this (ACTIVITY_HEARTBEAT_TIMEOUT_S; 60 s by default). */
const HEARTBEAT_TIMEOUT_S = '15';
const ENGINES: Array<['embedded' | 'mongodb', Record<string, string>]> = [['embedded', {}], ['mongodb', { DATABASE_ENGINE: 'mongodb' }]];

describe.each(ENGINES)('deferred scan survives a killed worker (%s store)', (engine, extraEnv) => {
  let stack: SplitStack | undefined;
  afterAll(async () => { await stack?.stop(); });

  it('completes once after the worker is killed mid-activity and another worker starts', async () => {
    stack = await startSplitStack({ extraEnv: { ...extraEnv, ACTIVITY_HEARTBEAT_TIMEOUT_S: HEARTBEAT_TIMEOUT_S } });
    const split = stack;
    const e = split.api.env;
    expect(e.databaseEngine).toBe(engine);
    const withStores = <T>(fn: (stores: Stores) => Promise<T>) => split.withServices((s) => fn(storesOf(s.storage)));
    const { apiKey } = await split.withServices((s) => s.accounts.createAccount({ name: 'kill', plan: 'pro' }));

    // Large enough that the analysis is still running when the worker dies.
    const content = Buffer.alloc(90 * 1024 * 1024, 0x61);
    const form = new FormData();
    form.append('file', new Blob([content]), 'big.txt');
    const res = await fetch(`${e.baseUrl}/api/scan?defer=true`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: form });
    expect(res.status).toBe(202);
    const { scanId } = (await res.json()) as { scanId: string };

    const temporal = new Client({ connection: await Connection.connect({ address: `127.0.0.1:${e.temporalPort}` }) });
    try {
      const handle = temporal.workflow.getHandle(`scan-${scanId}`);
      // Wait until the scan activity has started on the first worker, then kill that worker.
      await activityStarted(handle);
      process.kill(split.workers[0].env.pid, 'SIGKILL');
      const mid = await fetch(`${e.baseUrl}/api/scan/${scanId}`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(((await mid.json()) as { status: string }).status).toBe('pending');
      // The pending scan's upload is stored, whole.
      const uploadId = await withStores(async (stores) => {
        const pending = await stores.scans.findScanById(scanId);
        expect(pending).toMatchObject({ status: 'pending', uploadId: expect.any(String) });
        expect((await stores.scans.readUpload(pending?.uploadId as string)).length).toBe(content.length);
        return pending?.uploadId as string;
      });

      await split.startWorker();
      await handle.result();

      const done = (await (await fetch(`${e.baseUrl}/api/scan/${scanId}`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as Record<string, unknown>;
      expect(done.status).toBe('complete');
      expect(done.fileSize).toBe(content.length);

      const history = await handle.fetchHistory();
      const scheduled = history.events?.filter((ev) => ev.activityTaskScheduledEventAttributes?.activityType?.name === 'completeDeferredScan') ?? [];
      const completed = history.events?.filter((ev) => ev.activityTaskCompletedEventAttributes) ?? [];
      expect(scheduled).toHaveLength(1);
      // The api's setting reached the scheduled activity.
      expect(Number(scheduled[0].activityTaskScheduledEventAttributes?.heartbeatTimeout?.seconds)).toBe(Number(HEARTBEAT_TIMEOUT_S));
      expect(completed.length).toBeGreaterThanOrEqual(1);
      const started = history.events?.filter((ev) => ev.activityTaskStartedEventAttributes) ?? [];
      // The retry is visible as the started event's attempt number.
      expect(started.some((ev) => (ev.activityTaskStartedEventAttributes?.attempt ?? 1) >= 2)).toBe(true);

      await withStores(async (stores) => {
        const scan = await stores.scans.findScanById(scanId);
        expect(scan).toMatchObject({ status: 'complete' });
        expect(scan?.uploadId).toBeUndefined();
        await expect(stores.scans.readUpload(uploadId)).rejects.toThrow(`stored upload ${uploadId} not found`);
      });
      if (engine === 'embedded') {
        // Nothing of the upload is left in the store's files.
        expect(filesHolding(content.subarray(0, 64 * 1024), e)).toEqual([]);
      } else {
        await expectGridFsEmpty(e.mongoBlobPort);
      }
    } finally {
      await temporal.connection.close();
    }
  });
});

/** The upload was stored on the blobs server (its GridFS collections exist there) and no file or chunk of it is left. */
async function expectGridFsEmpty(blobPort: number): Promise<void> {
  const blobs = new MongoClient(`mongodb://127.0.0.1:${blobPort}/?maxPoolSize=1`);
  await blobs.connect();
  try {
    const db = blobs.db('sentinel_blobs');
    const stored = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
    expect(stored).toEqual(expect.arrayContaining(['scan_uploads_files', 'scan_uploads_chunks']));
    expect(await db.collection('scan_uploads_files').countDocuments({})).toBe(0);
    expect(await db.collection('scan_uploads_chunks').countDocuments({})).toBe(0);
  } finally {
    await blobs.close();
  }
}
