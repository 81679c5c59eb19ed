/**
 * Workflow run admission on a fresh local stack:
 *   1. admission decisions per second: 100 concurrent POST .../run (two accounts of 50, each under
 *      the 60-per-minute run limit) against a Free workflow with a long delay, so 2 per account
 *      start and the rest queue; repeated `--rounds` times with fresh accounts;
 *   2. slot-free -> next-start latency: a Free account queues `--queued` short runs (1 s delay);
 *      for each run that waited, its startedAt minus the finishedAt of the run whose end freed
 *      its slot (the latest end before it started), p50/p99.
 *
 *   npm run bench -- admission [--rounds 3] [--queued 30]
 */
import { startServiceProcess } from '../test/support/service';
import { cliJson, fmt, httpClient, percentile } from './_messaging-common';

function argOf(args: string[], name: string, dflt: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
}

interface RunView { status: string; startedAt: string | null; finishedAt: string | null }

export async function run(args: string[]): Promise<void> {
  const rounds = argOf(args, 'rounds', 3);
  const queued = argOf(args, 'queued', 30);
  const svc = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' } });
  try {
    const http = httpClient(svc.env.baseUrl, 100);
    const account = async (name: string) => (await cliJson(svc.env, 'account', 'create', '--name', name, '--plan', 'free')).apiKey;
    const create = async (key: string, ms: number) => JSON.parse((await http.request('POST', '/api/workflows', key, {
      name: 'bench', nodes: [{ id: 'wait', type: 'delay', config: { ms } }], edges: [],
    })).body).id as string;

    // 1. Decisions per second.
    let decided = 0;
    let elapsedMs = 0;
    const statuses: Record<string, number> = {};
    for (let r = 0; r < rounds; r++) {
      const keys = [await account(`bench-a-${r}`), await account(`bench-b-${r}`)];
      const wfs = [await create(keys[0], 300_000), await create(keys[1], 300_000)];
      const t0 = process.hrtime.bigint();
      const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => http.request('POST', `/api/workflows/${wfs[i % 2]}/run`, keys[i % 2], {})));
      elapsedMs += Number(process.hrtime.bigint() - t0) / 1e6;
      for (const a of answers) {
        const s = a.status === 202 ? (JSON.parse(a.body) as { status: string }).status : String(a.status);
        statuses[s] = (statuses[s] ?? 0) + 1;
        decided++;
      }
    }
    console.log(`admission: ${decided} decisions at 100 concurrent requests in ${fmt(elapsedMs)} ms: ${fmt(decided / (elapsedMs / 1000))} decisions/s; answers ${JSON.stringify(statuses)}`);

    // 2. Slot-free -> next-start latency.
    const key = await account('bench-latency');
    const wf = await create(key, 1_000);
    const ids: string[] = [];
    for (let i = 0; i < queued + 2; i++) ids.push(JSON.parse((await http.request('POST', `/api/workflows/${wf}/run`, key, {})).body).runId as string);
    const views: RunView[] = [];
    for (const id of ids) {
      for (;;) {
        const v = JSON.parse((await http.request('GET', `/api/workflows/runs/${id}`, key)).body) as RunView;
        if (v.status !== 'running' && v.status !== 'queued') { views.push(v); break; }
        await new Promise((res) => setTimeout(res, 250));
      }
    }
    const ends = views.map((v) => Date.parse(v.finishedAt ?? '')).sort((a, b) => a - b);
    const gaps: number[] = [];
    for (const v of views.slice(2)) {
      const start = Date.parse(v.startedAt ?? '');
      const freedAt = ends.filter((e) => e <= start).pop();
      if (freedAt !== undefined) gaps.push(start - freedAt);
    }
    gaps.sort((a, b) => a - b);
    console.log(`slot free -> next start over ${gaps.length} queued runs: p50 ${fmt(percentile(gaps, 50))} ms p99 ${fmt(percentile(gaps, 99))} ms (final statuses ${JSON.stringify(views.reduce<Record<string, number>>((m, v) => ({ ...m, [v.status]: (m[v.status] ?? 0) + 1 }), {}))})`);
  } finally {
    await svc.stop();
  }
}
