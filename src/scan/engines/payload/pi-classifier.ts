/**
 * The learned prompt-injection classifier: logistic regression over hashed word unigrams,
 * word bigrams and character 3-5-grams of words, trained by scripts/train-prompt-injection.ts
 * on test/fixtures/payload (train split). Weights ship in src/scan/models/prompt-injection.json.
 * Feature extraction lives here and is imported by the training scripts, so training and
 * inference cannot drift apart. Two feature versions: 1 reads ASCII words only (the script
 * model, src/scan/models/script-ml.json, uses it), 2 reads every script; a model file names
 * its version (`features`, 1 when absent), and the model reads text with that version.
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

export type FeatureVersion = 1 | 2;

export interface PromptInjectionModel {
  version: number;
  featureBits: number;
  /** Feature version the weights were fitted on; absent means 1. */
  features?: FeatureVersion;
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

/** Character classes of version 2, one byte per UTF-16 code unit (built on first use). */
const LETTER = 1;
const WORD = 2;
const MARK = 4;
/** Scripts written without spaces between words: one token per character (plus its marks). */
const SOLO = 8;
const SPACE = 16;
let classes: Uint8Array | undefined;

function charClasses(): Uint8Array {
  if (classes) return classes;
  const t = new Uint8Array(0x10000);
  const solo = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
  for (let c = 0; c < 0x10000; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    const ch = String.fromCharCode(c);
    if (/\s/.test(ch)) t[c] = SPACE;
    else if (/\p{L}/u.test(ch)) t[c] = LETTER | WORD;
    else if (/\p{M}/u.test(ch)) t[c] = MARK | WORD;
    else if (/\p{N}/u.test(ch) || c === 95 || c === 39) t[c] = WORD;
    if (t[c] & (LETTER | MARK) && solo.test(ch)) t[c] |= SOLO;
  }
  classes = t;
  return t;
}

/**
 * End of the token starting at `i` under version 2: a run of letters, marks and digits (at most
 * MAX_TOKEN), one letter of a script without spaces with its marks, a surrogate pair, or one
 * other character.
 */
function tokenEnd2(text: string, i: number, t: Uint8Array): number {
  const n = text.length;
  const c = text.charCodeAt(i);
  const k = t[c];
  let end = i + 1;
  if (k & SOLO) {
    while (end < n && end - i < MAX_TOKEN && t[text.charCodeAt(end)] & MARK) end++;
  } else if (k & WORD) {
    while (end < n && end - i < MAX_TOKEN && (t[text.charCodeAt(end)] & (WORD | SOLO)) === WORD) end++;
  } else if (c >= 0xd800 && c <= 0xdbff && end < n) {
    const d = text.charCodeAt(end);
    if (d >= 0xdc00 && d <= 0xdfff) end++;
  }
  return end;
}

/**
 * Calls `add` with the hashed features of one chunk (already passed through classifierText):
 * word unigrams (seed 1), word bigrams (seed 2), and character 3-, 4- and 5-grams of each
 * space-padded word that starts with a letter (seeds 13-15). Version 1: tokens are runs of
 * [a-z0-9_'] of at most 30 characters, or any single other non-space character. Version 2:
 * runs of Unicode letters, marks, digits, _ and ' (a Hindi, Russian or accented French word is
 * one token), except that Han, kana, Thai, Lao, Khmer and Myanmar letters are one token each
 * (so word bigrams there are character bigrams); on ASCII text both versions give the same
 * features. No substrings are built.
 */
export function forEachFeature(text: string, add: (bucket: number) => void, version: FeatureVersion = 1): void {
  let prev = -1;
  let i = 0;
  const n = text.length;
  const pad = new Uint16Array(MAX_NGRAM_WORD + 2);
  const t = version === 2 ? charClasses() : undefined;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (t ? t[c] & SPACE : isSpace(c)) {
      i++;
      continue;
    }
    let end = i + 1;
    if (t) end = tokenEnd2(text, i, t);
    else if (isWordChar(c)) {
      while (end < n && end - i < MAX_TOKEN && isWordChar(text.charCodeAt(end))) end++;
    }
    let h = fnv(FNV0, 1);
    for (let j = i; j < end; j++) h = fnv(h, text.charCodeAt(j));
    add(h & MASK);
    if (prev !== -1) add(fnv(fnv(fnv(FNV0, 2), prev), h) & MASK);
    prev = h;
    const len = end - i;
    if (len >= 2 && len <= MAX_NGRAM_WORD && (t ? (t[c] & (LETTER | SOLO)) === LETTER : c >= 97 && c <= 122)) {
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
export function features(text: string, version: FeatureVersion = 1): Map<number, number> {
  const counts = new Map<number, number>();
  forEachFeature(text, (k) => counts.set(k, (counts.get(k) ?? 0) + 1), version);
  let norm = 0;
  for (const v of counts.values()) norm += v * v;
  norm = Math.sqrt(norm) || 1;
  for (const [k, v] of counts) counts.set(k, v / norm);
  return counts;
}

/** What a chunk needs to be scored: version 1 reads only ASCII words, version 2 any two letters. */
const READABLE: Record<FeatureVersion, RegExp> = { 1: /[a-z]{2}/i, 2: /\p{L}\P{L}*\p{L}/u };

/**
 * Splits text into chunks of at most CHUNK_CHARS, preferring line and word boundaries, and keeps
 * those the features of `version` can read; `unread` counts the chunks dropped although they hold
 * two letters (text in a script the version has no features for, e.g. Hindi under version 1).
 */
export function chunks(text: string, size = CHUNK_CHARS, version: FeatureVersion = 1, unread?: { chunks: number }): string[] {
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
    if (READABLE[version].test(piece)) out.push(piece);
    else if (unread && READABLE[2].test(piece)) unread.chunks++;
    start = end;
  }
  return out;
}

export class LogisticModel {
  private readonly w: Float32Array;
  /** The feature version the weights were fitted on, as the model file says: text is read with it. */
  readonly features: FeatureVersion;
  constructor(readonly model: PromptInjectionModel) {
    if (model.featureBits !== FEATURE_BITS) throw new Error(`model has ${model.featureBits} feature bits, code expects ${FEATURE_BITS}`);
    const declared: unknown = model.features ?? 1;
    if (declared !== 1 && declared !== 2) throw new Error(`model was fitted on feature version ${String(declared)}, code reads versions 1 and 2`);
    this.features = declared;
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
    }, this.features);
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

  /** Highest chunk probability of a whole payload; `unread` counts the chunks it cannot read. */
  scoreText(text: string, signal?: BudgetSignal, unread?: { chunks: number }): number {
    let best = 0;
    let n = 0;
    for (const c of chunks(classifierText(text), CHUNK_CHARS, this.features, unread)) {
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
