import * as fs from 'node:fs';
import * as path from 'node:path';
import { FileAnalysis } from '../../../../src/scan/file-analysis';
import type { Engine, EngineOutput, FileType, ScanSubject } from '../../../../src/scan/types';
import { OUT_DIR, generateStaticFixtures } from '../../../fixtures/scripts/make-static-fixtures';

/** Generates the static fixtures once per checkout (they are git-ignored). */
export function ensureFixtures(): string {
  if (!fs.existsSync(path.join(OUT_DIR, 'index.json'))) generateStaticFixtures();
  return OUT_DIR;
}

export function subject(content: Buffer, fileType: FileType, name = ''): ScanSubject {
  return { content, name, size: content.length, fileType, contentType: 'application/octet-stream', sha256: '', md5: '', sha1: '', depth: 0, scanType: 'file', file: new FileAnalysis(content) };
}

export async function run(engine: Engine, file: string, fileType: FileType): Promise<EngineOutput> {
  const content = fs.readFileSync(path.join(OUT_DIR, file));
  return engine.scan(subject(content, fileType, file), { signal: new AbortController().signal, budgetMs: 10_000 });
}

export async function ids(engine: Engine, file: string, fileType: FileType): Promise<string[]> {
  return (await run(engine, file, fileType)).findings.map((f) => f.id);
}
