/**
 * A worker killed (SIGKILL) while it scans a transferred file: after a new worker starts, the file
 * is delivered once, with one scan in the account's history. Runs its own stack: an api process
 * that owns the local stack and worker processes pointed at it, all on the api process's DATA_DIR
 * (the embedded store, shared across processes: the new worker reads the upload the killed one left).
 */
import { Connection, Client } from '@temporalio/client';
import { withStackRecords } from '../../support/db';
import { activityStarted, SplitStack, startSplitStack } from '../../support/split-stack';

jest.setTimeout(240_000);

describe('file transfer survives a killed worker', () => {
  let stack: SplitStack | undefined;
  afterAll(async () => { await stack?.stop(); });

  it('delivers the file once after the worker is killed mid-scan and another worker starts', async () => {
    // The killed worker's activity moves after 15 s (ACTIVITY_HEARTBEAT_TIMEOUT_S; 60 s by default).
    stack = await startSplitStack({ extraEnv: { ACTIVITY_HEARTBEAT_TIMEOUT_S: '15' } });
    const e = stack.api.env;
    const { accountId, sender } = await stack.withServices(async (s) => {
      const acct = await s.accounts.createAccount({ name: 'kill', plan: 'pro' });
      await s.entities.createEntity(acct.accountId, { name: 'receiver' });
      return { accountId: acct.accountId, sender: await s.entities.createEntity(acct.accountId, { name: 'sender' }) };
    });

    // Large enough that the scan is still running when the worker dies.
    const content = Buffer.alloc(90 * 1024 * 1024, 0x61);
    const form = new FormData();
    form.append('dest', 'receiver');
    form.append('file', new Blob([content]), 'big.txt');
    const res = await fetch(`${e.baseUrl}/api/entities/files`, { method: 'POST', headers: { authorization: `Bearer ${sender.apiKey}` }, body: form });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    const status = async () => ((await (await fetch(`${e.baseUrl}/api/entities/files/${id}`, { headers: { authorization: `Bearer ${sender.apiKey}` } })).json()) as { status: string }).status;

    const temporal = new Client({ connection: await Connection.connect({ address: `127.0.0.1:${e.temporalPort}` }) });
    const handle = temporal.workflow.getHandle(`file-${id}`);
    await activityStarted(handle);
    process.kill(stack.workers[0].env.pid, 'SIGKILL');
    expect(await status()).toBe('scanning');

    await stack.startWorker();
    await handle.result();
    expect(await status()).toBe('delivered');

    const history = await handle.fetchHistory();
    const started = history.events?.filter((ev) => ev.activityTaskStartedEventAttributes) ?? [];
    expect(started.some((ev) => (ev.activityTaskStartedEventAttributes?.attempt ?? 1) >= 2)).toBe(true);
    const scheduled = history.events?.filter((ev) => ev.activityTaskScheduledEventAttributes?.activityType?.name === 'scanTransferFile') ?? [];
    expect(scheduled.map((ev) => Number(ev.activityTaskScheduledEventAttributes?.heartbeatTimeout?.seconds))).toEqual([15]);

    await temporal.connection.close();

    // The records as the processes share them: the embedded store in the api process's DATA_DIR.
    await withStackRecords(async ({ stores, table }) => {
      const file = await stores.files.findById(id);
      expect(table('scans').count('account_id = ?', [accountId])).toBe(1);
      expect(await stores.scans.findScanById(file?.scanId ?? '')).toMatchObject({ accountId });
      // Delivered, so its bytes are still stored for the recipient.
      expect(await stores.files.blobSize(id, 'raw')).toBe(content.length);
    }, e);
  });
});
