/**
 * The one plans table (docs/contract.md §3). Every limit that scales with the plan is read
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
  /** One unit per started second of node execution (docs/contract.md §3 "Compute units"). */
  computeUnitsPerMonth: number;
  maxConnectors: number;
  maxVaultEntries: number;
  pythonSnippetOutputBytes: number;
}

const KB = 1024;
const MB = 1024 * KB;
const GB = 1024 * MB;

export const PLANS: Readonly<Record<PlanTier, Plan>> = {
  free: {
    tier: 'free', scansPerMonth: 100, maxFileSizeMb: 10, scanRequestsPerMinute: 10,
    entitlements: new Set(),
    maxEntities: 10, messagingBytesPerMonth: 50 * MB, maxWorkflows: 5, workflowRunsPerMonth: 1_000, computeUnitsPerMonth: 3_600,
    concurrentWorkflowRuns: 2, maxConnectors: 2, maxVaultEntries: 5, pythonSnippetOutputBytes: 1 * MB,
  },
  starter: {
    tier: 'starter', scansPerMonth: 2_000, maxFileSizeMb: 50, scanRequestsPerMinute: 60,
    entitlements: new Set<Entitlement>(['webhooks']),
    maxEntities: 100, messagingBytesPerMonth: 1 * GB, maxWorkflows: 25, workflowRunsPerMonth: 10_000, computeUnitsPerMonth: 36_000,
    concurrentWorkflowRuns: 5, maxConnectors: 10, maxVaultEntries: 25, pythonSnippetOutputBytes: 2 * MB,
  },
  standard: {
    tier: 'standard', scansPerMonth: 20_000, maxFileSizeMb: 75, scanRequestsPerMinute: 200,
    entitlements: new Set<Entitlement>(['webhooks', 'async_scanning', 'audit_log', 'analytics', 'custom_roles', 'blocked_ips']),
    maxEntities: 1_000, messagingBytesPerMonth: 10 * GB, maxWorkflows: 100, workflowRunsPerMonth: 100_000, computeUnitsPerMonth: 360_000,
    concurrentWorkflowRuns: 20, maxConnectors: 50, maxVaultEntries: 100, pythonSnippetOutputBytes: 5 * MB,
  },
  pro: {
    tier: 'pro', scansPerMonth: 100_000, maxFileSizeMb: 100, scanRequestsPerMinute: 500,
    entitlements: new Set<Entitlement>(['webhooks', 'async_scanning', 'audit_log', 'analytics', 'custom_roles', 'blocked_ips']),
    maxEntities: 10_000, messagingBytesPerMonth: 100 * GB, maxWorkflows: 500, workflowRunsPerMonth: 1_000_000, computeUnitsPerMonth: 3_600_000,
    concurrentWorkflowRuns: 50, maxConnectors: 200, maxVaultEntries: 500, pythonSnippetOutputBytes: 10 * MB,
  },
};

/** Limits that are the same on every plan (docs/contract.md §3 "Limits"). */
export const FIXED_LIMITS = {
  scanWritesPerMinute: 30,
  scanReadsPerMinute: 60,
  autoDeferBytes: 25 * MB,
  maxPayloadDecodedBytes: 10 * MB,
  /** Scan history pages (GET /api/account/history). */
  historyPageDefault: 25,
  historyPageMax: 100,
  persistedExcerptChars: 200,
  messageDataBytes: 5 * KB,
  /** One message as sent (HTTP body or MQTT payload), refused before parsing above this: 5 KB of data plus envelope. */
  messageBodyBytes: 64 * KB,
  /** A state table as stored (its JSON text), however it is built up: PATCH, PUT, state messages. */
  stateTableBytes: 64 * KB,
  /** A scanned file's name (the upload's filename) or a payload's label: what results and history echo. */
  scanNameChars: 255,
  /** An entity's metadata as stored (its JSON text), by PATCH or bulk registration (copied to each entity). */
  entityMetadataBytes: 16 * KB,
  messagingRequestsPerSecondPerKey: 50,
  tagsPerMessage: 10,
  messagesPageDefault: 10,
  messagesPageMax: 100,
  checkMessagesDefault: 1,
  exportPageRows: 1_000,
  /** Deepest offset of the paged lists (and search); deeper history is for the export. */
  listOffsetMax: 1_000_000,
  batchMessagesMax: 100,
  bulkRegistrationMax: 1_000,
  jsonNestingDepth: 20,
  /** A webhook receiver must answer within this (scan webhooks). */
  webhookTimeoutMs: 10_000,
  workflowWritesPerMinute: 30,
  workflowRunsPerMinute: 60,
  /** Waiting runs (docs/contract.md §7 "Limits and admission"): per account and in total; a run waits at most an hour. */
  workflowQueuedPerAccount: 500,
  workflowQueuedTotal: 10_000,
  workflowQueueWaitMs: 60 * 60_000,
  /** Device events: workflows one message may start, and triggers per minute per workflow. */
  workflowTriggersPerMessage: 50,
  workflowTriggersPerMinute: 60,
  filesPageDefault: 50,
  filesPageMax: 100,
  /** Files not downloaded (and gallery clips) are deleted this long after upload. */
  fileRetentionDays: 7,
  clipFpsDefault: 10,
  clipFpsMin: 1,
  clipFpsMax: 60,
  clipMaxFrames: 1_800,
  clipMaxWidth: 1920,
  clipMaxHeight: 1080,
  clipMaxExpandedBytes: 100 * MB,
  /** Wall-clock limit of one ffmpeg/ffprobe run, and the address-space limit it runs under. */
  clipToolSeconds: 180,
  clipToolMemoryBytes: 2 * GB,
  // User workflows (docs/contract.md §7).
  workflowRunTimeoutMs: 10 * 60_000,
  workflowNodeTimeoutDefaultMs: 30_000,
  workflowNodeTimeoutCeilingMs: 5 * 60_000,
  workflowRetryAttemptsCeiling: 5,
  workflowMaxNodes: 1_000,
  workflowMaxEdges: 2_000,
  workflowMaxDepth: 100,
  workflowMaxOutEdges: 50,
  workflowDefinitionBytes: 1024 * 1024,
  workflowForEachDefaultItems: 1_000,
  workflowForEachMaxItems: 10_000,
  workflowNodeExecutionCap: 100,
  workflowStepOutputBytes: 10 * MB,
  workflowRunOutputBytes: 100 * MB,
  workflowFlowCallDepth: 10,
  /** Child runs (flow.call and forEach, at every depth) one top-level run may start in all. */
  workflowChildRunsPerRun: 10_000,
  /** Node executions in flight at once in one run and all its child runs together. */
  workflowRunWidth: 10,
  /** Node outputs above this travel by reference (GridFS), never in Temporal history. */
  workflowInlineOutputBytes: 256 * 1024,
  /** Heap of one expression thread (JSONata and templates run there, src/flows/expression-pool.ts); past it the expression fails. */
  expressionHeapMb: 256,
} as const;

export const isPlanTier = (v: unknown): v is PlanTier => typeof v === 'string' && (PLAN_TIERS as readonly string[]).includes(v);
export const planOf = (tier: PlanTier): Plan => PLANS[tier];
export const hasEntitlement = (tier: PlanTier, e: Entitlement): boolean => PLANS[tier].entitlements.has(e);
