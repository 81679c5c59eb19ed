/**
 * A second process on the same store, for the contract suite's cross-process cases. Argument: JSON
 * `{spec, task}`; prints the task's result as JSON. The processes of one case start their task
 * together, once all have opened the store (a barrier of files, so how long each takes to start
 * does not matter), and so really race.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openEngine, EngineSpec, Barrier } from './engines';

type Task =
  | { kind: 'claim'; accountId: string; dest: string; claimers: number; barrier: Barrier }
  | { kind: 'count'; accountId: string; period: string; times: number; barrier: Barrier }
  | { kind: 'merge'; accountId: string; entity: string; keys: string[]; barrier: Barrier }
  | { kind: 'claimDownload'; fileIds: string[]; token: string; until: number; now: number; barrier: Barrier };

/** A start line: `parties` processes each leave a file in `dir`, and none goes on before all have. */
async function reach({ dir, parties }: Barrier): Promise<void> {
  writeFileSync(path.join(dir, String(process.pid)), '');
  while (readdirSync(dir).length < parties) await new Promise((resolve) => setTimeout(resolve, 1));
}

async function main(): Promise<void> {
  const { spec, task } = JSON.parse(process.argv[2]) as { spec: EngineSpec; task: Task };
  const engine = await openEngine(spec);
  try {
    writeFileSync(path.join(task.barrier.dir, String(process.pid)), '');
    const deadline = Date.now() + 120_000;
    while (readdirSync(task.barrier.dir).length < task.barrier.parties) {
      if (Date.now() > deadline) throw new Error('the other processes of the case never opened the store');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
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
      // Claims every file in turn once every process is ready to; the ids of the files this process got come back.
      await reach(task.barrier);
      const won: string[] = [];
      for (const id of task.fileIds) {
        if (!(await stores.files.claimDownload(id, task.token, new Date(task.until), new Date(task.now)))) continue;
        won.push(id);
        // A winner pauses, so the next files are raced by the others too, not taken by whoever holds the write lock.
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      result = won;
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
