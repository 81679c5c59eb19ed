/**
 * Schemas of the entity endpoints (registration and management): the single source for
 * validation, the TypeScript types derived from them and the OpenAPI document.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { pageOffsetProperty } from '../json-schema';
import { FIXED_LIMITS } from '../accounts/plans';
import { ENTITY_NAME_PATTERN, tagsSchema } from '../messaging/schemas';

export const bulkBodySchema = {
  type: 'object',
  description: 'Either count + prefix, or entities (the explicit list takes precedence when both are given)',
  anyOf: [{ required: ['entities'] }, { required: ['count', 'prefix'] }],
  properties: {
    count: { type: 'integer', minimum: 1, maximum: FIXED_LIMITS.bulkRegistrationMax },
    prefix: { type: 'string', minLength: 1, maxLength: 58 },
    tags: tagsSchema,
    metadata: { type: 'object' },
    directoryId: { type: 'string', maxLength: 128 },
    entities: {
      type: 'array', minItems: 1, maxItems: FIXED_LIMITS.bulkRegistrationMax,
      items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, tags: tagsSchema } },
    },
  },
} as const;
export const bulkResultSchema = {
  type: 'object', required: ['created', 'failed', 'results'],
  properties: {
    created: { type: 'integer' },
    failed: { type: 'integer' },
    results: {
      type: 'array',
      items: {
        type: 'object', required: ['name', 'status'],
        properties: {
          name: { type: 'string' }, status: { type: 'string', enum: ['created', 'failed'] },
          apiKeyId: { type: 'string' }, apiKey: { type: 'string', description: 'Shown once' }, resourcePath: { type: 'string' },
          detail: { type: 'string', description: 'Why the entry failed' },
        },
      },
    },
  },
} as const;
export const entityViewSchema = {
  type: 'object', required: ['name', 'resourcePath', 'apiKeyId', 'role', 'tags', 'metadata', 'service', 'online', 'createdAt'],
  properties: {
    name: { type: 'string' }, resourcePath: { type: 'string' }, apiKeyId: { type: 'string' }, role: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } }, metadata: { type: 'object' },
    directoryId: { type: 'string' },
    service: { type: ['string', 'null'], description: 'Id of the validation service assigned, or null' },
    online: { type: 'boolean', description: 'A heartbeat (HTTP or MQTT) or MQTT keep-alive within the last 5 minutes, and no MQTT disconnect since' },
    lastSeenAt: { type: ['string', 'null'], format: 'date-time' },
    metrics: { type: 'object', description: 'Last heartbeat metrics: mem_free, mem_total, disk_free, disk_size' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;
export const entityListSchema = {
  type: 'object', required: ['entities', 'next_cursor'],
  properties: { entities: { type: 'array', items: entityViewSchema }, next_cursor: { type: ['integer', 'null'] } },
} as const;
export const entityListQuerySchema = {
  type: 'object', additionalProperties: false,
  properties: { limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 }, offset: pageOffsetProperty },
} as const;
export const entityPatchSchema = {
  type: 'object', additionalProperties: false, minProperties: 1,
  properties: {
    tags: tagsSchema,
    metadata: { type: 'object', description: 'Replaces the metadata object' },
    role: { type: 'string', pattern: ENTITY_NAME_PATTERN, description: '"default" or a custom role (Standard and Pro)' },
    service: { type: ['string', 'null'], description: 'Validation service id; null removes it' },
  },
} as const;
export const rotatedKeySchema = {
  type: 'object', required: ['name', 'resourcePath', 'apiKeyId', 'apiKey'],
  properties: { name: { type: 'string' }, resourcePath: { type: 'string' }, apiKeyId: { type: 'string' }, apiKey: { type: 'string', description: 'Shown once' } },
} as const;

export type BulkRequest = FromSchema<typeof bulkBodySchema>;
export type EntityPatch = FromSchema<typeof entityPatchSchema>;
