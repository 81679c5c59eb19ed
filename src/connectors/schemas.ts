/** Schemas of the connectors API and of the aws.s3 operation (docs/contract.md §7 "Connectors and vault"). */
import type { FromSchema } from 'json-schema-to-ts';

const connectorFields = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  type: { type: 'string', enum: ['aws'] },
  region: { type: 'string', pattern: '^[a-z0-9-]{2,32}$', description: 'AWS region, e.g. eu-west-1' },
  endpoint: { type: 'string', maxLength: 2048, description: 'An S3-compatible endpoint (http or https); omitted = AWS. Internal addresses are refused.' },
  access_key_id: { type: 'string', minLength: 1, maxLength: 128, description: 'Sealed; never returned' },
  secret_access_key: { type: 'string', minLength: 1, maxLength: 256, description: 'Sealed; never returned' },
} as const;

export const connectorCreateSchema = {
  type: 'object',
  required: ['name', 'type', 'region', 'access_key_id', 'secret_access_key'],
  additionalProperties: false,
  properties: connectorFields,
} as const;
export type ConnectorCreate = FromSchema<typeof connectorCreateSchema>;

/** PUT replaces the connector; omitted credentials keep the stored ones (they cannot be read back to resend). */
export const connectorReplaceSchema = {
  type: 'object',
  required: ['name', 'type', 'region'],
  additionalProperties: false,
  properties: connectorFields,
} as const;
export type ConnectorReplace = FromSchema<typeof connectorReplaceSchema>;

export const connectorSchema = {
  type: 'object',
  required: ['id', 'name', 'type', 'region', 'endpoint', 'credentials', 'createdAt', 'updatedAt'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    type: { type: 'string', enum: ['aws'] },
    region: { type: 'string' },
    endpoint: { type: ['string', 'null'] },
    credentials: {
      type: 'object',
      required: ['configured'],
      additionalProperties: false,
      properties: { configured: { type: 'boolean', const: true, description: 'Access key id and secret are stored, sealed; never shown' } },
    },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
} as const;
export type ConnectorView = FromSchema<typeof connectorSchema>;

export const connectorListSchema = {
  type: 'object',
  required: ['connectors'],
  properties: { connectors: { type: 'array', items: connectorSchema } },
} as const;

/** The `aws.s3` node's config (the interpreter validates a definition with it). */
export const s3OperationSchema = {
  type: 'object',
  required: ['connector_id', 'operation', 'bucket'],
  additionalProperties: false,
  properties: {
    connector_id: { type: 'string', minLength: 1 },
    operation: { type: 'string', enum: ['get', 'put', 'list', 'delete'] },
    bucket: { type: 'string', minLength: 3, maxLength: 63 },
    key: { type: 'string', minLength: 1, maxLength: 1024, description: 'Object key; for list, the prefix' },
    body: { description: 'put: a string is stored as is, any other JSON value as its JSON text' },
  },
  if: { properties: { operation: { enum: ['get', 'put', 'delete'] } } },
  then: { required: ['key'] },
} as const;
export type S3OperationConfig = FromSchema<typeof s3OperationSchema>;
