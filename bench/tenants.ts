/**
 * One account's load against another account's runs (issue 34, 2b), on a fresh local stack:
 * the latency of another account's one-node run (POST .../run until the record is final)
 *   1. with nothing else running (the baseline),
 *   2. while a busy account has 40 runs of 3 parallel `http` nodes waiting on a slow target,
 *   3. while it has its whole plan (pro: 50 runs) of 12 parallel slow `http` nodes each,
 *   4. while it runs a forEach over its own workflow (on_error: continue) again and again.
 * The slow target is a local server that holds every request until the phase ends (then answers
 * at once), so the busy account's nodes wait for as long as the phase lasts. Each phase reports p50 / p95 / max and
 * the ratio of its p50 to the baseline's; a run that is not final after `--cap` seconds counts
 * as the cap.
 *
 *   npm run bench -- tenants [--samples 20] [--cap 60]
 */
import http from 'node:http';
import { startServiceProcess } from '../test/support/service';
import { cliJson, fmt, httpClient, percentile } from './_messaging-common';

function argOf(args: string[], name: string, dflt: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
}

const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

export async function run(args: string[]): Promise<void> {
  const samples = argOf(args, 'samples', 20);
  const capMs = argOf(args, 'cap', 60) * 1000;
  let held: http.ServerResponse[] = [];
  /** Outside a loaded phase the target answers at once, so what a phase left queued drains. */
  let holding = false;
  const slow = http.createServer((_req, res) => {
    if (holding) held.push(res);
    else res.end('{}');
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', () => resolve()));
  const slowUrl = `http://127.0.0.1:${(slow.address() as { port: number }).port}/slow`;
  const release = () => {
    for (const res of held) res.end('{}');
    held = [];
  };
  const svc = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' } });
  try {
    const api = httpClient(svc.env.baseUrl, 64);
    const call = async (method: string, p: string, key: string, body?: unknown) => {
      const r = await api.request(method, p, key, body);
      if (r.status >= 300) throw new Error(`${method} ${p} answered ${r.status}: ${r.body}`);
      return JSON.parse(r.body) as Record<string, unknown>;
    };
    const account = async (name: string, plan: string) => (await cliJson(svc.env, 'account', 'create', '--name', name, '--plan', plan)).apiKey;
    const create = async (key: string, def: unknown) => (await call('POST', '/api/workflows', key, def)).id as string;
    const start = async (key: string, wf: string) => (await call('POST', `/api/workflows/${wf}/run`, key, {})).runId as string;
    const final = async (key: string, runId: string, untilMs: number) => {
      while (Date.now() < untilMs) {
        const status = (await call('GET', `/api/workflows/runs/${runId}`, key)).status;
        if (status !== 'running' && status !== 'queued') return status as string;
        await sleep(25);
      }
      return 'running';
    };
    const slowHttp = (id: string) => ({ id, type: 'http', config: { method: 'GET', url: slowUrl }, timeout_ms: 300_000 });

    const otherKey = await account('other', 'pro');
    const one = await create(otherKey, { name: 'one', nodes: [{ id: 'a', type: 'transform', config: { expression: '1' } }], edges: [] });
    /** The other account's one-node runs, one after another. */
    const measure = async (): Promise<number[]> => {
      const ms: number[] = [];
      for (let i = 0; i < samples; i++) {
        const t = Date.now();
        const status = await final(otherKey, await start(otherKey, one), t + capMs);
        ms.push(status === 'completed' ? Date.now() - t : capMs);
      }
      return ms.sort((a, b) => a - b);
    };
    await measure();
    const rows: Array<{ phase: string; ms: number[]; held: number }> = [];
    rows.push({ phase: 'baseline (nothing else running)', ms: await measure(), held: 0 });

    /** A busy account (a fresh one per phase: POST .../run is 60 per minute) with `runs` runs held on the slow target. */
    const loaded = async (phase: string, runs: number, width: number) => {
      const key = await account(`busy-${rows.length}`, 'pro');
      holding = true;
      const wf = await create(key, { name: 'wide', nodes: Array.from({ length: width }, (_, i) => slowHttp(`h${i}`)), edges: [] });
      const ids: string[] = [];
      for (let i = 0; i < runs; i++) ids.push(await start(key, wf));
      // Until the held requests stop growing for 5 s (every slot the account can get is taken).
      let last = -1;
      let stableSince = Date.now();
      while (Date.now() - stableSince < 5_000) {
        if (held.length !== last) { last = held.length; stableSince = Date.now(); }
        await sleep(250);
      }
      const during = held.length;
      rows.push({ phase, ms: await measure(), held: during });
      holding = false;
      release();
      const settle = Date.now() + 120_000;
      for (const id of ids) await final(key, id, settle);
    };
    await loaded('busy account: 40 runs x 3 slow http nodes', 40, 3);
    await loaded('busy account: 50 runs (pro) x 12 slow http nodes', 50, 12);

    // A forEach over its own workflow, started again as each one ends, while the other account measures.
    const fanKey = await account('fan', 'pro');
    const self = await create(fanKey, { name: 'self', nodes: [{ id: 'x', type: 'transform', config: { expression: '1' } }], edges: [] });
    await call('PUT', `/api/workflows/${self}`, fanKey, { name: 'self', nodes: [{ id: 'each', type: 'forEach', config: { items: '[1, 2]', do: { workflow_id: self } }, on_error: 'continue' }], edges: [] });
    let fanning = true;
    let fanRuns = 0;
    let current = '';
    const fanStatuses = new Map<string, number>();
    const fan = (async () => {
      while (fanning) {
        fanRuns++;
        current = await start(fanKey, self);
        const status = await final(fanKey, current, Date.now() + 600_000);
        fanStatuses.set(status, (fanStatuses.get(status) ?? 0) + 1);
      }
    })();
    await sleep(2_000);
    rows.push({ phase: 'busy account: forEach over itself, run after run', ms: await measure(), held: 0 });
    fanning = false;
    // A run still fanning out when the phase ends is cancelled (the figure after the table says how long that took).
    const cancelAt = Date.now();
    await call('POST', `/api/workflows/runs/${current}/cancel`, fanKey);
    await fan;
    const cancelMs = Date.now() - cancelAt;

    const base = percentile(rows[0].ms, 50);
    console.log(`other account's one-node run, ${samples} samples per phase (ms; a run not final after ${capMs / 1000} s counts as ${capMs} ms)`);
    console.log('phase                                              held   p50      p95      max      p50 / baseline');
    for (const r of rows) {
      console.log(`${r.phase.padEnd(50)} ${String(r.held).padStart(4)}   ${fmt(percentile(r.ms, 50)).padStart(7)}  ${fmt(percentile(r.ms, 95)).padStart(7)}  ${fmt(r.ms[r.ms.length - 1]).padStart(7)}  ${fmt(percentile(r.ms, 50) / base, 2)}x`);
    }
    console.log(`forEach-over-itself runs during the last phase: ${fanRuns}, ended ${JSON.stringify(Object.fromEntries(fanStatuses))}; the last one was final ${fmt(cancelMs / 1000)} s after its cancel`);
  } finally {
    release();
    slow.closeAllConnections();
    slow.close();
    await svc.stop();
  }
}
