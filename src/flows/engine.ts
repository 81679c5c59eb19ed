/**
 * How runs meet the workflow engine: what flows ask of it, declared here so that admission and
 * the run service both depend on this file and not on each other. Temporal implements it in
 * temporal/engines/runs.ts.
 */
import type { EdgeDef, NodeDef } from './schemas';

/** What the interpreter needs to start a run. */
export interface RunStartRequest {
  runId: string;
  accountId: string;
  flowId: string;
  flowName: string;
  trigger: 'manual' | 'device_event';
  nodes: NodeDef[];
  edges: EdgeDef[];
  deadline: number;
}

/** How runs meet the workflow engine (Temporal, temporal/engines/runs.ts). */
export interface RunEngine {
  start(req: RunStartRequest): Promise<void>;
  /** How the execution ended, or `running`; `missing` when the engine does not know it. */
  outcome(runId: string): Promise<'running' | 'completed' | 'failed' | 'timed_out' | 'terminated' | 'cancelled' | 'missing'>;
  cancel(runId: string): Promise<void>;
}
