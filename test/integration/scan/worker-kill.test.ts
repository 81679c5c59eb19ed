/**
 * A worker killed (SIGKILL) in the middle of a deferred scan: after a new worker starts, the scan
 * completes, once. Runs its own stack: an api process that owns the local stack, and worker
 * processes pointed at it, as a scaled-out deployment would run them.
 */
import { Connection, Client } from '@temporalio/client';
import { MongoClient } from 'mongodb';
import { activityStarted, SplitStack, startSplitStack } from '../../support/split-stack';

jest.setTimeout(240_000);

describe('deferred scan survives a killed worker', () => {
  let stack: SplitStack | undefined;
  afterAll(async () => { await stack?.stop(); });

  it('completes once after the worker is killed mid-activity and another worker starts', async () => {
    stack = await startSplitStack();
    const e = stack.api.env;
    const { apiKey } = await stack.withServices((s) => s.accounts.createAccount({ name: 'kill', plan: 'pro' }));

    // Large enough that the analysis is still running when the worker dies.
    const content = Buffer.alloc(90 * 1024 * 1024, 0x61);
    const form = new FormData();
    form.append('file', new Blob([content]), 'big.txt');
    const res = await fetch(`${e.baseUrl}/api/scan?defer=true`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: form });
    expect(res.status).toBe(202);
    const { scanId } = (await res.json()) as { scanId: string };

    const temporal = new Client({ connection: await Connection.connect({ address: `127.0.0.1:${e.temporalPort}` }) });
    const handle = temporal.workflow.getHandle(`scan-${scanId}`);
    // Wait until the scan activity has started on the first worker, then kill that worker.
    await activityStarted(handle);
    process.kill(stack.workers[0].env.pid, 'SIGKILL');
    const mid = await fetch(`${e.baseUrl}/api/scan/${scanId}`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(((await mid.json()) as { status: string }).status).toBe('pending');

    await stack.startWorker();
    await handle.result();

    const done = (await (await fetch(`${e.baseUrl}/api/scan/${scanId}`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as Record<string, unknown>;
    expect(done.status).toBe('complete');
    expect(done.fileSize).toBe(content.length);

    const history = await handle.fetchHistory();
    const scheduled = history.events?.filter((ev) => ev.activityTaskScheduledEventAttributes?.activityType?.name === 'completeDeferredScan') ?? [];
    const completed = history.events?.filter((ev) => ev.activityTaskCompletedEventAttributes) ?? [];
    expect(scheduled).toHaveLength(1);
    expect(completed.length).toBeGreaterThanOrEqual(1);
    const started = history.events?.filter((ev) => ev.activityTaskStartedEventAttributes) ?? [];
    // The retry is visible as the started event's attempt number.
    expect(started.some((ev) => (ev.activityTaskStartedEventAttributes?.attempt ?? 1) >= 2)).toBe(true);

    const mongo = new MongoClient(`mongodb://127.0.0.1:${e.mongoPort}/?maxPoolSize=1`);
    const blobs = new MongoClient(`mongodb://127.0.0.1:${e.mongoBlobPort}/?maxPoolSize=1`);
    await mongo.connect();
    await blobs.connect();
    try {
      const scans = await mongo.db('sentinel').collection('scans').find({ _id: scanId as never }).toArray();
      expect(scans).toHaveLength(1);
      expect(scans[0].status).toBe('complete');
      expect(scans[0].uploadId).toBeUndefined();
      // The upload was stored on the blobs server (its collections exist there) and is gone now.
      const stored = (await blobs.db('sentinel_blobs').listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
      expect(stored).toEqual(expect.arrayContaining(['scan_uploads_files', 'scan_uploads_chunks']));
      expect(await blobs.db('sentinel_blobs').collection('scan_uploads_files').countDocuments({})).toBe(0);
      expect(await blobs.db('sentinel_blobs').collection('scan_uploads_chunks').countDocuments({})).toBe(0);
    } finally {
      await mongo.close();
      await blobs.close();
      await temporal.connection.close();
    }
  });
});
