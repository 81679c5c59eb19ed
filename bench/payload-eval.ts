/**
 * Precision / recall of the four payload engines on the held-out split of
 * test/fixtures/payload/*.jsonl, and the prompt-injection false-positive rate on benign
 * developer text (README files and .js/.ts sources from node_modules).
 *
 * Also reports prompt_injection on test/fixtures/payload/prompt-injection-novel.jsonl: 25
 * injections and 25 look-alike benign sentences written after the rules and the classifier were
 * frozen, a fairer estimate for phrasings nobody tuned against.
 *
 *   npx tsx bench/run.ts payload-eval [--split train|heldout|all] [--files N] [--show-errors]
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { codeExtractionEngine, promptInjectionEngine, sensitiveDataEngine, toolCallAnalysisEngine } from '../src/scan/engines/payload';
import type { CodeExtractionReport } from '../src/scan/engines/payload/code-extraction';
import type { PromptInjectionReport } from '../src/scan/engines/payload/prompt-injection';
import type { SensitiveDataReport } from '../src/scan/engines/payload/sensitive-data';
import type { ToolCallAnalysisReport } from '../src/scan/engines/payload/tool-calls';
import type { Engine } from '../src/scan/types';
import { counts, runEngine, subjectOf, tally, type Counts } from './_payload-common';

/** Findings from the learned classifier: on the payload itself or on decoded/folded text. */
const byModel = (f: { category: string; pattern: string }): boolean => f.category === 'ml_classifier' || f.pattern.includes('ml_classifier');

const FIXTURES = path.join(__dirname, '..', 'test', 'fixtures', 'payload');
const ROOT = path.join(__dirname, '..');

interface Rec { id: string; split: string; label: number; text: string; name?: string; [k: string]: unknown }

function load(file: string, split: string): Rec[] {
  return readFileSync(path.join(FIXTURES, file), 'utf8').split('\n').filter(Boolean)
    .map((l) => JSON.parse(l) as Rec)
    .filter((r) => split === 'all' || r.split === split);
}

function prf(c: Counts): { precision: number; recall: number; n: number } {
  return { precision: c.tp / Math.max(1, c.tp + c.fp), recall: c.tp / Math.max(1, c.tp + c.fn), n: c.tp + c.fp + c.fn + c.tn };
}
const f2 = (x: number): string => x.toFixed(3);

async function report<T>(engine: Engine, key: string, rec: Rec): Promise<T> {
  const out = await runEngine(engine, subjectOf(rec.text, rec.name ?? ''));
  return (out.report ?? {})[key] as T;
}

/** Deterministic sample of benign developer files from node_modules. */
export function developerFiles(limit: number): string[] {
  const readmes: string[] = [];
  const sources: string[] = [];
  const walk = (dir: string, depth: number): void => {
    if (depth > 6) return;
    let entries: string[];
    try {
      entries = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(dir, e);
      let st;
      try {
        st = statSync(p);
      } catch {
        continue;
      }
      if (st.isDirectory()) {
        if (e === '.bin' || e === 'test' || e === '__tests__' || e === 'fixtures') continue;
        walk(p, depth + 1);
      } else if (st.size > 0 && st.size < 300_000) {
        if (/^readme(\.md|\.markdown|\.txt)?$/i.test(e)) readmes.push(p);
        else if (/\.(js|ts|mjs|cjs)$/.test(e) && !e.endsWith('.min.js') && !e.endsWith('.d.ts')) sources.push(p);
      }
    }
  };
  walk(path.join(ROOT, 'node_modules'), 0);
  const take = (a: string[], n: number): string[] => {
    if (a.length <= n) return a;
    const step = a.length / n;
    return Array.from({ length: n }, (_, i) => a[Math.floor(i * step)]);
  };
  const nReadme = Math.min(readmes.length, Math.floor(limit * 0.4));
  return [...take(readmes, nReadme), ...take(sources, limit - nReadme)];
}

export async function run(args: string[]): Promise<void> {
  const split = args.includes('--split') ? args[args.indexOf('--split') + 1] : 'heldout';
  const nFiles = args.includes('--files') ? Number(args[args.indexOf('--files') + 1]) : 1000;
  const showErrors = args.includes('--show-errors');
  const rows: Array<[string, string, string, string, string]> = [];

  // ---- prompt injection
  const pi = load('prompt-injection.jsonl', split);
  const piAll = counts();
  const piRules = counts();
  const piModel = counts();
  const byFamily = new Map<string, Counts>();
  let quotedDecoded = 0;
  let evasionHits = 0;
  for (const r of pi) {
    const rep = await report<PromptInjectionReport>(promptInjectionEngine, 'promptInjection', r);
    const actual = r.label === 1;
    tally(piAll, rep.detected, actual);
    tally(piRules, rep.findings.some((f) => !byModel(f)), actual);
    tally(piModel, rep.findings.some((f) => byModel(f)), actual);
    const fam = String(r.evasion ?? r.family ?? 'benign');
    const c = byFamily.get(fam) ?? counts();
    tally(c, rep.detected, actual);
    byFamily.set(fam, c);
    if (actual && r.evasion && rep.detected) {
      evasionHits++;
      if (rep.findings.some((f) => f.match !== '' && !f.match.includes('\u200b') && /[a-z]{3,} [a-z]{3,}/i.test(f.match))) quotedDecoded++;
    }
    if (showErrors && rep.detected !== actual) console.log(`  PI ${actual ? 'FN' : 'FP'} ${r.id} ${fam}: ${r.text.slice(0, 140).replace(/\n/g, ' ')} ${rep.detected ? JSON.stringify(rep.findings.map((f) => f.pattern)) : ''}`);
  }
  for (const [name, c] of [['prompt_injection (all)', piAll], ['  rules (incl. decoded text) only', piRules], ['  classifier only (incl. decoded text)', piModel]] as Array<[string, Counts]>) {
    const m = prf(c);
    rows.push([name, String(m.n), f2(m.precision), f2(m.recall), `tp ${c.tp} fp ${c.fp} fn ${c.fn}`]);
  }

  // ---- prompt injection, novel phrasings written after the rules and model were frozen
  const novel = load('prompt-injection-novel.jsonl', 'all');
  const nAll = counts();
  const nRules = counts();
  const nModel = counts();
  for (const r of novel) {
    const rep = await report<PromptInjectionReport>(promptInjectionEngine, 'promptInjection', r);
    tally(nAll, rep.detected, r.label === 1);
    tally(nRules, rep.findings.some((f) => !byModel(f)), r.label === 1);
    tally(nModel, rep.findings.some((f) => byModel(f)), r.label === 1);
    if (showErrors && rep.detected !== (r.label === 1)) console.log(`  NOVEL ${r.label ? 'FN' : 'FP'} ${r.id}: ${r.text.slice(0, 120)} ${JSON.stringify(rep.findings.map((f) => f.pattern))}`);
  }
  for (const [name, c] of [['prompt_injection, novel set', nAll], ['  rules (incl. decoded text) only', nRules], ['  classifier only (incl. decoded text)', nModel]] as Array<[string, Counts]>) {
    const m = prf(c);
    rows.push([name, String(m.n), f2(m.precision), f2(m.recall), `tp ${c.tp} fp ${c.fp} fn ${c.fn}`]);
  }

  // ---- code extraction
  const code = load('code.jsonl', split);
  const ce = counts();
  let indicatorRight = 0;
  let positives = 0;
  for (const r of code) {
    const rep = await report<CodeExtractionReport>(codeExtractionEngine, 'codeExtraction', r);
    const predicted = rep.indicators.length > 0;
    tally(ce, predicted, r.label === 1);
    if (r.label === 1) {
      positives++;
      if (rep.indicators.includes(String(r.indicator))) indicatorRight++;
    }
    if (showErrors && predicted !== (r.label === 1)) console.log(`  CODE ${r.label ? 'FN' : 'FP'} ${r.id} ${String(r.indicator)} [${r.name}]: ${r.text.slice(0, 120).replace(/\n/g, ' ')} ${JSON.stringify(rep.indicators)}`);
  }
  { const m = prf(ce); rows.push(['code_extraction', String(m.n), f2(m.precision), f2(m.recall), `expected indicator named in ${indicatorRight}/${positives}`]); }

  // ---- sensitive data
  const sd = load('sensitive.jsonl', split);
  const sdc = counts();
  let typeRight = 0;
  let sdPos = 0;
  for (const r of sd) {
    const rep = await report<SensitiveDataReport>(sensitiveDataEngine, 'sensitiveData', r);
    const expected = (r.types as string[]) ?? [];
    tally(sdc, rep.detected, r.label === 1);
    if (r.label === 1) {
      sdPos++;
      if (expected.every((t) => rep.findings.some((f) => f.type === t))) typeRight++;
    }
    if (showErrors && (rep.detected !== (r.label === 1) || (r.label === 1 && !expected.every((t) => rep.findings.some((f) => f.type === t))))) {
      console.log(`  SD ${r.label ? 'miss' : 'FP'} ${r.id} ${expected.join(',')}: got ${JSON.stringify(rep.findings.map((f) => f.type))}`);
    }
  }
  { const m = prf(sdc); rows.push(['sensitive_data', String(m.n), f2(m.precision), f2(m.recall), `expected type found in ${typeRight}/${sdPos}`]); }

  // ---- tool calls
  const tc = load('tool-calls.jsonl', split);
  const tcc = counts();
  let catRight = 0;
  let countRight = 0;
  let tcPos = 0;
  for (const r of tc) {
    const rep = await report<ToolCallAnalysisReport>(toolCallAnalysisEngine, 'toolCallAnalysis', r);
    tally(tcc, rep.detected, r.label === 1);
    if (rep.toolCalls === r.calls) countRight++;
    if (r.label === 1) {
      tcPos++;
      if (rep.findings.some((f) => f.category === r.category)) catRight++;
    }
    if (showErrors && (rep.detected !== (r.label === 1) || rep.toolCalls !== r.calls)) console.log(`  TC ${r.id} label ${r.label} ${String(r.shape)}: detected ${rep.detected} calls ${rep.toolCalls}/${String(r.calls)} ${JSON.stringify(rep.findings.map((f) => `${f.category}:${f.severity}`))}`);
  }
  { const m = prf(tcc); rows.push(['tool_call_analysis', String(m.n), f2(m.precision), f2(m.recall), `category right ${catRight}/${tcPos}, toolCalls count right ${countRight}/${tc.length}`]); }

  console.log(`\nPayload engines on the ${split} split (test/fixtures/payload)\n`);
  console.log(`| engine | records | precision | recall | notes |\n|---|---|---|---|---|`);
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
  console.log('\nPrompt injection by family / evasion (recall for injections, specificity for benign):');
  for (const [fam, c] of [...byFamily].sort()) {
    console.log(`  ${fam.padEnd(26)} ${c.tp + c.fn > 0 ? `recall ${f2(c.tp / (c.tp + c.fn))} (${c.tp}/${c.tp + c.fn})` : `benign flagged ${c.fp}/${c.fp + c.tn}`}`);
  }
  console.log(`  evasion findings quoting readable decoded text: ${quotedDecoded}/${evasionHits}`);

  // ---- benign developer text
  const files = developerFiles(nFiles);
  let piFp = 0;
  let piFpRules = 0;
  let piFpModel = 0;
  const other = { code: 0, sensitive: 0, tools: 0 };
  let readmes = 0;
  for (const f of files) {
    const text = readFileSync(f);
    const name = path.basename(f);
    if (/^readme/i.test(name)) readmes++;
    const s = subjectOf(text, name);
    const rep = ((await runEngine(promptInjectionEngine, s)).report ?? {}).promptInjection as PromptInjectionReport;
    if (rep.detected) {
      piFp++;
      if (rep.findings.some((x) => !byModel(x))) piFpRules++;
      if (rep.findings.some((x) => byModel(x))) piFpModel++;
      if (showErrors) console.log(`  DEV FP ${path.relative(ROOT, f)}: ${JSON.stringify(rep.findings.map((x) => `${x.pattern} ${x.match.slice(0, 80)}`))}`);
    }
    const ce2 = ((await runEngine(codeExtractionEngine, s)).report ?? {}).codeExtraction as CodeExtractionReport;
    if (ce2.indicators.length > 0) other.code++;
    const sd2 = ((await runEngine(sensitiveDataEngine, s)).report ?? {}).sensitiveData as SensitiveDataReport;
    if (sd2.findings.some((x) => x.category === 'secret')) other.sensitive++;
    const tc2 = ((await runEngine(toolCallAnalysisEngine, s)).report ?? {}).toolCallAnalysis as ToolCallAnalysisReport;
    if (tc2.detected) other.tools++;
  }
  console.log(`\nBenign developer text: ${files.length} files from node_modules (${readmes} READMEs, ${files.length - readmes} .js/.ts sources)`);
  console.log(`  prompt_injection false-positive rate: ${(100 * piFp / files.length).toFixed(2)}% (${piFp}/${files.length}; rules ${piFpRules}, classifier ${piFpModel})`);
  console.log(`  for information: code_extraction indicators in ${other.code}, sensitive_data secrets in ${other.sensitive}, tool_call_analysis detections in ${other.tools} of these files`);
}
