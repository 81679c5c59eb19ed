/**
 * Schemas of the messaging API: the single source for validation (routes and the message
 * pipeline), the TypeScript types derived from them (json-schema-to-ts) and the OpenAPI document.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { pageOffsetProperty } from '../json-schema';
import type { JsonSchema } from '../http/schema';
import { FIXED_LIMITS } from '../accounts/plans';

export const MESSAGE_TYPES = ['publish', 'heartbeat', 'state_new', 'state_update', 'client_cmd_resp'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

export const ENTITY_NAME_PATTERN = '^[A-Za-z0-9_.-]{1,64}$';
export const tagsSchema = {
  type: 'array', maxItems: FIXED_LIMITS.tagsPerMessage, items: { type: 'string', minLength: 1, maxLength: 128 },
} as const;

/** One message from an entity (HTTP body of POST /api/entities/message, MQTT publish payload). */
export const messageSchema: JsonSchema = {
  type: 'object',
  required: ['msg_type'],
  properties: {
    msg_type: { type: 'string', enum: [...MESSAGE_TYPES] },
    data: { type: 'object', description: `Arbitrary key-value payload, at most ${FIXED_LIMITS.messageDataBytes} bytes serialized. Required except for heartbeats (mem_free, mem_total, disk_free, disk_size).` },
    timestamp: { type: 'string', format: 'date-time', description: 'RFC 3339; defaults to server time' },
    dest: { type: 'string', description: 'Destination entity (name, or resourcePath in the same account) of a directed message; required for client_cmd_resp (the command\'s sender)' },
    context: {
      type: 'object',
      properties: { tags: { ...tagsSchema, description: `Routing/filter tags, at most ${FIXED_LIMITS.tagsPerMessage}` } },
    },
  },
};

export interface InboundMessage {
  msg_type: string;
  data?: Record<string, unknown>;
  timestamp?: string;
  dest?: string;
  context?: { tags?: string[] };
}

export const publishResultSchema: JsonSchema = {
  type: 'object', required: ['code', 'content'],
  properties: { code: { type: 'integer', enum: [200] }, content: { type: 'string', description: 'The stored message id' } },
};

export const batchBodySchema: JsonSchema = {
  type: 'array', minItems: 1, maxItems: FIXED_LIMITS.batchMessagesMax,
  // No item type here: an entry that is not an object gets its own 400 in the results, and the
  // others are still stored (one bad message does not fail the others).
  items: { description: 'A message as for POST /api/entities/message; each is judged on its own (an entry that is not an object gets its own 400)' },
};
export const batchResultSchema: JsonSchema = {
  type: 'object', required: ['results'],
  properties: {
    results: {
      type: 'array',
      description: 'One entry per input message, in order: {code: 200, content: id} (heartbeat: content "") or {code: 4xx, reason, errorCode?}',
      items: {
        type: 'object', required: ['code'],
        properties: { code: { type: 'integer' }, content: { type: 'string' }, reason: { type: 'string' }, errorCode: { type: 'string' } },
      },
    },
  },
};

export const statusTableSchema: JsonSchema = {
  type: 'object', required: ['statusTable'], properties: { statusTable: { type: 'object' } },
};
export const statusTableBodySchema: JsonSchema = {
  type: 'object', description: 'Any JSON object; stored and returned exactly as sent',
};

/** Message as delivered to an entity by check_messages (and the MQTT messages topic). */
export const deliveredMessageSchema: JsonSchema = {
  type: 'object', required: ['id', 'msg_type', 'data', 'tags', 'source', 'timestamp'],
  properties: {
    id: { type: 'string' },
    msg_type: { type: 'string' },
    data: { type: 'object', description: 'Contains validation = {result: "failed", actionResults} when service rules failed' },
    tags: { type: 'array', items: { type: 'string' } },
    source: { type: 'string', description: 'Sender entity resource path' },
    timestamp: { type: 'string', format: 'date-time' },
  },
};
export const checkMessagesQuerySchema: JsonSchema = {
  type: 'object', additionalProperties: false,
  properties: { limit: { type: 'integer', minimum: 1, maximum: FIXED_LIMITS.messagesPageMax, default: FIXED_LIMITS.checkMessagesDefault } },
};
export const checkMessagesResultSchema: JsonSchema = {
  type: 'object', required: ['messages'],
  properties: { messages: { oneOf: [{ type: 'array', items: deliveredMessageSchema }, { type: 'null' }], description: 'null when nothing is pending' } },
};

export const messageItemSchema: JsonSchema = {
  type: 'object', required: ['id', 'source', 'destination', 'msgType', 'data', 'tags', 'timestamp'],
  properties: {
    id: { type: 'string' },
    source: { type: 'string', description: 'Sender resource path' },
    destination: { type: ['string', 'null'], description: 'Destination entity name of a directed message, else null' },
    msgType: { type: 'string', enum: ['publish'] },
    data: { type: 'object' },
    tags: { type: 'array', items: { type: 'string' } },
    timestamp: { type: 'string', format: 'date-time' },
  },
};
export const messageListSchema: JsonSchema = {
  type: 'object', required: ['messages', 'next_cursor'],
  properties: {
    messages: { type: 'array', items: messageItemSchema },
    next_cursor: { type: ['integer', 'null'], description: 'Offset of the next page, passed back as offset; null on the last page' },
  },
};
export const messageListQuerySchema: JsonSchema = {
  type: 'object', additionalProperties: false,
  properties: {
    entity_name: { type: 'string', pattern: ENTITY_NAME_PATTERN, description: 'Only messages sent by this entity' },
    limit: { type: 'integer', minimum: 1, maximum: FIXED_LIMITS.messagesPageMax, default: FIXED_LIMITS.messagesPageDefault },
    offset: pageOffsetProperty,
  },
};
export const messageSearchSchema = {
  type: 'object', additionalProperties: false,
  properties: {
    entity_name: { type: 'string', pattern: ENTITY_NAME_PATTERN, description: 'Only messages sent by this entity' },
    tags: { type: 'array', maxItems: FIXED_LIMITS.tagsPerMessage, items: { type: 'string' }, description: 'Messages carrying any of these tags' },
    from: { type: 'string', format: 'date-time', description: 'Inclusive lower bound of timestamp' },
    to: { type: 'string', format: 'date-time', description: 'Exclusive upper bound of timestamp' },
    limit: { type: 'integer', minimum: 1, maximum: FIXED_LIMITS.messagesPageMax, default: FIXED_LIMITS.messagesPageDefault },
    offset: pageOffsetProperty,
  },
} as const;
export type MessageSearch = FromSchema<typeof messageSearchSchema>;

const ruleSchema = {
  type: 'object', required: ['name', 'schema'], additionalProperties: false,
  properties: { name: { type: 'string', minLength: 1, maxLength: 100 }, schema: { type: 'object', description: 'JSON Schema applied to the message data' } },
} as const;
export const serviceBodySchema = {
  type: 'object', required: ['name', 'rules'], additionalProperties: false,
  properties: { name: { type: 'string', minLength: 1, maxLength: 100 }, rules: { type: 'array', maxItems: 50, items: ruleSchema } },
} as const;
export const servicePatchSchema = {
  type: 'object', additionalProperties: false, minProperties: 1,
  properties: { name: { type: 'string', minLength: 1, maxLength: 100 }, rules: { type: 'array', maxItems: 50, items: ruleSchema } },
} as const;
export type ServiceRule = FromSchema<typeof ruleSchema>;
export type ServiceInput = FromSchema<typeof serviceBodySchema>;
export type ServicePatch = FromSchema<typeof servicePatchSchema>;
export const serviceViewSchema: JsonSchema = {
  type: 'object', required: ['id', 'name', 'rules', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string' }, name: { type: 'string' }, rules: { type: 'array', items: ruleSchema },
    createdAt: { type: 'string', format: 'date-time' }, updatedAt: { type: 'string', format: 'date-time' },
  },
};
export const serviceListSchema: JsonSchema = {
  type: 'object', required: ['services'], properties: { services: { type: 'array', items: serviceViewSchema } },
};

export const notificationsSchema: JsonSchema = {
  type: 'object', required: ['notifications'],
  properties: {
    notifications: {
      type: 'array',
      items: {
        type: 'object', required: ['id', 'kind', 'period', 'message', 'usedBytes', 'limitBytes', 'createdAt'],
        properties: {
          id: { type: 'string' }, kind: { type: 'string', enum: ['data_limit_80', 'data_limit_100'] },
          period: { type: 'string', description: 'UTC month, YYYY-MM' }, message: { type: 'string' },
          usedBytes: { type: 'integer' }, limitBytes: { type: 'integer' }, createdAt: { type: 'string', format: 'date-time' },
        },
      },
    },
  },
};

export const messagesExportQuerySchema = {
  type: 'object', additionalProperties: false,
  properties: {
    format: { type: 'string', enum: ['csv', 'json'], default: 'csv' },
    from: { type: 'string', format: 'date-time', description: 'Inclusive lower bound of timestamp' },
    to: { type: 'string', format: 'date-time', description: 'Exclusive upper bound of timestamp' },
  },
} as const;
export const auditExportQuerySchema = {
  type: 'object', additionalProperties: false,
  properties: {
    format: { type: 'string', enum: ['csv', 'json'], default: 'csv' },
    resourceType: { type: 'string', maxLength: 64 },
    action: { type: 'string', maxLength: 64 },
    from: { type: 'string', format: 'date-time' },
    to: { type: 'string', format: 'date-time' },
  },
} as const;
export type MessagesExportQuery = FromSchema<typeof messagesExportQuerySchema>;
export type AuditExportQuery = FromSchema<typeof auditExportQuerySchema>;

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
