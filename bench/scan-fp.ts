/**
 * `npm run bench -- scan-fp [--limit N]`: false positives of the whole analyze() pipeline on
 * benign files from this machine (/usr/bin, /usr/lib, node_modules). Prints how many verdicts are
 * worse than Informational and which engine/finding fired.
 */
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { analyze, type AnalyzeDeps } from '../src/scan/analyze';
import { memoryFeedLookup, parsePlainHashList } from '../src/scan/engines/feeds';
import { benchClamd, MB } from './_scan-common';

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

export async function run(args: string[]): Promise<void> {
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
