/** `device.send`: a message to an entity of the account, through the message pipeline. */
import { createHash } from 'node:crypto';
import { FIXED_LIMITS } from '../../accounts/plans';
import { defineKind, NodeFailure } from './types';

export const deviceSendConfigSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['entity', 'data'],
  properties: {
    entity: { type: 'string', minLength: 1, maxLength: 256, description: 'Entity name or resource path in the account' },
    data: { description: 'An object (or a `{{ }}` template that yields one), at most 5 KB as JSON' },
    tags: { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: FIXED_LIMITS.tagsPerMessage },
  },
} as const;

interface DeviceSendConfig { entity: string; data: unknown; tags?: string[] }

export const deviceSendNode = defineKind<DeviceSendConfig>({
  type: 'device.send',
  summary: 'Sends a message to an entity of the account (check_messages or its MQTT messages topic); output {messageId, entity}',
  configSchema: deviceSendConfigSchema,
  example: { entity: 'thermostat-7', data: { command: 'cool', target: '{{ nodes.convert.celsius - 2 }}' }, tags: ['command'] },
  async execute(config, _ctx, run, deps) {
    const data = config.data;
    if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new NodeFailure('device.send data must be a JSON object', false);
    // The id derives from the run, node and execution: a retried or replayed execution finds
    // the message already sent instead of sending it twice.
    const messageId = deterministicId(`${run.runId}/${run.nodeId}/${run.execution}/${run.index ?? ''}`);
    const sent = await deps.messenger.sendToEntity({
      accountId: run.accountId, entity: config.entity, data: data as Record<string, unknown>, tags: config.tags ?? [],
      messageId, source: `accounts/${run.accountId}/workflows/${run.flowId}`,
    });
    return { output: { messageId: sent.messageId, entity: config.entity } };
  },
});

function deterministicId(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 24);
}
