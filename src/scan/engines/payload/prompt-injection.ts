/**
 * prompt_injection: pattern families over the payload as written, the same patterns over the
 * payload with evasions undone (invisible characters stripped, full-width and homoglyph forms
 * folded, leetspeak read as letters, ROT13, and base64 / hex / URL / entity / \u-escaped
 * segments decoded), text hidden from a human reader (HTML comments, alt text, hidden
 * elements), and the project-trained classifier. Evasion findings quote the decoded text.
 */
import { SEVERITY_RANK, type Engine, type EngineContext, type EngineOutput, type Finding, type ScanSubject, type Severity } from '../../types';
import { shippedModel } from './pi-classifier';
import {
  BIDI, decodeSegments, foldFullwidth, foldHomoglyphs, foldLeet, hasFullwidth, hasHomoglyphs, hasLeet, rot13, stripInvisible, ZERO_WIDTH,
} from './pi-normalize';
import { NeedleGate, NeedleIndex } from '../needle-index';
import { RULES, type InjectionRule } from './pi-rules';
import { checkBudget, lowerSameLength, maxSeverity, payloadText, safeExcerpt, type BudgetSignal, deadlineSignal } from './text';

export type RiskLevel = 'none' | 'low' | 'medium' | 'high' | 'critical';

export interface PromptInjectionFinding {
  category: string;
  pattern: string;
  severity: Severity;
  match: string;
}

export interface PromptInjectionReport {
  detected: boolean;
  riskLevel: RiskLevel;
  findings: PromptInjectionFinding[];
  /**
   * Chunks of the payload the classifier could not score: they hold letters only of scripts its
   * features do not read (the rules still read them). Never a silent skip.
   */
  classifierUnreadChunks: number;
}

interface RuleHit { rule: InjectionRule; start: number; end: number }

const MAX_FINDINGS = 50;
/** Every word of two or more letters the rules mention: leetspeak is only folded into these. */
const RULE_VOCABULARY: ReadonlySet<string> = new Set(RULES.flatMap((r) => [...r.needles, ...(r.re.source.match(/[a-z]{2,}/g) ?? [])]
  .flatMap((w) => w.split(/[^a-z]+/)).filter((w) => w.length >= 2)));
/** Rule needles with at least three letters, ROT13-encoded. */
const ROT13_NEEDLES = new NeedleIndex(RULES.flatMap((r) => r.needles).filter((n) => /[a-z].*[a-z].*[a-z]/.test(n)).map(rot13));

/** The rules' needles in one automaton (one pass per text instead of an `includes` per needle). */
const RULE_NEEDLES = new NeedleGate(RULES);

/** Runs every rule whose needles occur in the (lower-cased) text. */
export function scanRules(lower: string, signal?: BudgetSignal): RuleHit[] {
  const hits: RuleHit[] = [];
  const hasNeedle = RULE_NEEDLES.in(lower);
  for (const r of RULES) {
    checkBudget(signal);
    if (!hasNeedle(r)) continue;
    r.re.lastIndex = 0;
    let m: RegExpExecArray | null;
    let n = 0;
    while ((m = r.re.exec(lower)) !== null && n < 100) {
      if (m[0].length === 0) {
        r.re.lastIndex++;
        continue;
      }
      hits.push({ rule: r, start: m.index, end: m.index + m[0].length });
      n++;
    }
  }
  return hits;
}

interface HiddenRegion { kind: string; start: number; end: number }

/** Places a human reader does not see but a model reading the document does. */
function hiddenRegions(lower: string): HiddenRegion[] {
  const out: HiddenRegion[] = [];
  let i = lower.indexOf('<!--');
  while (i !== -1 && out.length < 5000) {
    const e = lower.indexOf('-->', i + 4);
    const end = e === -1 ? lower.length : e;
    out.push({ kind: 'html_comment', start: i + 4, end });
    i = e === -1 ? -1 : lower.indexOf('<!--', e + 3);
  }
  const patterns: Array<[string, RegExp]> = [
    ['alt_text', /\b(?:alt|title|aria-label)\s{0,3}=\s{0,3}(?:"([^"]{1,4000})"|'([^']{1,4000})')/g],
    ['alt_text', /!\[([^\]\n]{1,1000})\]\(/g],
    ['hidden_element', /<[a-z][a-z0-9]{0,15}\s[^>]{0,300}?(?:display\s{0,2}:\s{0,2}none|visibility\s{0,2}:\s{0,2}hidden|font-size\s{0,2}:\s{0,2}0(?:px|pt|em)?\b|opacity\s{0,2}:\s{0,2}0(?:\.0)?\b|color\s{0,2}:\s{0,2}(?:white|#fff(?:fff)?)\b|\shidden(?=[\s>]))[^>]{0,300}>([^<]{1,4000})/g],
  ];
  for (const [kind, re] of patterns) {
    re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(lower)) !== null && out.length < 10000) {
      const body = m[1] ?? m[2] ?? '';
      const start = m.index + m[0].lastIndexOf(body);
      out.push({ kind, start, end: start + body.length });
    }
  }
  return out;
}

function bump(s: Severity): Severity {
  return s === 'critical' || s === 'high' ? 'critical' : s === 'medium' ? 'high' : 'medium';
}

/** Words of a text that talks about injection rather than performing it. */
const DISCUSSION = /\b(?:prompt[- ]injections?|jailbreak(?:s|ing)?|injection attacks?|what (?:is|are|does|do)|how (?:do|does|can|could|would|to)|why (?:do|does|would)|explain|examples?|such as|phrases? (?:like|such)|called|refers? to|defen[cs]es?|defend|detect(?:s|ed|ion|ing)?|research|paper|article|blog|classif(?:y|ier|ication)|dataset|benchmark|mitigat\w{1,6}|red[- ]team\w{0,3}|security|recogni[sz]e|filter(?:s|ing)?)\b/i;
/** Quoted spans: '...', "...", `...`, “...”, «...», of at most 600 characters on one line. */
const QUOTED = /'[^'\n]{4,600}'|"[^"\n]{4,600}"|`[^`\n]{4,600}`|\u201c[^\u201d\n]{4,600}\u201d|\u00ab[^\u00bb\n]{4,600}\u00bb/g;
/** Families a quotation can account for; hidden text, encodings and delimiters never are. */
const QUOTABLE = new Set(['instruction_override', 'role_hijack', 'system_prompt_extraction', 'jailbreak', 'ml_classifier']);

/**
 * A prompt that quotes an injection in order to ask about it ("what does 'ignore previous
 * instructions' do?") is not an injection. When the text reads as a discussion and every
 * finding disappears once the quoted spans are blanked out, the findings collapse into one low
 * finding that says so; otherwise undefined (keep the findings).
 */
function discussedOnly(text: string, findings: PromptInjectionFinding[], signal?: BudgetSignal): PromptInjectionFinding[] | undefined {
  if (findings.length === 0 || !findings.every((f) => QUOTABLE.has(f.category)) || !DISCUSSION.test(text)) return undefined;
  QUOTED.lastIndex = 0;
  if (!QUOTED.test(text)) return undefined;
  const blanked = text.replace(QUOTED, (q) => ' '.repeat(q.length));
  if (scanRules(lowerSameLength(blanked), signal).length > 0) return undefined;
  // A classifier finding stays when the classifier still fires on the text outside the quotes:
  // a long jailbreak that merely contains quoted names or phrases is not a discussion of one.
  const model = shippedModel();
  if (findings.some((f) => f.category === 'ml_classifier') && !(model instanceof Error) && model.scoreText(blanked, signal) >= model.threshold) return undefined;
  return [{ category: 'discussed_injection', pattern: `quoted:${findings[0].pattern}`, severity: 'low', match: findings[0].match }];
}

export function analyzePromptInjection(text: string, signal?: BudgetSignal): PromptInjectionReport {
  const findings: PromptInjectionFinding[] = [];
  const seen = new Set<string>();
  const found = new Set<string>();
  const add = (f: PromptInjectionFinding): void => {
    const key = `${f.category}|${f.pattern}`;
    if (seen.has(key) || findings.length >= MAX_FINDINGS) return;
    seen.add(key);
    findings.push(f);
  };

  const lower = lowerSameLength(text);
  const regions = hiddenRegions(lower);
  for (const h of scanRules(lower, signal)) {
    found.add(h.rule.id);
    const region = regions.find((r) => h.start >= r.start && h.end <= r.end);
    add({
      category: region ? 'indirect_injection' : h.rule.family,
      pattern: region ? `${region.kind}:${h.rule.id}` : h.rule.id,
      severity: h.rule.severity,
      match: safeExcerpt(text, h.start, h.end),
    });
  }

  // Character-level evasions, applied cumulatively so combined tricks are undone too.
  const hasZw = ZERO_WIDTH.test(text);
  ZERO_WIDTH.lastIndex = 0;
  const hasBidi = BIDI.test(text);
  BIDI.lastIndex = 0;
  const passes: Array<[string, boolean, (t: string) => string | undefined]> = [
    [hasBidi && !hasZw ? 'bidi' : 'zero_width', hasZw || hasBidi, stripInvisible],
    ['fullwidth', hasFullwidth(text), foldFullwidth],
    ['homoglyph', hasHomoglyphs(text), foldHomoglyphs],
    ['leetspeak', hasLeet(text), (t) => foldLeet(t, RULE_VOCABULARY)],
  ];
  const model = shippedModel();
  const classify = (decoded: string, chain: string): void => {
    if (model instanceof Error || decoded.length === 0) return;
    const p = model.scoreText(decoded, signal);
    if (p < model.threshold) return;
    add({ category: 'encoding_evasion', pattern: `${chain}:ml_classifier p=${p.toFixed(2)}`, severity: p >= 0.97 ? 'critical' : 'high', match: safeExcerpt(decoded, 0, Math.min(decoded.length, 160), 0) });
  };
  const rulesBefore = found.size;
  let current = text;
  let leetFolded: string | undefined;
  for (const [name, applies, fold] of passes) {
    if (!applies) continue;
    checkBudget(signal);
    const folded = fold(current);
    if (folded === undefined || folded === current) continue;
    current = folded;
    if (name === 'leetspeak') leetFolded = folded;
    const cl = lowerSameLength(current);
    for (const h of scanRules(cl, signal)) {
      if (found.has(h.rule.id)) continue;
      found.add(h.rule.id);
      add({ category: 'encoding_evasion', pattern: `${name}:${h.rule.id}`, severity: bump(h.rule.severity), match: safeExcerpt(current, h.start, h.end) });
    }
  }

  // The classifier reads the leetspeak-folded text too, when folding changed it and no rule
  // matched the folded form.
  if (leetFolded !== undefined && found.size === rulesBefore) classify(leetFolded, 'leetspeak');

  checkBudget(signal);
  // ROT13 only when some rule word occurs in ROT13 form (one pass over the text first).
  if (ROT13_NEEDLES.occursIn(lower)) {
    const r13 = rot13(text);
    const r13lower = lowerSameLength(r13);
    let hit = false;
    for (const h of scanRules(r13lower, signal)) {
      hit = true;
      if (found.has(h.rule.id)) continue;
      found.add(h.rule.id);
      add({ category: 'encoding_evasion', pattern: `rot13:${h.rule.id}`, severity: bump(h.rule.severity), match: safeExcerpt(r13, h.start, h.end) });
    }
    if (!hit) classify(r13, 'rot13');
  }

  // Encoded segments, decoded and rescanned (one nested level: base64 inside URL-encoding etc.).
  const queue = decodeSegments(text).map((s) => ({ ...s, chain: s.encoding as string, depth: 1 }));
  while (queue.length > 0) {
    checkBudget(signal);
    const seg = queue.shift();
    if (!seg) break;
    const decoded = foldHomoglyphs(foldFullwidth(stripInvisible(seg.decoded)));
    const dl = lowerSameLength(decoded);
    const segHits = scanRules(dl, signal);
    for (const h of segHits) {
      add({ category: 'encoding_evasion', pattern: `${seg.chain}:${h.rule.id}`, severity: bump(h.rule.severity), match: safeExcerpt(decoded, h.start, h.end) });
    }
    if (segHits.length === 0) classify(decoded, seg.chain);
    if (seg.depth < 2) {
      for (const inner of decodeSegments(decoded)) queue.push({ ...inner, chain: `${seg.chain}+${inner.encoding}`, depth: seg.depth + 1 });
    }
  }

  const unread = { chunks: 0 };
  if (!(model instanceof Error)) {
    const p = model.scoreText(text, signal, unread);
    if (p >= model.threshold) {
      add({ category: 'ml_classifier', pattern: `logistic-regression p=${p.toFixed(2)}`, severity: p >= 0.97 ? 'high' : 'medium', match: '' });
    }
  }

  const discussed = discussedOnly(text, findings, signal);
  if (discussed) findings.splice(0, findings.length, ...discussed);

  const worst = maxSeverity(findings.map((f) => f.severity));
  const riskLevel: RiskLevel = worst === undefined || worst === 'info' ? 'none' : worst;
  findings.sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity]);
  return { detected: findings.length > 0, riskLevel, findings, classifierUnreadChunks: unread.chunks };
}

const FAMILY_NAMES: Record<string, string> = {
  instruction_override: 'Prompt injection: instruction override',
  role_hijack: 'Prompt injection: role/persona hijack',
  system_prompt_extraction: 'Prompt injection: system-prompt extraction',
  jailbreak: 'Prompt injection: jailbreak template',
  delimiter_injection: 'Prompt injection: delimiter/markup injection',
  indirect_injection: 'Prompt injection: indirect (hidden) injection',
  encoding_evasion: 'Prompt injection hidden by encoding',
  ml_classifier: 'Prompt injection (classifier)',
  discussed_injection: 'Prompt injection quoted in a discussion',
};

function toFindings(report: PromptInjectionReport): Finding[] {
  return report.findings.map((f) => ({
    id: `payload.prompt_injection.${f.category}.${f.pattern.replace(/[^a-z0-9_:+.-]/gi, '_')}`,
    name: FAMILY_NAMES[f.category] ?? 'Prompt injection',
    severity: f.severity,
    confidence: f.category === 'ml_classifier' ? Number(/p=([\d.]+)/.exec(f.pattern)?.[1] ?? 0.5) : f.category === 'encoding_evasion' ? 0.9 : 0.8,
    category: 'prompt-injection',
    description: f.category === 'ml_classifier'
      ? 'The prompt-injection classifier scored part of the payload as an injection.'
      : `Matched ${f.pattern} (${f.category.replace(/_/g, ' ')}).`,
    excerpt: f.match || undefined,
  }));
}

/** Info (no score effect): part of the payload was read by the rules only. */
function unreadFinding(n: number): Finding[] {
  if (n === 0) return [];
  return [{
    id: 'payload.prompt_injection.classifier_unread_script',
    name: 'Prompt-injection classifier could not read part of the payload',
    severity: 'info',
    confidence: 1,
    category: 'prompt-injection',
    description: `${n} chunk${n === 1 ? '' : 's'} of up to 800 characters ${n === 1 ? 'is' : 'are'} in a script the classifier has no features for; only the rules read ${n === 1 ? 'it' : 'them'}.`,
  }];
}

export const promptInjectionEngine: Engine = {
  name: 'prompt_injection',
  async scan(subject: ScanSubject, ctx: EngineContext): Promise<EngineOutput> {
    const report = analyzePromptInjection(payloadText(subject), deadlineSignal(ctx));
    const model = shippedModel();
    return {
      findings: [...toFindings(report), ...unreadFinding(report.classifierUnreadChunks)],
      report: { promptInjection: report },
      note: model instanceof Error ? `prompt-injection classifier unavailable: ${model.message}` : undefined,
    };
  },
};
