/**
 * The learned prompt-injection classifier: logistic regression over hashed word unigrams,
 * word bigrams and character 3-5-grams of words, trained by scripts/train-prompt-injection.ts
 * on test/fixtures/payload (train split). Weights ship in src/scan/models/prompt-injection.json.
 * Feature extraction lives here and is imported by the training script, so training and
 * inference cannot drift apart.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { foldFullwidth, foldHomoglyphs, stripInvisible } from './pi-normalize';

export const FEATURE_BITS = 18;
export const DIM = 1 << FEATURE_BITS;
const MASK = DIM - 1;
/** Chunk size the classifier scores at a time; a payload's score is its worst chunk. */
export const CHUNK_CHARS = 800;

export interface PromptInjectionModel {
  version: number;
  featureBits: number;
  bias: number;
  threshold: number;
  /** [index, weight] pairs for non-zero weights. */
  weights: Array<[number, number]>;
  training: Record<string, unknown>;
}

/** Text as the classifier sees it: invisible characters gone, look-alikes folded, lower case. */
export function classifierText(text: string): string {
  return foldHomoglyphs(foldFullwidth(stripInvisible(text))).toLowerCase();
}

function fnv(h: number, code: number): number {
  return Math.imul(h ^ code, 16777619) >>> 0;
}

const FNV0 = 2166136261;

function hashString(s: string, seed: number): number {
  let h = fnv(FNV0, seed);
  for (let i = 0; i < s.length; i++) h = fnv(h, s.charCodeAt(i));
  return h;
}

/** Sparse, L2-normalised feature vector of one chunk (already passed through classifierText). */
export function features(text: string): Map<number, number> {
  const counts = new Map<number, number>();
  const add = (h: number): void => {
    const k = h & MASK;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  };
  const tokens = text.match(/[a-z0-9_']{1,30}|[^\sa-z0-9_']/g) ?? [];
  let prev = '';
  for (const t of tokens) {
    add(hashString(t, 1));
    if (prev) add(hashString(`${prev} ${t}`, 2));
    prev = t;
    if (t.length >= 2 && /^[a-z]/.test(t)) {
      const w = ` ${t} `;
      for (let n = 3; n <= 5; n++) {
        for (let i = 0; i + n <= w.length; i++) {
          let h = fnv(FNV0, 10 + n);
          for (let j = i; j < i + n; j++) h = fnv(h, w.charCodeAt(j));
          add(h);
        }
      }
    }
  }
  let norm = 0;
  for (const v of counts.values()) norm += v * v;
  norm = Math.sqrt(norm) || 1;
  for (const [k, v] of counts) counts.set(k, v / norm);
  return counts;
}

/** Splits text into chunks of at most CHUNK_CHARS, preferring line and word boundaries. */
export function chunks(text: string, size = CHUNK_CHARS): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    if (end < text.length) {
      const nl = text.lastIndexOf('\n', end);
      if (nl > start + size / 2) end = nl + 1;
      else {
        const sp = text.lastIndexOf(' ', end);
        if (sp > start + size / 2) end = sp + 1;
      }
    }
    const piece = text.slice(start, end);
    if (/[a-z]{2}/i.test(piece)) out.push(piece);
    start = end;
  }
  return out;
}

export class LogisticModel {
  private readonly w: Float32Array;
  constructor(readonly model: PromptInjectionModel) {
    if (model.featureBits !== FEATURE_BITS) throw new Error(`model has ${model.featureBits} feature bits, code expects ${FEATURE_BITS}`);
    this.w = new Float32Array(DIM);
    for (const [i, v] of model.weights) this.w[i] = v;
  }

  get threshold(): number {
    return this.model.threshold;
  }

  /** Probability that one chunk (already classifierText-normalised) is an injection. */
  score(chunk: string): number {
    let z = this.model.bias;
    for (const [k, v] of features(chunk)) z += this.w[k] * v;
    return 1 / (1 + Math.exp(-z));
  }

  /** Highest chunk probability of a whole payload. */
  scoreText(text: string, signal?: AbortSignal): number {
    let best = 0;
    let n = 0;
    for (const c of chunks(classifierText(text))) {
      if ((++n & 63) === 0 && signal?.aborted) throw new Error('payload engine: time budget exhausted');
      const p = this.score(c);
      if (p > best) best = p;
    }
    return best;
  }
}

export const MODEL_PATH = path.join(__dirname, '..', '..', 'models', 'prompt-injection.json');

let loaded: LogisticModel | Error | undefined;

/** The shipped model, loaded once; an Error when the weights file is missing or malformed. */
export function shippedModel(): LogisticModel | Error {
  if (loaded === undefined) {
    try {
      loaded = new LogisticModel(JSON.parse(readFileSync(MODEL_PATH, 'utf8')) as PromptInjectionModel);
    } catch (err) {
      loaded = err instanceof Error ? err : new Error(String(err));
    }
  }
  return loaded;
}
