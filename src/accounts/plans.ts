/**
 * The one plans table (decisions.md section 3). Every limit that scales with the plan is read
 * from here; nothing else hard-codes these numbers.
 */
export const PLAN_TIERS = ['free', 'starter', 'standard', 'pro'] as const;
export type PlanTier = (typeof PLAN_TIERS)[number];

export type Entitlement = 'webhooks' | 'async_scanning' | 'audit_log' | 'analytics' | 'custom_roles' | 'blocked_ips';

export interface Plan {
  tier: PlanTier;
  scansPerMonth: number;
  maxFileSizeMb: number;
  /** Account-wide scanning requests per minute, on top of the per-endpoint-class limits. */
  scanRequestsPerMinute: number;
  entitlements: ReadonlySet<Entitlement>;
  maxEntities: number;
  messagingBytesPerMonth: number;
  maxWorkflows: number;
  workflowRunsPerMonth: number;
  concurrentWorkflowRuns: number;
  maxConnectors: number;
  maxVaultEntries: number;
  pythonSnippetOutputBytes: number;
}

const MB = 1024 * 1024;
const GB = 1024 * MB;

export const PLANS: Readonly<Record<PlanTier, Plan>> = {
  free: {
    tier: 'free', scansPerMonth: 100, maxFileSizeMb: 10, scanRequestsPerMinute: 10,
    entitlements: new Set(),
    maxEntities: 10, messagingBytesPerMonth: 50 * MB, maxWorkflows: 5, workflowRunsPerMonth: 1_000,
    concurrentWorkflowRuns: 2, maxConnectors: 2, maxVaultEntries: 5, pythonSnippetOutputBytes: 1 * MB,
  },
  starter: {
    tier: 'starter', scansPerMonth: 2_000, maxFileSizeMb: 50, scanRequestsPerMinute: 60,
    entitlements: new Set<Entitlement>(['webhooks']),
    maxEntities: 100, messagingBytesPerMonth: 1 * GB, maxWorkflows: 25, workflowRunsPerMonth: 10_000,
    concurrentWorkflowRuns: 5, maxConnectors: 10, maxVaultEntries: 25, pythonSnippetOutputBytes: 2 * MB,
  },
  standard: {
    tier: 'standard', scansPerMonth: 20_000, maxFileSizeMb: 75, scanRequestsPerMinute: 200,
    entitlements: new Set<Entitlement>(['webhooks', 'async_scanning', 'audit_log', 'analytics', 'custom_roles', 'blocked_ips']),
    maxEntities: 1_000, messagingBytesPerMonth: 10 * GB, maxWorkflows: 100, workflowRunsPerMonth: 100_000,
    concurrentWorkflowRuns: 20, maxConnectors: 50, maxVaultEntries: 100, pythonSnippetOutputBytes: 5 * MB,
  },
  pro: {
    tier: 'pro', scansPerMonth: 100_000, maxFileSizeMb: 100, scanRequestsPerMinute: 500,
    entitlements: new Set<Entitlement>(['webhooks', 'async_scanning', 'audit_log', 'analytics', 'custom_roles', 'blocked_ips']),
    maxEntities: 10_000, messagingBytesPerMonth: 100 * GB, maxWorkflows: 500, workflowRunsPerMonth: 1_000_000,
    concurrentWorkflowRuns: 50, maxConnectors: 200, maxVaultEntries: 500, pythonSnippetOutputBytes: 10 * MB,
  },
};

/** Limits that are the same on every plan (service-spec "Limits"). */
export const FIXED_LIMITS = {
  scanWritesPerMinute: 30,
  scanReadsPerMinute: 60,
  autoDeferBytes: 25 * MB,
  maxPayloadDecodedBytes: 10 * MB,
  historyPageDefault: 25,
  historyPageMax: 100,
  persistedExcerptChars: 200,
  messageDataBytes: 5 * 1024,
  messagingRequestsPerSecondPerKey: 50,
  tagsPerMessage: 10,
  messagesPageDefault: 10,
  checkMessagesDefault: 1,
  exportPageRows: 1_000,
  /** Deepest offset of the paged lists (and search); deeper history is for the export. */
  listOffsetMax: 1_000_000,
  batchMessagesMax: 100,
  bulkRegistrationMax: 1_000,
  jsonNestingDepth: 20,
  workflowWritesPerMinute: 30,
  workflowRunsPerMinute: 60,
} as const;

export const isPlanTier = (v: unknown): v is PlanTier => typeof v === 'string' && (PLAN_TIERS as readonly string[]).includes(v);
export const planOf = (tier: PlanTier): Plan => PLANS[tier];
export const hasEntitlement = (tier: PlanTier, e: Entitlement): boolean => PLANS[tier].entitlements.has(e);
