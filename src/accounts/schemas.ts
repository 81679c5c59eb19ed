/** Schemas of the account endpoints (usage); the TypeScript types are derived from them. */
import type { FromSchema } from 'json-schema-to-ts';
import { PLAN_TIERS } from './plans';

export const usageSchema = {
  type: 'object',
  required: ['scans_used', 'max_scans', 'scans_remaining', 'max_file_size_mb', 'plan_tier', 'reset_at', 'daily_volume'],
  properties: {
    scans_used: { type: 'integer', description: 'Scans used this UTC month' },
    max_scans: { type: 'integer', description: 'Monthly scan quota of the plan' },
    scans_remaining: { type: 'integer' },
    max_file_size_mb: { type: 'integer' },
    plan_tier: { type: 'string', enum: PLAN_TIERS },
    reset_at: { type: 'string', format: 'date-time', description: 'First instant of the next UTC month' },
    daily_volume: {
      type: 'object',
          required: ['dates', 'counts'],
      description: 'Scans per UTC day over the last 30 days, oldest first, zero-filled',
      properties: { dates: { type: 'array', items: { type: 'string', format: 'date' } }, counts: { type: 'array', items: { type: 'integer' } } },
    },
    workflows: {
      type: 'object',
      required: ['runs_this_month', 'max_runs_per_month', 'compute_units', 'max_compute_units', 'running', 'queued', 'max_concurrent_runs'],
      description: 'User workflows: manual runs and compute units (seconds of node execution) this UTC month, runs holding a slot and waiting now',
      properties: {
        runs_this_month: { type: 'integer' },
        max_runs_per_month: { type: 'integer' },
        compute_units: { type: 'integer' },
        max_compute_units: { type: 'integer' },
        running: { type: 'integer' },
        queued: { type: 'integer' },
        max_concurrent_runs: { type: 'integer' },
      },
    },
  },
} as const;
export type Usage = FromSchema<typeof usageSchema>;
