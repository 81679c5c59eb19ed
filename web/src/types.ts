/** Shapes of the public API answers the dashboard reads (see GET /openapi.json). */
export interface Usage {
  scans_used: number; max_scans: number; scans_remaining: number; max_file_size_mb: number;
  plan_tier: string; reset_at: string; daily_volume: { dates: string[]; counts: number[] };
}
export interface Notification { id: string; kind: string; period: string; message: string; usedBytes: number; limitBytes: number; createdAt: string }

export interface Finding { id: string; name: string; severity: string; confidence: number; description: string; category?: string; member?: string; engine?: string }
export interface EngineOutcome { status: string; durationMs?: number; findings?: Finding[]; note?: string }
export interface SafetyScore {
  score: number; threatLevel: string; confidence: string; confidenceScore: number; confidenceReason: string; primaryThreat: string;
  threatSummary: string; enginesUsed: string[]; recommendedAction: string; suppressedEngines?: string[]; coverage: string;
  coverageNote?: string; cveFindings?: { id?: string; description?: string; cvss?: number; references?: string[] }[]; error?: string;
}
export interface ScanResult {
  scanId: string; requestId: string; name: string; hash: string; size: number; contentType: string; fileType?: string;
  safetyScore: SafetyScore; scanTimeMs: number; scanType: string; timestamp: number; engines?: Record<string, EngineOutcome>;
  codeExtraction?: Record<string, unknown>; promptInjection?: Record<string, unknown>; sensitiveData?: Record<string, unknown>; toolCallAnalysis?: Record<string, unknown>;
}
export interface History { items: ScanResult[]; page: number; limit: number; total: number }
export interface DeferredEnvelope { scanId: string; requestId: string; status: 'pending' | 'complete'; result?: ScanResult }

export interface Webhook { url: string; authType: string; headerName?: string; configured?: boolean; headers?: string[] }
export interface Profile { id: string; name: string; isDefault: boolean; allowedTypes: string[]; suppressedEngines: string[]; webhook: Webhook | null; createdAt: string; updatedAt: string }

export interface Entity {
  name: string; resourcePath: string; apiKeyId: string; role: string; tags: string[]; metadata: Record<string, unknown>;
  service: string | null; online: boolean; lastSeenAt?: string | null; metrics?: Record<string, number>; createdAt: string;
}
export interface EntityList { entities: Entity[]; next_cursor: number | null }
export interface NewKey { name: string; resourcePath?: string; apiKeyId?: string; apiKey?: string; status?: string; detail?: string }
export interface BulkResult { created: number; failed: number; results: NewKey[] }

export interface Message { id: string; source: string; destination: string | null; msgType: string; data: Record<string, unknown>; tags: string[]; timestamp: string }
export interface MessageList { messages: Message[]; next_cursor: number | null }

export interface AuditEntry { id: string; action: string; resourceType: string; resourceId: string; resourceName: string; userEmail: string; timestamp: string; details: unknown }

export interface Clip { id: string; source: string; createdAt: string; size: number; frames?: number; fps?: number; width?: number; height?: number; durationMs?: number; status: string; format?: string }
export interface ClipList { files: Clip[]; next_cursor: string | null }

export interface FlowNode { id: string; type: string; config?: Record<string, unknown>; timeout_ms?: number; retry?: Record<string, unknown>; on_error?: string }
export interface FlowEdge { from: string; to: string; when?: string }
export interface Workflow { id: string; name: string; description?: string; enabled?: boolean; exposed?: boolean; nodes: FlowNode[]; edges: FlowEdge[]; createdAt: string; updatedAt: string; [k: string]: unknown }
export interface WorkflowList { workflows: Workflow[]; next_cursor: string | null }
export interface RunNode { id: string; status: string; executions: number; attempts: number; durationMs: number; outputBytes?: number; output?: unknown; error?: string }
export interface RunLogEntry { level: string; node?: string; message: string; at: string }
export interface Run {
  runId: string; workflowId: string; workflowName?: string; status: string; input?: unknown; output?: unknown; error?: string | null;
  log: RunLogEntry[]; nodes: RunNode[]; queuedAt: string; startedAt?: string | null; finishedAt?: string | null; temporal: { workflowId?: string; runId?: string | null };
}
export interface RunSummary { runId: string; status: string; queuedAt: string; startedAt?: string | null; finishedAt?: string | null; error?: string | null }
export interface RunList { runs: RunSummary[]; next_cursor: string | null }
export interface ValidationDetail { path: string; message: string }
