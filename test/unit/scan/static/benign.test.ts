/**
 * False-positive check: every static engine stays at 'low' or below on a deterministic sample of
 * real benign files from this machine (/usr/bin binaries and scripts, node_modules files).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { identify } from '../../../../src/scan/filetype';
import type { Engine, Finding } from '../../../../src/scan/types';
import { engine as pe } from '../../../../src/scan/engines/pe';
import { engine as elf } from '../../../../src/scan/engines/elf';
import { engine as office } from '../../../../src/scan/engines/office';
import { engine as pdf } from '../../../../src/scan/engines/pdf';
import { engine as script } from '../../../../src/scan/engines/script';
import { engine as behavior } from '../../../../src/scan/engines/behavior';
import { engine as ml } from '../../../../src/scan/engines/ml';
import { SEVERITY_RANK } from '../../../../src/scan/types';
import { subject } from './helpers';

const ENGINES: Engine[] = [pe, elf, office, pdf, script, behavior, ml];
const MAX = 16 * 1024 * 1024;

function regularFiles(dir: string, accept: (p: string) => boolean, limit: number, out: string[] = []): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  } catch {
    return out;
  }
  for (const e of entries) {
    if (out.length >= limit) break;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) regularFiles(p, accept, limit, out);
    else if (e.isFile() && accept(p)) out.push(p);
  }
  return out;
}

function everyNth<T>(xs: T[], n: number): T[] {
  const step = Math.max(1, Math.floor(xs.length / n));
  return xs.filter((_x, i) => i % step === 0).slice(0, n);
}

function sample(): string[] {
  const small = (p: string): boolean => {
    const s = fs.statSync(p);
    return s.size > 0 && s.size <= MAX;
  };
  const usrBin = everyNth(regularFiles('/usr/bin', small, 5000), 180);
  const nm = path.join(__dirname, '..', '..', '..', '..', 'node_modules');
  const nodeFiles = everyNth(regularFiles(nm, (p) => /\.(?:js|cjs|mjs|node|sh|py|html|exe|dll)$/.test(p) && small(p), 20000), 120);
  return [...usrBin, ...nodeFiles];
}

it('no static engine reports above low on >= 200 real benign files', async () => {
  const files = sample();
  expect(files.length).toBeGreaterThanOrEqual(200);
  const hits: string[] = [];
  for (const f of files) {
    const content = fs.readFileSync(f);
    const { fileType } = await identify(content, path.basename(f));
    for (const e of ENGINES) {
      const out = await e.scan(subject(content, fileType, path.basename(f)), { signal: new AbortController().signal, budgetMs: 30_000 });
      const loud = out.findings.filter((x: Finding) => SEVERITY_RANK[x.severity] > SEVERITY_RANK.low);
      for (const x of loud) hits.push(`${f} [${fileType}] ${x.id}:${x.severity} ${x.excerpt ?? ''}`);
    }
  }
  expect(hits).toEqual([]);
}, 300_000);
