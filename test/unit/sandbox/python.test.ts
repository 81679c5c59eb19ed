/**
 * The Python snippet jail against real escape attempts. Needs Debian's bubblewrap and python3
 * (npm run setup): without them every test fails with "Python sandbox unavailable".
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PLANS } from '../../../src/accounts/plans';
import { SnippetError } from '../../../src/errors';
import { runPythonSnippet, SnippetRequest } from '../../../src/sandbox/python';

const FREE_CAP = PLANS.free.pythonSnippetOutputBytes;

function run(code: string, opts: Partial<SnippetRequest> = {}) {
  return runPythonSnippet({ code, input: null, timeoutMs: 10_000, outputCapBytes: FREE_CAP, ...opts });
}

async function failure(p: Promise<unknown>): Promise<SnippetError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof SnippetError) return err;
    throw err;
  }
  throw new Error('the snippet was expected to fail but returned a result');
}

/** Processes on the host whose uid is one the jail hands out (root service) — none must outlive a run. */
function jailProcesses(): number[] {
  const found: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      if (uid >= 1_900_000_000 && uid < 1_900_100_000) found.push(Number(pid));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

async function waitFor(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('Python snippet jail', () => {
  it('returns the JSON value of result and the captured stdout', async () => {
    const out = await run('print("hello", input["name"])\nresult = {"sum": sum(input["xs"]), "ok": True}', { input: { name: 'ada', xs: [1, 2, 3] } });
    expect(out).toEqual({ result: { sum: 6, ok: true }, stdout: 'hello ada\n' });
  });

  it('returns null when the snippet sets no result', async () => {
    expect(await run('x = 1')).toEqual({ result: null, stdout: '' });
  });

  it('fails with the snippet\'s trimmed traceback, without the runner\'s frames', async () => {
    const err = await failure(run('def f(x):\n    return 1 / x\nresult = f(input)', { input: 0 }));
    expect(err.kind).toBe('python');
    expect(err.message).toMatch(/^Traceback \(most recent call last\):\n {2}File "<snippet>", line 3/);
    expect(err.message).toContain('return 1 / x');
    expect(err.message).toMatch(/ZeroDivisionError: division by zero$/);
    expect(err.message).not.toContain('runner');
  });

  it('keeps only the end of a very long traceback', async () => {
    const err = await failure(run('def f(n):\n    return f(n + 1)\nf(0)'));
    expect(err.message.length).toBeLessThanOrEqual(4_001);
    expect(err.message).toMatch(/RecursionError: maximum recursion depth exceeded/);
  });

  it('reports a syntax error', async () => {
    const err = await failure(run('def (:'));
    expect(err.kind).toBe('python');
    expect(err.message).toMatch(/SyntaxError/);
  });

  it('refuses a result that is not JSON', async () => {
    const err = await failure(run('result = {1, 2}'));
    expect(err.message).toMatch(/result is not JSON-serialisable/);
  });

  // The snippet runs in the runner's process and can write to the runner's result channel (fd 3)
  // itself. A record of another shape once threw in the service's close handler, uncaught, and
  // took the whole process down (found by an outside probe).
  it.each([
    ['an error that is not text', '{"error": 5}'],
    ['a null error', '{"error": null}'],
    ['JSON null', 'null'],
    ['an array', '[1, 2]'],
  ])('fails cleanly when the snippet writes %s to the result channel itself', async (_what, record) => {
    const err = await failure(run(`import os\nos.write(3, ${JSON.stringify(record)}.encode())\nos._exit(0)`));
    expect(err.kind).toBe('python');
    expect(err.message).toMatch(/malformed record to the runner's result channel/);
  });

  it('an empty error record still fails with a message', async () => {
    const err = await failure(run('import os\nos.write(3, b\'{"error": ""}\')\nos._exit(0)'));
    expect([err.kind, err.message]).toEqual(['python', 'Python snippet reported an error without text']);
  });

  it('cannot pass itself off as an unavailable sandbox (a retryable failure) through the result channel', async () => {
    const err = await failure(run('import os\nos.write(3, b\'{"unavailable": "spoofed"}\')\nos._exit(1)'));
    expect(err.kind).not.toBe('unavailable');
    expect(err.message).not.toMatch(/spoofed/);
  });

  it('a result the snippet writes over the runner\'s own is not taken for it', async () => {
    const err = await failure(run('import os\nos.write(3, b\'{"result": "forged"}\')\nresult = "real"'));
    expect(err.kind).toBe('killed');
    expect(err.message).toMatch(/before returning a result/);
  });

  it('has no network: a connection to a port listening on the host fails and never arrives', async () => {
    let accepted = 0;
    const server = net.createServer((s) => { accepted++; s.destroy(); });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const err = await failure(run(`import socket\nsocket.create_connection(("127.0.0.1", ${port}), timeout=3)`));
      expect(err.kind).toBe('python');
      expect(err.message).toMatch(/(ConnectionRefusedError|OSError: \[Errno 101\] Network is unreachable)/);
      expect(accepted).toBe(0);
    } finally {
      server.close();
    }
  });

  it('cannot read host files: /etc/passwd does not exist in the jail', async () => {
    const err = await failure(run('result = open("/etc/passwd").read()'));
    expect(err.message).toMatch(/FileNotFoundError: \[Errno 2\] No such file or directory: '\/etc\/passwd'/);
    expect(err.message).not.toMatch(/root:x:0:0/);
  });

  it("cannot read the service's DATA_DIR/secrets.json", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'jail-data-'));
    const file = path.join(dataDir, 'secrets.json');
    const marker = `secret-${process.pid}-${Date.now()}`;
    writeFileSync(file, JSON.stringify({ dataEncryptionKey: marker }), { mode: 0o644 });
    try {
      const err = await failure(run(`result = open(${JSON.stringify(file)}).read()`));
      expect(err.message).toContain('FileNotFoundError');
      expect(err.message).not.toContain(marker);
      // Nor by listing what the jail can see.
      const out = await run('import os\nresult = [os.path.join(d, f) for d, _, fs in os.walk("/", onerror=None) if not d.startswith(("/usr", "/proc")) for f in fs]');
      expect(JSON.stringify(out)).not.toContain('secrets.json');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('sees an empty environment, nothing of the host process', async () => {
    process.env.SANDBOX_TEST_MARKER = 'host-value-must-not-leak';
    try {
      const out = await run('import os\nresult = dict(os.environ)\nprint(open("/proc/self/environ", "rb").read(), open("/proc/1/environ", "rb").read())');
      expect(out.result).toEqual({});
      expect(out.stdout).toBe("b'' b''\n");
    } finally {
      delete process.env.SANDBOX_TEST_MARKER;
    }
  });

  it('sees none of the host processes', async () => {
    const out = await run('import os\nresult = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())');
    // bwrap's init and the snippet itself.
    expect((out.result as number[]).length).toBeLessThanOrEqual(3);
    expect(out.result).not.toContain(process.pid);
  });

  it('runs as an unprivileged uid and cannot write outside its tmpfs', async () => {
    const out = await run([
      'import os',
      'try:',
      '    open("/usr/evil", "w")',
      '    wrote = True',
      'except OSError as e:',
      '    wrote = e.strerror',
      'open("/tmp/scratch", "w").write("ok")',
      'result = {"uid": os.getuid(), "usr": wrote, "tmp": open("/tmp/scratch").read()}',
    ].join('\n'));
    expect(out.result).toEqual({ uid: 65534, usr: 'Read-only file system', tmp: 'ok' });
  });

  it('is one process: six forked children touching 200 MB each never exist, nor does a subprocess', async () => {
    const fork = [
      'import os',
      'for i in range(6):',
      '    if os.fork() == 0:',
      '        bytearray(200 * 1024 ** 2)',
      '        os._exit(0)',
      'result = "forked 6"',
    ].join('\n');
    const err = await failure(run(fork));
    expect(err.kind).toBe('python');
    expect(err.message).toMatch(/PermissionError: \[Errno 1\] Operation not permitted$/);
    const out = await run([
      'import subprocess',
      'try:',
      '    subprocess.run(["/usr/bin/python3", "-c", "pass"])',
      '    result = "spawned"',
      'except OSError as e:',
      '    result = e.strerror',
    ].join('\n'));
    expect(out.result).toBe('Operation not permitted');
    if (process.getuid?.() === 0) await waitFor(() => jailProcesses().length === 0, 'the jail processes to end');
  });

  it('counts threads against the one 256 MB: six threads each keeping 100 MB cannot all succeed', async () => {
    // One thread after another, each keeping what it got: the count does not depend on how
    // threads happen to be scheduled (transient allocations in parallel did, on a busy machine).
    // A thread that cannot even start (its stack and malloc arena are address space too) counts
    // as refused.
    const out = await run([
      'import threading',
      'got = []',
      'held = []',
      'def touch():',
      '    try:',
      '        held.append(bytearray(100 * 1024 ** 2))',
      '        got.append(len(held[-1]))',
      '    except MemoryError:',
      '        got.append(0)',
      'for _ in range(6):',
      '    t = threading.Thread(target=touch)',
      '    try:',
      '        t.start()',
      '        t.join()',
      '    except RuntimeError:',
      '        got.append(0)',
      'del held',
      'result = got',
    ].join('\n'));
    const got = out.result as number[];
    expect(got).toHaveLength(6);
    expect(got.filter((n) => n > 0).length).toBeGreaterThanOrEqual(1);
    expect(got.filter((n) => n > 0).length).toBeLessThanOrEqual(2);
  });

  it('holds no memory outside the process: memfd and SysV shared memory are refused', async () => {
    const out = await run([
      'import ctypes, os',
      'try:',
      '    os.memfd_create("m")',
      '    memfd = "created"',
      'except OSError as e:',
      '    memfd = e.strerror',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'shm = libc.shmget(0, 200 * 1024 ** 2, 0o1600)',
      'result = {"memfd": memfd, "shmget": [shm, os.strerror(ctypes.get_errno())]}',
    ].join('\n'));
    expect(out.result).toEqual({ memfd: 'Operation not permitted', shmget: [-1, 'Operation not permitted'] });
  });

  // An outside probe noted the filter allowed it: io_uring's operations bypass a seccomp filter.
  it('cannot set up io_uring', async () => {
    const out = await run([
      'import ctypes, os',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'params = ctypes.create_string_buffer(120)',
      'rc = libc.syscall(425, 8, params)',  // io_uring_setup(entries, params) on x86-64 and arm64
      'result = [rc, os.strerror(ctypes.get_errno())]',
    ].join('\n'));
    expect(out.result).toEqual([-1, 'Operation not permitted']);
  });

  it('can write nothing but its /tmp, 16 MB in all: / and /dev/shm are read-only', async () => {
    const out = await run([
      'chunk = b"x" * 1024 ** 2',
      'def fill(path, mb):',
      '    done = 0',
      '    try:',
      '        with open(path, "wb") as f:',
      '            for _ in range(mb):',
      '                f.write(chunk)',
      '                f.flush()',
      '                done += 1',
      '    except OSError as e:',
      '        return [done, e.strerror]',
      '    return [done, None]',
      'open("/dev/null", "w").write("fine")',
      'result = {"root": fill("/big", 1), "shm": fill("/dev/shm/big", 1), "tmp": [fill("/tmp/a", 10), fill("/tmp/b", 10)]}',
    ].join('\n'));
    expect(out.result).toEqual({
      root: [0, 'Read-only file system'],
      shm: [0, 'Read-only file system'],
      tmp: [[10, null], [6, 'No space left on device']],
    });
  });

  it('bounds memory: allocating 2 GB fails with MemoryError', async () => {
    const err = await failure(run('x = bytearray(2 * 1024 ** 3)\nresult = len(x)'));
    expect(err.kind).toBe('memory');
    expect(err.message).toMatch(/MemoryError/);
    expect(err.message).toMatch(/256 MB/);
  });

  it('kills an infinite loop at the timeout', async () => {
    const err = await failure(run('while True:\n    pass', { timeoutMs: 1_500 }));
    expect(err.kind).toBe('timeout');
    expect(err.message).toMatch(/timed out after 1500 ms|CPU time/);
    await waitFor(() => jailProcesses().length === 0, 'the looping process to end');
  });

  it('reports the CPU limit (SIGXCPU from RLIMIT_CPU) as a timeout', async () => {
    // The kernel's signal at the CPU limit, sent early: the wall clock would otherwise come first.
    const err = await failure(run('import os, signal\nos.kill(os.getpid(), signal.SIGXCPU)', { timeoutMs: 3_000 }));
    expect(err.kind).toBe('timeout');
    expect(err.message).toBe('Python snippet used its CPU time of 3 s');
  });

  it('kills a snippet printing 20 MB at the output limit', async () => {
    const err = await failure(run('import sys\nchunk = "x" * 65536\nfor _ in range(320):\n    sys.stdout.write(chunk)'));
    expect(err.kind).toBe('output_limit');
    expect(err.message).toContain('output limit');
  });

  it('counts stdout, stderr and the result against the cap', async () => {
    const err = await failure(run('result = "y" * (2 * 1024 * 1024)'));
    expect(err.message).toContain('output limit');
  });

  it('1.5 MB of output fails on the free plan and passes on pro', async () => {
    const code = 'import sys\nsys.stdout.write("z" * (1536 * 1024))\nresult = "done"';
    const err = await failure(run(code, { outputCapBytes: PLANS.free.pythonSnippetOutputBytes }));
    expect(err.message).toContain('output limit');
    const out = await run(code, { outputCapBytes: PLANS.pro.pythonSnippetOutputBytes });
    expect(out.result).toBe('done');
    expect(out.stdout.length).toBe(1536 * 1024);
  });

  it('gives each of several concurrent snippets its own tmpfs', async () => {
    const code = 'import os, time\nbefore = os.listdir("/tmp")\nopen("/tmp/mine", "w").write(str(input))\ntime.sleep(0.3)\nresult = [before, open("/tmp/mine").read()]';
    const outs = await Promise.all(Array.from({ length: 6 }, (_, i) => run(code, { input: i })));
    expect(outs.map((o) => o.result)).toEqual(Array.from({ length: 6 }, (_, i) => [[], String(i)]));
  });

  // Found by an outside probe: a cancel that arrived while the jail was starting killed the outer
  // bwrap before the jail's init had set its parent-death signal; the init lived on with the
  // pipes open, the run never settled and its snippet slot was never freed.
  it('an abort at any moment of the jail\'s start settles the run and leaves no jail process', async () => {
    const bwrapJails = () => readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return argv.includes('--die-with-parent') && argv.includes('--new-session');
      } catch {
        return false;
      }
    });
    for (let i = 0; i < 24; i++) {
      const ac = new AbortController();
      const p = run('import time\nwhile True: time.sleep(1)', { signal: ac.signal, timeoutMs: 60_000 });
      setTimeout(() => ac.abort(), i % 12);
      expect((await failure(p)).kind).toBe('killed');
    }
    await waitFor(() => bwrapJails().length === 0, 'every jail process to end');
  }, 120_000);

  it('stops when the caller aborts', async () => {
    const ac = new AbortController();
    const p = run('import time\ntime.sleep(30)', { signal: ac.signal });
    setTimeout(() => ac.abort(), 200);
    const err = await failure(p);
    expect(err.kind).toBe('killed');
  });
});
