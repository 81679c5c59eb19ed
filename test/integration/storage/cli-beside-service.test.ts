/**
 * The operator CLI on the DATA_DIR of a running service (docs/operations.md "Operator CLI": it
 * works while the service runs), here a service that keeps its records in the FerretDB stand-in on
 * DATA_DIR/ferretdb/ (DATABASE_ENGINE=mongodb without MONGODB_URI). The embedded CLI would have to
 * import that FerretDB-era directory first, and refuses instead, naming the service's pid, as a
 * second `npm start` does; `migrate --from` the running FerretDBs copies their data in, as
 * docs/local-stack.md describes; and the service keeps every child it started and answers
 * /healthz 200 throughout. Found by an outside tester: the CLI's import stopped all of the
 * service's children (FerretDB, Temporal, clamd), and they never came back.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, startServiceProcess, StartedService } from '../../support/service';

jest.setTimeout(300_000);

const EMBEDDED = { DATABASE_ENGINE: 'embedded', MONGODB_URI: '' };

let s: StartedService;
/** The service's children as its pidfiles name them: part → pid. */
let children: Record<string, number>;

function cli(args: string[], env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join('src', 'cli', 'main.ts'), ...args], {
    cwd: ROOT, env: { ...process.env, ...s.env.env, ...env }, encoding: 'utf8', timeout: 120_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const alive = (pid: number): boolean => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').length > 0;
  } catch {
    return false;
  }
};

/** How often a part was started on the service's DATA_DIR (ManagedChild logs each start). */
const starts = (part: string): number => (fs.readFileSync(path.join(s.env.dataDir, 'logs', `${part}.log`), 'utf8').match(/ starting: /g) ?? []).length;

/** Every child the service started still runs, under the same pid, and the service answers 200. */
async function expectServiceIntact(): Promise<void> {
  for (const [part, pid] of Object.entries(children)) expect({ part, pid, alive: alive(pid) }).toEqual({ part, pid, alive: true });
  const res = await fetch(`${s.env.baseUrl}/healthz`);
  const body = (await res.json()) as { status: string; parts: unknown };
  expect({ status: res.status, body }).toMatchObject({ status: 200, body: { status: 'ok' } });
}

beforeAll(async () => {
  s = await startServiceProcess({ extraEnv: { DATABASE_ENGINE: 'mongodb', MONGODB_URI: '' } });
  children = {};
  for (const part of ['mongo', 'blobs', 'temporal', 'clamd']) {
    const file = path.join(s.env.dataDir, 'run', `${part}.pid`);
    if (fs.existsSync(file)) children[part] = (JSON.parse(fs.readFileSync(file, 'utf8')) as { pid: number }).pid;
  }
  expect(Object.keys(children)).toEqual(expect.arrayContaining(['mongo', 'blobs', 'temporal']));
  // The service's own data, through its FerretDB (the CLI with the service's environment).
  const created = cli(['account', 'create', '--name', 'before', '--plan', 'free'], {});
  expect(created.stderr).toBe('');
  expect(created.status).toBe(0);
});

afterAll(async () => {
  await s?.stop();
});

test('the embedded CLI on that DATA_DIR refuses, naming the service and how to reach its data, and stops nothing', async () => {
  const r = cli(['account', 'create', '--name', 'x', '--plan', 'free'], EMBEDDED);
  expect(r.status).toBe(1);
  expect(r.stdout).toBe('');
  expect(r.stderr).toContain(`holds the data of an earlier, FerretDB-based version that is not imported yet, and the running service (pid ${s.env.pid},`);
  expect(r.stderr).toContain('nothing was started or stopped');
  expect(r.stderr).toContain(`run this with DATABASE_ENGINE=mongodb MONGO_PORT=${s.env.mongoPort} MONGO_BLOB_PORT=${s.env.mongoBlobPort}`);
  // No FerretDB was started for an import: each log holds its service's one start.
  for (const part of ['mongo', 'blobs']) expect({ part, starts: starts(part) }).toEqual({ part, starts: 1 });
  await new Promise((r2) => setTimeout(r2, 1000));
  await expectServiceIntact();
});

test('migrate --from the running FerretDBs (docs/local-stack.md) copies their data in and leaves them running', async () => {
  const r = cli(['migrate', '--from', `mongodb://127.0.0.1:${s.env.mongoPort}/`, '--from-blobs', `mongodb://127.0.0.1:${s.env.mongoBlobPort}/`], EMBEDDED);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const counts = JSON.parse(r.stdout) as { records: Record<string, { read: number; added: number }> };
  expect(counts.records.accounts.read).toBeGreaterThanOrEqual(1);
  expect(counts.records.accounts.added).toBe(counts.records.accounts.read);
  await new Promise((r2) => setTimeout(r2, 1000));
  await expectServiceIntact();
  for (const part of ['mongo', 'blobs']) expect({ part, starts: starts(part) }).toEqual({ part, starts: 1 });
});
