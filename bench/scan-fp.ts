/**
 * `npm run bench -- scan-fp [--limit N]`: false positives of the whole analyze() pipeline on
 * benign files from this machine (/usr/bin, /usr/lib, node_modules). Prints how many verdicts are
 * worse than Informational and which engine/finding fired.
 *
 * `npm run bench -- scan-fp --scripts [--split heldout|validation|train|fresh|fresh2] [--cache DIR] [--sample N]`:
 * the benign script sweep (issue 30) over one split of the corpus of scripts/build-benign-corpus.ts
 * (manifest datasets/benign/manifest.jsonl.gz, texts in its cache): flagged rate per language,
 * per engine and finding, and every flagged file. Tune on `validation`; `heldout` is for the report.
 * `fresh` and `fresh2` read the separate evaluation-only manifests datasets/benign/fresh.jsonl.gz and
 * fresh2.jsonl.gz (packages and texts the main corpus, and for fresh2 the fresh split, do not have):
 * never tune on them.
 */
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { analyze, type AnalyzeDeps } from '../src/scan/analyze';
import { memoryFeedLookup, parsePlainHashList } from '../src/scan/engines/feeds';
import { benchClamd, MB, opt } from './_scan-common';
import { benignText, corpusSplit, DEFAULT_CACHE, manifestOf, readBenignManifest } from '../scripts/build-benign-corpus';

function collect(dir: string, max: number, out: string[], maxSize = 30 * MB): void {
  let entries: string[];
  try { entries = readdirSync(dir).sort(); } catch { return; }
  for (const e of entries) {
    if (out.length >= max) return;
    const p = path.join(dir, e);
    let st;
    // lstat: symlinks (e.g. /usr/bin/X11 -> .) are skipped, so each file is counted once.
    try { st = lstatSync(p); } catch { continue; }
    if (st.isDirectory()) { if (!e.startsWith('.')) collect(p, max, out, maxSize); }
    else if (st.isFile() && st.size > 0 && st.size <= maxSize) out.push(p);
  }
}

const pct = (n: number, d: number): string => `${((100 * n) / Math.max(1, d)).toFixed(2)}%`;

/** The benign script sweep: one split of the benign corpus through analyze(). */
async function sweepScripts(args: string[]): Promise<void> {
  const split = corpusSplit(opt(args, '--split', 'heldout'));
  const cache = opt(args, '--cache', DEFAULT_CACHE);
  // `--sample N`: a fixed subset of N files (by hash), for quick looks while tuning.
  const sample = Number(opt(args, '--sample', 'Infinity'));
  const all = readBenignManifest(manifestOf(split)).filter((p) => p.split === split)
    .flatMap((p) => p.files.map(([file, sha, language]) => ({ pkg: `${p.ecosystem}:${p.name}`, file, sha, language })));
  const files = Number.isFinite(sample) ? [...all].sort((a, b) => a.sha.localeCompare(b.sha)).slice(0, sample) : all;
  const clamd = await benchClamd();
  const deps: AnalyzeDeps = { clamd: clamd.addr, feedLookup: memoryFeedLookup(parsePlainHashList('', 'fp')) };
  const byLang: Record<string, { files: number; flagged: number; malicious: number; informational: number }> = {};
  const fired: Record<string, number> = {};
  const flagged: string[] = [];
  let missing = 0;
  const t0 = Date.now();
  try {
    for (const f of files) {
      const content = benignText(cache, f.sha);
      if (!content) { missing++; continue; }
      const r = await analyze({ content, name: path.basename(f.file), scanType: 'file' }, deps);
      const level = r.safetyScore.threatLevel;
      const l = (byLang[f.language] ??= { files: 0, flagged: 0, malicious: 0, informational: 0 });
      l.files++;
      if (level === 'Informational') l.informational++;
      if (level !== 'Suspicious' && level !== 'Malicious') continue;
      l.flagged++;
      if (level === 'Malicious') l.malicious++;
      const ids = [...new Set(Object.values(r.engines).flatMap((e) => e.findings.filter((x) => x.severity !== 'info' && x.severity !== 'low').map((x) => `${e.engine}:${x.id}`)))];
      for (const id of ids) fired[id] = (fired[id] ?? 0) + 1;
      const p = (r.reports.ml as { probability?: number } | undefined)?.probability;
      flagged.push(`${level.padEnd(10)} ${String(r.safetyScore.score).padStart(3)} ${f.language.padEnd(10)} ${r.fileType.padEnd(10)} ${String(Math.ceil(content.length / 1024)).padStart(5)} KB ml ${p === undefined ? '-' : p.toFixed(3)} ${f.pkg} ${f.file}  [${ids.join(', ')}]`);
    }
  } finally {
    await clamd.stop();
  }
  const total = Object.values(byLang).reduce((s, l) => s + l.files, 0);
  const totalFlagged = flagged.length;
  console.log(`benign scripts, split ${split}: ${total} scanned in ${((Date.now() - t0) / 1000).toFixed(1)} s${missing ? ` (${missing} not in the cache ${cache}: run scripts/build-benign-corpus.ts)` : ''}`);
  console.log(`flagged (Suspicious or Malicious): ${totalFlagged} of ${total} (${pct(totalFlagged, total)}); Malicious ${Object.values(byLang).reduce((s, l) => s + l.malicious, 0)}`);
  console.log('by language: files, flagged (rate), Malicious, Informational');
  for (const [lang, l] of Object.entries(byLang).sort((a, b) => b[1].files - a[1].files)) {
    console.log(`  ${lang.padEnd(11)} ${String(l.files).padStart(6)} ${String(l.flagged).padStart(5)} (${pct(l.flagged, l.files)}) ${String(l.malicious).padStart(4)} ${String(l.informational).padStart(6)}`);
  }
  console.log('by engine:finding (medium or worse, in flagged files):');
  for (const [id, n] of Object.entries(fired).sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(5)} ${id}`);
  console.log('flagged files:');
  for (const l of flagged) console.log(`  ${l}`);
}

export async function run(args: string[]): Promise<void> {
  if (args.includes('--scripts')) return sweepScripts(args);
  const limitArg = args.indexOf('--limit');
  const perSource = limitArg >= 0 ? Number(args[limitArg + 1]) : 600;
  const files: string[] = [];
  const sources = ['/usr/bin', '/usr/lib', path.resolve(__dirname, '../node_modules')];
  for (const s of sources) {
    const list: string[] = [];
    collect(s, perSource, list);
    files.push(...list);
  }
  const clamd = await benchClamd();
  const deps: AnalyzeDeps = { clamd: clamd.addr, feedLookup: memoryFeedLookup(parsePlainHashList('', 'fp')) };
  const levels: Record<string, number> = {};
  const byType: Record<string, number> = {};
  const fired: Record<string, number> = {};
  const flagged: string[] = [];
  const t0 = Date.now();
  try {
    for (const f of files) {
      const r = await analyze({ content: readFileSync(f), name: path.basename(f), scanType: 'file' }, deps);
      const level = r.safetyScore.threatLevel;
      levels[level] = (levels[level] ?? 0) + 1;
      byType[r.fileType] = (byType[r.fileType] ?? 0) + 1;
      if (level !== 'Clean' && level !== 'Informational') {
        const ids = Object.values(r.engines).flatMap((e) => e.findings.filter((x) => x.severity !== 'info' && x.severity !== 'low').map((x) => `${e.engine}:${x.id}`));
        for (const id of new Set(ids)) fired[id] = (fired[id] ?? 0) + 1;
        flagged.push(`${level.padEnd(10)} ${String(r.safetyScore.score).padStart(3)} ${f}  [${[...new Set(ids)].join(', ')}]`);
      }
    }
  } finally {
    await clamd.stop();
  }
  console.log(`benign files scanned: ${files.length} (${sources.join(', ')}) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  console.log(`file types: ${JSON.stringify(byType)}`);
  console.log(`verdicts: ${JSON.stringify(levels)}`);
  console.log(`false positives (Suspicious or Malicious): ${flagged.length} of ${files.length} (${((100 * flagged.length) / Math.max(1, files.length)).toFixed(2)}%)`);
  console.log(`by engine:finding: ${JSON.stringify(fired)}`);
  for (const l of flagged.slice(0, 40)) console.log(`  ${l}`);
}
