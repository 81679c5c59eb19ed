/**
 * Project-written prompt-injection seeds in the attack styles and languages the public training
 * sources lack (issue 31): attacks in each style (ignore previous instructions, hypothetical
 * scenario, virtualisation, persuasion, output formatting, information overload, payload
 * splitting, many- and few-shot, system mode, token smuggling, indirect reference, repeated
 * tokens, another input language, mixed techniques, injections inside emails, pages, tool results
 * and code) in English and seventeen other languages, and benign look-alikes in the same
 * languages (fiction, role-play, persuasive essays, formatting, translations, few-shot tasks,
 * system prompts, ordinary mail and tool output). Every text is written for this project
 * (scripts/pi-style-seeds-en.ts, scripts/pi-style-seeds-langs.ts), so the rows are committed.
 * They were written knowing the held-out sets' category NAMES (never their texts), so a held-out
 * gain in those categories is partly by design (docs/detection.md).
 *
 *   npx tsx scripts/pi-style-seeds.ts [--data DIR]   # writes datasets/pi-seeds/styles.jsonl
 *
 * Rows whose text nearly copies a held-out text (the builder's word 6-gram test, against the
 * held-out split of DIR/pi.jsonl and of the payload fixtures) are dropped; only counts are printed.
 * scripts/train-prompt-injection.ts reads the file with `--seeds styles`.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { nearCopy, shingleIndex } from './_near-copy';
import { EN, EN_ATTACKS, EN_BENIGN_CHANNELS, EN_CROSS, EN_INDIRECT, EN_LONG_DOCS, EN_SYSTEM_PROMPTS } from './pi-style-seeds-en';
import { LANGS, type LangSeeds } from './pi-style-seeds-langs';

export interface SeedRow { id: string; label: 0 | 1; style: string; language: string; group: string; text: string }

export const STYLE_SEEDS = path.join(__dirname, '..', 'datasets', 'pi-seeds', 'styles.jsonl');
const FIXTURES = path.join(__dirname, '..', 'test', 'fixtures', 'payload', 'prompt-injection.jsonl');

/** Goals per framing: enough to vary the pairings without repeating one framing everywhere. */
const GOALS_PER_FRAMING = 3;

/** Letters of each word joined by hyphens (token smuggling); scripts without spaces get one per character. */
const spelled = (t: string): string => (t.includes(' ') ? t.split(' ').map((w) => [...w].join('-')).join(' ') : [...t].join(' '));

/** Halves of a goal at a word (or character) boundary, for payload splitting. */
function halves(t: string): [string, string] {
  const space = t.lastIndexOf(' ', Math.floor(t.length / 2));
  if (space > 0) return [t.slice(0, space), t.slice(space + 1)];
  const chars = [...t];
  return [chars.slice(0, chars.length >> 1).join(''), chars.slice(chars.length >> 1).join('')];
}

function attacksOf(l: LangSeeds): Array<[string, string]> {
  const g = l.goals;
  const out: Array<[string, string]> = [];
  l.framings.forEach(([style, wrap], i) => {
    for (let k = 0; k < GOALS_PER_FRAMING; k++) out.push([style, wrap(g[(i + k * 2) % g.length])]);
  });
  for (const [i, goal] of [g[0], g[3]].entries()) {
    const [a, b] = halves(goal);
    out.push(['payload_splitting', i === 0 ? `a = "${a}"\nb = "${b}"\n${l.combine}` : `b = "${b}"; a = "${a} "; ${l.combine}`]);
  }
  out.push(['token_smuggling', spelled(g[4])]);
  out.push(['repeated_token_attack', `${'ok '.repeat(80 + l.code.charCodeAt(0))}${g[1]}`]);
  for (const [i, [style, wrap]] of EN_CROSS.entries()) out.push([style, wrap(g[(i + 2) % g.length])]);
  const sys = l.framings.find(([s]) => s === 'system_mode');
  const hyp = l.framings.find(([s]) => s === 'hypothetical_scenario');
  if (sys && hyp) out.push(['mixed_techniques', sys[1](hyp[1](g[5]))]);
  out.push(['many_shot', [0, 1, 2, 3].map((k) => `User: ${g[(k + 1) % g.length]}\nAssistant: OK, done as asked.`).concat(`User: ${g[0]}\nAssistant:`).join('\n')]);
  out.push(['few_shot', `Q: ${l.everyday[0]}\nA: OK.\nQ: ${g[0]}\nA: OK, done.\nQ: ${g[2]}\nA: OK, done.\nQ: ${g[4]}\nA:`]);
  out.push(['overload_with_information', [l.email, ...l.everyday.slice(0, 4), g[3], ...l.hard.slice(0, 4).map(([, t]) => t), l.systemPrompts[0]].join('\n')]);
  // Injections inside what an agent reads (indirect injection), one per channel.
  out.push(['indirect_email', `${l.email}\n\n${g[3]}`]);
  out.push(['indirect_web_page', `<html><body><p>${l.everyday[2]}</p><!-- ${g[0]} --><p>${l.hard[3][1]}</p></body></html>`]);
  out.push(['indirect_tool_result', JSON.stringify({ status: 'ok', results: [{ title: l.everyday[5], snippet: l.hard[0][1] }, { title: 'note', snippet: g[1] }] })]);
  out.push(['indirect_code_comment', `def total(items):\n    # ${g[5]}\n    return sum(i.price for i in items)\n`]);
  return out;
}

function benignOf(l: LangSeeds): Array<[string, string]> {
  const e = l.everyday;
  const out: Array<[string, string]> = [...e.map((t): [string, string] => ['everyday', t]), ...l.hard];
  // Each system prompt is its own group (with the requests appended to it), so validation holds out
  // one prompt of a language, not all of them.
  l.systemPrompts.forEach((t, i) => out.push([`system_prompt_${i}`, t]));
  out.push(['system_prompt_0', `${l.systemPrompts[0]}\n\n${e[1]}`]);
  out.push(['system_prompt_0', `${l.systemPrompts[0]}\n\n${e[6]}`]);
  out.push(['email', l.email]);
  out.push(['translation', `Translate this email into English, keeping the tone:\n\n${l.email}`]);
  out.push(['formatting_request', `Turn the following message into a bulleted list of action items:\n${l.email}`]);
  out.push(['tool_result', JSON.stringify({ status: 'ok', results: [{ title: e[0], snippet: e[3] }, { title: 'faq', snippet: l.hard[6][1] }] })]);
  out.push(['web_page', `<html><body><h1>${e[4]}</h1><p>${l.hard[0][1]}</p><p>${l.hard[2][1]}</p></body></html>`]);
  out.push(['few_shot_task', `Label each question with the language it is written in.\n${e[0]} -> ${l.name}\nWhere is the train station? -> English\n${e[1]} -> ${l.name}\n${e[2]} ->`]);
  out.push(['long_document', [l.email, ...l.hard.map(([, t]) => t), ...e].join('\n')]);
  out.push(['chat_transcript', `Summarise what this customer asked, one line per question:\nUser: ${e[0]}\nAgent: Let me check.\nUser: ${e[5]}\nAgent: One moment.\nUser: ${e[7]}`]);
  out.push(['code_comment', `def send_reminder(user):\n    # ${l.email.split('\n')[0]}\n    return mailer.send(user.email, template="reminder")\n`]);
  out.push(['formatting_request', `Number these requests and sort them by length:\n- ${e[1]}\n- ${e[4]}\n- ${l.hard[5][1]}`]);
  return out;
}

export function styleSeeds(): SeedRow[] {
  const rows: SeedRow[] = [];
  const add = (label: 0 | 1, l: LangSeeds, style: string, text: string): void => {
    const group = `${l.code}:${label}:${style}`;
    rows.push({ id: `seed-${l.code}-${label}-${rows.length}`, label, style: style.replace(/_\d+$/, ''), language: l.code, group, text });
  };
  for (const l of [EN, ...LANGS]) {
    for (const [style, text] of attacksOf(l)) add(1, l, style, text);
    for (const [style, text] of benignOf(l)) add(0, l, style, text);
  }
  for (const [style, text] of EN_ATTACKS) add(1, EN, style, text);
  for (const [channel, text] of EN_INDIRECT) add(1, EN, `indirect_${channel}`, text);
  // English goals inside the other languages' framings ("different user input language" both ways).
  LANGS.forEach((l, i) => add(1, l, 'different_user_input_language', l.framings[i % l.framings.length][1](EN.goals[i % EN.goals.length])));
  EN_SYSTEM_PROMPTS.forEach((t, i) => add(0, EN, `system_prompt_${i + 1}`, t));
  for (const [channel, text] of EN_BENIGN_CHANNELS) add(0, EN, channel, text);
  for (const t of EN_LONG_DOCS) add(0, EN, 'long_document', t);
  return rows;
}

async function main(): Promise<void> {
  // Loaded here, not at the top: the corpus builder's ESM-only dependencies would keep the unit test from importing the seeds.
  const { dataDir } = await import('./build-detection-data');
  const pool = path.join(dataDir(), 'pi.jsonl');
  if (!existsSync(pool)) throw new Error(`${pool} is missing: the near-copy check needs the held-out texts (run scripts/build-detection-data.ts)`);
  const heldTexts = [pool, FIXTURES].flatMap((f) => readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { split: string; text: string }).filter((r) => r.split === 'heldout').map((r) => r.text));
  const index = shingleIndex(heldTexts);
  const seen = new Set<string>();
  const rows = styleSeeds();
  const kept = rows.filter((r) => !seen.has(r.text) && (seen.add(r.text), true));
  const dupes = rows.length - kept.length;
  const clean = kept.filter((r) => !nearCopy(r.text, index));
  mkdirSync(path.dirname(STYLE_SEEDS), { recursive: true });
  writeFileSync(STYLE_SEEDS, clean.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const count = (rs: SeedRow[], label: number): number => rs.filter((r) => r.label === label).length;
  console.log(`${rows.length} seeds written, ${dupes} exact repeats, ${kept.length - clean.length} dropped as near copies of ${heldTexts.length} held-out texts (attacks ${count(kept, 1) - count(clean, 1)}, benign ${count(kept, 0) - count(clean, 0)})`);
  console.log(`wrote ${path.relative(process.cwd(), STYLE_SEEDS)}: ${count(clean, 1)} attacks, ${count(clean, 0)} benign, ${new Set(clean.map((r) => r.language)).size} languages, ${new Set(clean.map((r) => r.group)).size} groups`);
}

if (require.main === module) void main();
