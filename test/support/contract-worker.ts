/**
 * A second process on the same store, for the contract suite's cross-process cases. Argument: JSON
 * `{spec, task}`; prints the task's result as JSON. Tasks start together at `startAt` (epoch ms) so
 * the processes really race.
 */
import { openEngine, EngineSpec } from './engines';

type Task =
  | { kind: 'claim'; accountId: string; dest: string; claimers: number; startAt: number }
  | { kind: 'count'; accountId: string; period: string; times: number; startAt: number }
  | { kind: 'merge'; accountId: string; entity: string; keys: string[]; startAt: number }
  | { kind: 'claimDownload'; fileId: string; tokens: string[]; until: number; now: number; startAt: number };

async function main(): Promise<void> {
  const { spec, task } = JSON.parse(process.argv[2]) as { spec: EngineSpec; task: Task };
  const engine = await openEngine(spec);
  try {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, task.startAt - Date.now())));
    const { stores } = engine;
    let result: unknown;
    if (task.kind === 'claim') {
      // Each claimer takes until the inbox is empty; the ids taken by all of them come back.
      const taken: string[] = [];
      await Promise.all(Array.from({ length: task.claimers }, async () => {
        for (let m = await stores.messages.claimNext(task.accountId, task.dest); m; m = await stores.messages.claimNext(task.accountId, task.dest)) taken.push(m._id);
      }));
      result = taken;
    } else if (task.kind === 'count') {
      const doc = { _id: `${task.accountId}:${task.period}`, accountId: task.accountId, period: task.period, kind: 'month' as const };
      await Promise.all(Array.from({ length: task.times }, () => stores.counters.incrementUsage(doc, 'scans', 1)));
      result = task.times;
    } else if (task.kind === 'claimDownload') {
      // One claim per token, all at once; the tokens that got the file come back.
      const won = await Promise.all(task.tokens.map((t) => stores.files.claimDownload(task.fileId, t, new Date(task.until), new Date(task.now))));
      result = task.tokens.filter((_, i) => won[i]);
    } else {
      await Promise.all(task.keys.map((k) => stores.messages.mergeStatusTable(task.accountId, task.entity, { [k]: k })));
      result = task.keys.length;
    }
    process.stdout.write(JSON.stringify(result));
  } finally {
    await engine.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
