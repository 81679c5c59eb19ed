/**
 * `scan`: a payload, or a file stored by file transfer, through the scan pipeline (the account's
 * quota and profiles apply); the verdict is the output.
 */
import { defineKind, NodeFailure } from './types';

export const scanConfigSchema = {
  type: 'object',
  additionalProperties: false,
  oneOf: [{ required: ['payload'] }, { required: ['file_id'] }],
  properties: {
    payload: { type: 'string', maxLength: 10 * 1024 * 1024, description: 'Text to scan; `{{ }}` templates allowed' },
    file_id: { type: 'string', minLength: 1, maxLength: 256, description: 'A delivered file of this account (file transfer); `{{ }}` templates allowed' },
    label: { type: 'string', maxLength: 256 },
    profile_id: { type: 'string', maxLength: 64 },
  },
} as const;

export const scanNode = defineKind<{ payload?: unknown; file_id?: unknown; label?: string; profile_id?: string }>({
  type: 'scan',
  summary: 'Scans a payload (payload engines) or a stored file (file engines); output is the scan result (safetyScore, threat level, recommended action)',
  configSchema: scanConfigSchema,
  example: { payload: '{{ nodes.fetch.body.comment }}', label: 'comment.txt' },
  async execute(config, _ctx, run, deps) {
    const requestId = `run-${run.runId}-${run.nodeId}-${run.execution}`;
    if (config.file_id !== undefined) {
      if (typeof config.file_id !== 'string' || config.file_id === '') throw new NodeFailure('scan file_id must be a non-empty string', false);
      return { output: await deps.scanner.scanStoredFile({ accountId: run.accountId, requestId, fileId: config.file_id, label: config.label, profileId: config.profile_id }) };
    }
    const text = typeof config.payload === 'string' ? config.payload : JSON.stringify(config.payload);
    if (text === undefined) throw new NodeFailure('scan payload is empty', false);
    const result = await deps.scanner.scanPayload({
      accountId: run.accountId, requestId,
      content: Buffer.from(text, 'utf8'), label: config.label ?? `${run.nodeId}.txt`, profileId: config.profile_id,
    });
    return { output: result };
  },
});
