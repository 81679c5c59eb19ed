/**
 * The whole file pipeline on the script model's validation sources, scored with the model that
 * never saw them: the development loop for script detection (issue 30), so that a change to the
 * rules, gates or model can be measured without a look at the held-out sets.
 *
 *   npx tsx scripts/train-script-ml.ts --with-fresh --benign shell=all --inner-out /tmp/inner.json
 *   npm run bench -- dev-scripts --model /tmp/inner.json [--data DIR] [--show-misses N]
 *
 * The shipped model is refitted on every training source, the validation sources included, so
 * the pipeline with it would flatter itself there; `--inner-out` writes the model fitted without
 * them, with the shipped model's levels. Records: split `train` of scripts.jsonl whose source is a
 * validation source (scripts/train-script-ml.ts: VALIDATION_SOURCES and half of each everyday
 * command-line source by page). Detected = verdict Suspicious or worse, as in `bench detection`.
 * Rules written from these sources' misses are tuned on them: say so, and take the held-out
 * figure (`bench detection`) as the estimate.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { analyze, type AnalyzeDeps } from '../src/scan/analyze';
import { memoryFeedLookup, parsePlainHashList } from '../src/scan/engines/feeds';
import { useScriptModelFile } from '../src/scan/engines/ml';
import { dataDir } from '../scripts/build-detection-data';
import { isValidation } from '../scripts/train-script-ml';
import { counts, tally, type Counts } from './_payload-common';
import { opt } from './_scan-common';

interface Rec { id: string; source: string; split: string; label: 0 | 1; text: string; name?: string }

const deps: AnalyzeDeps = { clamd: { host: '127.0.0.1', port: 1 }, feedLookup: memoryFeedLookup(parsePlainHashList('', 'bench')) };

function line(label: string, t: Counts): string {
  const pos = t.tp + t.fn;
  const neg = t.fp + t.tn;
  const recall = pos ? `recall ${(t.tp / pos).toFixed(3)} (${t.tp} of ${pos})` : '';
  const fpr = neg ? `FPR ${((100 * t.fp) / neg).toFixed(2)}% (${t.fp} of ${neg})` : '';
  return `  ${label.padEnd(24)} ${recall}${fpr}`;
}

export async function run(args: string[]): Promise<void> {
  const model = opt(args, '--model', '');
  if (!model) {
    console.log('dev-scripts: needs --model FILE, the inner model of `npx tsx scripts/train-script-ml.ts ... --inner-out FILE`; skipped');
    return;
  }
  const file = path.join(opt(args, '--data', dataDir()), 'scripts.jsonl');
  if (!existsSync(file)) {
    console.log(`dev-scripts: no ${file} (run scripts/build-detection-data.ts); skipped`);
    return;
  }
  const inner = JSON.parse(readFileSync(model, 'utf8')) as { training?: { inner?: boolean } };
  if (!inner.training?.inner) throw new Error(`${model} is not an inner model (training.inner): the shipped model saw the validation sources`);
  useScriptModelFile(model);
  const showMisses = Number(opt(args, '--show-misses', '0'));
  const recs = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec).filter((r) => r.split === 'train' && isValidation(r));
  const all = counts();
  const perSource = new Map<string, Counts>();
  const misses: string[] = [];
  const started = Date.now();
  for (const r of recs) {
    const out = await analyze({ content: Buffer.from(r.text), name: r.name ?? '', scanType: 'file' }, deps);
    const hit = out.safetyScore.threatLevel === 'Suspicious' || out.safetyScore.threatLevel === 'Malicious';
    tally(all, hit, r.label === 1);
    const s = perSource.get(r.source) ?? counts();
    tally(s, hit, r.label === 1);
    perSource.set(r.source, s);
    if (hit !== (r.label === 1) && misses.length < showMisses) misses.push(`${r.label ? 'MISS' : 'FP  '} ${r.id}: ${r.text.replace(/\s+/g, ' ').slice(0, 160)} [${out.safetyScore.primaryThreat}]`);
  }
  console.log(`validation sources through the file pipeline with ${path.basename(model)}: ${recs.length} records in ${((Date.now() - started) / 1000).toFixed(0)} s, verdict Suspicious or worse`);
  console.log(line('attacks', { ...all, fp: 0, tn: 0 }));
  console.log(line('benign', { ...all, tp: 0, fn: 0 }));
  console.log(' per source:');
  for (const [k, t] of [...perSource].sort()) console.log(line(k, t));
  for (const m of misses) console.log(`   ${m}`);
}
