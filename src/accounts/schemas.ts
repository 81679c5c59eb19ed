/** Schemas of the account endpoints (usage). */
import type { JsonSchema } from '../http/schema';

export const usageSchema: JsonSchema = {
  type: 'object',
  required: ['scans_used', 'max_scans', 'scans_remaining', 'max_file_size_mb', 'plan_tier', 'reset_at', 'daily_volume'],
  properties: {
    scans_used: { type: 'integer', description: 'Scans used this UTC month' },
    max_scans: { type: 'integer', description: 'Monthly scan quota of the plan' },
    scans_remaining: { type: 'integer' },
    max_file_size_mb: { type: 'integer' },
    plan_tier: { type: 'string', enum: ['free', 'starter', 'standard', 'pro'] },
    reset_at: { type: 'string', format: 'date-time', description: 'First instant of the next UTC month' },
    daily_volume: {
      type: 'object',
      required: ['dates', 'counts'],
      description: 'Scans per UTC day over the last 30 days, oldest first, zero-filled',
      properties: { dates: { type: 'array', items: { type: 'string', format: 'date' } }, counts: { type: 'array', items: { type: 'integer' } } },
    },
  },
};
