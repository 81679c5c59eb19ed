/**
 * Trains the prompt-injection classifier shipped in src/scan/models/prompt-injection.json.
 *
 *   npx tsx scripts/build-payload-fixtures.ts
 *   npx tsx scripts/build-detection-data.ts     # public training data, local cache
 *   npx tsx scripts/train-prompt-injection.ts [--data DIR] [--errors FILE]
 *
 * `--data`: corpus directory (default .tools/data/detection); `--errors`: writes the chosen
 * candidate's validation misses and false positives (JSON lines) for reading.
 *
 * Data: the `train` split of test/fixtures/payload/prompt-injection.jsonl (project seeds) and the
 * `train` split of <data>/pi.jsonl (public sources listed in datasets/detection/manifest.json:
 * hijacking attacks, deepset's train split, jailbreak templates, benign coding, act-as, role-play,
 * maths, NLP-task and tool-use requests, and benign texts that use the words injections use).
 * Held-out splits are never read. Model: L2-regularised logistic regression over the hashed
 * features of pi-classifier.ts (scripts/_logreg.ts), shipped as the average of a model on every
 * source and one on the project seeds alone.
 * Validation: leave one source out (each public source scored by a model fitted without it, a
 * fifth of the project groups likewise). On those scores each candidate (seed-model share,
 * per-source weighting) is Platt-calibrated, its threshold is the lowest at which no benign source
 * exceeds a 2% false-positive rate, and it must not flag the project's hard benign prompts; the
 * candidate with the best macro recall is refitted on everything with that calibration and
 * threshold. Deterministic.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CHUNK_CHARS, chunks, classifierText, FEATURE_BITS, features, MODEL_PATH, type PromptInjectionModel } from '../src/scan/engines/payload/pi-classifier';
import { balance, exportWeights, fit, inValidation, logit, platt, report, sigmoid, type Example, type Fitted } from './_logreg';
import { dataDir } from './build-detection-data';

interface Rec { id: string; split: string; group?: string; source?: string; label: number; evasion?: string | null; text: string }

const FIXTURES = path.join(__dirname, '..', 'test', 'fixtures', 'payload', 'prompt-injection.jsonl');
const PUBLIC = path.join(dataDir(), 'pi.jsonl');
/** Encodings the classifier cannot read; the rules see these after decoding. */
const OPAQUE = new Set(['base64', 'hex', 'url', 'rot13']);
const OPTIONS = { epochs: 12, l2: 1e-5, lr: 0.5 };
/** Dropped: many of its "jailbreaks" are plain role-play requests, which taught the model that role-play is an attack. */
const EXCLUDED_SOURCES = new Set(['inthewild-jailbreaks']);
/** The classifier backs up the rules: it speaks only when quite sure. */
const MIN_THRESHOLD = 0.5;
/**
 * False-positive rate allowed on every benign source's leave-one-source-out scores. The worst
 * source, not the average: easy benign sets (code and maths requests) would hide the hard ones,
 * and users' prompts look like neither.
 */
const MAX_VALIDATION_FPR = 0.02;
const MIN_WEIGHT = 0.02;
/** Sources with fewer texts of a class than this are pooled for the macro averages. */
const MIN_SOURCE_SIZE = 100;
/**
 * The project seeds count three times: they are the only source written for this service's
 * payloads (agent tool calls, documents with hidden text), and the public sets outnumber them.
 */
const PROJECT_WEIGHT = 3;
/**
 * Candidates compared on the leave-one-source-out scores: the share of a model fitted on the
 * project seeds alone in the shipped average (the seeds hold hard benign look-alikes the public
 * sets lack) and whether sources are weighted by the square root of their size.
 */
/**
 * The project's hard benign prompts (as in test/unit/scan/detection): a candidate whose
 * calibrated score flags any of them at its threshold is not taken. Public benign sets rarely
 * tell the user's own "forget" or "ignore" from an attack's.
 */
const HARD_BENIGN = [
  'Can I ignore this warning that appeared in my code?',
  'Ignore the noise and focus on the main trend in the data.',
  'Forget everything I said about the budget; let us start with the design.',
  'Write a short story in which a detective has to bypass a locked door.',
  'I want you to act as a proofreader. I will give you texts and you review spelling and grammar.',
  'How do I turn off the safety filters in my camera app?',
  'Can you summarize the instructions for assembling this shelf?',
];
const SHARE_OPTIONS = [0, 0.3, 0.5, 0.7];
const PER_SOURCE_OPTIONS = [false, true];

const opt = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const read = (file: string): Rec[] => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec);
const keyOf = (r: Rec): string => r.group ?? r.id;
/**
 * The validation fold a training text belongs to: its public source, or for the project seeds
 * 'project' for a fifth of the seed groups (the rest is never set aside: the seed model needs them).
 */
const foldOf = (r: Rec): string => r.source ?? (inValidation(keyOf(r)) ? 'project' : 'project-kept');

/** Benign texts longer than a chunk are learned chunk by chunk, as inference scores them. */
function examplesOf(recs: Rec[], perSource: boolean): Example[] {
  const out: Array<Example & { s: string }> = [];
  for (const r of recs) {
    if (r.label === 1 && r.evasion && OPAQUE.has(r.evasion)) continue;
    const t = classifierText(r.text);
    const w = r.source ? 1 : PROJECT_WEIGHT;
    const s = `${r.source ?? 'project'}:${r.label}`;
    if (r.label === 0 && t.length > CHUNK_CHARS) for (const c of chunks(t)) out.push({ x: features(c), y: 0, w, s });
    else out.push({ x: features(t.slice(0, 8 * CHUNK_CHARS)), y: r.label, w, s });
  }
  if (perSource) {
    // Each source weighs the square root of its size within its class: a large source still
    // counts more, but no single source's phrasing (Tensor Trust's, CodeAlpaca's) sets the model.
    const n = new Map<string, number>();
    for (const e of out) n.set(e.s, (n.get(e.s) ?? 0) + 1);
    for (const e of out) e.w /= Math.sqrt(n.get(e.s) ?? 1);
  }
  return out;
}

/** Logits of a text under a model: its worst chunk, as the engine scores a payload. */
const textLogit = (m: Fitted, text: string): number => Math.max(...chunks(classifierText(text)).map((c) => logit(m, features(c))), -50);

interface Scored { source: string; y: number; zAll: number; zSeed: number; text: string }

/**
 * Leave-one-source-out scores: each public source is scored by a model fitted without it (and
 * the held-back fifth of the project groups by one fitted without those), so validation says how
 * the classifier does on phrasings of a source it never saw, as the held-out sets are.
 */
function leaveOneSourceOut(all: Rec[], perSource: boolean): Scored[] & { modelAll: Fitted; modelSeed: Fitted } {
  const folds = [...new Set(all.map(foldOf))].filter((f) => f !== 'project-kept').sort();
  const seedKept = fit(balance(examplesOf(all.filter((r) => !r.source && foldOf(r) !== 'project'), false)), OPTIONS);
  const seedAll = fit(balance(examplesOf(all.filter((r) => !r.source), false)), OPTIONS);
  const out = Object.assign([] as Scored[], { modelAll: fit(balance(examplesOf(all, perSource)), OPTIONS), modelSeed: seedAll });
  for (const f of folds) {
    const m = fit(balance(examplesOf(all.filter((r) => foldOf(r) !== f), perSource)), OPTIONS);
    const seed = f === 'project' ? seedKept : seedAll;
    for (const r of all.filter((x) => foldOf(x) === f)) out.push({ source: f, y: r.label, zAll: textLogit(m, r.text), zSeed: textLogit(seed, r.text), text: r.text });
  }
  return out;
}

interface Operating { threshold: number; maxFpr: number; macroFpr: number; macroRecall: number; pooled: ReturnType<typeof report>; perSource: Record<string, { n: number; rate: number }> }

/** Per-source rates at a threshold; macro averages weigh every source the same. */
function operating(scored: Array<{ source: string; y: number; p: number }>, t: number): Operating {
  const perSource: Record<string, { n: number; rate: number }> = {};
  const groups = new Map<string, Array<{ y: number; p: number }>>();
  const size = new Map<string, number>();
  for (const s of scored) size.set(`${s.source}:${s.y}`, (size.get(`${s.source}:${s.y}`) ?? 0) + 1);
  for (const s of scored) {
    // Sources too small for a stable rate are pooled, so that one text cannot move the average.
    const k = (size.get(`${s.source}:${s.y}`) ?? 0) < MIN_SOURCE_SIZE ? `small sources:${s.y}` : `${s.source}:${s.y}`;
    groups.set(k, [...(groups.get(k) ?? []), s]);
  }
  const fprs: number[] = [];
  const recalls: number[] = [];
  for (const [k, g] of [...groups].sort()) {
    const rate = g.filter((s) => s.p >= t).length / g.length;
    perSource[k] = { n: g.length, rate: Math.round(rate * 1000) / 1000 };
    (k.endsWith(':1') ? recalls : fprs).push(rate);
  }
  const mean = (xs: number[]): number => Math.round((1000 * xs.reduce((a, b) => a + b, 0)) / Math.max(1, xs.length)) / 1000;
  return { threshold: t, maxFpr: Math.max(...fprs), macroFpr: mean(fprs), macroRecall: mean(recalls), pooled: report(scored, t), perSource };
}

/** Lowest threshold at which no benign source has a false-positive rate above the target. */
function chooseThreshold(scored: Array<{ source: string; y: number; p: number }>): Operating {
  for (let t = MIN_THRESHOLD; t <= 0.99; t += 0.01) {
    const o = operating(scored, Math.round(t * 100) / 100);
    if (o.maxFpr <= MAX_VALIDATION_FPR) return o;
  }
  return operating(scored, 0.99);
}

function main(): void {
  const project = read(FIXTURES).filter((r) => r.split === 'train');
  const publicRecs = existsSync(PUBLIC) ? read(PUBLIC).filter((r) => r.split === 'train' && !EXCLUDED_SOURCES.has(r.source ?? '')) : [];
  if (publicRecs.length === 0) console.warn(`no public training data at ${PUBLIC}: training on the project seeds only (run scripts/build-detection-data.ts)`);
  const all = [...project, ...publicRecs];

  // Model selection on the leave-one-source-out scores: per-source weighting and the seed
  // model's share, by macro recall at the chosen operating point.
  let best: { perSource: boolean; share: number; cal: { a: number; c: number }; op: Operating; errors: string[] } | undefined;
  for (const perSource of PER_SOURCE_OPTIONS) {
    const loso = leaveOneSourceOut(all, perSource);
    for (const share of SHARE_OPTIONS) {
      const z = loso.map((s) => ({ z: (1 - share) * s.zAll + share * s.zSeed, y: s.y }));
      const cal = platt(z, true);
      const op = chooseThreshold(loso.map((s, i) => ({ source: s.source, y: s.y, p: sigmoid(cal.a * z[i].z + cal.c) })));
      const flagged = HARD_BENIGN.filter((t) => sigmoid(cal.a * ((1 - share) * textLogit(loso.modelAll, t) + share * textLogit(loso.modelSeed, t)) + cal.c) >= op.threshold);
      console.log(`perSource=${perSource} share=${share}: hard benign flagged ${flagged.length}; threshold ${op.threshold} macro recall ${op.macroRecall} macro FPR ${op.macroFpr} worst source FPR ${op.maxFpr} pooled`, op.pooled);
      const errors = loso.map((s, i) => ({ s, p: sigmoid(cal.a * z[i].z + cal.c) })).filter(({ s, p }) => (p >= op.threshold) !== (s.y === 1))
        .map(({ s, p }) => JSON.stringify({ source: s.source, y: s.y, p: Math.round(p * 100) / 100, text: s.text.slice(0, 600) }));
      if (flagged.length === 0 && (!best || op.macroRecall > best.op.macroRecall)) best = { perSource, share, cal, op, errors };
    }
  }
  if (!best) throw new Error('no model candidate');
  const errorsFile = opt('--errors');
  if (errorsFile) writeFileSync(errorsFile, `${best.errors.join('\n')}\n`);
  console.log(`chosen: perSource=${best.perSource} share=${best.share}, threshold ${best.op.threshold}`, best.op.perSource);

  const exs = balance(examplesOf(all, best.perSource));
  const a = fit(exs, OPTIONS);
  const b = fit(balance(examplesOf(all.filter((r) => !r.source), false)), OPTIONS);
  const w = new Float64Array(a.w.length);
  for (let i = 0; i < w.length; i++) w[i] = (1 - best.share) * a.w[i] + best.share * b.w[i];
  const { bias, weights } = exportWeights({ w, b: (1 - best.share) * a.b + best.share * b.b }, best.cal, MIN_WEIGHT);
  const sha = (f: string): string => (existsSync(f) ? createHash('sha256').update(readFileSync(f)).digest('hex') : '');
  const model: PromptInjectionModel = {
    version: 2,
    featureBits: FEATURE_BITS,
    bias,
    threshold: best.op.threshold,
    weights,
    training: {
      script: 'scripts/train-prompt-injection.ts',
      data: ['test/fixtures/payload/prompt-injection.jsonl (split=train)', 'pi.jsonl of scripts/build-detection-data.ts (split=train; sources in datasets/detection/manifest.json)'],
      dataSha256: { fixtures: sha(FIXTURES), public: sha(PUBLIC) },
      examples: exs.length,
      positives: exs.filter((e) => e.y === 1).length,
      negatives: exs.filter((e) => e.y === 0).length,
      calibration: 'Platt scaling (classes weighed equally) on leave-one-source-out scores, folded into the weights',
      validation: 'leave one source out (each public training source, and a fifth of the project seed groups)',
      projectSeedWeight: PROJECT_WEIGHT,
      perSourceWeighting: best.perSource,
      model: `average of two logistic models: ${(1 - best.share).toFixed(2)} x all training sources + ${best.share.toFixed(2)} x project seeds only`,
      operatingPoint: { threshold: best.op.threshold, worstSourceFpr: best.op.maxFpr, macroRecall: best.op.macroRecall, macroFpr: best.op.macroFpr, pooled: best.op.pooled, perSource: best.op.perSource },
      ...OPTIONS,
      features: 'hashed word unigrams + bigrams + char 3-5-grams of words, L2-normalised, 2^18 buckets',
    },
  };
  writeFileSync(MODEL_PATH, `${JSON.stringify(model)}\n`);
  console.log(`wrote ${MODEL_PATH}: ${weights.length} weights, bias ${model.bias}, threshold ${model.threshold}`);
}

main();
