/**
 * User-workflow runs on a fresh local stack:
 *   1. start latency: POST /api/workflows/{id}/run (admission, record; the Temporal start follows
 *      in the background) against a bare client.workflow.start of an empty interpreter run,
 *      sequentially, same stack; and for both, the time until Temporal has the execution;
 *   2. runs per second: short runs (one transform node) started 10 at a time, all waited for;
 *   3. wall time of one run of 1,000 nodes (ten chains of 100 transforms).
 *
 *   npm run bench -- workflows [--starts 200] [--runs 100]
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { startServiceProcess } from '../test/support/service';
import { cliJson, fmt, httpClient, percentile } from './_messaging-common';

function argOf(args: string[], name: string, dflt: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
}

export async function run(args: string[]): Promise<void> {
  const starts = argOf(args, 'starts', 200);
  const runs = argOf(args, 'runs', 100);
  const svc = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' } });
  const temporal = new Client({ connection: await Connection.connect({ address: `127.0.0.1:${svc.env.temporalPort}` }) });
  try {
    const http = httpClient(svc.env.baseUrl, 16);
    const create = async (key: string, def: unknown) => JSON.parse((await http.request('POST', '/api/workflows', key, def)).body).id as string;
    const startRun = async (key: string, id: string) => JSON.parse((await http.request('POST', `/api/workflows/${id}/run`, key, {})).body).runId as string;
    const waitRun = async (key: string, runId: string) => {
      for (;;) {
        const r = JSON.parse((await http.request('GET', `/api/workflows/runs/${runId}`, key)).body) as { status: string };
        if (r.status !== 'running' && r.status !== 'queued') return r.status;
        await new Promise((res) => setTimeout(res, 200));
      }
    };
    // `POST .../run` is limited to 60 per minute per account: each account starts at most this many.
    const RUNS_PER_ACCOUNT = 55;
    let accounts = 0;
    const newAccount = async () => {
      const key = (await cliJson(svc.env, 'account', 'create', '--name', `bench-${accounts++}`, '--plan', 'pro')).apiKey;
      return { key, one: await create(key, { name: 'one', nodes: [{ id: 'a', type: 'transform', config: { expression: '1' } }], edges: [] }) };
    };
    const acct = await newAccount();
    const one = acct.one;
    await waitRun(acct.key, await startRun(acct.key, one));

    // 1. Start latency, alternating so both see the same load. Each start is followed by a pause,
    //    so the run's background launch and first steps do not fall into the next measurement.
    //    Besides the answer's latency, the time until Temporal has the execution (its start time
    //    as the server recorded it, less the moment the request was sent; same clock, ms) is
    //    compared for both, so a start that answers before the engine has the run shows as such.
    const api: number[] = [];
    const bare: number[] = [];
    const sent: Array<{ workflowId: string; at: number; kind: 'api' | 'bare' }> = [];
    const pause = () => new Promise((res) => setTimeout(res, 150));
    let starter = acct;
    for (let i = 0; i < starts; i++) {
      // POST .../run is limited per account: a fresh account every RUNS_PER_ACCOUNT starts.
      if (i > 0 && i % (RUNS_PER_ACCOUNT - 1) === 0) starter = await newAccount();
      let at = Date.now();
      let t = process.hrtime.bigint();
      const runId = await startRun(starter.key, starter.one);
      api.push(Number(process.hrtime.bigint() - t) / 1e6);
      sent.push({ workflowId: `run-${runId}`, at, kind: 'api' });
      await pause();
      at = Date.now();
      t = process.hrtime.bigint();
      const id = randomUUID();
      await temporal.workflow.start('flowRun', {
        taskQueue: 'sentinel', workflowId: `bench-${id}`,
        args: [{ runId: id, accountId: 'bench', flowId: 'bench', nodes: [], edges: [], depth: 0, deadline: Date.now() + 600_000, record: false }],
      });
      bare.push(Number(process.hrtime.bigint() - t) / 1e6);
      sent.push({ workflowId: `bench-${id}`, at, kind: 'bare' });
      await pause();
    }
    const engineApi: number[] = [];
    const engineBare: number[] = [];
    for (const s of sent) {
      const d = await temporal.workflow.getHandle(s.workflowId).describe();
      (s.kind === 'api' ? engineApi : engineBare).push(d.startTime.getTime() - s.at);
    }
    for (const xs of [api, bare, engineApi, engineBare]) xs.sort((a, b) => a - b);
    console.log(`start latency over ${starts}: POST .../run p50 ${fmt(percentile(api, 50))} ms p95 ${fmt(percentile(api, 95))} ms; bare client.workflow.start p50 ${fmt(percentile(bare, 50))} ms p95 ${fmt(percentile(bare, 95))} ms; ratio p50 ${fmt(percentile(api, 50) / percentile(bare, 50), 2)}x`);
    console.log(`until Temporal has the execution (server start time - request sent, ms): POST .../run p50 ${fmt(percentile(engineApi, 50))} p95 ${fmt(percentile(engineApi, 95))}; bare p50 ${fmt(percentile(engineBare, 50))} p95 ${fmt(percentile(engineBare, 95))}; ratio p50 ${fmt(percentile(engineApi, 50) / Math.max(1, percentile(engineBare, 50)), 2)}x`);

    // 2. Runs per second.
    const pool: Array<{ key: string; one: string }> = [];
    for (let i = 0; i < Math.ceil(runs / RUNS_PER_ACCOUNT); i++) pool.push(await newAccount());
    const t0 = Date.now();
    let next = 0;
    const statuses: string[] = [];
    await Promise.all(Array.from({ length: 10 }, async () => {
      while (next < runs) {
        const a = pool[Math.floor(next++ / RUNS_PER_ACCOUNT)];
        statuses.push(await waitRun(a.key, await startRun(a.key, a.one)));
      }
    }));
    const secs = (Date.now() - t0) / 1000;
    console.log(`runs: ${runs} one-node runs, 10 in flight: ${fmt(runs / secs, 2)} runs/s (${statuses.filter((s) => s === 'completed').length} completed) in ${fmt(secs)} s`);

    // 3. 1,000 nodes.
    const nodes = [];
    const edges = [];
    for (let c = 0; c < 10; c++) {
      for (let i = 0; i < 100; i++) {
        nodes.push({ id: `c${c}n${i}`, type: 'transform', config: { expression: i === 0 ? '1' : `nodes.c${c}n${i - 1} + 1` } });
        if (i > 0) edges.push({ from: `c${c}n${i - 1}`, to: `c${c}n${i}` });
      }
    }
    const last = await newAccount();
    const big = await create(last.key, { name: 'thousand', nodes, edges });
    const t1 = Date.now();
    const status = await waitRun(last.key, await startRun(last.key, big));
    console.log(`1,000-node run (ten chains of 100): ${status} in ${fmt((Date.now() - t1) / 1000)} s`);
  } finally {
    await temporal.connection.close();
    await svc.stop();
  }
}
