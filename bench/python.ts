/**
 * The Python snippet jail (src/sandbox/python.ts): cold start of a trivial snippet (a fresh
 * bubblewrap jail and CPython each time, p50/p99), a snippet doing a little work with its input,
 * and a 1 MB output round trip (stdout and result each read through the capped pipes).
 *
 *   npm run bench -- python [--runs N]
 */
import { performance } from 'node:perf_hooks';
import { PLANS } from '../src/accounts/plans';
import { runPythonSnippet } from '../src/sandbox/python';
import { pct } from './_payload-common';

async function measure(label: string, runs: number, code: string, input: unknown, check: (out: { result: unknown; stdout: string }) => boolean): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const out = await runPythonSnippet({ code, input, timeoutMs: 30_000, outputCapBytes: PLANS.pro.pythonSnippetOutputBytes });
    times.push(performance.now() - t0);
    if (!check(out)) throw new Error(`${label}: unexpected output`);
  }
  times.sort((a, b) => a - b);
  console.log(`${label.padEnd(36)} runs=${runs}  p50=${pct(times, 50).toFixed(1)} ms  p99=${pct(times, 99).toFixed(1)} ms  max=${times[times.length - 1].toFixed(1)} ms`);
}

export async function run(args: string[]): Promise<void> {
  const i = args.indexOf('--runs');
  const runs = i >= 0 ? Number(args[i + 1]) : 200;
  const MB = 1024 * 1024;
  await measure('cold start (result = 1)', runs, 'result = 1', null, (o) => o.result === 1);
  await measure('input → result (sum of 1,000)', runs, 'result = sum(input["xs"])', { xs: Array.from({ length: 1000 }, (_, k) => k) }, (o) => o.result === 499500);
  await measure('1 MB stdout round trip', Math.max(10, Math.floor(runs / 4)), `import sys\nsys.stdout.write("x" * ${MB})`, null, (o) => o.stdout.length === MB);
  await measure('1 MB result round trip', Math.max(10, Math.floor(runs / 4)), `result = "y" * ${MB - 16}`, null, (o) => typeof o.result === 'string' && o.result.length === MB - 16);
}
