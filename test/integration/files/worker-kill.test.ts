/**
 * A worker killed (SIGKILL) while it scans a transferred file: after a new worker starts, the file
 * is delivered once, with one scan in the account's history. Runs its own stack: an api process
 * that owns the local stack and worker processes pointed at it.
 */
import { randomBytes } from 'node:crypto';
import { Connection, Client } from '@temporalio/client';
import { MongoClient } from 'mongodb';
import { startServiceProcess, StartedService } from '../../support/service';
import { loadConfig } from '../../../src/config';
import { createLogger } from '../../../src/log';
import { loadSecrets } from '../../../src/secrets';
import { connectStorage } from '../../../src/storage/mongo';
import { createServices } from '../../../src/services';

jest.setTimeout(240_000);

const shared = { ENTITY_KEY_SECRET: randomBytes(32).toString('hex'), DATA_ENCRYPTION_KEY: randomBytes(32).toString('hex'), LOG_LEVEL: 'warn' };

describe('file transfer survives a killed worker', () => {
  let api: StartedService;
  const workers: StartedService[] = [];

  afterAll(async () => {
    for (const w of workers) await w.stop();
    await api?.stop();
  });

  it('delivers the file once after the worker is killed mid-scan and another worker starts', async () => {
    api = await startServiceProcess({ extraEnv: { ...shared, ROLES: 'api,mqtt' } });
    const e = api.env;
    const workerEnv = {
      ...shared,
      ROLES: 'worker',
      MONGODB_URI: `mongodb://127.0.0.1:${e.mongoPort}/`,
      TEMPORAL_ADDRESS: `127.0.0.1:${e.temporalPort}`,
      CLAMD_HOST: '127.0.0.1',
      CLAMD_PORT: String(e.clamdPort),
    };
    workers.push(await startServiceProcess({ extraEnv: workerEnv }));

    const config = loadConfig({ ...process.env, ...e.env, ...shared });
    const storage = await connectStorage(config);
    const services = createServices({ config, logger: createLogger('silent'), storage, secrets: loadSecrets(config) });
    const { accountId } = await services.accounts.createAccount({ name: 'kill', plan: 'pro' });
    const sender = await services.accounts.createEntity(accountId, { name: 'sender' });
    await services.accounts.createEntity(accountId, { name: 'receiver' });
    await storage.close();

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
    for (let i = 0; ; i++) {
      const d = await handle.describe();
      const started = d.raw.pendingActivities?.some((a) => String(a.state) === 'PENDING_ACTIVITY_STATE_STARTED' || a.state === 2);
      if (started) break;
      if (i > 400) throw new Error('activity never started');
      await new Promise((r) => setTimeout(r, 50));
    }
    process.kill(workers[0].env.pid, 'SIGKILL');
    expect(await status()).toBe('scanning');

    workers.push(await startServiceProcess({ extraEnv: workerEnv }));
    await handle.result();
    expect(await status()).toBe('delivered');

    const history = await handle.fetchHistory();
    const started = history.events?.filter((ev) => ev.activityTaskStartedEventAttributes) ?? [];
    expect(started.some((ev) => (ev.activityTaskStartedEventAttributes?.attempt ?? 1) >= 2)).toBe(true);

    const mongo = new MongoClient(`mongodb://127.0.0.1:${e.mongoPort}/?maxPoolSize=1`);
    await mongo.connect();
    try {
      const db = mongo.db('sentinel');
      const file = await db.collection('files').findOne({ _id: id as never });
      expect(await db.collection('scans').countDocuments({ accountId })).toBe(1);
      expect(await db.collection('scans').countDocuments({ _id: file?.scanId })).toBe(1);
    } finally {
      await mongo.close();
      await temporal.connection.close();
    }
  });
});
