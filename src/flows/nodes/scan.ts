/** `scan`: a payload through the scan pipeline (the account's quota and profiles apply); the verdict is the output. */
import { defineKind, NodeFailure } from './types';

export const scanConfigSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['payload'],
  properties: {
    payload: { type: 'string', maxLength: 10 * 1024 * 1024, description: 'Text to scan; `{{ }}` templates allowed' },
    label: { type: 'string', maxLength: 256 },
    profile_id: { type: 'string', maxLength: 64 },
  },
} as const;

export const scanNode = defineKind<{ payload: unknown; label?: string; profile_id?: string }>({
  type: 'scan',
  summary: 'Scans a payload with the payload-scan engines; output is the scan result (safetyScore, threat level, recommended action)',
  configSchema: scanConfigSchema,
  example: { payload: '{{ nodes.fetch.body.comment }}', label: 'comment.txt' },
  async execute(config, _ctx, run, deps) {
    const text = typeof config.payload === 'string' ? config.payload : JSON.stringify(config.payload);
    if (text === undefined) throw new NodeFailure('scan payload is empty', false);
    const result = await deps.scanner.scanPayload({
      accountId: run.accountId, requestId: `run-${run.runId}-${run.nodeId}-${run.execution}`,
      content: Buffer.from(text, 'utf8'), label: config.label ?? `${run.nodeId}.txt`, profileId: config.profile_id,
    });
    return { output: result };
  },
});
