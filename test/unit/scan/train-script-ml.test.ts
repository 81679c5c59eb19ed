import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BenignPackage } from '../../../scripts/build-benign-corpus';
import { benignLimits, benignTrain, languageLevels, trainingPackages } from '../../../scripts/train-script-ml';

// The corpus builder the trainer imports reads parquet (an ES module Jest cannot load); not used here.
jest.mock('hyparquet', () => ({}));

describe('train-script-ml: benign corpus sample', () => {
  let cache: string;
  const packages: BenignPackage[] = [];
  const put = (text: string): string => {
    const sha = createHash('sha256').update(text).digest('hex');
    mkdirSync(path.join(cache, 'files', sha.slice(0, 2)), { recursive: true });
    writeFileSync(path.join(cache, 'files', sha.slice(0, 2), sha), text);
    return sha;
  };
  beforeAll(() => {
    cache = mkdtempSync(path.join(tmpdir(), 'benign-cache-'));
    // Three packages of 300 Python files each and one of 600 shell files, all in the train split;
    // one validation package that must never be sampled.
    for (let p = 0; p < 3; p++) {
      packages.push({ ecosystem: 'pypi', name: `py${p}`, version: '1', licence: 'MIT', split: 'train', files: Array.from({ length: 300 }, (_, i) => [`m${i}.py`, put(`import os\nx${p}_${i} = ${i}\n`), 'python']) });
    }
    packages.push({ ecosystem: 'debian', name: 'sh', version: '1', licence: 'GPL', split: 'train', files: Array.from({ length: 600 }, (_, i) => [`s${i}.sh`, put(`#!/bin/sh\necho ${i}\n`), 'shell']) });
    packages.push({ ecosystem: 'pypi', name: 'val', version: '1', licence: 'MIT', split: 'validation', files: [['v.py', put('print(1)\n'), 'python']] });
  });
  afterAll(() => rmSync(cache, { recursive: true, force: true }));

  const count = (argv: string[], source: string): number => benignTrain(packages, cache, benignLimits(argv)).filter((r) => r.source === source).length;

  it('takes 500 files per language by default, spread over packages', () => {
    const recs = benignTrain(packages, cache, benignLimits([]));
    const python = recs.filter((r) => r.source === 'benign-python');
    expect(python).toHaveLength(500);
    for (let p = 0; p < 3; p++) expect(python.filter((r) => r.id.startsWith(`benign:pypi:py${p}/`)).length).toBeGreaterThanOrEqual(166);
    expect(recs.filter((r) => r.source === 'benign-shell')).toHaveLength(500);
    expect(recs.some((r) => r.id.includes('pypi:val/'))).toBe(false);
  });

  it('--benign LANG=N|all takes more (or all) files of that language and leaves the others as they were', () => {
    expect(count(['--benign', 'python=all'], 'benign-python')).toBe(900);
    expect(count(['--benign', 'python=700'], 'benign-python')).toBe(700);
    expect(count(['--benign', 'python=all'], 'benign-shell')).toBe(500);
    expect(count(['--benign', 'python=all', '--benign', 'shell=all'], 'benign-shell')).toBe(600);
    expect(() => benignLimits(['--benign', 'python=most'])).toThrow(/LANG=N or LANG=all/);
    expect(() => benignLimits(['--benign'])).toThrow(/LANG=N or LANG=all/);
  });

  it('--with-fresh: the fresh split\'s packages are sampled as train packages', () => {
    const fresh: BenignPackage[] = [{ ecosystem: 'debian', name: 'fresh-sh', version: '1', licence: 'GPL', split: 'fresh', files: Array.from({ length: 50 }, (_, i) => [`f${i}.sh`, put(`#!/bin/sh\nfresh ${i}\n`), 'shell']) }];
    const recs = benignTrain(trainingPackages(packages, fresh), cache, benignLimits(['--benign', 'shell=all']));
    expect(recs.filter((r) => r.source === 'benign-shell')).toHaveLength(650);
    expect(recs.filter((r) => r.id.startsWith('benign:debian:fresh-sh/'))).toHaveLength(50);
    // Without the fresh packages nothing of them is read.
    expect(benignTrain(packages, cache, benignLimits(['--benign', 'shell=all'])).some((r) => r.id.includes('fresh-sh'))).toBe(false);
  });
});

describe('train-script-ml: per-language medium levels', () => {
  const files = (type: string, n: number, high: number[], short = false): Array<{ type: string; short: boolean; p: number }> =>
    Array.from({ length: n }, (_, i) => ({ type, short, p: i < high.length ? high[i] : 0.1 }));
  it('raises a language with enough files until at most 0.1% of them reach its level, and only that language', () => {
    // 1,000 shell files, four of which the model scores 0.91-0.977; 1,000 Python files with one at 0.95.
    const levels = languageLevels([...files('shell', 1000, [0.91, 0.93, 0.96, 0.977]), ...files('python', 1000, [0.95])], 0.96);
    // One file of 1,000 may reach the level: the one at 0.977 does from 0.965.
    expect(levels).toEqual({ shell: 0.965 });
  });
  it('leaves a language with fewer than 300 files, and short texts already above the short level, alone', () => {
    expect(languageLevels(files('powershell', 150, [0.99, 0.99, 0.99]), 0.96)).toEqual({});
    // Short texts count only from the short level: 0.95 one-liners do not raise the level.
    expect(languageLevels(files('batch', 400, [0.95, 0.95, 0.95], true), 0.96)).toEqual({});
  });
});
