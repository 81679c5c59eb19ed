/**
 * Training helpers shared by the text classifiers (prompt injection, script ML): sparse
 * L2-regularised logistic regression fitted with AdaGrad SGD, class-balanced example weights,
 * threshold choice on a validation split, Platt scaling, and export of the non-zero weights in
 * the format src/scan/engines/payload/pi-classifier.ts loads. Deterministic (fixed seeds/order).
 */
import { createHash } from 'node:crypto';
import { DIM } from '../src/scan/engines/payload/pi-classifier';

export interface Example { x: Map<number, number>; y: number; w: number }
export interface Fitted { w: Float64Array; b: number }
/**
 * `average`: return the mean of the weights after each epoch of the second half (Polyak
 * averaging), which depends less on the order of the last epoch than the final weights do.
 */
export interface FitOptions { epochs: number; l2: number; lr: number; average?: boolean }

/** Weights each example so both classes count equally. */
export function balance<T extends Example>(exs: T[]): T[] {
  const pos = exs.filter((e) => e.y === 1).length;
  const neg = exs.length - pos;
  for (const e of exs) e.w *= e.y === 1 ? exs.length / (2 * Math.max(1, pos)) : exs.length / (2 * Math.max(1, neg));
  return exs;
}

export function shuffle<T>(a: T[], seed: number): T[] {
  let s = seed;
  const r = [...a];
  for (let i = r.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [r[i], r[j]] = [r[j], r[i]];
  }
  return r;
}

export function fit(exs: Example[], o: FitOptions): Fitted {
  const w = new Float64Array(DIM);
  const g2 = new Float64Array(DIM).fill(1e-8);
  let b = 0;
  let bg2 = 1e-8;
  const from = Math.floor(o.epochs / 2);
  const avg = o.average ? { w: new Float64Array(DIM), b: 0 } : undefined;
  for (let epoch = 0; epoch < o.epochs; epoch++) {
    for (const e of shuffle(exs, 1000 + epoch)) {
      let z = b;
      for (const [k, v] of e.x) z += w[k] * v;
      const p = 1 / (1 + Math.exp(-z));
      const g = (p - e.y) * e.w;
      for (const [k, v] of e.x) {
        const gk = g * v + o.l2 * w[k];
        g2[k] += gk * gk;
        w[k] -= (o.lr * gk) / Math.sqrt(g2[k]);
      }
      bg2 += g * g;
      b -= (o.lr * g) / Math.sqrt(bg2);
    }
    if (avg && epoch >= from) {
      for (let k = 0; k < DIM; k++) avg.w[k] += w[k] / (o.epochs - from);
      avg.b += b / (o.epochs - from);
    }
  }
  return avg ?? { w, b };
}

export function logit(m: Fitted, x: Map<number, number>): number {
  let z = m.b;
  for (const [k, v] of x) z += m.w[k] * v;
  return z;
}

export const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

/** Stable pseudo-random membership of a validation split, by key. */
export function inValidation(key: string, share = 0.2): boolean {
  return createHash('sha256').update(`val:${key}`).digest().readUInt32BE(0) / 2 ** 32 < share;
}

/**
 * Platt scaling: fits p = sigmoid(a * z + c) to validation labels (gradient descent on log loss,
 * with Platt's smoothed targets), so the shipped probability is calibrated.
 */
export function platt(scored: Array<{ z: number; y: number }>, balanced = false): { a: number; c: number } {
  const pos = scored.filter((s) => s.y === 1).length;
  const neg = scored.length - pos;
  const tPos = (pos + 1) / (pos + 2);
  const tNeg = 1 / (neg + 2);
  // Balanced: both classes weigh the same, so the probability does not carry the validation
  // set's class ratio (which says nothing about what users upload).
  const wPos = balanced ? scored.length / (2 * Math.max(1, pos)) : 1;
  const wNeg = balanced ? scored.length / (2 * Math.max(1, neg)) : 1;
  let a = 1;
  let c = 0;
  for (let it = 0; it < 3000; it++) {
    let ga = 0;
    let gc = 0;
    for (const s of scored) {
      const p = sigmoid(a * s.z + c);
      const d = (p - (s.y === 1 ? tPos : tNeg)) * (s.y === 1 ? wPos : wNeg);
      ga += d * s.z;
      gc += d;
    }
    a -= (0.5 * ga) / scored.length;
    c -= (0.5 * gc) / scored.length;
  }
  return { a, c };
}

/** Lowest threshold whose precision on the scored set reaches `target` (never below `min`). */
export function pickThreshold(scored: Array<{ p: number; y: number }>, target: number, min: number): number {
  for (let t = min; t <= 0.99; t += 0.01) {
    const tp = scored.filter((s) => s.p >= t && s.y === 1).length;
    const fp = scored.filter((s) => s.p >= t && s.y === 0).length;
    if (tp + fp > 0 && tp / (tp + fp) >= target) return Math.round(t * 100) / 100;
  }
  return 0.99;
}

export function report(scored: Array<{ p: number; y: number }>, t: number): { precision: number; recall: number; fpr: number; n: number } {
  const tp = scored.filter((s) => s.p >= t && s.y === 1).length;
  const fp = scored.filter((s) => s.p >= t && s.y === 0).length;
  const pos = scored.filter((s) => s.y === 1).length;
  const neg = scored.length - pos;
  const r3 = (x: number): number => Math.round(x * 1000) / 1000;
  return { precision: r3(tp / Math.max(1, tp + fp)), recall: r3(tp / Math.max(1, pos)), fpr: r3(fp / Math.max(1, neg)), n: scored.length };
}

/**
 * Weights of magnitude at least `min` (smaller ones are dropped to keep the shipped file small),
 * rounded, as [index, weight] pairs; the bias folded with Platt's a and c.
 */
export function exportWeights(m: Fitted, scale = { a: 1, c: 0 }, min = 0): { bias: number; weights: Array<[number, number]> } {
  const weights: Array<[number, number]> = [];
  for (let i = 0; i < DIM; i++) {
    const v = Math.round(m.w[i] * scale.a * 1e4) / 1e4;
    if (v !== 0 && Math.abs(v) >= min) weights.push([i, v]);
  }
  return { bias: Math.round((m.b * scale.a + scale.c) * 1e4) / 1e4, weights };
}
