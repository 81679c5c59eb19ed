/**
 * The local stack's children: FerretDB (the MongoDB engine's local database, DATABASE_ENGINE=mongodb
 * without MONGODB_URI, and the tests' MongoDB-wire stand-in), Temporal and clamd. The embedded
 * store needs no child: it runs in the service process.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { Connection } from '@temporalio/client';
import { findFreePort, StackStartError, startLocalStack, waitForTcp, type LocalStack, type StackLogger } from '../../../src/stack';
import { canConnect, sleep } from '../../../src/stack/net';
import { findClamd } from '../../../src/stack/clamd';
import { CLAMD_INSTALL, requireTool } from '../../support/tools';

const rootDir = path.resolve(__dirname, '../../..');
const ferretdbBin = path.join(rootDir, '.tools/bin/ferretdb');

function memoryLogger() {
  const lines: { level: string; args: unknown[] }[] = [];
  const at = (level: string) => (...args: unknown[]) => void lines.push({ level, args });
  const logger: StackLogger = { info: at('info'), warn: at('warn'), error: at('error') };
  return { logger, lines };
}

function alive(pid: number): boolean {
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.length > 0; // a zombie has an empty cmdline
  } catch {
    return false;
  }
}

async function waitFor(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (cond()) return true;
    await sleep(50);
  }
  return cond();
}

function httpStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
}

/** clamd INSTREAM: one length-prefixed chunk, then a zero-length chunk. */
function clamdScan(port: number, content: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let reply = '';
    socket.on('connect', () => {
      const len = Buffer.alloc(4);
      len.writeUInt32BE(content.length);
      socket.write('zINSTREAM\0');
      socket.write(len);
      socket.write(content);
      socket.write(Buffer.alloc(4));
    });
    socket.on('data', (d) => (reply += d.toString()));
    socket.on('end', () => resolve(reply.replace(/\0$/, '')));
    socket.on('error', reject);
  });
}

describe('local stack', () => {
  let tmp: string;
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stack-test-'));
  });
  afterAll(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('starts FerretDB, Temporal and clamd on free ports, answers, and frees the ports on stop', async () => {
    // Under CI=true a missing clamd fails here, naming it; elsewhere the stack runs without it.
    requireTool('clamd', CLAMD_INSTALL);
    const dataDir = path.join(tmp, 'full');
    const sigDir = path.join(tmp, 'sigs');
    fs.mkdirSync(sigDir);
    const marker = 'sentinel-local-stack-test-marker-7f3a';
    fs.writeFileSync(path.join(sigDir, 'test.ndb'), `Sentinel.Test.Marker:0:*:${Buffer.from(marker).toString('hex')}\n`);

    const [mongoPort, temporalPort, uiPort, clamdPort] = await Promise.all([findFreePort(), findFreePort(), findFreePort(), findFreePort()]);
    const { logger } = memoryLogger();
    const exits: string[] = [];
    const stack: LocalStack = await startLocalStack({
      rootDir,
      dataDir,
      mongo: { port: mongoPort },
      temporal: { port: temporalPort, uiPort, namespace: 'stack-test' },
      clamd: { port: clamdPort, signatureDirs: [sigDir] },
      logger,
      onExit: (part) => exits.push(part),
    });
    try {
      expect(stack.mongoUri).toBe(`mongodb://127.0.0.1:${mongoPort}/?maxPoolSize=1`);
      const client = await MongoClient.connect(stack.mongoUri!);
      try {
        const items = client.db('stacktest').collection('items');
        await items.insertOne({ _id: 'x' as never, v: 1 });
        expect(await items.findOne({ _id: 'x' as never })).toEqual({ _id: 'x', v: 1 });
      } finally {
        await client.close();
      }
      expect(fs.readdirSync(path.join(dataDir, 'ferretdb')).some((f) => f.startsWith('stacktest'))).toBe(true);

      expect(stack.temporalAddress).toBe(`127.0.0.1:${temporalPort}`);
      const connection = await Connection.connect({ address: stack.temporalAddress! });
      try {
        for (const namespace of ['default', 'stack-test']) {
          const ns = await connection.workflowService.describeNamespace({ namespace });
          expect(ns.namespaceInfo?.name).toBe(namespace);
        }
      } finally {
        await connection.close();
      }
      expect(fs.existsSync(path.join(dataDir, 'temporal', 'temporal.db'))).toBe(true);
      expect(stack.temporalUiUrl).toBe(`http://127.0.0.1:${uiPort}`);
      expect(await httpStatus(stack.temporalUiUrl!)).toBe(200);

      if (findClamd()) {
        expect(stack.clamdAddress).toEqual({ host: '127.0.0.1', port: clamdPort });
        expect(await clamdScan(clamdPort, Buffer.from(`hello ${marker} world`))).toBe('stream: Sentinel.Test.Marker.UNOFFICIAL FOUND');
        expect(await clamdScan(clamdPort, Buffer.from('harmless'))).toBe('stream: OK');
      } else {
        expect(stack.clamdAddress).toBeUndefined();
      }

      for (const part of ['mongo', 'temporal'] as const) {
        expect(stack.logs[part]).toBe(path.join(dataDir, 'logs', `${part}.log`));
        const pidFile = JSON.parse(fs.readFileSync(path.join(dataDir, 'run', `${part}.pid`), 'utf8'));
        expect(alive(pidFile.pid)).toBe(true);
      }
    } finally {
      await stack.stop();
    }
    expect(exits).toEqual([]);
    for (const port of [mongoPort, temporalPort, uiPort, clamdPort]) expect(await canConnect('127.0.0.1', port)).toBe(false);
    expect(fs.readdirSync(path.join(dataDir, 'run'))).toEqual([]);
  });

  test('kills a live process left by a killed run (stale pidfile), but not an unrelated pid', async () => {
    const dataDir = path.join(tmp, 'stale');
    fs.mkdirSync(path.join(dataDir, 'run'), { recursive: true });
    const stalePort = await findFreePort();
    const staleArgv = ['-listen-addr', `127.0.0.1:${stalePort}`, '-sqlite-dir', path.join(dataDir, 'ferretdb'), '-log-level', 'warn'];
    // Started through a shell that exits at once, so it is no child of this process and its
    // recorded parent is gone (as a killed run's FerretDB: its service died, it was re-parented).
    const [shellPid, stalePid] = execFileSync('bash', ['-c', '"$0" "$@" >/dev/null 2>&1 & echo $$ $!', ferretdbBin, ...staleArgv], { encoding: 'utf8' }).trim().split(' ').map(Number);
    await waitForTcp('127.0.0.1', stalePort, 10_000);
    fs.writeFileSync(path.join(dataDir, 'run', 'mongo.pid'), JSON.stringify({ pid: stalePid, argv: [ferretdbBin, ...staleArgv], parent: shellPid }));
    // A pidfile whose pid now belongs to a different command must not lead to a kill.
    const unrelated = spawn('sleep', ['30'], { stdio: 'ignore' });
    fs.writeFileSync(path.join(dataDir, 'run', 'blobs.pid'), JSON.stringify({ pid: unrelated.pid, argv: [ferretdbBin, '-listen-addr', '127.0.0.1:1'], parent: shellPid }));

    const { logger, lines } = memoryLogger();
    const port = await findFreePort();
    const stack = await startLocalStack({ rootDir, dataDir, mongo: { port }, blobs: { port: await findFreePort() }, temporal: false, clamd: false, logger });
    try {
      expect(await waitFor(() => !alive(stalePid), 2000)).toBe(true);
      expect(await canConnect('127.0.0.1', stalePort)).toBe(false);
      expect(lines.some((l) => l.level === 'warn' && String(l.args[1]).includes('still running'))).toBe(true);
      expect(alive(unrelated.pid!)).toBe(true);
      expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'run', 'blobs.pid'), 'utf8')).pid).not.toBe(unrelated.pid);
      expect(stack.mongoUri).toContain(`:${port}/`);
    } finally {
      unrelated.kill('SIGKILL');
      await stack.stop();
      if (alive(stalePid)) process.kill(stalePid, 'SIGKILL');
      if (unrelated.exitCode === null && unrelated.signalCode === null) await new Promise((r) => unrelated.once('exit', r));
    }
  });

  /**
   * `bash` that starts `sleep 300` and waits on it: a stand-in for a running service (bash) and one
   * of its children (sleep). Resolves once both pids are known.
   */
  async function liveParentWithChild(): Promise<{ parent: ReturnType<typeof spawn>; parentPid: number; childPid: number; argv: string[] }> {
    const parent = spawn('bash', ['-c', 'sleep 300 & echo $!; wait'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const childPid = await new Promise<number>((resolve) => parent.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
    await waitFor(() => processArgvOf(childPid)?.[0] === 'sleep', 2000);
    return { parent, parentPid: parent.pid!, childPid, argv: ['sleep', '300'] };
  }
  function processArgvOf(pid: number): string[] | undefined {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    } catch {
      return undefined;
    }
  }
  async function endLiveParent(p: { parent: ReturnType<typeof spawn>; childPid: number }): Promise<void> {
    if (alive(p.childPid)) process.kill(p.childPid, 'SIGKILL');
    if (p.parent.exitCode === null && p.parent.signalCode === null) {
      const exited = new Promise((r) => p.parent.once('exit', r));
      p.parent.kill('SIGKILL');
      await exited;
    }
  }

  // Found by an outside probe: the CLI on a running service's DATA_DIR started FerretDB for an
  // import, and the clean-up before it stopped every child the service had (its FerretDB
  // stand-in, Temporal, clamd) because their parent was not the calling process.
  test("the clean-up cleans only the parts being started and never stops a live process's child", async () => {
    const dataDir = path.join(tmp, 'foreign');
    fs.mkdirSync(path.join(dataDir, 'run'), { recursive: true });
    // The running service's Temporal (this version's pidfile) and clamd (an earlier version's
    // pidfile, without the parent): both children of a live process other than this one.
    const temporal = await liveParentWithChild();
    const clamd = await liveParentWithChild();
    // A killed run's leftover on a part that is not started: left for the start that starts it.
    const [gonePid, leftoverPid] = execFileSync('bash', ['-c', 'sleep 300 >/dev/null 2>&1 & echo $$ $!'], { encoding: 'utf8' }).trim().split(' ').map(Number);
    const pidFiles = {
      temporal: { pid: temporal.childPid, argv: temporal.argv, parent: temporal.parentPid },
      clamd: { pid: clamd.childPid, argv: clamd.argv },
      blobs: { pid: leftoverPid, argv: ['sleep', '300'], parent: gonePid },
    };
    for (const [part, content] of Object.entries(pidFiles)) fs.writeFileSync(path.join(dataDir, 'run', `${part}.pid`), JSON.stringify(content));
    const { logger, lines } = memoryLogger();
    const stack = await startLocalStack({ rootDir, dataDir, mongo: { port: await findFreePort() }, logger });
    try {
      await sleep(300);
      for (const pid of [temporal.childPid, clamd.childPid, leftoverPid]) expect(alive(pid)).toBe(true);
      for (const [part, content] of Object.entries(pidFiles)) expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'run', `${part}.pid`), 'utf8'))).toEqual(content);
      expect(lines.some((l) => String(l.args[1]).includes('still running'))).toBe(false);
      expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'run', 'mongo.pid'), 'utf8')).parent).toBe(process.pid);
    } finally {
      await stack.stop();
      await endLiveParent(temporal);
      await endLiveParent(clamd);
      if (alive(leftoverPid)) process.kill(leftoverPid, 'SIGKILL');
    }
  });

  test.each([
    ["this version's pidfile", true],
    ["an earlier version's pidfile (no parent recorded)", false],
  ])("a part that a live process's child runs on this DATA_DIR (%s) is refused before anything starts, naming both pids", async (_what, withParent) => {
    const dataDir = path.join(tmp, `foreign-part-${withParent}`);
    fs.mkdirSync(path.join(dataDir, 'run'), { recursive: true });
    const service = await liveParentWithChild();
    const recorded = { pid: service.childPid, argv: service.argv, ...(withParent ? { parent: service.parentPid } : {}) };
    fs.writeFileSync(path.join(dataDir, 'run', 'blobs.pid'), JSON.stringify(recorded));
    const { logger } = memoryLogger();
    try {
      const err = await startLocalStack({ rootDir, dataDir, mongo: { port: await findFreePort() }, blobs: { port: await findFreePort() }, logger })
        .then((s) => s.stop(), (e: unknown) => e);
      expect(err).toBeInstanceOf(StackStartError);
      expect((err as Error).message).toContain(`pid ${service.childPid}`);
      expect((err as Error).message).toContain(`running process ${service.parentPid}`);
      expect(alive(service.childPid)).toBe(true);
      expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'run', 'blobs.pid'), 'utf8'))).toEqual(recorded);
      // Nothing was launched: no FerretDB for either part.
      expect(fs.existsSync(path.join(dataDir, 'logs', 'mongo.log'))).toBe(false);
      expect(fs.existsSync(path.join(dataDir, 'run', 'mongo.pid'))).toBe(false);
    } finally {
      await endLiveParent(service);
    }
  });

  test("a second stack of this process's own leaves the first one's children running", async () => {
    const dataDir = path.join(tmp, 'own');
    const { logger, lines } = memoryLogger();
    const first = await startLocalStack({ rootDir, dataDir, mongo: { port: await findFreePort() }, logger });
    const second = await startLocalStack({ rootDir, dataDir, blobs: { port: await findFreePort() }, logger });
    try {
      const pid = JSON.parse(fs.readFileSync(path.join(dataDir, 'run', 'mongo.pid'), 'utf8')).pid as number;
      expect(alive(pid)).toBe(true);
      expect(first.mongoUri && (await canConnect('127.0.0.1', Number(new URL(first.mongoUri).port)))).toBe(true);
      expect(lines.some((l) => String(l.args[1]).includes('still running'))).toBe(false);
    } finally {
      await second.stop();
      await first.stop();
    }
  });

  test('reports a child that dies after start through onExit and the log', async () => {
    const dataDir = path.join(tmp, 'crash');
    const port = await findFreePort();
    const { logger, lines } = memoryLogger();
    const exits: { part: string; signal: string | null }[] = [];
    const stack = await startLocalStack({
      rootDir, dataDir, mongo: { port }, logger, onExit: (part, _code, signal) => exits.push({ part, signal }),
    });
    try {
      const pid = JSON.parse(fs.readFileSync(path.join(dataDir, 'run', 'mongo.pid'), 'utf8')).pid as number;
      process.kill(pid, 'SIGKILL');
      expect(await waitFor(() => exits.length > 0, 5000)).toBe(true);
      expect(exits).toEqual([{ part: 'mongo', signal: 'SIGKILL' }]);
      expect(lines.some((l) => l.level === 'error' && String(l.args[1]).includes(path.join(dataDir, 'logs', 'mongo.log')))).toBe(true);
    } finally {
      await stack.stop();
    }
  });

  test('the FerretDB launcher exits by itself when its parent is killed with SIGKILL', async () => {
    const port = await findFreePort();
    const pidFile = path.join(tmp, 'orphan.pid');
    // bash is the parent; ferretdb runs in the background and bash waits on it.
    const parent = spawn('bash', ['-c', `"${ferretdbBin}" -listen-addr 127.0.0.1:${port} -sqlite-dir "${path.join(tmp, 'orphan')}" & echo $! > "${pidFile}"; wait`], { stdio: 'ignore' });
    await waitForTcp('127.0.0.1', port, 10_000);
    const childPid = Number(fs.readFileSync(pidFile, 'utf8'));
    expect(alive(childPid)).toBe(true);
    parent.kill('SIGKILL');
    expect(await waitFor(() => !alive(childPid), 5000)).toBe(true);
    expect(await canConnect('127.0.0.1', port)).toBe(false);
  });

  // Found by an outside probe: a child that could not bind exited, but the readiness probe asked
  // whatever listened on the port, and a second service came up on another service's Temporal.
  test.each([
    ['mongo', 'MONGO_PORT', (port: number) => ({ mongo: { port } })],
    ['temporal', 'TEMPORAL_PORT', (port: number) => ({ temporal: { port, uiPort: 1, namespace: 'default' } })],
  ] as const)('a taken %s port fails the start before anything is launched, naming %s', async (part, setting, parts) => {
    const blocker = net.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => blocker.once('listening', r));
    const port = (blocker.address() as net.AddressInfo).port;
    const dataDir = path.join(tmp, `taken-${part}`);
    const { logger } = memoryLogger();
    try {
      const err = await startLocalStack({ rootDir, dataDir, ...parts(port), logger }).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(StackStartError);
      expect((err as Error).message).toContain(`127.0.0.1:${port} is in use by another process`);
      expect((err as Error).message).toContain(`set ${setting} to a free port`);
    } finally {
      blocker.close();
    }
    expect(fs.readdirSync(path.join(dataDir, 'run'))).toEqual([]);
  });
});
