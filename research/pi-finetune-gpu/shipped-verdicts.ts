/**
 * The shipped service's verdicts on the texts the fine-tuned encoder is compared on, one JSON line
 * per text (id, SHA-256 of the text, label, detected), so evaluate.py can compare at equal FPR:
 * - held-out prompt-injection rows of the detection corpus: full payload analysis as
 *   `npm run bench -- detection` (detected = Suspicious or worse);
 * - `payload-eval` prompt-injection fixtures (held-out split) and the novel set, and the hard
 *   benign prompts: the prompt-injection engine's `detected`, as bench/payload-eval.ts.
 * Texts are written too (payload fixtures and hard benign prompts only, the project's own), so
 * score-payload.py can score them with the int8 model; held-out texts are never written.
 *
 *   npx tsx research/pi-finetune-gpu/shipped-verdicts.ts DIR/pi.jsonl OUT.jsonl
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { analyze, type AnalyzeDeps } from '../../src/scan/analyze';
import { memoryFeedLookup, parsePlainHashList } from '../../src/scan/engines/feeds';
import { promptInjectionEngine } from '../../src/scan/engines/payload';
import type { PromptInjectionReport } from '../../src/scan/engines/payload/prompt-injection';
import { runEngine, subjectOf } from '../../bench/_payload-common';
import { HARD_BENIGN_PROMPTS } from '../../test/unit/scan/detection/hard-benign-prompts';

interface Rec { id: string; source?: string; split: string; label: number; text: string; name?: string }

const ROOT = path.join(__dirname, '..', '..');
const deps: AnalyzeDeps = { clamd: { host: '127.0.0.1', port: 1 }, feedLookup: memoryFeedLookup(parsePlainHashList('', 'bench')) };
const sha = (t: string): string => createHash('sha256').update(t).digest('hex');
const jsonl = (file: string): Rec[] => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec);

async function main(): Promise<void> {
  const [corpus, out] = process.argv.slice(2);
  const lines: string[] = [];
  for (const r of jsonl(corpus).filter((x) => x.split === 'heldout')) {
    const res = await analyze({ content: Buffer.from(r.text), name: r.name ?? '', scanType: 'payload' }, deps);
    const detected = res.safetyScore.threatLevel === 'Suspicious' || res.safetyScore.threatLevel === 'Malicious';
    lines.push(JSON.stringify({ set: 'heldout', id: r.id, source: r.source, sha: sha(r.text), label: r.label, detected }));
  }
  const fixtures = path.join(ROOT, 'test', 'fixtures', 'payload');
  const own: Array<[string, Rec]> = [
    ...jsonl(path.join(fixtures, 'prompt-injection.jsonl')).filter((r) => r.split === 'heldout').map((r): [string, Rec] => ['payload-eval', r]),
    ...jsonl(path.join(fixtures, 'prompt-injection-novel.jsonl')).map((r): [string, Rec] => ['payload-novel', r]),
    ...HARD_BENIGN_PROMPTS.map((text, i): [string, Rec] => ['hard-benign', { id: `hb-${i}`, split: 'all', label: 0, text }]),
  ];
  for (const [set, r] of own) {
    const rep = ((await runEngine(promptInjectionEngine, subjectOf(r.text, r.name ?? ''))).report ?? {}).promptInjection as PromptInjectionReport;
    lines.push(JSON.stringify({ set, id: r.id, sha: sha(r.text), label: r.label, detected: rep.detected, text: r.text }));
  }
  writeFileSync(out, `${lines.join('\n')}\n`);
  console.log('wrote', lines.length, 'rows');
}

void main();
