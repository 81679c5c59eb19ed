/**
 * EXPERIMENT, not shipped (research/README.md, "Frozen contextual encoder"
 * (2026-11-23)"): does a frozen contextual sentence encoder (all-MiniLM-L6-v2, mean-pooled) with a
 * small trained head generalise to unseen sources better than the n-gram model? Same
 * leave-one-source-out protocol as the third round (commit a76a9e9, scripts/train-pi-semantic.ts).
 *
 *   npx tsx scripts/build-detection-data.ts --out DIR
 *   npx tsx research/experiment-pi-encoder.ts --data DIR --dump DIR/enc-items.jsonl [--per-source 400]
 *   OPENBLAS_NUM_THREADS=1 nice -n 10 VENV/bin/python research/experiment-pi-encoder-embed.py \
 *     MODEL_DIR DIR/enc-items.jsonl DIR/enc128 128          # and DIR/enc256 256
 *   npx tsx research/experiment-pi-encoder.ts --data DIR --emb DIR/enc128 [--per-source 400]
 * The full training set: --per-source 100000 in both steps (embed with --onnx for speed). The
 * n-gram scores are cached in DIR/enc-ngram-loso-<per-source>.json (delete it after a new build).
 * Another model's out-of-group logits (docs: "fine-tuned encoder experiment";
 * research/experiment-pi-finetune.py) against the n-gram fitted on the same groups of folds:
 *   npx tsx research/experiment-pi-encoder.ts --data DIR --per-source N --groups GROUPS.json --scores SCORES.json
 * (n-gram scores cached in DIR/enc-ngram-groups-<per-source>-<groups file name>).
 *
 * Data: split `train` only (project seeds + public corpus, in-the-wild jailbreaks excluded as in the
 * third round), a deterministic subsample of at most --per-source texts per (source, label) (by
 * SHA-256 of the id). Every public source is one fold, the project seeds five folds by group; each
 * fold is scored by models fitted on all other folds. Pooled scores Platt-calibrated (classes
 * weighed equally); for each worst-source FPR cap, the lowest threshold on the third round's grid
 * (0.50..0.99) at which no benign source (sources under 100 texts pooled) exceeds the cap, and
 * the macro recall over attack sources there. Compared: the n-gram model (shipped features, one
 * logistic model, as the third round's yardstick) on the same texts, the encoder with a logistic
 * head and with a 16-unit tanh network, and the two-input logistic stack of n-gram and encoder
 * logits. A text's score is its worst window. Deterministic. Reads no held-out text.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CHUNK_CHARS, chunks, classifierText, features } from '../src/scan/engines/payload/pi-classifier';
import { balance, fit, logit, platt, sigmoid, type Fitted } from '../scripts/_logreg';
import { arg } from '../scripts/build-detection-data';
import { HARD_BENIGN_PROMPTS } from '../test/unit/scan/detection/hard-benign-prompts';

interface Rec { id: string; split: string; group?: string; source?: string; label: number; evasion?: string | null; text: string }

const FIXTURES = path.join(__dirname, '..', 'test', 'fixtures', 'payload', 'prompt-injection.jsonl');
const OPAQUE = new Set(['base64', 'hex', 'url', 'rot13']);
const EXCLUDED_SOURCES = new Set(['inthewild-jailbreaks']);
const NGRAM_OPTIONS = { epochs: 12, l2: 1e-5, lr: 0.5 };
const SMALL_SOURCE = 100;
const CAPS = [0.01, 0.02, 0.03, 0.05];
/** Characters of a text handed to the encoder (it reads at most 4 windows of 256 tokens). */
const ENCODER_CHARS = 16000;
/** Hard benign prompts of the third round: scored under every fold model, reported. */
const HARD_BENIGN = [...HARD_BENIGN_PROMPTS, 'Forget everything about the old design and draw a new logo.'];

interface Candidate { name: string; hidden: number; epochs: number; l2: number; lr: number }
const CANDIDATES: Candidate[] = [
  { name: 'encoder, logistic', hidden: 0, epochs: 30, l2: 1e-4, lr: 0.02 },
  { name: 'encoder, logistic, l2 1e-2', hidden: 0, epochs: 30, l2: 1e-2, lr: 0.02 },
  { name: 'encoder, 16-unit network', hidden: 16, epochs: 30, l2: 1e-4, lr: 0.01 },
];

const read = (file: string): Rec[] => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec);
const hash = (s: string): number => createHash('sha256').update(s).digest().readUInt32BE(0);
const foldOf = (r: Rec): string => r.source ?? `project-${hash(`fold:${r.group ?? r.id}`) % 5}`;

/** Training records, subsampled: at most `per` per (fold, label), the lowest hashes of the id. */
function trainingRecords(data: string, per: number): Array<{ rec: Rec; fold: string }> {
  const project = read(FIXTURES).filter((r) => r.split === 'train' && !(r.label === 1 && r.evasion && OPAQUE.has(r.evasion)));
  const publicRecs = read(path.join(data, 'pi.jsonl')).filter((r) => r.split === 'train' && !EXCLUDED_SOURCES.has(r.source ?? ''));
  const byKey = new Map<string, Array<{ rec: Rec; fold: string }>>();
  for (const rec of [...project, ...publicRecs]) {
    const fold = foldOf(rec);
    const key = `${fold}:${rec.label}`;
    byKey.set(key, [...(byKey.get(key) ?? []), { rec, fold }]);
  }
  const out: Array<{ rec: Rec; fold: string }> = [];
  for (const key of [...byKey.keys()].sort()) {
    const all = byKey.get(key)!;
    out.push(...all.map((x) => ({ x, h: hash(`sub:${x.rec.id}`) })).sort((a, b) => a.h - b.h).slice(0, per).map((x) => x.x));
  }
  return out;
}

interface Item { rec: Rec; fold: string; windows: Float64Array[] }
interface Example { x: Float64Array; y: number; w: number; fold: string }

/** Window embeddings written by experiment-pi-encoder-embed.py: BASE.f32 (rows of dims) + BASE.json. */
function loadEmbeddings(base: string): { dims: number; windows: Map<string, Float64Array[]> } {
  const meta = JSON.parse(readFileSync(`${base}.json`, 'utf8')) as { dims: number; ids: string[] };
  const buf = readFileSync(`${base}.f32`);
  const all = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  const windows = new Map<string, Float64Array[]>();
  meta.ids.forEach((id, row) => windows.set(id, [...(windows.get(id) ?? []), Float64Array.from(all.subarray(row * meta.dims, (row + 1) * meta.dims))]));
  return { dims: meta.dims, windows };
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
  // Each fold weighs by the square root of its size and both classes the same in total.
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

interface Head { mean: Float64Array; std: Float64Array; w1: Float64Array; b1: Float64Array; w2: Float64Array; b2: number; hidden: number }

/** Standardisation + logistic model or tanh network fitted with Adam, fixed seeds and order. */
function fitHead(exs: Example[], c: Candidate): Head {
  const n = exs[0].x.length;
  const mean = new Float64Array(n);
  const std = new Float64Array(n);
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
  return { mean, std, w1, b1, w2, b2, hidden: H };
}

function headLogit(m: Head, x: Float64Array): number {
  const n = x.length;
  let z = m.b2;
  if (m.hidden) {
    for (let h = 0; h < m.hidden; h++) {
      let a = m.b1[h];
      for (let i = 0; i < n; i++) a += m.w1[h * n + i] * ((x[i] - m.mean[i]) / m.std[i]);
      z += m.w2[h] * Math.tanh(a);
    }
  } else for (let i = 0; i < n; i++) z += m.w2[i] * ((x[i] - m.mean[i]) / m.std[i]);
  return z;
}

const textLogit = (m: Head, windows: Float64Array[]): number => Math.max(-50, ...windows.map((x) => headLogit(m, x)));

interface Scored { p: number; y: number; source: string }
interface Raw { z: number; y: number; source: string; id: string }
interface Loso { raw: Raw[]; hardZ: number[][] }

/**
 * Out-of-fold logits of the n-gram logistic model (as the third round's yardstick): each held-out
 * unit (a fold, or a group of folds under --groups) scored by a model fitted on all other units.
 */
function ngramLoso(items: Item[], units: string[], unitOf: (it: Item) => string): Loso {
  const ex = (r: Rec): Array<{ x: Map<number, number>; y: number; w: number }> => {
    const t = classifierText(r.text);
    const w = r.source ? 1 : 3;
    if (r.label === 0 && t.length > CHUNK_CHARS) return chunks(t).map((c) => ({ x: features(c), y: 0, w }));
    return [{ x: features(t.slice(0, 8 * CHUNK_CHARS)), y: r.label, w }];
  };
  const all = items.map((it) => ex(it.rec));
  const raw: Raw[] = [];
  const hardZ: number[][] = [];
  const textZ = (m: Fitted, text: string): number => Math.max(-50, ...chunks(classifierText(text)).map((c) => logit(m, features(c))));
  for (const u of units) {
    const m = fit(balance(items.flatMap((it, i) => (unitOf(it) !== u ? all[i].map((e) => ({ ...e })) : []))), NGRAM_OPTIONS);
    for (const it of items.filter((i) => unitOf(i) === u)) raw.push({ z: textZ(m, it.rec.text), y: it.rec.label, source: it.fold, id: it.rec.id });
    hardZ.push(HARD_BENIGN.map((t) => textZ(m, t)));
  }
  return { raw, hardZ };
}

function headLoso(items: Item[], folds: string[], hard: Float64Array[][], c: Candidate): Loso {
  const raw: Raw[] = [];
  const hardZ: number[][] = [];
  for (const f of folds) {
    const m = fitHead(examplesOf(items.filter((i) => i.fold !== f)), c);
    for (const it of items.filter((i) => i.fold === f)) raw.push({ z: textLogit(m, it.windows), y: it.rec.label, source: f, id: it.rec.id });
    hardZ.push(hard.map((w) => textLogit(m, w)));
  }
  return { raw, hardZ };
}

/**
 * Logistic regression on a few dense inputs (gradient descent, classes weighed equally), fitted on
 * standardised inputs and returned on the raw scale: out-of-group n-gram logits spread to +-50,
 * where plain steps of 0.05 on raw logits oscillate instead of converging.
 */
function stack(raw: number[][], ys: number[]): number[] {
  const k = raw[0].length;
  const mu = Array.from({ length: k }, (_, j) => raw.reduce((a, x) => a + x[j], 0) / raw.length);
  const sd = Array.from({ length: k }, (_, j) => Math.sqrt(raw.reduce((a, x) => a + (x[j] - mu[j]) ** 2, 0) / raw.length) || 1);
  const xs = raw.map((x) => x.map((v, j) => (v - mu[j]) / sd[j]));
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
  return [...w.slice(0, k).map((v, j) => v / sd[j]), w[k] - w.slice(0, k).reduce((a, v, j) => a + (v * mu[j]) / sd[j], 0)];
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

/** Pooled ROC AUC of the raw logits (ties count half). */
function auc(raw: Raw[]): number {
  const s = [...raw].sort((a, b) => a.z - b.z);
  let rank = 0;
  let sumPos = 0;
  for (let i = 0; i < s.length; ) {
    let j = i;
    while (j < s.length && s[j].z === s[i].z) j++;
    const avg = (i + j + 1) / 2;
    for (let k = i; k < j; k++) if (s[k].y === 1) sumPos += avg;
    rank = j;
    i = j;
  }
  const pos = raw.filter((r) => r.y === 1).length;
  const neg = rank - pos;
  return (sumPos - (pos * (pos + 1)) / 2) / (pos * neg);
}

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

/**
 * Macro recall at the lowest threshold over every observed score (no grid) meeting each cap: the
 * third round's grid stops at 0.99, where saturated Platt probabilities hide the differences.
 */
function exactCells(name: string, scored: Scored[]): string[] {
  const ts = [...new Set(scored.map((s) => s.p))].sort((a, b) => a - b);
  return CAPS.map((cap) => {
    // Worst-source FPR only falls as the threshold rises: bisect for the lowest that meets the cap.
    let lo = 0;
    let hi = ts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (Math.max(...bySource(scored, ts[mid]).fpr.values()) <= cap) hi = mid;
      else lo = mid + 1;
    }
    if (lo === ts.length) return 'none';
    const b = bySource(scored, ts[lo]);
    if (cap === 0.03) console.log(`  ${name}, any threshold, 3% cap (p ${ts[lo].toFixed(4)}): recall ${[...b.recall].map(([k, v]) => `${k} ${r3(v)}`).join(', ')}`);
    return r3([...b.recall.values()].reduce((a, x) => a + x, 0) / b.recall.size).toFixed(3);
  });
}

/** One table row: macro recall at the lowest grid threshold meeting each worst-source FPR cap. */
function evaluate(name: string, loso: Loso): string {
  const cal = platt(loso.raw, true);
  const scored = loso.raw.map((s) => ({ p: sigmoid(cal.a * s.z + cal.c), y: s.y, source: s.source }));
  const cells: string[] = [];
  for (const cap of CAPS) {
    let cell = 'none';
    for (let t = 0.5; t <= 0.995; t += 0.01) {
      const b = bySource(scored, t);
      if (Math.max(...b.fpr.values()) <= cap) {
        const macro = [...b.recall.values()].reduce((a, x) => a + x, 0) / b.recall.size;
        cell = `${r3(macro).toFixed(3)} (t ${t.toFixed(2)})`;
        if (cap === 0.03) console.log(`  ${name} at ${t.toFixed(2)}: recall ${[...b.recall].map(([k, v]) => `${k} ${r3(v)}`).join(', ')}\n    fpr ${[...b.fpr].map(([k, v]) => `${k} ${r3(v)}`).join(', ')}`);
        break;
      }
    }
    cells.push(cell);
  }
  const hardMax = Math.max(...loso.hardZ.flat().map((z) => sigmoid(cal.a * z + cal.c)));
  return `| ${name} | ${cells.join(' | ')} | ${exactCells(name, scored).join(' | ')} | ${r3(auc(loso.raw)).toFixed(3)} | ${hardMax.toFixed(2)} |`;
}

/**
 * How often a cascade would call the encoder: the share of texts, per class, whose calibrated
 * n-gram probability lies between 0.3 and the grid threshold of the 3% cap (the "uncertain" band).
 */
function uncertainShare(loso: Loso): string {
  const cal = platt(loso.raw, true);
  const scored = loso.raw.map((s) => ({ p: sigmoid(cal.a * s.z + cal.c), y: s.y, source: s.source }));
  let t = 0.99;
  for (let g = 0.5; g <= 0.995; g += 0.01) {
    if (Math.max(...bySource(scored, g).fpr.values()) <= 0.03) {
      t = g;
      break;
    }
  }
  const share = (y: number): string => {
    const xs = scored.filter((s) => s.y === y);
    return r3(xs.filter((s) => s.p >= 0.3 && s.p < t).length / xs.length).toFixed(3);
  };
  return `  n-gram uncertain band [0.30, ${t.toFixed(2)}): benign ${share(0)}, attacks ${share(1)}`;
}

function main(): void {
  const data = arg('--data', '');
  if (!data) throw new Error('--data DIR is required');
  const per = Number(arg('--per-source', '400'));
  const recs = trainingRecords(data, per);
  const dump = arg('--dump', '');
  if (dump) {
    // fold, label and project are for experiment-pi-finetune.py (the embedder reads id and text).
    const lines = recs.map(({ rec, fold }) => JSON.stringify({ id: rec.id, text: classifierText(rec.text).slice(0, ENCODER_CHARS), fold, label: rec.label, project: !rec.source }));
    HARD_BENIGN.forEach((t, i) => lines.push(JSON.stringify({ id: `hard-benign-${i}`, text: classifierText(t), fold: null, label: 0, project: false })));
    writeFileSync(dump, `${lines.join('\n')}\n`);
    const counts = new Map<string, number>();
    for (const { rec, fold } of recs) {
      const k = `${fold.startsWith('project') ? 'project' : fold}:${rec.label}`;
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    console.log(`${recs.length} training texts (+${HARD_BENIGN.length} hard benign) -> ${dump}`);
    for (const [k, v] of [...counts].sort()) console.log(`  ${k} ${v}`);
    return;
  }
  const scoresFile = arg('--scores', '');
  if (scoresFile) return compareScores(data, per, recs, scoresFile);
  const embBase = arg('--emb', '');
  if (!embBase) throw new Error('--dump FILE, --emb BASE or --scores FILE is required');
  const emb = loadEmbeddings(embBase);
  const items: Item[] = recs.map(({ rec, fold }) => {
    const windows = emb.windows.get(rec.id);
    if (!windows) throw new Error(`no embedding for ${rec.id}: dump and embed again with the same --per-source`);
    return { rec, fold, windows };
  });
  const hard = HARD_BENIGN.map((_, i) => emb.windows.get(`hard-benign-${i}`)!);
  const folds = [...new Set(items.map((i) => i.fold))].sort();
  const attacks = items.filter((i) => i.rec.label === 1).length;
  console.log(`${items.length} texts (${attacks} attacks), ${folds.length} folds, ${emb.dims}-dim windows from ${path.basename(embBase)}`);
  console.log('| model | grid: worst FPR <= 1% | <= 2% | <= 3% | <= 5% | any threshold: <= 1% | <= 2% | <= 3% | <= 5% | pooled AUC | hard benign max p |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  // The n-gram scores do not depend on the embeddings: cached per subsample.
  const cache = path.join(data, `enc-ngram-loso-${per}.json`);
  const ngram = existsSync(cache) ? (JSON.parse(readFileSync(cache, 'utf8')) as Loso) : ngramLoso(items, folds, (it) => it.fold);
  writeFileSync(cache, JSON.stringify(ngram));
  console.log(evaluate('n-gram (shipped features)', ngram));
  console.log(uncertainShare(ngram));
  for (const c of CANDIDATES) {
    const enc = headLoso(items, folds, hard, c);
    console.log(evaluate(c.name, enc));
    console.log(evaluate(...stacked(ngram, enc, `n-gram + ${c.name}`)));
  }
}

/** The two-input logistic stack of the n-gram logits and another model's (same texts, same order). */
function stacked(ngram: Loso, other: Loso, name: string): [string, Loso] {
  const st = stack(ngram.raw.map((r, i) => [r.z, other.raw[i].z]), ngram.raw.map((r) => r.y));
  const comb = (a: number, b: number): number => st[0] * a + st[1] * b + st[2];
  return [`${name}, stacked (${st.map((v) => v.toFixed(2)).join(' ')})`, {
    raw: ngram.raw.map((r, i) => ({ ...r, z: comb(r.z, other.raw[i].z) })),
    hardZ: ngram.hardZ.map((zs, f) => zs.map((z, h) => comb(z, other.hardZ[f][h]))),
  }];
}

/** Calibrated probability of each hard benign prompt, the highest over the held-out units' models. */
function hardProbabilities(name: string, loso: Loso): string {
  const cal = platt(loso.raw, true);
  const p = HARD_BENIGN.map((_, h) => Math.max(...loso.hardZ.map((zs) => sigmoid(cal.a * zs[h] + cal.c))));
  return `  ${name}: hard benign p (max over models) ${p.map((v) => v.toFixed(2)).join(' ')}`;
}

/**
 * --groups FILE --scores FILE: an external model's out-of-group text logits (e.g.
 * experiment-pi-finetune.py merge: {raw: [{id, z}], hardZ: [per group, per hard benign prompt]})
 * against the n-gram model fitted on the same groups (FILE: fold -> group), by the same metrics.
 */
function compareScores(data: string, per: number, recs: Array<{ rec: Rec; fold: string }>, scoresFile: string): void {
  const groupsFile = arg('--groups', '');
  if (!groupsFile) throw new Error('--scores needs --groups FILE (fold -> group) the scores were made with');
  const groupOf = JSON.parse(readFileSync(groupsFile, 'utf8')) as Record<string, number>;
  const ext = JSON.parse(readFileSync(scoresFile, 'utf8')) as { raw: Array<{ id: string; z: number }>; hardZ: number[][] };
  const items: Item[] = recs.map(({ rec, fold }) => ({ rec, fold, windows: [] }));
  const unitOf = (it: Item): string => {
    if (groupOf[it.fold] === undefined) throw new Error(`fold ${it.fold} has no group in ${groupsFile}`);
    return String(groupOf[it.fold]);
  };
  const units = [...new Set(items.map(unitOf))].sort((a, b) => Number(a) - Number(b));
  if (ext.hardZ.length !== units.length) throw new Error(`${scoresFile}: ${ext.hardZ.length} hard benign rows for ${units.length} groups`);
  const cache = path.join(data, `enc-ngram-groups-${per}-${path.basename(groupsFile)}`);
  const ngram = existsSync(cache) ? (JSON.parse(readFileSync(cache, 'utf8')) as Loso) : ngramLoso(items, units, unitOf);
  writeFileSync(cache, JSON.stringify(ngram));
  const zOf = new Map(ext.raw.map((r) => [r.id, r.z]));
  const other: Loso = {
    raw: ngram.raw.map((r) => {
      const z = zOf.get(r.id);
      if (z === undefined) throw new Error(`${scoresFile} has no score for ${r.id}: same --per-source as the dump?`);
      return { ...r, z };
    }),
    hardZ: ext.hardZ,
  };
  const name = path.basename(scoresFile, '.json');
  const attacks = items.filter((i) => i.rec.label === 1).length;
  console.log(`${items.length} texts (${attacks} attacks), ${units.length} held-out groups of folds (${groupsFile}), external logits ${scoresFile}`);
  console.log('| model | grid: worst FPR <= 1% | <= 2% | <= 3% | <= 5% | any threshold: <= 1% | <= 2% | <= 3% | <= 5% | pooled AUC | hard benign max p |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  const rows: Array<[string, Loso]> = [['n-gram (shipped features)', ngram], [name, other], stacked(ngram, other, `n-gram + ${name}`)];
  for (const [n, l] of rows) console.log(evaluate(n, l));
  console.log(uncertainShare(ngram));
  for (const [n, l] of rows) console.log(hardProbabilities(n, l));
}

if (require.main === module) main();
