/**
 * Schemas of the scanning API: requests validated by ajv, responses documented in OpenAPI, and
 * the single source of the TypeScript types below (json-schema-to-ts `FromSchema`).
 */
import type { FromSchema } from 'json-schema-to-ts';
import { FIXED_LIMITS } from '../accounts/plans';
import { FILE_TYPES } from './types';

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const strArr = { type: 'array', items: str } as const;

export const cveRecordSchema = {
  type: 'object',
  required: ['id', 'description', 'cvss', 'references'],
  additionalProperties: false,
  properties: {
    id: str, description: str, cvss: { type: 'number' }, references: strArr,
    component: { type: 'string', description: 'The component and version that matched, e.g. "log4j-core 2.14.1"' },
  },
} as const;

export const safetyScoreSchema = {
  type: 'object',
  required: ['score', 'threatLevel', 'confidence', 'confidenceScore', 'confidenceReason', 'primaryThreat', 'threatSummary', 'enginesUsed', 'recommendedAction', 'coverage'],
  properties: {
    score: { type: 'integer', minimum: 0, maximum: 100 },
    threatLevel: { type: 'string', enum: ['Clean', 'Informational', 'Suspicious', 'Malicious', 'Rejected', 'Error'], description: 'Treat an unrecognised value as unsafe' },
    confidence: { type: 'string', enum: ['High', 'Medium', 'Low'] },
    confidenceScore: { type: 'number', minimum: 0, maximum: 1 },
    confidenceReason: str,
    primaryThreat: str,
    threatSummary: str,
    enginesUsed: strArr,
    recommendedAction: { type: 'string', enum: ['Allow', 'Review', 'Block'] },
    suppressedEngines: strArr,
    coverage: { type: 'string', enum: ['full', 'partial', 'minimal'] },
    coverageNote: str,
    cveFindings: { type: 'array', items: cveRecordSchema },
    error: str,
  },
} as const;

export const scanResultSchema = {
  type: 'object',
  required: ['scanId', 'requestId', 'name', 'hash', 'size', 'contentType', 'safetyScore', 'scanTimeMs', 'scanType', 'timestamp'],
  properties: {
    scanId: { type: 'string', format: 'uuid' },
    requestId: str,
    name: { type: 'string', description: 'File name, or the payload label; empty when none' },
    hash: { type: 'string', description: 'SHA-256 of the scanned content' },
    size: int,
    contentType: str,
    fileType: { type: 'string', enum: [...FILE_TYPES] },
    safetyScore: safetyScoreSchema,
    scanTimeMs: int,
    scanType: { type: 'string', enum: ['file', 'payload'] },
    timestamp: { type: 'integer', description: 'Unix time (seconds)' },
    engines: { type: 'object', description: 'Per-engine outcome keyed by engine name: status (ok, error, timeout, unavailable, skipped), durationMs, findings' },
    details: { type: 'object', description: 'Other engine reports (archive members, CVE components, ...)' },
    codeExtraction: { type: 'object', properties: { blocksFound: int, indicators: strArr, matches: { type: 'array' }, dangerBlocks: { type: 'array' } } },
    promptInjection: { type: 'object', properties: { detected: { type: 'boolean' }, riskLevel: str, findings: { type: 'array' }, classifierUnreadChunks: { ...int, description: 'Chunks (up to 800 characters) the classifier could not score: only letters of scripts its features do not read; the rules read them' } } },
    sensitiveData: { type: 'object', properties: { detected: { type: 'boolean' }, findings: { type: 'array' } } },
    toolCallAnalysis: { type: 'object', properties: { detected: { type: 'boolean' }, toolCalls: int, findings: { type: 'array' } } },
  },
} as const;

export const pendingAcceptedSchema = {
  type: 'object',
  required: ['scanId', 'requestId', 'status', 'message'],
  properties: { scanId: str, requestId: str, status: { const: 'pending' }, message: str },
} as const;

export const envelopeSchema = {
  type: 'object',
  required: ['scanId', 'requestId', 'status', 'filename', 'createdAt'],
  properties: {
    scanId: str, requestId: str, status: { type: 'string', enum: ['pending', 'complete'] }, filename: str,
    createdAt: { type: 'string', format: 'date-time' },
    fileHash: str, fileSize: int, contentType: str, safetyScore: { type: 'integer' }, threatLevel: str, primaryThreat: str,
    scanTimeMs: int, creditsUsed: int, result: scanResultSchema,
  },
} as const;

export const scanUploadBody = {
  type: 'object',
  required: ['file'],
  properties: {
    file: { type: 'string', format: 'binary' },
    profile_id: { type: 'string', description: 'Scan profile; default: the account\'s default profile' },
  },
  // Any other part, or profile_id twice, is 400 invalid_upload (upload.ts).
  additionalProperties: false,
} as const;

export const scanQuerySchema = {
  type: 'object',
  properties: { defer: { type: 'boolean', default: false }, profile_id: str },
  additionalProperties: true,
} as const;

export const payloadBodySchema = {
  type: 'object',
  required: ['payload'],
  additionalProperties: false,
  properties: {
    payload: { type: 'string', description: 'Raw text, or base64 when encoding is base64; decoded size at most 10 MB' },
    encoding: { type: 'string', enum: ['raw', 'base64'], default: 'raw' },
    label: { type: 'string', maxLength: FIXED_LIMITS.scanNameChars, description: 'Echoed as name; its extension is a format hint' },
    profile_id: str,
  },
} as const;

export const historyQuerySchema = {
  type: 'object',
  properties: { limit: { type: 'integer', minimum: 1, maximum: FIXED_LIMITS.historyPageMax, default: FIXED_LIMITS.historyPageDefault }, page: { type: 'integer', minimum: 1, maximum: 100000, default: 1 } },
  additionalProperties: true,
} as const;

export const historySchema = {
  type: 'object',
  required: ['items', 'page', 'limit', 'total'],
  properties: { items: { type: 'array', items: scanResultSchema }, page: int, limit: int, total: int },
} as const;

const webhookInput = {
  type: ['object', 'null'],
  required: ['url'],
  additionalProperties: false,
  properties: {
    url: { type: 'string', maxLength: 2048 },
    authType: { type: 'string', enum: ['none', 'api_key', 'bearer', 'custom_header'], default: 'none' },
    value: { type: 'string', maxLength: 4096, description: 'The credential (printable ASCII); stored encrypted, never returned' },
    headerName: { type: 'string', maxLength: 64 },
    headers: { type: 'object', additionalProperties: { type: 'string', maxLength: 4096 }, maxProperties: 20 },
  },
} as const;

const profileFields = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  isDefault: { type: 'boolean' },
  allowedTypes: { type: 'array', items: { type: 'string', enum: [...FILE_TYPES] }, uniqueItems: true, description: 'Empty = every type' },
  suppressedEngines: { type: 'array', items: str, uniqueItems: true },
  webhook: webhookInput,
} as const;

export const profileCreateSchema = { type: 'object', required: ['name'], additionalProperties: false, properties: profileFields } as const;
export const profilePatchSchema = { type: 'object', additionalProperties: false, properties: profileFields, minProperties: 1 } as const;

export const profileSchema = {
  type: 'object',
  properties: {
    id: str, name: str, isDefault: { type: 'boolean' }, allowedTypes: strArr, suppressedEngines: strArr,
    webhook: {
      type: ['object', 'null'],
      properties: { url: str, authType: str, headerName: str, configured: { type: 'boolean', description: 'A credential is set (never shown)' }, headers: { ...strArr, description: 'Names of the additional headers' } },
    },
    createdAt: str, updatedAt: str,
  },
} as const;

export type CveRecord = FromSchema<typeof cveRecordSchema>;
export type SafetyScore = FromSchema<typeof safetyScoreSchema>;
/** A scan result as answered, stored in history and read back (reports under open objects). */
export type ScanResult = FromSchema<typeof scanResultSchema>;
export type ScanQuery = FromSchema<typeof scanQuerySchema>;
export type PayloadBody = FromSchema<typeof payloadBodySchema>;
export type HistoryQuery = FromSchema<typeof historyQuerySchema>;
/** A profile's create or patch body (ajv has checked it; `authType` may be absent before defaults). */
export type ProfileInput = FromSchema<typeof profilePatchSchema, { keepDefaultedPropertiesOptional: true }>;
export type WebhookInput = NonNullable<ProfileInput['webhook']>;
