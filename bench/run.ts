/**
 * `npm run bench -- <name> [args]` runs bench/<name>.ts; with no name, every benchmark in turn.
 * Each benchmark module exports `run(args: string[]): Promise<void>` and prints its figures.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';

interface BenchModule { run(args: string[]): Promise<void> }

async function main(): Promise<void> {
  const [name, ...args] = process.argv.slice(2);
  const available = readdirSync(__dirname)
    .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_'))
    .map((f) => f.replace(/\.ts$/, ''))
    .sort();
  const selected = name ? [name] : available;
  for (const bench of selected) {
    if (!available.includes(bench)) {
      throw new Error(`unknown benchmark "${bench}"; available: ${available.join(', ')}`);
    }
    const mod = (await import(path.join(__dirname, `${bench}.ts`))) as BenchModule;
    console.log(`\n=== bench ${bench} ===`);
    await mod.run(args);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack ?? err.message : err);
    process.exit(1);
  },
);
