/**
 * Texts for the script-encoder experiment (research/scripts-finetune-gpu/README.md), with the
 * shipped pipeline's verdict where the experiment compares against it. Writes JSONL rows
 * {role, source, label, text (first 8 KB), shipped?} to OUT:
 *
 *   fit      detection corpus split train, not a validation source (plus the admin shapes)
 *   bfit     benign package corpus, train split (main + fresh, as `--with-fresh`), up to
 *            --per-language files per language (shell all), packages in turn
 *   val      detection corpus split train, validation sources; shipped = the pipeline with the
 *            inner model (never saw them), as `bench dev-scripts`
 *   heldout  detection corpus split heldout; shipped = the pipeline with the shipped model
 *   bval / bfresh2 / bheld  benign corpus splits validation / fresh2 / heldout, all files;
 *            shipped = the pipeline with the shipped model, as `bench scan-fp --scripts`
 *
 *   npx tsx research/scripts-finetune-gpu/dump.ts --data DIR --inner INNER.json --out OUT.jsonl [--per-language N] [--only-bfit]
 *
 * `--only-bfit` writes the bfit rows alone (the second run swaps them into the first run's rows).
 */
import { createWriteStream, readFileSync } from 'node:fs';
import path from 'node:path';
import { analyze, type AnalyzeDeps } from '../../src/scan/analyze';
import { memoryFeedLookup, parsePlainHashList } from '../../src/scan/engines/feeds';
import { SCRIPT_MODEL_PATH, useScriptModelFile } from '../../src/scan/engines/ml';
import { benchClamd } from '../../bench/_scan-common';
import { ADMIN_SHAPES } from '../../scripts/admin-shapes';
import { arg } from '../../scripts/build-detection-data';
import { BENIGN_MANIFEST, benignText, DEFAULT_CACHE, FRESH_MANIFEST, manifestOf, readBenignManifest, type CorpusSplit } from '../../scripts/build-benign-corpus';
import { benignTrain, isValidation, trainingPackages } from '../../scripts/train-script-ml';

interface Rec { id: string; source: string; split: string; label: 0 | 1; text: string; name?: string }
const KEEP = 8 * 1024;

async function main(): Promise<void> {
  const data = arg('--data', '');
  const inner = arg('--inner', '');
  const outFile = arg('--out', '');
  if (!data || !inner || !outFile) throw new Error('needs --data DIR --inner INNER.json --out OUT.jsonl');
  const perLanguage = Number(arg('--per-language', '1500'));
  const out = createWriteStream(outFile);
  const write = (row: object): void => void out.write(`${JSON.stringify(row)}\n`);
  const recs = readFileSync(path.join(data, 'scripts.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec);
  const clamd = await benchClamd();
  const deps: AnalyzeDeps = { clamd: clamd.addr, feedLookup: memoryFeedLookup(parsePlainHashList('', 'ft')) };
  const verdict = async (content: Buffer, name: string): Promise<number> => {
    const r = await analyze({ content, name, scanType: 'file' }, deps);
    return r.safetyScore.threatLevel === 'Suspicious' || r.safetyScore.threatLevel === 'Malicious' ? 1 : 0;
  };
  try {
    const onlyBfit = process.argv.includes('--only-bfit');
    if (!onlyBfit) {
      for (const r of recs) if (r.split === 'train' && !isValidation(r)) write({ role: 'fit', source: r.source, label: r.label, text: r.text.slice(0, KEEP) });
      ADMIN_SHAPES.forEach((text) => write({ role: 'fit', source: 'admin-shapes', label: 0, text }));
    }
    const limits = new Map<string, number>([['shell', Infinity]]);
    for (const lang of ['python', 'perl', 'php', 'javascript', 'powershell', 'batch', 'vbscript', 'jscript']) limits.set(lang, perLanguage);
    const bfit = benignTrain(trainingPackages(readBenignManifest(BENIGN_MANIFEST), readBenignManifest(FRESH_MANIFEST)), DEFAULT_CACHE, limits);
    for (const r of bfit) write({ role: 'bfit', source: r.source, label: 0, text: r.text.slice(0, KEEP) });
    console.log(`fit and bfit written (${bfit.length} benign corpus files)`);
    if (onlyBfit) return;

    useScriptModelFile(inner);
    for (const r of recs) {
      if (r.split !== 'train' || !isValidation(r)) continue;
      write({ role: 'val', source: r.source, label: r.label, text: r.text.slice(0, KEEP), shipped: await verdict(Buffer.from(r.text), r.name ?? '') });
    }
    useScriptModelFile(SCRIPT_MODEL_PATH);
    for (const r of recs) {
      if (r.split !== 'heldout') continue;
      write({ role: 'heldout', source: r.source, label: r.label, text: r.text.slice(0, KEEP), shipped: await verdict(Buffer.from(r.text), r.name ?? '') });
    }
    console.log('val and heldout written');
    const roles: Array<[string, CorpusSplit]> = [['bval', 'validation'], ['bfresh2', 'fresh2'], ['bheld', 'heldout']];
    for (const [role, split] of roles) {
      let n = 0;
      for (const p of readBenignManifest(manifestOf(split)).filter((x) => x.split === split)) {
        for (const [file, sha, language] of p.files) {
          const content = benignText(DEFAULT_CACHE, sha);
          if (!content) continue;
          write({ role, source: `${p.ecosystem}:${p.name}`, file, language, label: 0, text: content.toString('utf8').slice(0, KEEP), shipped: await verdict(content, path.basename(file)) });
          n++;
        }
      }
      console.log(`${role}: ${n} files`);
    }
  } finally {
    await clamd.stop();
    out.end();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
