/**
 * Latency of the four payload engines together, single process: p50/p99 for realistic mixed
 * payloads of 1 KB, 10 KB, 100 KB and 1 MB, cost per KB (linearity), and adversarial inputs
 * (long runs of one character, nested brackets, repeated near-matches) for every engine
 * against a time budget.
 *
 *   npx tsx bench/run.ts payload [--quick]
 */
import { performance } from 'node:perf_hooks';
import { payloadEngines } from '../src/scan/engines/payload';
import { pct, runEngine, subjectOf } from './_payload-common';

let seed = 42;
function rand(): number {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed / 2 ** 32;
}

const PARTS: Array<() => string> = [
  () => 'The deployment guide explains how to configure the service, rotate logs and restart workers after an upgrade. Read the previous section first.\n\n',
  () => '## Usage\n\nInstall with `npm install example-lib` and call `init({ retries: 3 })`. Contact support@example.org for help.\n\n',
  () => '```js\nconst res = await fetch(url, { headers: { accept: "application/json" } });\nif (!res.ok) throw new Error(res.statusText);\n```\n\n',
  () => '```bash\nnpm ci && npm run build\nrm -rf ./dist/tmp\n```\n\n',
  () => `${JSON.stringify({ role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] })}\n`,
  () => 'User: can you summarise the meeting?\nAssistant: Sure, the team agreed to ship on Friday and to review the backlog.\n\n',
  () => `<p>Welcome!</p><img src="logo.png" alt="Company logo"><!-- layout v2 --><script>document.title = "Home";</script>\n`,
  () => `blob: ${Buffer.from(`payload-${Math.floor(rand() * 1e9)} some readable words here`).toString('base64')}\n`,
  () => 'Order 12345 shipped to Lisbon on 2024-05-06; tracking https://track.example.com/?id=AB12CD34.\n',
  () => 'Note: ignore the warnings printed by the previous build step; they are harmless.\n',
];

export function mixedText(bytes: number): string {
  let s = '';
  while (s.length < bytes) s += PARTS[Math.floor(rand() * PARTS.length)]();
  return s.slice(0, bytes);
}

/**
 * Wall time and CPU time (user + system of this process). On a shared machine other processes
 * stretch wall time; CPU time is the cost of this code alone, so both are printed.
 */
async function runAll(buf: Buffer, name = ''): Promise<{ total: number; cpu: number; perEngine: number[] }> {
  // A fresh Buffer each time, so the shared UTF-8 decode is measured too.
  const subject = subjectOf(Buffer.from(buf), name);
  const perEngine: number[] = [];
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (const e of payloadEngines) {
    const s = performance.now();
    await runEngine(e, subject);
    perEngine.push(performance.now() - s);
  }
  const total = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { total, cpu: (c.user + c.system) / 1000, perEngine };
}

const fmt = (ms: number): string => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

export async function run(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const sizes: Array<[string, number, number]> = [
    ['1 KB', 1024, quick ? 50 : 500], ['10 KB', 10 * 1024, quick ? 30 : 300],
    ['100 KB', 100 * 1024, quick ? 10 : 60], ['1 MB', 1024 * 1024, quick ? 3 : 15],
  ];
  // Warm up the JIT and load the classifier weights.
  for (let i = 0; i < 20; i++) await runAll(Buffer.from(mixedText(8 * 1024)));

  console.log('\nAll four payload engines, realistic mixed text (markdown, code fences, HTML, JSON tool calls, base64, chat)\n');
  const load = (await import('node:os')).loadavg()[0];
  console.log(`(1-minute load average ${load.toFixed(2)} on ${(await import('node:os')).cpus().length} CPUs when starting)\n`);
  console.log('| size | runs | wall p50 ms | wall p99 ms | wall max ms | CPU p50 ms | CPU p99 ms | CPU ms per KB (p50) | wall p50 per engine: code / injection / sensitive / tools |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const [label, bytes, runs] of sizes) {
    const buf = Buffer.from(mixedText(bytes));
    const totals: number[] = [];
    const cpus: number[] = [];
    const per: number[][] = payloadEngines.map(() => []);
    for (let i = 0; i < runs; i++) {
      const r = await runAll(buf);
      totals.push(r.total);
      cpus.push(r.cpu);
      r.perEngine.forEach((v, k) => per[k].push(v));
    }
    totals.sort((a, b) => a - b);
    cpus.sort((a, b) => a - b);
    per.forEach((a) => a.sort((x, y) => x - y));
    console.log(`| ${label} | ${runs} | ${fmt(pct(totals, 50))} | ${fmt(pct(totals, 99))} | ${fmt(totals[totals.length - 1])} | ${fmt(pct(cpus, 50))} | ${fmt(pct(cpus, 99))} | ${(pct(cpus, 50) / (bytes / 1024)).toFixed(3)} | ${per.map((a) => fmt(pct(a, 50))).join(' / ')} |`);
  }

  const MB = 1024 * 1024;
  const rep = (unit: string, n = MB): string => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  const adversarial: Array<[string, string, string]> = [
    ['run of "a"', rep('a'), ''],
    ['run of digits', rep('1'), ''],
    ['run of spaces', rep(' '), ''],
    ['run of newlines', rep('\n'), ''],
    ['nested brackets [[[...]]]', `${'['.repeat(MB / 2)}${']'.repeat(MB / 2)}`, ''],
    ['nested JSON {"a":{"a":...', `${'{"a":'.repeat(MB / 10)}1${'}'.repeat(MB / 10)}`, 'x.json'],
    ['repeated "tool_calls" near-match', rep('{"tool_calls":[{"function":{"name":"x","arguments":"{'), 'x.json'],
    ['repeated "ignore all previous "', rep('ignore all previous '), ''],
    ['repeated "you are now a "', rep('you are now a '), ''],
    ['repeated "<|im_start"', rep('<|im_start'), ''],
    ['repeated "<!--" (unclosed comments)', rep('<!--'), ''],
    ['repeated alt=" (unclosed)', rep('<img alt="'), ''],
    ['base64-looking run', rep('QUJDRGVmZ2hpams'), ''],
    ['hex run', rep('4a'), ''],
    ['repeated %41', rep('%41'), ''],
    ['repeated \\x41', rep('\\x41'), ''],
    ['repeated "eyJ" (JWT prefix)', rep('eyJ'), ''],
    ['repeated "eyJa." segments', rep('eyJabcde.'), ''],
    ['repeated "AKIA"', rep('AKIA'), ''],
    ['repeated "a@" (emails)', rep('a@'), ''],
    ['repeated "a.b@c." (email near-miss)', rep('a.b@c.'), ''],
    ['digit groups "1234 "', rep('1234 '), ''],
    ['repeated "+1 "', rep('+1 '), ''],
    ['repeated "password="', rep('password="'), ''],
    ['repeated "postgres://u:"', rep('postgres://u:'), ''],
    ['repeated PEM header', rep('-----BEGIN RSA PRIVATE KEY-----\n'), ''],
    ['repeated "curl x "', rep('curl x '), ''],
    ['repeated "rm -rf "', rep('rm -rf '), ''],
    ['repeated "powershell -e "', rep('powershell -e '), ''],
    ['repeated "```" fences', rep('```\n'), ''],
    ['repeated backticks', rep('`'), ''],
    ['repeated "<script"', rep('<script'), 'a.html'],
    ['repeated onclick="', rep('<a onclick="'), 'a.html'],
    ['repeated "<tool_call>"', rep('<tool_call>'), ''],
    ['repeated "name(a="', rep('name(a='), ''],
    ['one 1 MB line of words', rep('lorem ipsum dolor sit amet '), ''],
    ['zero-width every other char', rep('i\u200B'), ''],
    ['Cyrillic/Latin mix', rep('\u0430a'), ''],
    ['full-width run', rep('\uFF41'), ''],
  ];
  const budgetMs = 1000;
  console.log(`\nAdversarial 1 MB inputs, all four engines, budget ${budgetMs} ms of CPU each (slowest engine named)\n`);
  console.log('| input | wall ms | CPU ms | slowest engine | its wall ms | within budget (CPU) |');
  console.log('|---|---|---|---|---|---|');
  let worst = 0;
  let worstWall = 0;
  let failures = 0;
  for (const [label, text, name] of adversarial) {
    const r = await runAll(Buffer.from(text), name);
    const k = r.perEngine.indexOf(Math.max(...r.perEngine));
    worst = Math.max(worst, r.cpu);
    worstWall = Math.max(worstWall, r.total);
    const ok = r.cpu <= budgetMs;
    if (!ok) failures++;
    console.log(`| ${label} | ${fmt(r.total)} | ${fmt(r.cpu)} | ${payloadEngines[k].name} | ${fmt(r.perEngine[k])} | ${ok ? 'yes' : 'NO'} |`);
  }
  console.log(`\nworst adversarial input: ${fmt(worst)} ms CPU (${fmt(worstWall)} ms wall); over budget: ${failures}`);
  if (failures > 0) process.exitCode = 1;
}
