import { identify } from '../../../../src/scan/filetype';
import { hashes } from '../../../../src/scan/analyze';
import { FileAnalysis } from '../../../../src/scan/file-analysis';
import type { EngineContext, ScanSubject, ScanType } from '../../../../src/scan/types';

export async function subjectOf(content: Buffer, name = '', depth = 0, scanType: ScanType = 'file'): Promise<ScanSubject> {
  const t = await identify(content, name);
  return { content, name, size: content.length, fileType: t.fileType, contentType: t.contentType, ...hashes(content), depth, scanType, file: new FileAnalysis(content) };
}

export function ctx(budgetMs = 30_000): EngineContext {
  return { signal: new AbortController().signal, budgetMs };
}
