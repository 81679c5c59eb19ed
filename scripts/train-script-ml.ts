/**
 * Trains the text model the `ml` engine runs on partial-coverage content (scripts, text,
 * documents, archive members): logistic regression over the hashed word and character n-grams of
 * src/scan/engines/payload/pi-classifier.ts, Platt-calibrated on a validation split.
 *
 *   npx tsx scripts/build-detection-data.ts && npx tsx scripts/train-script-ml.ts
 *
 * Data: split 'train' of .tools/data/detection/scripts.jsonl (sources in
 * datasets/detection/manifest.json: offensive PowerShell, red-team one-liners, cheat sheets and
 * simulations against shell frameworks, admin and provisioning scripts, everyday command lines
 * (tldr) and library code). The held-out sources are never read.
 * Whole sources are set aside for validation (VALIDATION_SOURCES: admin PowerShell, offensive
 * PowerShell and offensive one-liners the inner model never saw), because the model must hold on
 * sources it was not trained on, which a random split would not measure. There it is
 * Platt-calibrated with both classes weighing the same (the probability must not carry the
 * validation set's class ratio), the intercept moved to the highest 0.05 step at which at most 3%
 * of the validation benign files reach the engine's medium level (ML_MEDIUM_FROM), and the low
 * threshold is the lowest with a false-positive rate of at most 2%, never above the medium level.
 * Short texts (one-liners) get their own medium level, `shortMediumFrom`: at most 1% of short
 * validation benign texts reach it. The model is then refitted on all training sources and the same calibration and levels applied.
 * Besides the corpus, the project-written benign admin lines of scripts/admin-shapes.ts (source
 * `admin-shapes`, training only, never in validation) teach the shapes attack procedures share with
 * administration; `--without-admin-shapes` leaves them out.
 * The benign corpus of scripts/build-benign-corpus.ts (real packages from Debian, npm and PyPI;
 * issue 30) joins as follows: a sample of its `train` split (BENIGN_PER_LANGUAGE files per
 * language, spread over packages, each read to BENIGN_CHARS) is benign training data in both fits;
 * its `validation` split is never trained on: the share of its files the engine would judge at
 * medium (a trained file type, scored window by window as the engine does) is reported, and with
 * `--lower-on-corpus` the intercept is also lowered until at most MAX_CORPUS_MEDIUM_FPR reach it
 * (off by default: it cost held-out attack recall, 0.811 -> 0.720). Its `heldout` split is never
 * read here. `--without-benign-corpus` leaves it out.
 * Writes src/scan/models/script-ml.json.
 *
 *   npx tsx scripts/train-script-ml.ts [--data DIR] [--benign-cache DIR] [--benign LANG=N|all ...] [--with-fresh] [--without-admin-shapes] [--without-benign-corpus] [--lower-on-corpus] [--inner-out FILE]
 *
 * `--inner-out FILE` also writes the model fitted without the validation sources, with the same
 * levels (`training.inner: true`), for `npm run bench -- dev-scripts --model FILE`.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FEATURE_BITS, features, type PromptInjectionModel } from '../src/scan/engines/payload/pi-classifier';
import { judgeableShortText, MAX_WINDOWS, ML_MEDIUM_FROM, ML_MIN_WORDS, perlProgram, pythonLibraryModule, SCRIPT_MODEL_PATH, SCRIPT_WINDOW, scriptModelText, TRAINED_TYPES, wordCount } from '../src/scan/engines/ml';
import { identify } from '../src/scan/filetype';
import { ADMIN_SHAPES } from './admin-shapes';
import { balance, exportWeights, fit, inValidation, logit, platt, report, sigmoid, type Example, type Fitted } from './_logreg';
import { arg, dataDir } from './build-detection-data';
import { BENIGN_MANIFEST, benignText, DEFAULT_CACHE, FRESH_MANIFEST, readBenignManifest, type BenignPackage } from './build-benign-corpus';

interface Rec { id: string; source: string; split: string; label: 0 | 1; text: string; name?: string }
/** Weights averaged over the second half of the epochs: validation moved less with small corpus changes (and rose 0.005-0.01). */
const OPTIONS = { epochs: 20, l2: 1e-5, lr: 0.5, average: true };
/**
 * Whole sources set aside: admin PowerShell (Pode, SqlServerDsc, adbertram's admin scripts, the
 * winutil tweak utility, Scoop, Office365itpros), offensive files (PowerSploit, hoaxshell,
 * APTSimulator) and offensive one-liners and snippets (CALDERA stockpile abilities, GTFOBins
 * shells, WADComs, pentest-book), and two procedure-style attack sources (Prelude TTPs, the EDR
 * test procedures; absent from a corpus built with `--without-procedures`),
 * so calibration sees both files and short commands.
 */
export const VALIDATION_SOURCES = new Set(['pode', 'sqlserverdsc', 'adbertram', 'winutil', 'scoop', 'office365itpros', 'powersploit', 'hoaxshell', 'stockpile', 'gtfobins', 'wadcoms', 'pentest-book', 'aptsimulator', 'prelude-ttps', 'edr-testing-script']);
/**
 * Everyday command-line sources (tldr, the cheat sheets, the PowerShell reference examples) are
 * split in half by page (a model that never saw any of them reads every command line as an
 * attack, so a whole-source hold-out would only measure that).
 */
export const HALF_SOURCES = new Set(['tldr', 'cheatsheets', 'navi-cheats', 'ps-docs-examples', 'winserver-ps-examples', 'windows-commands']);
export const isValidation = (r: Rec): boolean => VALIDATION_SOURCES.has(r.source) || (HALF_SOURCES.has(r.source) && inValidation(r.id.replace(/#(?:one)?\d*$/, ''), 0.5));
const MAX_VALIDATION_FPR = 0.02;
const MAX_MEDIUM_FPR = 0.03;
/** Short texts (fewer than ML_MIN_WORDS words) get their own medium level, at most this share of short benign excerpts reaching it. */
const MAX_SHORT_MEDIUM_FPR = 0.01;
/**
 * Code sources (packaging launchers, type declarations, the benign package corpus) without
 * excerpts: with four of each their
 * code outweighed the benign command lines in the class balance and `net use Z: \\server\share`
 * rose above the one-liner level.
 */
const WHOLE_FILES_ONLY = /^(?:console-scripts|py-launchers-|dts-|ts-|benign-)/;
/** Smaller weights are dropped: they barely move a score and would triple the shipped file. */
const MIN_WEIGHT = 0.1;
/**
 * Benign corpus files per language in training, and how much of each is read (memory and time).
 * `--benign LANG=N|all` (repeatable) takes more files of one language: most of the corpus's
 * model-alone flags were Python in the eleventh round and short shell scripts in the twelfth.
 */
const BENIGN_PER_LANGUAGE = 500;
export const benignLimits = (argv: string[]): Map<string, number> => {
  const limits = new Map<string, number>();
  argv.forEach((a, i) => {
    if (a !== '--benign') return;
    const m = /^([a-z]+)=(\d+|all)$/.exec(argv[i + 1] ?? '');
    if (!m) throw new Error(`--benign takes LANG=N or LANG=all (e.g. shell=all), not ${argv[i + 1] ?? 'nothing'}`);
    limits.set(m[1], m[2] === 'all' ? Infinity : Number(m[2]));
  });
  return limits;
};
/**
 * `--with-fresh`: the fresh split's packages (scripts/build-benign-corpus.ts --fresh) join the
 * train split's. That split was built for evaluation and looked at once (issue 30, eleventh
 * round); its successor `fresh2` is the split nobody tunes on, so fresh may now teach the model:
 * 760 packages against the train split's 181, which is the variety short benign scripts lacked.
 */
export const trainingPackages = (main: BenignPackage[], fresh: BenignPackage[]): BenignPackage[] =>
  [...main, ...fresh.map((p) => ({ ...p, split: 'train' as const }))];
const BENIGN_CHARS = 16 * 1024;
/**
 * At most this share of the benign corpus's validation files that the engine judges at medium
 * reach the medium level: the sweep's target is 0.1% flagged with the rules' own share on top.
 */
const MAX_CORPUS_MEDIUM_FPR = 0.0005;

/** A sample of the corpus's train split: per language, packages in turn (fixed hash order), so no package dominates. */
export function benignTrain(packages: BenignPackage[], cache: string, limits: Map<string, number>): Rec[] {
  const byLang = new Map<string, Array<{ pkg: string; file: string; sha: string }[]>>();
  const order = (k: string): string => createHash('sha256').update(`benign-train:${k}`).digest('hex');
  for (const p of [...packages].filter((x) => x.split === 'train').sort((a, b) => order(a.name).localeCompare(order(b.name)))) {
    const own = new Map<string, Array<{ pkg: string; file: string; sha: string }>>();
    for (const [file, sha, lang] of [...p.files].sort((a, b) => order(a[1]).localeCompare(order(b[1])))) {
      own.set(lang, [...(own.get(lang) ?? []), { pkg: `${p.ecosystem}:${p.name}`, file, sha }]);
    }
    for (const [lang, files] of own) byLang.set(lang, [...(byLang.get(lang) ?? []), files]);
  }
  const out: Rec[] = [];
  for (const [lang, queues] of [...byLang].sort((a, b) => a[0].localeCompare(b[0]))) {
    const limit = limits.get(lang) ?? BENIGN_PER_LANGUAGE;
    let taken = 0;
    for (let round = 0; taken < limit && queues.some((q) => q.length > round); round++) {
      for (const q of queues) {
        if (taken >= limit || round >= q.length) continue;
        const text = benignText(cache, q[round].sha)?.toString('utf8').slice(0, BENIGN_CHARS);
        if (!text) continue;
        out.push({ id: `benign:${q[round].pkg}/${q[round].file}`, source: `benign-${lang}`, split: 'train', label: 0, text });
        taken++;
      }
    }
  }
  return out;
}

/**
 * Per-language medium levels (`training.languageMediumFrom`): for a trained language with at
 * least MIN_LANGUAGE_FILES files in the corpus's validation split, the medium level is raised in
 * 0.005 steps from ML_MEDIUM_FROM until at most MAX_LANGUAGE_MEDIUM_FPR of them reach it. The
 * validation sources hold few real scripts of some languages (shell: command lines, no packages'
 * hooks and wrappers), so the sources' level alone let the model flag 1-2% of real shell scripts.
 */
const MIN_LANGUAGE_FILES = 300;
const MAX_LANGUAGE_MEDIUM_FPR = 0.001;

/** The per-language levels (only those raised above ML_MEDIUM_FROM) from calibrated corpus validation scores. */
export function languageLevels(files: Array<{ type: string; short: boolean; p: number }>, shortMediumFrom: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const lang of [...new Set(files.map((f) => f.type))].sort()) {
    const own = files.filter((f) => f.type === lang);
    if (own.length < MIN_LANGUAGE_FILES) continue;
    const share = (level: number): number => own.filter((f) => f.p >= (f.short ? Math.max(level, shortMediumFrom) : level)).length / own.length;
    let level = ML_MEDIUM_FROM;
    while (share(level) > MAX_LANGUAGE_MEDIUM_FPR && level < 0.995) level = Math.round((level + 0.005) * 1000) / 1000;
    if (level > ML_MEDIUM_FROM) out[lang] = level;
  }
  return out;
}

/** A validation file as the engine reads it: its worst window's raw logit, the words seen, whether a short text is judged, and its type. */
interface CorpusFile { id: string; zs: number[]; short: boolean; type: string }
async function benignValidation(packages: BenignPackage[], cache: string, m0: Fitted): Promise<CorpusFile[]> {
  const out: CorpusFile[] = [];
  for (const p of packages.filter((x) => x.split === 'validation')) {
    for (const [file, sha] of p.files) {
      const content = benignText(cache, sha);
      if (!content) continue;
      const type = (await identify(content, path.basename(file))).fileType;
      if (!TRAINED_TYPES.has(type)) continue;
      // What the engine never judges at medium (a Perl program, a Python library module) does not set a level.
      const head = content.subarray(0, SCRIPT_WINDOW).toString('utf8');
      if (perlProgram(head) || (type === 'python' && content.length <= 1024 * 1024 && pythonLibraryModule(content.toString('utf8')))) continue;
      const total = Math.max(1, Math.ceil(content.length / SCRIPT_WINDOW));
      const picks = total <= MAX_WINDOWS ? [...Array(total).keys()] : [...Array(MAX_WINDOWS).keys()].map((k) => Math.round((k * (total - 1)) / (MAX_WINDOWS - 1)));
      const windows = picks.map((w) => content.subarray(w * SCRIPT_WINDOW, (w + 1) * SCRIPT_WINDOW).toString('utf8'));
      const words = windows.reduce((n, w) => n + wordCount(w), 0);
      if (words < ML_MIN_WORDS && !judgeableShortText(windows[0])) continue;
      out.push({ id: `${p.ecosystem}:${p.name}/${file}`, zs: windows.map((w) => logit(m0, features(scriptModelText(w)))), short: words < ML_MIN_WORDS, type });
    }
  }
  return out;
}

/**
 * Four deterministic runs of consecutive non-empty lines from a file: two of 2-20 lines and two
 * of 2-5 (a short benign fragment carries few n-grams, each of which then weighs a lot).
 */
function excerpts(r: Rec): Rec[] {
  const lines = r.text.split('\n').filter((l) => l.trim() !== '');
  if (lines.length < 6) return [];
  const h = createHash('sha256').update(r.id).digest();
  return [0, 1, 2, 3].map((k) => {
    const len = 2 + (h[k * 2] % (k < 2 ? 19 : 4));
    const start = h.readUInt16BE(4 + k * 2) % Math.max(1, lines.length - len);
    return { ...r, id: `${r.id}~${k}`, text: lines.slice(start, start + len).join('\n') };
  });
}

/** Project-written benign admin lines (scripts/admin-shapes.ts) as training records. */
const adminShapes = (): Rec[] => ADMIN_SHAPES.map((text, i) => ({ id: `admin-shapes#${i}`, source: 'admin-shapes', split: 'train', label: 0, text }));

async function main(): Promise<void> {
  const file = path.join(dataDir(), 'scripts.jsonl');
  const corpus = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec).filter((r) => r.split === 'train');
  const withShapes = !process.argv.includes('--without-admin-shapes');
  const withBenign = !process.argv.includes('--without-benign-corpus');
  const cache = path.resolve(arg('--benign-cache', DEFAULT_CACHE));
  const packages = withBenign ? readBenignManifest() : [];
  const withFresh = withBenign && process.argv.includes('--with-fresh');
  const limits = benignLimits(process.argv);
  const benign = withBenign ? benignTrain(withFresh ? trainingPackages(packages, readBenignManifest(FRESH_MANIFEST)) : packages, cache, limits) : [];
  if (withBenign && benign.length === 0) throw new Error(`no benign corpus texts under ${cache}: run scripts/build-benign-corpus.ts or pass --without-benign-corpus`);
  const recs = [...corpus, ...(withShapes ? adminShapes() : []), ...benign];
  const toEx = (r: Rec): Example & { id: string; short: boolean } => ({ id: r.id, short: wordCount(r.text) < ML_MIN_WORDS && judgeableShortText(r.text), x: features(scriptModelText(r.text.slice(0, SCRIPT_WINDOW))), y: r.label, w: 1 });
  // Benign files also as short excerpts, so that "short" never reads as "malicious".
  const withExcerpts = (rs: Rec[]): Rec[] => rs.flatMap((r) => (r.label === 0 && !WHOLE_FILES_ONLY.test(r.source) ? [r, ...excerpts(r)] : [r]));
  const inner = balance(withExcerpts(recs.filter((r) => !isValidation(r))).map(toEx));
  const val = recs.filter(isValidation).map(toEx);
  const m0 = fit(inner, OPTIONS);
  const raw = val.map((e) => ({ z: logit(m0, e.x), y: e.y }));
  const cal = platt(raw, true);
  // The engine speaks at medium from ML_MEDIUM_FROM: the intercept is moved to the highest step at
  // which at most MAX_MEDIUM_FPR of the validation benign files reach it.
  const at = (c: number): Array<{ p: number; y: number }> => raw.map((s) => ({ p: sigmoid(cal.a * s.z + c), y: s.y }));
  while (report(at(cal.c + 0.05), ML_MEDIUM_FROM).fpr <= MAX_MEDIUM_FPR) cal.c += 0.05;
  while (report(at(cal.c), ML_MEDIUM_FROM).fpr > MAX_MEDIUM_FPR) cal.c -= 0.05;
  // The benign corpus's validation files: lowered further until at most MAX_CORPUS_MEDIUM_FPR reach medium.
  const corpusVal = withBenign ? await benignValidation(packages, cache, m0) : [];
  const corpusFpr = (c: number, shortFrom: number): number =>
    corpusVal.filter((f) => sigmoid(cal.a * Math.max(...f.zs) + c) >= (f.short ? shortFrom : ML_MEDIUM_FROM)).length / Math.max(1, corpusVal.length);
  const cBefore = cal.c;
  // Lowering the level on the corpus cost attack recall (0.811 -> 0.720 held-out in issue 30's first
  // look), so it is opt-in: by default the corpus only teaches the model and the rate is reported.
  if (process.argv.includes('--lower-on-corpus')) while (corpusVal.length && corpusFpr(cal.c, ML_MEDIUM_FROM) > MAX_CORPUS_MEDIUM_FPR) cal.c -= 0.05;
  console.log(`benign corpus validation: ${corpusVal.length} files judged at medium; intercept ${cBefore.toFixed(2)} -> ${cal.c.toFixed(2)}, medium FPR ${corpusFpr(cal.c, ML_MEDIUM_FROM).toFixed(5)}`);
  const scored = at(cal.c);
  // The low level never above the medium one: a file in a trained language says nothing below it.
  let threshold = ML_MEDIUM_FROM;
  for (let t = 0.5; t < ML_MEDIUM_FROM; t += 0.01) {
    if (report(scored, t).fpr <= MAX_VALIDATION_FPR) {
      threshold = Math.round(t * 100) / 100;
      break;
    }
  }
  const validation = report(scored, threshold);
  // A short text (a one-liner the engine judges at all) is scored on few n-grams: its medium
  // level is set on short validation attacks against short benign texts (excerpts of the
  // validation admin files, tldr command lines).
  const shortVal = [...val.filter((e) => e.short && e.y === 1), ...withExcerpts(recs.filter((r) => isValidation(r) && r.label === 0)).map(toEx).filter((e) => e.short)];
  const shortScored = shortVal.map((e) => ({ p: sigmoid(cal.a * logit(m0, e.x) + cal.c), y: e.y }));
  let shortMediumFrom = 0.999;
  for (let t = ML_MEDIUM_FROM; t < 0.999; t += 0.005) {
    if (report(shortScored, t).fpr <= MAX_SHORT_MEDIUM_FPR) {
      shortMediumFrom = Math.round(t * 1000) / 1000;
      break;
    }
  }
  console.log(`short texts (${shortVal.length}, < ${ML_MIN_WORDS} words): medium from ${shortMediumFrom}`, report(shortScored, shortMediumFrom));
  for (const t of [0.9, 0.925, 0.95, 0.975]) console.log(`  short validation at ${t}:`, report(shortScored, t));
  for (const t of [0.5, 0.7, 0.8, 0.9, 0.95]) console.log(`  validation at ${t.toFixed(2)}:`, report(scored, t));
  const valRecs = recs.filter(isValidation);
  for (const source of [...new Set(valRecs.map((r) => r.source))].sort()) {
    const own = scored.filter((_, i) => valRecs[i].source === source);
    const hits = own.filter((s) => s.p >= ML_MEDIUM_FROM).length;
    console.log(`  ${source.padEnd(26)} ${own[0].y ? 'recall' : 'fpr   '} at medium ${(hits / own.length).toFixed(3)} (${hits} of ${own.length})`);
  }
  console.log(`validation (${val.length} files): threshold ${threshold}`, validation, `platt a=${cal.a.toFixed(3)} c=${cal.c.toFixed(3)}`);

  const all = balance(withExcerpts(recs).map(toEx));
  const final = fit(all, OPTIONS);
  const finalCorpus = withBenign ? await benignValidation(packages, cache, { w: final.w, b: final.b }) : [];
  const finalHits = finalCorpus.filter((f) => sigmoid(cal.a * Math.max(...f.zs) + cal.c) >= (f.short ? shortMediumFrom : ML_MEDIUM_FROM));
  for (const f of finalHits) console.log(`  benign validation at medium: ${f.id}`);
  const languageMediumFrom = languageLevels(finalCorpus.map((f) => ({ type: f.type, short: f.short, p: sigmoid(cal.a * Math.max(...f.zs) + cal.c) })), shortMediumFrom);
  // What a raised level costs, on the validation sources' attacks of that language as the inner model scored them.
  const valTypes = await Promise.all(valRecs.map(async (r) => (await identify(Buffer.from(r.text), r.name ?? '')).fileType));
  for (const [lang, from] of Object.entries(languageMediumFrom)) {
    const own = scored.filter((s, i) => s.y === 1 && valTypes[i] === lang);
    const at = (level: number): number => own.filter((s) => s.p >= level).length;
    console.log(`  ${lang}: medium from ${from}; validation-source ${lang} attacks at medium ${at(ML_MEDIUM_FROM)} -> ${at(from)} of ${own.length}`);
  }
  // The inner model (fitted without the validation sources) with the same levels, so the whole
  // pipeline can be measured on sources the model never saw (`npm run bench -- dev-scripts`).
  const innerOut = arg('--inner-out', '');
  if (innerOut) {
    const inner0 = exportWeights(m0, cal, MIN_WEIGHT);
    writeFileSync(innerOut, `${JSON.stringify({ version: 1, featureBits: FEATURE_BITS, bias: inner0.bias, threshold, weights: inner0.weights, training: { script: 'scripts/train-script-ml.ts --inner-out', inner: true, shortMediumFrom, ...(Object.keys(languageMediumFrom).length ? { languageMediumFrom } : {}) } })}\n`);
    console.log(`wrote the inner model to ${innerOut}`);
  }
  const { bias, weights } = exportWeights(final, cal, MIN_WEIGHT);
  const kept = new Float64Array(final.w.length);
  for (const [i, v] of weights) kept[i] = v;
  const trainScores = all.map((e) => ({ p: sigmoid(logit({ w: kept, b: bias }, e.x)), y: e.y }));
  const model: PromptInjectionModel = {
    version: 1,
    featureBits: FEATURE_BITS,
    bias,
    threshold,
    weights,
    training: {
      script: 'scripts/train-script-ml.ts',
      data: 'scripts.jsonl of scripts/build-detection-data.ts (split=train; sources in datasets/detection/manifest.json)',
      ...(withShapes ? { adminShapes: `${ADMIN_SHAPES.length} project-written benign admin lines of scripts/admin-shapes.ts (training only)` } : {}),
      dataSha256: createHash('sha256').update(readFileSync(file)).digest('hex'),
      files: all.length,
      positives: all.filter((e) => e.y === 1).length,
      negatives: all.filter((e) => e.y === 0).length,
      calibration: `class-balanced Platt scaling on the validation sources, intercept at the highest 0.05 step with <= ${MAX_MEDIUM_FPR} of validation benign files reaching ${ML_MEDIUM_FROM}; folded into the weights`,
      // Only the sources the corpus holds (a `--without-procedures` corpus has no procedure sources).
      validationSources: [...[...VALIDATION_SOURCES].filter((v) => recs.some((r) => r.source === v)), ...[...HALF_SOURCES].map((h) => `half of ${h} (by page)`)],
      validation,
      validationAtMedium: { from: ML_MEDIUM_FROM, ...report(scored, ML_MEDIUM_FROM) },
      shortMediumFrom,
      ...(Object.keys(languageMediumFrom).length ? { languageMediumFrom } : {}),
      validationShortAtMedium: { from: shortMediumFrom, ...report(shortScored, shortMediumFrom) },
      ...(withBenign ? {
        benignCorpus: {
          manifest: 'datasets/benign/manifest.jsonl.gz (scripts/build-benign-corpus.ts)',
          manifestSha256: createHash('sha256').update(readFileSync(BENIGN_MANIFEST)).digest('hex'),
          trainFiles: benign.length,
          ...(withFresh ? { freshManifest: 'datasets/benign/fresh.jsonl.gz (its packages join the train split)', freshManifestSha256: createHash('sha256').update(readFileSync(FRESH_MANIFEST)).digest('hex') } : {}),
          perLanguage: BENIGN_PER_LANGUAGE,
          ...Object.fromEntries([...limits].filter(([, n]) => n !== BENIGN_PER_LANGUAGE).map(([lang, n]) => [lang, Number.isFinite(n) ? n : 'all'])),
          charsRead: BENIGN_CHARS,
          validationJudged: finalCorpus.length,
          validationAtMedium: { files: finalHits.length, fpr: Math.round((finalHits.length / Math.max(1, finalCorpus.length)) * 1e5) / 1e5, limit: MAX_CORPUS_MEDIUM_FPR },
        },
      } : {}),
      train: report(trainScores, threshold),
      ...OPTIONS,
    },
  };
  writeFileSync(SCRIPT_MODEL_PATH, `${JSON.stringify(model)}\n`);
  console.log(`wrote ${SCRIPT_MODEL_PATH}: ${weights.length} weights, train`, model.training.train);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
