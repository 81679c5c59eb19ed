/**
 * Detection on public material nobody on the project wrote, per engine and per source, plus
 * payload latency.
 *
 *   npm run bench -- detection [--split heldout|train] [--data DIR] [--show-misses N] [--only pi|scripts]
 *                              [--groups 'NAME=source,source;NAME=source'] [--by FILE] [--no-nanoguard] [--nanoguard-max N]
 *
 * On the held-out prompt-injection rows the peer detector NanoGuard (bench/_nanoguard.ts) is run
 * too and printed beside this service at equal false-positive rates (`--no-nanoguard` skips it;
 * `--nanoguard-max N` scores at most N rows not yet cached, and both are compared on the scored rows).
 *
 * `--groups` adds a line per named group of sources (summed as `all` is), e.g. an older and a newer
 * held-out set and the two pooled. `--by FILE` (JSON: record id -> {field: value}, e.g. a
 * benchmark's own attack categories, taken from its metadata and never from its texts) adds a
 * line per field value over the records the file names: aggregate counts only. With `--by` and
 * NanoGuard, a language control follows (languageControl): benign questions in nine languages
 * against the held-out attacks in each, since the held-out benign rows are nearly all English.
 *
 * Reads the local corpus built by scripts/build-detection-data.ts (default
 * .tools/data/detection, git-ignored; datasets/detection/manifest.json lists every source).
 * Prompt injection: each prompt through the full payload analysis (POST /api/scan/payload minus
 * HTTP); detected = verdict Suspicious or worse, and per engine = that engine raised a finding of
 * medium or worse. Scripts: each file through the full file analysis (POST /api/scan); detected =
 * Suspicious or worse. clamd is not contacted (its signatures do not target these sets) and the
 * threat feed is empty, so the figures are what the local engines see.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { analyze, type AnalyzeDeps } from '../src/scan/analyze';
import { memoryFeedLookup, parsePlainHashList } from '../src/scan/engines/feeds';
import { payloadEngines } from '../src/scan/engines/payload';
import { MODEL_PATH } from '../src/scan/engines/payload/pi-classifier';
import type { Finding } from '../src/scan/types';
import { installNanoGuard, nanoGuardScores, thresholdAtFpr } from './_nanoguard';
import { counts, pct, runEngine, subjectOf, tally, type Counts } from './_payload-common';
import { opt } from './_scan-common';

interface Rec { id: string; source: string; split: string; label: number; text: string; name?: string }

const ROOT = path.join(__dirname, '..');
const RANK: Record<string, number> = { info: 0, low: 1, medium: 2, high: 3, critical: 4 };
const deps: AnalyzeDeps = { clamd: { host: '127.0.0.1', port: 1 }, feedLookup: memoryFeedLookup(parsePlainHashList('', 'bench')) };

function load(file: string, split: string): Rec[] {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec).filter((r) => r.split === split);
}

function line(label: string, t: Counts): string {
  const pos = t.tp + t.fn;
  const neg = t.fp + t.tn;
  const recall = pos ? (t.tp / pos).toFixed(3) : '  -  ';
  const fpr = neg ? `${((100 * t.fp) / neg).toFixed(1)}%` : '  -  ';
  return `  ${label.padEnd(30)} attacks ${String(pos).padStart(5)}  recall ${recall}   benign ${String(neg).padStart(5)}  FPR ${fpr.padStart(6)}`;
}

const engineFired = (findings: Finding[]): boolean => findings.some((f) => RANK[f.severity] >= RANK.medium);

type Categories = Record<string, Record<string, string>>;

async function evaluate(title: string, recs: Rec[], scanType: 'payload' | 'file', showMisses: number, groups: Array<[string, string[]]> = [], by: Categories = {}, peer = false, peerMax = Infinity, control: Rec[] = []): Promise<void> {
  const overall = counts();
  const hits: boolean[] = [];
  const perSource = new Map<string, Counts>();
  const perCategory = new Map<string, Counts>();
  const perEngine = new Map<string, Counts>();
  const misses: string[] = [];
  for (const r of recs) {
    const out = await analyze({ content: Buffer.from(r.text), name: r.name ?? '', scanType }, deps);
    const hit = out.safetyScore.threatLevel === 'Suspicious' || out.safetyScore.threatLevel === 'Malicious';
    hits.push(hit);
    tally(overall, hit, r.label === 1);
    const s = perSource.get(r.source) ?? counts();
    tally(s, hit, r.label === 1);
    perSource.set(r.source, s);
    for (const [field, value] of Object.entries(by[r.id] ?? {})) {
      const key = `${field}=${value}`;
      const c = perCategory.get(key) ?? counts();
      tally(c, hit, r.label === 1);
      perCategory.set(key, c);
    }
    for (const [name, res] of Object.entries(out.engines)) {
      const e = perEngine.get(name) ?? counts();
      tally(e, engineFired(res.findings), r.label === 1);
      perEngine.set(name, e);
    }
    if (hit !== (r.label === 1) && misses.length < showMisses) misses.push(`${r.label ? 'MISS' : 'FP  '} ${r.id}: ${r.text.replace(/\s+/g, ' ').slice(0, 160)} [${out.safetyScore.primaryThreat}]`);
  }
  console.log(`\n${title}: ${recs.length} items, verdict Suspicious or worse`);
  console.log(line('all', overall));
  const grouped = groups.filter(([, members]) => members.some((m) => perSource.has(m)));
  if (grouped.length) console.log(' per group of sources:');
  for (const [name, members] of grouped) {
    const g = counts();
    for (const m of members) for (const k of ['tp', 'fp', 'fn', 'tn'] as const) g[k] += perSource.get(m)?.[k] ?? 0;
    console.log(line(name, g));
  }
  console.log(' per source:');
  for (const [k, t] of [...perSource].sort()) console.log(line(k, t));
  if (perCategory.size) console.log(' per category (--by):');
  for (const [k, t] of [...perCategory].sort()) console.log(line(k, t));
  console.log(' per engine (finding of medium or worse):');
  for (const [k, t] of [...perEngine].sort()) if (t.tp + t.fp > 0) console.log(line(k, t));
  for (const m of misses) console.log(`   ${m}`);
  if (peer) await sideBySide(recs, hits, grouped, peerMax, by, control);
}

/** NanoGuard's recall and FPR on a set of rows, at a threshold. */
function peerCounts(recs: Rec[], scores: number[], keep: (r: Rec) => boolean, t: number): Counts {
  const c = counts();
  recs.forEach((r, i) => keep(r) && tally(c, scores[i] >= t, r.label === 1));
  return c;
}

/**
 * NanoGuard on the same rows, side by side with this service at equal false-positive rates: for
 * each line its threshold is the lowest that flags no larger share of that line's benign rows than
 * the service does (per source: the threshold of all rows). Also NanoGuard alone at its default
 * threshold 0.5 and at 3% and 5% FPR over all rows. With `--by`, a line per category too (at the
 * threshold of all rows: a category such as an attack style may hold no benign row to match on).
 */
async function sideBySide(allRecs: Rec[], allHits: boolean[], groups: Array<[string, string[]]>, maxNew: number, by: Categories, control: Rec[]): Promise<void> {
  const why = installNanoGuard();
  if (why) {
    console.log(`\n NanoGuard not run: pip could not install it (${why})`);
    return;
  }
  const all = await nanoGuardScores(allRecs.map((r) => r.text), maxNew);
  // Both detectors are compared on the rows NanoGuard has scored (all of them unless --nanoguard-max cut the run short).
  const kept = all.flatMap((s, i) => (s === undefined ? [] : [i]));
  const recs = kept.map((i) => allRecs[i]);
  const hits = kept.map((i) => allHits[i]);
  const scores = kept.map((i) => all[i] as number);
  if (recs.length < allRecs.length) console.log(`  NanoGuard has scored ${recs.length} of ${allRecs.length} rows (a sample in SHA-256 order); both columns below are over those rows only`);
  const ours = (keep: (r: Rec) => boolean): Counts => {
    const c = counts();
    recs.forEach((r, i) => keep(r) && tally(c, hits[i], r.label === 1));
    return c;
  };
  const matched = (keep: (r: Rec) => boolean): number => {
    const o = ours(keep);
    return thresholdAtFpr(recs.flatMap((r, i) => (keep(r) && r.label === 0 ? [scores[i]] : [])), o.fp / Math.max(1, o.fp + o.tn));
  };
  const row = (label: string, keep: (r: Rec) => boolean, t: number): string => {
    const a = line('', ours(keep)).trim();
    const b = line('', peerCounts(recs, scores, keep, t)).trim();
    return `  ${label.padEnd(30)} ${a.padEnd(58)} | NanoGuard >= ${t.toFixed(4)}: ${b}`;
  };
  console.log(' side by side with NanoGuard (metatronnanoguard 0.1.0) at equal false-positive rates (this service | NanoGuard):');
  const every = (): boolean => true;
  const tAll = matched(every);
  console.log(row('all', every, tAll));
  for (const [name, members] of groups) {
    const keep = (r: Rec): boolean => members.includes(r.source);
    console.log(row(name, keep, matched(keep)));
  }
  for (const source of [...new Set(recs.map((r) => r.source))].sort()) console.log(row(source, (r) => r.source === source, tAll));
  const categories = [...new Set(recs.flatMap((r) => Object.entries(by[r.id] ?? {}).map(([field, value]) => `${field}=${value}`)))].sort();
  for (const key of categories) console.log(row(key, (r) => Object.entries(by[r.id] ?? {}).some(([field, value]) => `${field}=${value}` === key), tAll));
  const benign = recs.flatMap((r, i) => (r.label === 0 ? [scores[i]] : []));
  for (const [label, t] of [['NanoGuard at its default 0.5', 0.5], ['NanoGuard at 3% FPR (all rows)', thresholdAtFpr(benign, 0.03)], ['NanoGuard at 5% FPR (all rows)', thresholdAtFpr(benign, 0.05)]] as const) {
    console.log(`  ${label.padEnd(30)} ${line('', peerCounts(recs, scores, every, t)).trim()} (threshold ${t.toFixed(4)})`);
  }
  if (control.length) await languageControl(recs, hits, scores, by, tAll, control, maxNew);
}

/** XSafety's file prefixes for the languages its plain questions are written in, by CyberSecEval's language names. */
const CONTROL_LANGUAGES: Record<string, string> = { English: 'en', Arabic: 'ar', Chinese: 'zh', French: 'fr', German: 'de', Hindi: 'hi', Japanese: 'ja', Russian: 'ru', Spanish: 'sp' };
const CONTROL_PER_LANGUAGE = 50;

/**
 * The held-out benign rows are nearly all English, so "equal FPR" says nothing about benign text in
 * other scripts: a detector that flags every Hindi text gets the Hindi attacks for free. This
 * control scores plain questions in nine languages (XSafety's question files: a training source
 * the shipped weights never read, since it is used only with `train-prompt-injection.ts --include`)
 * and prints, per language, both detectors' FPR on them and their recall on the held-out attacks in
 * that language (the `--by` file's `language` field), NanoGuard also at a threshold that keeps its
 * FPR on that language's questions no higher than this service's.
 */
async function languageControl(recs: Rec[], hits: boolean[], scores: number[], by: Categories, tAll: number, control: Rec[], maxNew: number): Promise<void> {
  const model = readFileSync(MODEL_PATH, 'utf8');
  if (model.includes('xsafety')) {
    console.log(' language control skipped: the shipped prompt-injection model was trained with XSafety');
    return;
  }
  const key = (id: string): string => createHash('sha256').update(id).digest('hex');
  const prefixOf = (r: Rec): string => r.id.split(':')[1]?.split('/')[0] ?? '';
  const sample = Object.values(CONTROL_LANGUAGES).flatMap((code) => control.filter((r) => prefixOf(r) === code).sort((a, b) => key(a.id).localeCompare(key(b.id))).slice(0, CONTROL_PER_LANGUAGE));
  const peer = await nanoGuardScores(sample.map((r) => r.text), maxNew);
  console.log(` language control: ${CONTROL_PER_LANGUAGE} plain questions per language (XSafety, never in the shipped weights) as benign, the held-out attacks of that language (--by) as attacks; NanoGuard at the pooled threshold ${tAll.toFixed(4)} and at one matched to this service's FPR on the language:`);
  const total = { attacks: 0, ours: 0, pooled: 0, matched: 0 };
  for (const [language, code] of Object.entries(CONTROL_LANGUAGES)) {
    const benign = sample.flatMap((r, i) => (prefixOf(r) === code && peer[i] !== undefined ? [{ r, s: peer[i] as number }] : []));
    if (benign.length === 0) continue;
    const oursFp = (await Promise.all(benign.map(({ r }) => payloadFlagged(r.text)))).filter(Boolean).length;
    const tLang = Math.max(tAll, thresholdAtFpr(benign.map((b) => b.s), oursFp / benign.length));
    const attacks = recs.flatMap((r, i) => (r.label === 1 && by[r.id]?.language === language ? [i] : []));
    const ours = attacks.filter((i) => hits[i]).length;
    const pooled = attacks.filter((i) => scores[i] >= tAll).length;
    const matched = attacks.filter((i) => scores[i] >= tLang).length;
    Object.assign(total, { attacks: total.attacks + attacks.length, ours: total.ours + ours, pooled: total.pooled + pooled, matched: total.matched + matched });
    const rate = (n: number, d: number): string => (d ? (n / d).toFixed(3) : '  -  ');
    console.log(`  ${language.padEnd(10)} benign ${String(benign.length).padStart(3)} flagged: this service ${String(oursFp).padStart(2)}, NanoGuard ${String(benign.filter((b) => b.s >= tAll).length).padStart(2)} | attacks ${String(attacks.length).padStart(4)} recall: this service ${rate(ours, attacks.length)}, NanoGuard ${rate(pooled, attacks.length)} pooled / ${rate(matched, attacks.length)} matched (>= ${tLang.toFixed(4)})`);
  }
  const rate = (n: number): string => (total.attacks ? (n / total.attacks).toFixed(3) : '  -  ');
  console.log(`  ${'together'.padEnd(10)} attacks ${total.attacks}: this service ${rate(total.ours)}, NanoGuard ${rate(total.pooled)} at the pooled threshold, ${rate(total.matched)} at the language-matched ones`);
}

/** This service's verdict on a payload, as `evaluate` counts it. */
async function payloadFlagged(text: string): Promise<boolean> {
  const out = await analyze({ content: Buffer.from(text), name: '', scanType: 'payload' }, deps);
  return out.safetyScore.threatLevel === 'Suspicious' || out.safetyScore.threatLevel === 'Malicious';
}

/** Prose-and-code payload of about `bytes`, mixing the kinds of text the engines look at. */
function payloadOf(bytes: number): string {
  const parts = [
    'The quarterly report covers revenue, churn and the migration plan for the billing service. ',
    'Please summarise the attached notes and list the open questions for the team.\n',
    '```bash\nkubectl rollout status deploy/api -n prod && curl -fsS https://status.example.com/health\n```\n',
    '{"tool_calls":[{"type":"function","function":{"name":"search","arguments":"{\\"q\\":\\"weather in Berlin\\"}"}}]}\n',
    'Contact: ops@example.com, ticket #4821. Ignore the draft numbers in the appendix; they are outdated.\n',
  ];
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += parts[i % parts.length];
  return s.slice(0, bytes);
}

async function latency(): Promise<void> {
  const pi = payloadEngines.find((e) => e.name === 'prompt_injection');
  if (!pi) throw new Error('prompt_injection engine missing');
  const ten = payloadOf(10 * 1024);
  const times: number[] = [];
  const cpu: number[] = [];
  const all: number[] = [];
  for (let i = 0; i < 30; i++) await runEngine(pi, subjectOf(ten));
  for (let i = 0; i < 300; i++) {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    await runEngine(pi, subjectOf(ten));
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
    times.push(performance.now() - t0);
    const t1 = performance.now();
    for (const e of payloadEngines) await runEngine(e, subjectOf(ten));
    all.push(performance.now() - t1);
  }
  times.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  all.sort((a, b) => a - b);
  // CPU time is this code's cost; wall time also holds waits for a core on a shared machine.
  console.log(`\npayload latency (one core, in process, 300 runs of 10 KB; load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} CPUs):`);
  console.log(`  prompt_injection        wall p50 ${pct(times, 50).toFixed(2)} ms  p99 ${pct(times, 99).toFixed(2)} ms;  CPU p50 ${pct(cpu, 50).toFixed(2)} ms  p99 ${pct(cpu, 99).toFixed(2)} ms`);
  console.log(`  all four payload engines p50 ${pct(all, 50).toFixed(2)} ms  p99 ${pct(all, 99).toFixed(2)} ms`);
  const full: number[] = [];
  for (let i = 0; i < 100; i++) {
    const t0 = performance.now();
    await analyze({ content: Buffer.from(ten), name: '', scanType: 'payload' }, deps);
    full.push(performance.now() - t0);
  }
  full.sort((a, b) => a - b);
  console.log(`  whole payload analysis (every engine incl. static_script, ml, yara; clamd not contacted) p50 ${pct(full, 50).toFixed(2)} ms  p99 ${pct(full, 99).toFixed(2)} ms`);
  for (const size of [100 * 1024, 1024 * 1024]) {
    const text = payloadOf(size);
    const runs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      for (const e of payloadEngines) await runEngine(e, subjectOf(text));
      runs.push(performance.now() - t0);
    }
    runs.sort((a, b) => a - b);
    console.log(`  all four payload engines on ${String(size / 1024).padStart(5)} KB: median ${pct(runs, 50).toFixed(1)} ms (${(pct(runs, 50) / (size / 1024)).toFixed(3)} ms/KB)`);
  }
}

export async function run(args: string[]): Promise<void> {
  const dir = path.resolve(ROOT, opt(args, '--data', path.join('.tools', 'data', 'detection')));
  const split = opt(args, '--split', 'heldout');
  const showMisses = Number(opt(args, '--show-misses', '0'));
  const only = opt(args, '--only', '');
  const needed = only ? [`${only}.jsonl`] : ['pi.jsonl', 'scripts.jsonl'];
  if (needed.some((f) => !existsSync(path.join(dir, f)))) {
    console.log(`No detection corpus at ${dir}: recall and FPR are not measured.`);
    console.log('Build it from mirrored public repositories (datasets/detection/manifest.json lists them):');
    console.log('  npx tsx scripts/build-detection-data.ts --mirror <dir with owner+name/repo git mirrors>');
  } else {
    // `--only` scores one corpus (the training split of both takes long) and skips the latency figures.
    const groups = opt(args, '--groups', '').split(';').filter((g) => g.includes('=')).map((g): [string, string[]] => [g.split('=')[0].trim(), g.split('=')[1].split(',').map((m) => m.trim())]);
    const byFile = opt(args, '--by', '');
    const by = byFile ? (JSON.parse(readFileSync(byFile, 'utf8')) as Categories) : {};
    // NanoGuard is compared on the held-out prompt-injection rows unless `--no-nanoguard`.
    const peer = split === 'heldout' && !args.includes('--no-nanoguard');
    const peerMax = Number(opt(args, '--nanoguard-max', 'Infinity'));
    const control = peer && Object.keys(by).length ? load(path.join(dir, 'pi.jsonl'), 'train').filter((r) => r.source === 'xsafety-questions') : [];
    if (only !== 'scripts') await evaluate(`prompt injection (${split})`, load(path.join(dir, 'pi.jsonl'), split), 'payload', showMisses, groups, by, peer, peerMax, control);
    if (only !== 'pi') await evaluate(`scripts (${split})`, load(path.join(dir, 'scripts.jsonl'), split), 'file', showMisses, groups, by);
    if (only) return;
  }
  await latency();
}
