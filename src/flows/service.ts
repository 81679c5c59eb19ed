/**
 * User workflows: definitions (CRUD with validation) and runs (start, read, list, cancel). The
 * run record in MongoDB is what the API shows; the interpreter keeps it current, and `settle`
 * (called on read and by the worker's sweeper) writes the final status from Temporal when the
 * execution ended without writing it itself: the 10-minute timeout, a terminated execution.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { LimitReachedError, NotFoundError, ValidationError } from '../errors';
import { planOf, type PlanTier } from '../accounts/plans';
import type { RunAdmission } from './admission';
import { decodeUserJson, encodeUserJson } from '../storage/user-json';
import { RUN_TIMEOUT_ERROR, type RunLogEntry } from './limits';
import { ValidationDetail, checkRunBody, compileInputSchema, validateDefinition } from './validate';
import { FINAL_STATUSES, type RunStatus, type WorkflowDefinition } from './schemas';
import type { NodeStat, OutputRepository, RunDoc, RunRepository, WorkflowDoc, WorkflowRepository } from './records';
import type { RunEngine, RunStartRequest } from './engine';

export type { RunEngine, RunStartRequest };



/** Who starts a run: the account and its plan. */
export interface RunAccount { id: string; plan: PlanTier }

/** The month's workflow counters (limits/service.ts). */
export interface RunQuota {
  reserveRun(accountId: string, monthlyQuota: number): Promise<boolean>;
  /** Gives back a reserved run that was refused afterwards. */
  releaseRun(accountId: string): Promise<void>;
  workflowUsage(accountId: string): Promise<{ runs: number; computeUnits: number }>;
}


export interface PublicWorkflow extends WorkflowDefinition {
  id: string;
  createdAt: string;
  updatedAt: string;
}

const newWorkflowId = () => `wf_${randomBytes(10).toString('hex')}`;
/** A run still `running` this long after its deadline is settled from the engine. */
const SETTLE_GRACE_MS = 15_000;

export function validationError(details: ValidationDetail[]): ValidationError {
  return new ValidationError('Validation Error', { details });
}

function publicWorkflow(doc: WorkflowDoc): PublicWorkflow {
  return { ...decodeUserJson<WorkflowDefinition>(doc.definition), id: doc._id, createdAt: doc.createdAt.toISOString(), updatedAt: doc.updatedAt.toISOString() };
}

export class FlowService {
  constructor(private readonly deps: { workflows: WorkflowRepository }) {}

  /** `raw` is the parsed body, `bytes` its size as received. */
  private check(raw: unknown, bytes: number): WorkflowDefinition {
    const { details, definition } = validateDefinition(raw, bytes);
    if (!definition) throw validationError(details);
    return definition;
  }

  private fields(def: WorkflowDefinition, now: Date): Omit<WorkflowDoc, '_id' | 'accountId' | 'createdAt'> {
    return {
      name: def.name, enabled: def.enabled ?? true, exposed: def.exposed ?? false, trigger: def.trigger ?? null,
      definition: encodeUserJson(def), updatedAt: now,
    };
  }

  async create(account: RunAccount, raw: unknown, bytes: number): Promise<PublicWorkflow> {
    const accountId = account.id;
    const def = this.check(raw, bytes);
    // Counted before the insert: concurrent creates may pass the limit by the few in flight.
    const plan = planOf(account.plan);
    const count = await this.deps.workflows.count(accountId);
    if (count >= plan.maxWorkflows) throw new LimitReachedError('workflows', 'workflow', count, plan.maxWorkflows, plan.tier);
    const now = new Date();
    const doc: WorkflowDoc = { _id: newWorkflowId(), accountId, createdAt: now, ...this.fields(def, now) };
    await this.deps.workflows.insert(doc);
    return publicWorkflow(doc);
  }

  async replace(accountId: string, id: string, raw: unknown, bytes: number): Promise<PublicWorkflow> {
    const def = this.check(raw, bytes);
    const doc = await this.deps.workflows.replace(accountId, id, this.fields(def, new Date()));
    if (!doc) throw new NotFoundError('Workflow');
    return publicWorkflow(doc);
  }

  async get(accountId: string, id: string): Promise<PublicWorkflow> {
    return publicWorkflow(await this.doc(accountId, id));
  }

  async doc(accountId: string, id: string): Promise<WorkflowDoc> {
    const doc = await this.deps.workflows.get(accountId, id);
    if (!doc) throw new NotFoundError('Workflow');
    return doc;
  }

  async list(accountId: string, offset: number, limit: number): Promise<{ workflows: PublicWorkflow[]; next_cursor: string | null }> {
    const docs = await this.deps.workflows.list(accountId, offset, limit + 1);
    return { workflows: docs.slice(0, limit).map(publicWorkflow), next_cursor: docs.length > limit ? String(offset + limit) : null };
  }

  async remove(accountId: string, id: string): Promise<void> {
    if (!(await this.deps.workflows.remove(accountId, id))) throw new NotFoundError('Workflow');
  }
}

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

export class RunService {
  constructor(private readonly deps: {
    flows: FlowService;
    runs: RunRepository;
    outputs: OutputRepository;
    engine?: RunEngine;
    admission?: RunAdmission;
    quota?: RunQuota;
    now?: () => Date;
  }) {}

  private now(): Date {
    return this.deps.now ? this.deps.now() : new Date();
  }

  private engine(): RunEngine {
    if (!this.deps.engine) throw new Error('starting workflow runs needs a Temporal client in this process');
    return this.deps.engine;
  }

  /** POST .../run: the raw body (`{input?}`, empty = no input) checked, then `start`. */
  async startFromBody(account: RunAccount, flowId: string, raw: unknown, bytes: number) {
    // No body at all is a run without input; an explicit JSON `null` is a body of the wrong type (422).
    const { details, body } = checkRunBody(raw === undefined ? {} : raw, bytes);
    if (!body) throw validationError(details);
    return this.start(account, flowId, body.input);
  }

  /**
   * Admits a run: a manual run takes one of the month's runs (403 past the plan's), any run needs
   * compute left this month (403) and room in the queue (503). The record is written `queued`
   * (with the graph it will run) before anything starts, then promoted at once when the account
   * has a free slot, so a run the engine knows always has a record. Reading the definition and
   * the month's compute goes alongside admission's claim of a slot and of the month's run (one
   * round trip's wait instead of two); a refused run gives both back.
   */
  async start(account: RunAccount, flowId: string, input: unknown, trigger: RunDoc['trigger'] = { type: 'manual' }): Promise<{ runId: string; workflowId: string; status: RunStatus }> {
    const accountId = account.id;
    const admission = this.deps.admission;
    if (!admission) throw new Error('starting workflow runs needs run admission in this process');
    const quota = this.deps.quota;
    const plan = planOf(account.plan);
    const runId = randomUUID();
    // Before admission's clock: a run is never started before it was queued.
    const queuedAt = this.now();
    const record = async (): Promise<RunDoc> => {
      const [flow, used] = await Promise.all([this.deps.flows.doc(accountId, flowId), quota?.workflowUsage(accountId)]);
      const def = decodeUserJson<WorkflowDefinition>(flow.definition);
      if (def.input_schema !== undefined) checkInput(def.input_schema, input);
      if (used && used.computeUnits >= plan.computeUnitsPerMonth) throw new LimitReachedError('compute units this month', 'compute', used.computeUnits, plan.computeUnitsPerMonth, plan.tier);
      const outgoing = new Set(def.edges.map((e) => e.from));
      const nodes: Record<string, NodeStat> = {};
      for (const n of def.nodes) nodes[n.id] = { status: 'pending', executions: 0, attempts: 0, durationMs: 0, outputBytes: 0 };
      return {
        _id: runId, accountId, workflowId: flowId, workflowName: flow.name, trigger, status: 'queued',
        input: encodeUserJson(input ?? null), error: null, log: [], nodes,
        nodeOrder: def.nodes.map((n) => n.id), terminalNodes: def.nodes.filter((n) => !outgoing.has(n.id)).map((n) => n.id),
        outputBytes: 0, queuedAt, startedAt: null, finishedAt: null, deadline: null,
        temporal: { workflowId: `run-${runId}`, runId: null },
        graph: encodeUserJson({ nodes: def.nodes, edges: def.edges }), slotLimit: plan.concurrentWorkflowRuns,
      };
    };
    // Device-event runs do not count toward the month's runs (docs/contract.md §7 "Device-event triggers").
    const monthRun = quota !== undefined && trigger.type === 'manual' ? {
      reserve: async () => {
        if (!(await quota.reserveRun(accountId, plan.workflowRunsPerMonth))) {
          throw new LimitReachedError('runs this month', 'run', plan.workflowRunsPerMonth, plan.workflowRunsPerMonth, plan.tier);
        }
      },
      release: () => quota.releaseRun(accountId),
    } : undefined;
    const status = await admission.admit({ runId, accountId, slotLimit: plan.concurrentWorkflowRuns }, record, monthRun);
    return { runId, workflowId: flowId, status };
  }

  async get(accountId: string, runId: string): Promise<Record<string, unknown>> {
    let run = await this.deps.runs.get(accountId, runId);
    if (!run) throw new NotFoundError('Run');
    if (await this.settle(run)) run = (await this.deps.runs.get(accountId, runId)) ?? run;
    return this.present(run);
  }

  async list(accountId: string, flowId: string, offset: number, limit: number) {
    await this.deps.flows.doc(accountId, flowId);
    const runs = await this.deps.runs.list(accountId, flowId, offset, limit + 1);
    return {
      runs: runs.slice(0, limit).map((r) => ({
        runId: r._id, workflowId: r.workflowId, trigger: r.trigger, status: r.status, error: r.error,
        queuedAt: iso(r.queuedAt), startedAt: iso(r.startedAt), finishedAt: iso(r.finishedAt),
      })),
      next_cursor: runs.length > limit ? String(offset + limit) : null,
    };
  }

  async cancel(accountId: string, runId: string): Promise<Record<string, unknown>> {
    const run = await this.deps.runs.get(accountId, runId);
    if (!run) throw new NotFoundError('Run');
    if (run.status === 'queued') {
      // Never started: nothing to tell the engine. A promoter that claimed it meanwhile wins.
      await this.deps.runs.finish(runId, { status: 'cancelled', error: null, finishedAt: this.now() }, [], 'queued');
    }
    // A start this process has on the way reaches the engine first, so the cancel finds it.
    await this.deps.admission?.launched(runId);
    const now = (await this.deps.runs.get(accountId, runId)) ?? run;
    if (now.status === 'running') {
      await this.engine().cancel(runId);
      // No execution yet (its launch is on the way in another process, or was lost with one):
      // the record says cancelled first, then the engine is asked again. A launch that lands
      // after that reads the record and cancels its own execution (RunAdmission.launch).
      if (now.temporal.runId === null && (await this.engine().outcome(runId)) === 'missing') {
        if (await this.deps.runs.finish(runId, { status: 'cancelled', error: null, finishedAt: this.now() }, [], 'running')) {
          await this.deps.admission?.ended(runId);
        }
        await this.engine().cancel(runId);
      }
    }
    return this.get(accountId, runId);
  }

  /** The stored output of one node (any size), as JSON text. */
  async output(accountId: string, runId: string, nodeId: string): Promise<string> {
    const run = await this.deps.runs.get(accountId, runId);
    if (!run || !run.nodeOrder.includes(nodeId)) throw new NotFoundError('Output');
    const [doc] = await this.deps.outputs.find(runId, [nodeId]);
    if (!doc) throw new NotFoundError('Output');
    return this.deps.outputs.read(doc);
  }

  /**
   * A run still `running` after its deadline (plus a grace for the interpreter's own final
   * write) gets its final status from the engine: a timed-out execution is `failed` with
   * `Workflow execution timed out`. A node still shown `running` was in flight when the run was
   * stopped: it becomes `cancelled`, as when a run is cancelled. Returns whether the record changed.
   */
  async settle(run: Pick<RunDoc, '_id' | 'status' | 'deadline'> & Partial<Pick<RunDoc, 'nodes'>>, force = false): Promise<boolean> {
    if (run.status !== 'running' || !run.deadline) return false;
    if (!force && this.now().getTime() < run.deadline.getTime() + SETTLE_GRACE_MS) return false;
    const outcome = await this.engine().outcome(run._id);
    const finishedAt = this.now();
    const final: Record<string, { status: RunStatus; error: string | null }> = {
      timed_out: { status: 'failed', error: RUN_TIMEOUT_ERROR },
      terminated: { status: 'failed', error: 'The run was terminated by an operator' },
      cancelled: { status: 'cancelled', error: null },
      failed: { status: 'failed', error: 'The run failed' },
      completed: { status: 'completed', error: null },
      // The engine forgot it (retention passed) and nobody wrote the end: the 10 minutes are over.
      missing: { status: 'failed', error: RUN_TIMEOUT_ERROR },
    };
    const f = final[outcome];
    if (!f) return false;
    const log: RunLogEntry = { level: 'error', message: f.error ?? `run ${f.status}`, at: finishedAt.toISOString() };
    const inFlight = f.status !== 'completed' && run.nodes ? Object.entries(run.nodes).filter(([, n]) => n.status === 'running') : [];
    const nodes = inFlight.length ? { ...run.nodes, ...Object.fromEntries(inFlight.map(([id, n]) => [id, { ...n, status: 'cancelled' as const }])) } : undefined;
    const changed = await this.deps.runs.finish(run._id, { ...f, finishedAt, ...(nodes ? { nodes } : {}) }, f.error ? [log] : []);
    // Also when another writer finished it first: releasing is idempotent.
    await this.deps.admission?.ended(run._id);
    return changed;
  }

  /** One pass of the sweeper: settles runs left `running` past their deadline. */
  async sweep(limit = 100): Promise<number> {
    await this.deps.admission?.relaunch(limit);
    const overdue = await this.deps.runs.overdue(new Date(this.now().getTime() - SETTLE_GRACE_MS), limit);
    let settled = 0;
    for (const run of overdue) if (await this.settle(run, true)) settled++;
    return settled;
  }

  /** Node outputs are shown once the run is over: polls of a running run read only its record. */
  private async present(run: RunDoc): Promise<Record<string, unknown>> {
    const final = FINAL_STATUSES.includes(run.status);
    const ran = final ? run.nodeOrder.filter((id) => (run.nodes[id]?.executions ?? 0) > 0 && run.nodes[id]?.status === 'completed') : [];
    const docs = ran.length ? await this.deps.outputs.find(run._id, ran) : [];
    const byKey = new Map(docs.map((d) => [d.key, d]));
    const outputOf = async (id: string): Promise<unknown> => {
      const d = byKey.get(id);
      if (!d) return undefined;
      if (d.json === undefined) return { $ref: `/api/workflows/runs/${run._id}/outputs/${id}`, bytes: d.bytes };
      return decodeUserJson(d.json);
    };
    const nodes = [];
    for (const id of run.nodeOrder) {
      const s = run.nodes[id] ?? { status: 'pending', executions: 0, attempts: 0, durationMs: 0, outputBytes: 0 };
      const output = await outputOf(id);
      nodes.push({ id, ...s, ...(output !== undefined ? { output } : {}) });
    }
    let output: Record<string, unknown> | null = null;
    if (final) {
      output = {};
      for (const id of run.terminalNodes) {
        const o = await outputOf(id);
        if (o !== undefined) output[id] = o;
      }
    }
    return {
      runId: run._id, workflowId: run.workflowId, workflowName: run.workflowName, trigger: run.trigger, status: run.status,
      input: decodeUserJson(run.input), output, error: run.error, log: run.log, nodes, childRuns: run.childRuns ?? 0,
      queuedAt: iso(run.queuedAt), startedAt: iso(run.startedAt), finishedAt: iso(run.finishedAt), temporal: run.temporal,
    };
  }
}

/** Run input against the workflow's input_schema; 422 with the failing path. */
function checkInput(schema: Record<string, unknown>, input: unknown): void {
  const validate = compileInputSchema(schema);
  if (!validate(input ?? null)) {
    const e = validate.errors?.[0];
    const path = `input${(e?.instancePath ?? '').replace(/\/(\d+)/g, '[$1]').replace(/\//g, '.')}`;
    throw validationError([{ path, message: e?.message ?? 'does not match input_schema' }]);
  }
}
