/**
 * The learned prompt-injection classifier: logistic regression over hashed word unigrams,
 * word bigrams and character 3-5-grams of words, trained by scripts/train-prompt-injection.ts
 * on test/fixtures/payload (train split). Weights ship in src/scan/models/prompt-injection.json.
 * Feature extraction lives here and is imported by the training script, so training and
 * inference cannot drift apart.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { BudgetSignal } from './text';
import { EngineTimeoutError } from '../../runner';
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
/** Words longer than this get no character n-grams (identifiers, base64, hashes say little). */
const MAX_NGRAM_WORD = 24;
const MAX_TOKEN = 30;

function isWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95 || c === 39;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13 || c === 12 || c === 11 || c === 160;
}

/**
 * Calls `add` with the hashed features of one chunk (already passed through classifierText):
 * word unigrams (seed 1), word bigrams (seed 2), and character 3-, 4- and 5-grams of each
 * space-padded word that starts with a letter (seeds 13-15). Tokens are runs of [a-z0-9_'] of
 * at most 30 characters, or any single other non-space character. No substrings are built.
 */
export function forEachFeature(text: string, add: (bucket: number) => void): void {
  let prev = -1;
  let i = 0;
  const n = text.length;
  const pad = new Uint16Array(MAX_NGRAM_WORD + 2);
  while (i < n) {
    const c = text.charCodeAt(i);
    if (isSpace(c)) {
      i++;
      continue;
    }
    let end = i + 1;
    if (isWordChar(c)) {
      while (end < n && end - i < MAX_TOKEN && isWordChar(text.charCodeAt(end))) end++;
    }
    let h = fnv(FNV0, 1);
    for (let j = i; j < end; j++) h = fnv(h, text.charCodeAt(j));
    add(h & MASK);
    if (prev !== -1) add(fnv(fnv(fnv(FNV0, 2), prev), h) & MASK);
    prev = h;
    const len = end - i;
    if (len >= 2 && len <= MAX_NGRAM_WORD && c >= 97 && c <= 122) {
      pad[0] = 32;
      for (let j = 0; j < len; j++) pad[j + 1] = text.charCodeAt(i + j);
      pad[len + 1] = 32;
      const plen = len + 2;
      for (let s = 0; s + 3 <= plen; s++) {
        let g = FNV0;
        for (let k = 0; k < 5 && s + k < plen; k++) {
          g = fnv(g, pad[s + k]);
          if (k >= 2) add(fnv(g, 10 + k + 1) & MASK);
        }
      }
    }
    i = end;
  }
}

/** Sparse, L2-normalised feature vector of one chunk (used by training). */
export function features(text: string): Map<number, number> {
  const counts = new Map<number, number>();
  forEachFeature(text, (k) => counts.set(k, (counts.get(k) ?? 0) + 1));
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
      // Search only inside this window: lastIndexOf on the whole text would rescan from the
      // window back to the start of the payload each time (quadratic on text without newlines).
      const window = text.slice(start, end);
      const nl = window.lastIndexOf('\n');
      if (nl > size / 2) end = start + nl + 1;
      else {
        const sp = window.lastIndexOf(' ');
        if (sp > size / 2) end = start + sp + 1;
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

  private readonly counts = new Float64Array(DIM);
  private readonly touched: number[] = [];

  /**
   * Probability that one chunk (already classifierText-normalised) is an injection. Same
   * arithmetic as `features` + dot product, with a reusable dense accumulator instead of a Map.
   */
  score(chunk: string): number {
    const { counts, touched } = this;
    touched.length = 0;
    forEachFeature(chunk, (k) => {
      if (counts[k] === 0) touched.push(k);
      counts[k] += 1;
    });
    let norm = 0;
    let dot = 0;
    for (const k of touched) {
      const v = counts[k];
      norm += v * v;
      dot += this.w[k] * v;
      counts[k] = 0;
    }
    norm = Math.sqrt(norm) || 1;
    return 1 / (1 + Math.exp(-(this.model.bias + dot / norm)));
  }

  /** Highest chunk probability of a whole payload. */
  scoreText(text: string, signal?: BudgetSignal): number {
    let best = 0;
    let n = 0;
    for (const c of chunks(classifierText(text))) {
      if ((++n & 63) === 0 && signal?.aborted) throw new EngineTimeoutError('payload engine: time budget exhausted');
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
