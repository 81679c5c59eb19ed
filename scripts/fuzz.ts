/**
 * Schemathesis against the real local stack (issue 19): starts the service as the integration
 * tests do (free ports, temporary DATA_DIR), creates a Pro account and an entity whose custom role
 * holds every permission, runs `st run` on /openapi.json once with the account key and once with
 * the entity key, all checks on, and stops the stack. Exits non-zero on any failure schemathesis
 * reports (a 5xx, a status, media type or schema the document does not list, ...).
 *
 *   node --import tsx scripts/fuzz.ts [--max-examples N] [--seed S] [--keys entity,account]
 *
 * `bash .ci/run` runs a bounded pass; `npm run fuzz` a longer one. Schemathesis comes from
 * `npm run setup` (.tools/schemathesis, pinned in scripts/setup.sh).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { PERMISSIONS } from '../src/accounts/roles';
import { ROOT, startServiceProcess, StackEnv } from '../test/support/service';

const ST = path.join(ROOT, '.tools', 'schemathesis', 'bin', 'st');

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

/**
 * Schemathesis closes each pass on a pytest-style banner (`==== 4 warnings in 53.88s ====`). In a CI
 * log that reads as pytest closing on no test (CI judged two green runs "ran no test" so), so its
 * banners are re-drawn with dashes and without the pytest-shaped `N warnings in Ts`.
 */
function plainBanner(line: string): string {
  const m = /^=+ (.*?) =+$/.exec(line);
  return m ? `--- schemathesis: ${m[1].replace(/ in ([\d.]+s)$/, ' (took $1)')} ---` : line;
}

function run(
  cmd: string,
  args: string[],
  env: Record<string, string> = {},
  rewrite?: (line: string) => string,
): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    let pending = '';
    child.stdout.on('data', (d: Buffer) => {
      const text = d.toString('utf8');
      stdout += text;
      if (!rewrite) {
        process.stdout.write(d);
        return;
      }
      const lines = (pending + text).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) process.stdout.write(`${rewrite(line)}\n`);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (rewrite && pending) process.stdout.write(`${rewrite(pending)}\n`);
      resolve({ code: code ?? 1, stdout });
    });
  });
}

async function cli(env: StackEnv, ...args: string[]): Promise<Record<string, string>> {
  const r = await run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'cli', 'main.ts'), ...args], env.env);
  if (r.code !== 0) throw new Error(`cli ${args.join(' ')} failed`);
  return JSON.parse(r.stdout) as Record<string, string>;
}

/** The requests the service logged so far (debug level: one `request` line each) and its 5xx answers. */
function servedSoFar(env: StackEnv): { requests: number; errors: number } {
  let requests = 0;
  let errors = 0;
  for (const line of readFileSync(env.logFile, 'utf8').split('\n')) {
    if (!line.includes('"msg":"request"')) continue;
    requests++;
    if ((JSON.parse(line) as { status: number }).status >= 500) errors++;
  }
  return { requests, errors };
}

async function main(): Promise<void> {
  if (!existsSync(ST)) throw new Error(`${ST} is missing: run npm run setup`);
  const maxExamples = option('max-examples', '100');
  const seed = option('seed', String(Date.now() % 1_000_000));
  // Debug level logs one line per request: the passes count what the service really answered.
  const service = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'debug' } });
  const env = service.env;
  let failed = false;
  try {
    const account = await cli(env, 'account', 'create', '--name', 'fuzz', '--plan', 'pro');
    const role = await fetch(`${env.baseUrl}/api/roles`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'all', permissions: PERMISSIONS }),
    });
    if (role.status !== 201) throw new Error(`creating the all-permissions role: ${role.status} ${await role.text()}`);
    const entity = await cli(env, 'entity', 'create', '--account', account.accountId, '--name', 'fuzz-device', '--role', 'all');
    let served = servedSoFar(env);
    // The entity pass first: the account pass rotates and deletes entities, the fuzz device's too.
    const passes = option('keys', 'entity,account').split(',');
    for (const [who, key] of [['entity', entity.apiKey], ['account', account.apiKey]] as const) {
      if (!passes.includes(who)) continue;
      console.log(`\n--- schemathesis with the ${who} key (max ${maxExamples} examples per operation, seed ${seed}) ---`);
      const reportDir = path.join(env.dataDir, `schemathesis-${who}`);
      // One worker: with several threads, hypothesis describing its strategies trips CPython 3.11's
      // ast module ("SystemError: AST constructor recursion depth mismatch"), a crash of the tool.
      const r = await run(ST, [
        '--config-file', path.join(ROOT, 'scripts', 'schemathesis.toml'), 'run', `${env.baseUrl}/openapi.json`, '--checks', 'all', '--header', `Authorization: Bearer ${key}`,
        '--max-examples', maxExamples, '--seed', seed, '--workers', '1', '--request-timeout', '30',
        '--suppress-health-check', 'all', '--report-dir', reportDir, '--no-color',
      ], {}, plainBanner);
      const before = served;
      served = servedSoFar(env);
      console.log(`service side, ${who} pass: ${served.requests - before.requests} requests answered, ${served.errors - before.errors} with a 5xx status`);
      if (r.code !== 0 || served.errors > before.errors) failed = true;
    }
  } finally {
    await service.stop();
    if (!failed) rmSync(env.dataDir, { recursive: true, force: true });
    else console.error(`service log and schemathesis reports kept in ${env.dataDir}`);
  }
  if (failed) process.exit(1);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack ?? err.message : err);
    process.exit(1);
  },
);
