/** Schemas of the messaging API. */
import type { JsonSchema } from '../http/schema';

export const entityInfoSchema: JsonSchema = {
  type: 'object',
  required: ['name', 'resourcePath', 'apiKeyId', 'accountId', 'region', 'tags', 'mqtt'],
  properties: {
    name: { type: 'string' },
    resourcePath: { type: 'string' },
    apiKeyId: { type: 'string' },
    accountId: { type: 'string' },
    region: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
    mqtt: {
      type: 'object',
      required: ['url', 'topics'],
      properties: {
        url: { type: 'string' },
        topics: {
          type: 'object',
          required: ['publish', 'messages', 'state'],
          properties: { publish: { type: 'string' }, messages: { type: 'string' }, state: { type: 'string' } },
        },
      },
    },
  },
};
