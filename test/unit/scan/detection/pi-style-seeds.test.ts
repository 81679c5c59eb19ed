/**
 * The project-written prompt-injection seeds (scripts/pi-style-seeds.ts, committed as
 * datasets/pi-seeds/styles.jsonl; docs/detection.md, "Prompt injection"): the committed file is
 * the builder's output, it covers every style and language issue 31 names on both sides, and no
 * seed nearly copies a held-out payload fixture (the near-copy check against the public held-out
 * sets needs the git-ignored corpus, so it runs in the builder).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { nearCopy, shingleIndex } from '../../../../scripts/_near-copy';
import { inValidation } from '../../../../scripts/_logreg';
import { STYLE_SEEDS, styleSeeds, type SeedRow } from '../../../../scripts/pi-style-seeds';

const committed = readFileSync(STYLE_SEEDS, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as SeedRow);

const ATTACK_STYLES = [
  'ignore_previous_instructions', 'hypothetical_scenario', 'virtualization', 'persuasion', 'output_formatting_manipulation',
  'overload_with_information', 'payload_splitting', 'many_shot', 'few_shot', 'system_mode', 'token_smuggling', 'indirect_reference',
  'repeated_token_attack', 'different_user_input_language', 'mixed_techniques',
  'indirect_email', 'indirect_web_page', 'indirect_tool_result', 'indirect_code_comment',
];
const LANGUAGES = ['en', 'ar', 'bn', 'zh', 'tl', 'fr', 'de', 'hi', 'id', 'it', 'ja', 'ko', 'pt', 'ru', 'es', 'th', 'tr', 'vi'];

describe('project-written prompt-injection style seeds', () => {
  it('are the builder output, row for row (the file is regenerated, never edited by hand)', () => {
    const built = new Map(styleSeeds().map((r) => [r.id, r]));
    expect(committed.filter((r) => JSON.stringify(built.get(r.id)) !== JSON.stringify(r)).map((r) => r.id)).toEqual([]);
    expect(new Set(committed.map((r) => r.id)).size).toBe(committed.length);
  });

  it('hold at least 600 attacks and 600 benign prompts', () => {
    expect(committed.filter((r) => r.label === 1).length).toBeGreaterThanOrEqual(600);
    expect(committed.filter((r) => r.label === 0).length).toBeGreaterThanOrEqual(600);
  });

  it('cover every attack style, and every language on both sides', () => {
    const styles = new Set(committed.filter((r) => r.label === 1).map((r) => r.style));
    expect(ATTACK_STYLES.filter((s) => !styles.has(s))).toEqual([]);
    for (const label of [0, 1]) {
      const langs = new Set(committed.filter((r) => r.label === label).map((r) => r.language));
      expect(LANGUAGES.filter((l) => !langs.has(l))).toEqual([]);
    }
  });

  it('put whole groups, of both labels, into validation', () => {
    const val = committed.filter((r) => inValidation(r.group));
    expect(new Set(val.map((r) => r.label))).toEqual(new Set([0, 1]));
    const trainGroups = new Set(committed.filter((r) => !inValidation(r.group)).map((r) => r.group));
    expect(val.filter((r) => trainGroups.has(r.group))).toEqual([]);
  });

  it('nearly copy no held-out payload fixture', () => {
    const fixtures = readFileSync(path.join(__dirname, '../../../fixtures/payload/prompt-injection.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { split: string; text: string });
    const index = shingleIndex(fixtures.filter((r) => r.split === 'heldout').map((r) => r.text));
    expect(committed.filter((r) => nearCopy(r.text, index)).map((r) => r.id)).toEqual([]);
  });
});
