/** The four payload content-security engines, run for scanType `payload`. */
import type { Engine } from '../../types';
import { codeExtractionEngine } from './code-extraction';
import { promptInjectionEngine } from './prompt-injection';
import { sensitiveDataEngine } from './sensitive-data';
import { toolCallAnalysisEngine } from './tool-calls';

export const payloadEngines: Engine[] = [
  codeExtractionEngine,
  promptInjectionEngine,
  sensitiveDataEngine,
  toolCallAnalysisEngine,
];

export { codeExtractionEngine, promptInjectionEngine, sensitiveDataEngine, toolCallAnalysisEngine };
