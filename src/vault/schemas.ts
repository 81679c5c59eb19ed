/** Schemas of the vault API (docs/contract.md §7 "Connectors and vault"). */
import type { FromSchema } from 'json-schema-to-ts';

/** A name usable as `{{ vault.NAME }}` in a workflow's templates. */
export const VAULT_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]{0,63}$';
export const VAULT_VALUE_MAX_CHARS = 16 * 1024;

export const vaultPutSchema = {
  type: 'object',
  required: ['name', 'value'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', pattern: VAULT_NAME_PATTERN, description: 'Letters, digits and _, not starting with a digit; used as {{ vault.NAME }}' },
    value: { type: 'string', minLength: 1, maxLength: VAULT_VALUE_MAX_CHARS, description: 'Sealed with AES-256-GCM; never returned' },
  },
} as const;
export type VaultPut = FromSchema<typeof vaultPutSchema>;

export const vaultEntrySchema = {
  type: 'object',
  required: ['name', 'configured', 'createdAt', 'updatedAt'],
  additionalProperties: false,
  properties: {
    name: { type: 'string' },
    configured: { type: 'boolean', const: true, description: 'The value is stored; it is never shown' },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
} as const;
export type VaultEntryView = FromSchema<typeof vaultEntrySchema>;

export const vaultListSchema = {
  type: 'object',
  required: ['entries'],
  properties: { entries: { type: 'array', items: vaultEntrySchema } },
} as const;
