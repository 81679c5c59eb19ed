/** `delay`: a durable timer in the interpreter; a delay past the run's 10 minutes times the run out. */
import { defineKind } from './types';

export const delayConfigSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['ms'],
  properties: { ms: { type: 'integer', minimum: 0, maximum: 86_400_000 } },
} as const;

export const delayNode = defineKind<{ ms: number }>({
  type: 'delay',
  summary: 'Waits ms milliseconds (a durable timer; no worker is busy meanwhile); output {waitedMs}',
  configSchema: delayConfigSchema,
  example: { ms: 5000 },
});
