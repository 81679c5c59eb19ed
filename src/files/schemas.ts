/**
 * Schemas of file transfer and the clip gallery (docs/contract.md §8): the single source for
 * validation, the TypeScript types below and the OpenAPI document.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { pageOffsetProperty } from '../json-schema';
import { FIXED_LIMITS } from '../accounts/plans';

export const FILE_STATUSES = ['scanning', 'delivered', 'blocked', 'downloaded', 'failed'] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];
export const CLIP_FORMATS = ['jpeg_burst', 'gif'] as const;
export type ClipFormat = (typeof CLIP_FORMATS)[number];

/**
 * The multipart fields of an upload once `tags` and `meta` are parsed from their JSON text.
 * `meta` is the device's own object: only `format` and `fps` have a meaning here.
 */
export const uploadFieldsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    dest: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$', description: 'Recipient entity name; optional for a clip (then it only goes to the gallery)' },
    tags: { type: 'array', maxItems: FIXED_LIMITS.tagsPerMessage, items: { type: 'string', minLength: 1, maxLength: 128 } },
    kind: { type: 'string', enum: ['file', 'clip'], default: 'file' },
    meta: {
      type: 'object',
      properties: {
        format: { type: 'string', enum: [...CLIP_FORMATS] },
        fps: { type: 'number', minimum: FIXED_LIMITS.clipFpsMin, maximum: FIXED_LIMITS.clipFpsMax },
      },
    },
  },
} as const;
export type UploadFields = FromSchema<typeof uploadFieldsSchema>;

export const uploadBodySchema = {
  type: 'object',
  required: ['file'],
  properties: {
    file: { type: 'string', format: 'binary' },
    dest: { type: 'string', description: 'Recipient entity name (required unless kind is clip)' },
    tags: { type: 'string', description: `JSON array of at most ${FIXED_LIMITS.tagsPerMessage} strings` },
    kind: { type: 'string', enum: ['file', 'clip'] },
    meta: { type: 'string', description: 'JSON object, e.g. {"format": "jpeg_burst", "fps": 10}; kept as sent' },
  },
  // Any other part, or one of these twice, is 400 invalid_upload (http/multipart.ts).
  additionalProperties: false,
} as const;

export const acceptedSchema = {
  type: 'object',
  required: ['id', 'status', 'filename', 'size', 'sha256'],
  properties: {
    id: { type: 'string' }, status: { type: 'string', enum: ['scanning'] }, filename: { type: 'string' },
    size: { type: 'integer' }, sha256: { type: 'string' },
  },
} as const;

const verdictSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['score', 'threatLevel', 'primaryThreat'],
  properties: { score: { type: 'integer' }, threatLevel: { type: 'string' }, primaryThreat: { type: 'string' } },
} as const;

const clipInfoSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    format: { type: 'string', enum: [...CLIP_FORMATS] }, frames: { type: 'integer' }, fps: { type: 'number' },
    width: { type: 'integer' }, height: { type: 'integer' }, durationMs: { type: 'integer' },
    video: { type: 'boolean', description: 'An MP4 is available at GET /api/files/{id}/video' },
  },
} as const;

export const fileStatusSchema = {
  type: 'object',
  required: ['id', 'status', 'filename', 'size', 'sha256', 'kind', 'source', 'tags', 'createdAt'],
  properties: {
    id: { type: 'string' },
    status: { type: 'string', enum: [...FILE_STATUSES] },
    verdict: { ...verdictSchema, description: 'Present once the scan has run' },
    error: { type: 'string', description: 'Why a file failed (e.g. a clip that broke a frame rule)' },
    filename: { type: 'string' }, size: { type: 'integer' }, sha256: { type: 'string' }, contentType: { type: 'string' },
    kind: { type: 'string', enum: ['file', 'clip'] }, source: { type: 'string' }, dest: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } }, meta: { type: 'object' },
    clip: clipInfoSchema,
    createdAt: { type: 'string', format: 'date-time' },
    expiresAt: { type: 'string', format: 'date-time' },
  },
} as const;
export type FileStatusView = FromSchema<typeof fileStatusSchema>;

export const inboxQuerySchema = {
  type: 'object',
  properties: { limit: { type: 'integer', minimum: 1, maximum: FIXED_LIMITS.filesPageMax, default: FIXED_LIMITS.filesPageDefault } },
} as const;

export const inboxSchema = {
  type: 'object',
  required: ['files'],
  properties: {
    files: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'filename', 'size', 'contentType', 'sha256', 'source', 'tags', 'kind', 'createdAt'],
        properties: {
          id: { type: 'string' }, filename: { type: 'string' }, size: { type: 'integer' }, contentType: { type: 'string' },
          sha256: { type: 'string' }, source: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } },
          kind: { type: 'string', enum: ['file', 'clip'] }, createdAt: { type: 'string', format: 'date-time' },
        },
      },
    },
  },
} as const;

export const galleryQuerySchema = {
  type: 'object',
  properties: {
    kind: { type: 'string', enum: ['clip'], default: 'clip' },
    limit: { type: 'integer', minimum: 1, maximum: FIXED_LIMITS.filesPageMax, default: FIXED_LIMITS.filesPageDefault },
    offset: { ...pageOffsetProperty, description: 'Skip this many clips; next_cursor of the previous page' },
    entity_name: { type: 'string', description: 'Only clips sent by this entity' },
  },
} as const;
export type GalleryQuery = FromSchema<typeof galleryQuerySchema>;

export const gallerySchema = {
  type: 'object',
  required: ['files', 'next_cursor'],
  properties: {
    files: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'source', 'createdAt', 'status', 'size'],
        properties: {
          id: { type: 'string' }, source: { type: 'string' }, createdAt: { type: 'string', format: 'date-time' },
          size: { type: 'integer', description: 'Bytes of the clip as uploaded' },
          frames: { type: 'integer' }, fps: { type: 'number' }, width: { type: 'integer' }, height: { type: 'integer' },
          durationMs: { type: 'integer' }, status: { type: 'string', enum: [...FILE_STATUSES] },
          format: { type: 'string', enum: [...CLIP_FORMATS] }, error: { type: 'string' },
        },
      },
    },
    next_cursor: { type: ['string', 'null'], description: 'The offset of the next page, null on the last page' },
  },
} as const;
