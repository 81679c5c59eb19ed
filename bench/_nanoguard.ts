/**
 * NanoGuard (PyPI metatronnanoguard 0.1.0), the peer detector of issue 31, for the detection bench.
 * Never a dependency of the service: the bench installs the pinned wheel and the three small
 * packages its scoring needs (tiktoken for the bundled tokenizer, its dependency regex, numpy) with
 * pip into .tools/nanoguard, and bench/nanoguard.py runs the model without torch. Scores are cached
 * there by SHA-256 of the text (the forward pass costs about a second of CPU per text here).
 */
import { spawn, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
const DIR = path.join(ROOT, '.tools', 'nanoguard');
const PKGS = path.join(DIR, 'pkgs');
const PINNED = ['metatronnanoguard==0.1.0', 'tiktoken==0.14.0', 'regex==2026.11.19', 'numpy==2.4.6'];
const CACHE = path.join(DIR, 'scores-0.1.0.json');

/** Installs the pinned packages once; returns why not when pip cannot. */
export function installNanoGuard(): string | undefined {
  const stamp = path.join(PKGS, '.installed');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === PINNED.join('\n')) return undefined;
  const part = `${PKGS}.part`;
  rmSync(part, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
  try {
    execFileSync('python3', ['-m', 'pip', 'install', '--quiet', '--no-deps', '--only-binary=:all:', '--target', part, ...PINNED], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    return String((e as { stderr?: Buffer }).stderr ?? e).trim().split('\n').pop();
  }
  writeFileSync(path.join(part, '.installed'), PINNED.join('\n'));
  rmSync(PKGS, { recursive: true, force: true });
  renameSync(part, PKGS);
  return undefined;
}

const key = (t: string): string => createHash('sha256').update(t).digest('hex');

/**
 * NanoGuard's injection probability per text (cached; undefined for a text not scored), scored by
 * one python process on one core. At most `maxNew` texts not in the cache are scored, in the order
 * of their SHA-256, so the scored rows of a partial run are a uniform sample that later runs extend.
 */
export async function nanoGuardScores(texts: string[], maxNew = Infinity): Promise<Array<number | undefined>> {
  const cache = existsSync(CACHE) ? (JSON.parse(readFileSync(CACHE, 'utf8')) as Record<string, number>) : {};
  const todo = [...new Set(texts.filter((t) => cache[key(t)] === undefined))].sort((a, b) => key(a).localeCompare(key(b))).slice(0, maxNew);
  if (todo.length) {
    console.log(`  NanoGuard: scoring ${todo.length} texts not in ${path.relative(ROOT, CACHE)} (about a second of CPU each)`);
    const child = spawn('python3', [path.join(__dirname, 'nanoguard.py'), path.join(PKGS)], {
      env: { ...process.env, PYTHONPATH: PKGS, OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1' },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    let done = 0;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const lines = out.split('\n');
      out = lines.pop() ?? '';
      for (const l of lines) {
        cache[key(todo[done++])] = Number(JSON.parse(l));
        if (done % 20 === 0) writeFileSync(CACHE, JSON.stringify(cache));
      }
    });
    const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 1)));
    child.stdin.end(todo.map((t) => JSON.stringify(t)).join('\n') + '\n');
    const code = await exited;
    writeFileSync(CACHE, JSON.stringify(cache));
    if (code !== 0 || done !== todo.length) throw new Error(`bench/nanoguard.py exited ${code} after ${done} of ${todo.length} texts`);
  }
  return texts.map((t) => cache[key(t)]);
}

/**
 * The lowest threshold at which the scores of the benign rows flag at most `fpr` of them (a
 * text is flagged at score >= threshold): the peer's operating point at our false-positive rate.
 */
export function thresholdAtFpr(benignScores: number[], fpr: number): number {
  const s = [...benignScores].sort((a, b) => b - a);
  const allowed = Math.floor(fpr * s.length + 1e-9);
  // Flag only scores strictly above the (allowed+1)-th highest benign score.
  const next = s[allowed];
  return next === undefined ? 0 : next + 1e-9;
}
