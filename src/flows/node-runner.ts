/**
 * What the interpreter's activities do: run one node execution (templates resolved, the kind's
 * executor called, the output stored), the child-run budget, progress and the final write of a
 * run; forEach's and flow.call's steps live in their kinds' files over this runner (StepRunner).
 * Outputs never travel back through Temporal: they are stored here (GridFS above 256 KB) and only
 * their size and the chosen branch return to the workflow.
 */
import { decodeUserJson, encodeUserJson } from '../storage/user-json';
import { CHILD_RUNS_PER_RUN, runOutputError, stepOutputError, type RunLogEntry } from './limits';
import { ExpressionContext, ExpressionError } from './expressions';
import { nodeKind } from './nodes';
import { NodeDeps, NodeFailure, NodeRef, NodeResult, StepRunner } from './nodes/types';
import { NotFoundError } from '../errors';
import type { EdgeDef, NodeDef, RunStatus, WorkflowDefinition } from './schemas';
import type { NodeOutputs, NodeStat, RunProgress, WorkflowDoc } from './records';



export interface NodeRunnerDeps {
  outputs: NodeOutputs;
  runs: RunProgress;
  workflows: { get(accountId: string, id: string): Promise<WorkflowDoc | null> };
  nodes: NodeDeps;
  /**
   * Reveals the `{{ vault.NAME }}` that the author's config names, for one call, and redacts the
   * values from what it returns or throws (VaultService).
   */
  vault: { withSecrets<R>(accountId: string, definition: unknown, use: (secrets: Readonly<Record<string, string>>, redactor: { text(s: string): string }) => Promise<R>): Promise<R> };
  /** Compute units (one per started second of a node execution), charged as each execution ends. */
  compute?: { charge(accountId: string, units: number): Promise<void> };
  /** Told when a top-level run's record became final, so its concurrency slot frees. */
  runEnded?: (runId: string) => Promise<void>;
}

export type { ItemRef, NodeRef } from './nodes/types';

export interface RunNodeArgs extends NodeRef {
  type: string;
  config: Record<string, unknown>;
  attempt: number;
}

/** `log`: run-log lines the node's executor wrote (redacted), for the interpreter to append. */
export interface NodeOutcome { bytes: number; branch?: string; durationMs: number; attempt: number; log?: RunLogEntry[] }

const ITEMS_CACHE = 4;
const INPUT_CACHE = 200;

export class NodeRunner implements StepRunner {
  /** The last few forEach item arrays, so the chunks of one forEach read it once per worker. */
  private readonly itemsCache = new Map<string, unknown[]>();
  private readonly inputCache = new Map<string, unknown>();

  constructor(readonly deps: NodeRunnerDeps) {}

  async context(ref: Pick<NodeRef, 'runId' | 'flowId' | 'nodeId' | 'execution' | 'contextKeys' | 'inputFrom' | 'record'>): Promise<ExpressionContext> {
    const nodes: Record<string, unknown> = {};
    if (ref.contextKeys.length) {
      for (const doc of await this.deps.outputs.find(ref.runId, ref.contextKeys)) nodes[doc.key] = decodeUserJson(await this.deps.outputs.read(doc));
    }
    const from = ref.inputFrom;
    const input = from ? (await this.storedItems(from.runId, from.key))[from.index] ?? null : await this.runInput(ref);
    return { input, nodes, vars: { runId: ref.runId, workflowId: ref.flowId, node: ref.nodeId, execution: ref.execution } };
  }

  /**
   * The vault entries the author's config names are revealed for this call only; templates and
   * those entries are filled in one pass over the author's text (a value that came from data is
   * never read as a template). The output, the error and the lines written to `log` come back
   * with every revealed value redacted.
   */
  async execute(type: string, rawConfig: Record<string, unknown>, ctx: ExpressionContext, ref: NodeRef, signal: AbortSignal, index?: number, log: RunLogEntry[] = []): Promise<NodeResult> {
    const kind = nodeKind(type);
    if (!kind?.execute) throw new NodeFailure(`node kind "${type}" does not run as an activity`, false);
    const execute = kind.execute;
    const { expressions } = this.deps.nodes;
    try {
      return await this.deps.vault.withSecrets(ref.accountId, rawConfig, async (secrets, redactor) => {
        try {
          const config = await expressions.resolveTemplates(ref.accountId, rawConfig, ctx, ref.timeoutMs, { skipKeys: kind.rawKeys ?? [], secrets }, signal) as Record<string, unknown>;
          return await execute(config, ctx, {
            accountId: ref.accountId, flowId: ref.flowId, runId: ref.runId, nodeId: ref.nodeId, execution: ref.execution,
            index, timeoutMs: ref.timeoutMs, signal,
            log: (message, level = 'info') => log.push({ level, node: ref.nodeId, message: redactor.text(message), at: new Date().toISOString() }),
          }, this.deps.nodes);
        } catch (err) {
          throw err instanceof ExpressionError ? new NodeFailure(`expression failed: ${err.message}`, false) : err;
        }
      });
    } catch (err) {
      if (err instanceof NotFoundError) throw new NodeFailure(err.message, false);
      // The vault hands back a redacted copy of the error: a plain Error with the failure's own fields.
      const retryable = (err as { retryable?: unknown }).retryable;
      if (!(err instanceof NodeFailure) && typeof retryable === 'boolean') throw new NodeFailure((err as Error).message, retryable);
      throw err;
    }
  }

  /** Stores a node's output; fails the node above 10 MB. */
  async store(ref: NodeRef, key: string, value: unknown): Promise<number> {
    const json = encodeUserJson(value);
    const bytes = Buffer.byteLength(json);
    const tooBig = stepOutputError(ref.nodeId, bytes);
    if (tooBig) throw new NodeFailure(tooBig, false);
    await this.deps.outputs.save(ref.runId, key, json);
    return bytes;
  }

  async runNode(args: RunNodeArgs, signal: AbortSignal): Promise<NodeOutcome> {
    const started = Date.now();
    const log: RunLogEntry[] = [];
    try {
      const ctx = await this.context(args);
      // Temporal times the attempt out on its side; this stops the work here too (a hanging request).
      const result = await this.execute(args.type, args.config, ctx, args, AbortSignal.any([signal, AbortSignal.timeout(args.timeoutMs)]), undefined, log);
      const bytes = await this.store(args, args.nodeId, result.output);
      return { bytes, branch: result.branch, durationMs: Date.now() - started, attempt: args.attempt, ...(log.length ? { log } : {}) };
    } catch (err) {
      if (log.length && err instanceof NodeFailure) err.log = log;
      throw err;
    } finally {
      await this.deps.compute?.charge(args.accountId, Math.max(1, Math.ceil((Date.now() - started) / 1000)));
    }
  }

  /** A top-level run's input is on its record (read once per worker); a child run's under `#input`. */
  private async runInput(ref: Pick<NodeRef, 'runId' | 'record'>): Promise<unknown> {
    if (!ref.record) return decodeUserJson(await this.deps.outputs.load(ref.runId, '#input'));
    const key = `${ref.runId}/#input`;
    if (!this.inputCache.has(key)) {
      this.inputCache.set(key, decodeUserJson(await this.deps.runs.input(ref.runId)));
      while (this.inputCache.size > INPUT_CACHE) this.inputCache.delete(this.inputCache.keys().next().value as string);
    }
    return this.inputCache.get(key);
  }

  async storedItems(runId: string, itemsKeyOf: string): Promise<unknown[]> {
    const key = `${runId}/${itemsKeyOf}`;
    const cached = this.itemsCache.get(key);
    if (cached) return cached;
    const items = decodeUserJson<unknown[]>(await this.deps.outputs.load(runId, itemsKeyOf)) ?? [];
    this.itemsCache.set(key, items);
    while (this.itemsCache.size > ITEMS_CACHE) this.itemsCache.delete(this.itemsCache.keys().next().value as string);
    return items;
  }

  /**
   * A child run of another workflow (flow.call, or forEach over a workflow): that workflow's
   * definition, and a flow.call's input stored under the child run id. forEach child runs
   * (`childRunId` absent) read their input from the items instead.
   */
  async prepareChildRun(ref: NodeRef & { workflowId: string; input?: unknown; childRunId?: string }): Promise<{ nodes: NodeDef[]; edges: EdgeDef[]; name: string }> {
    const doc = await this.deps.workflows.get(ref.accountId, ref.workflowId);
    if (!doc) throw new NodeFailure(`workflow "${ref.workflowId}" not found in this account`, false);
    const def = decodeUserJson<WorkflowDefinition>(doc.definition);
    if (!ref.childRunId) return { nodes: def.nodes, edges: def.edges, name: doc.name };
    let input: unknown = null;
    if (ref.input !== undefined) {
      try {
        input = await this.deps.nodes.expressions.resolveTemplates(ref.accountId, ref.input, await this.context(ref), ref.timeoutMs);
      } catch (err) {
        throw new NodeFailure(`input template failed: ${(err as Error).message}`, false);
      }
    }
    await this.deps.outputs.save(ref.childRunId, '#input', encodeUserJson(input));
    return { nodes: def.nodes, edges: def.edges, name: doc.name };
  }

  /** Child runs taken from the budget of the tree whose top-level run is `rootRunId`; false when refused. */
  async reserveChildRuns(args: { rootRunId: string; count: number }): Promise<boolean> {
    return this.deps.runs.reserveChildRuns(args.rootRunId, args.count, CHILD_RUNS_PER_RUN);
  }

  /** Progress of a top-level run while it runs (the interpreter sends what changed). */
  async saveProgress(args: { runId: string; nodes: Record<string, NodeStat>; log: RunLogEntry[]; outputBytes: number; temporalRunId: string }): Promise<void> {
    await this.deps.runs.recordProgress(args.runId, args.nodes, args.log, args.outputBytes, args.temporalRunId);
  }

  /**
   * The end of one interpreter run: the run record's final state (top-level runs), or the
   * child run's output `{<terminal node>: output}` for its parent.
   */
  async finishRun(args: {
    runId: string; record: boolean; status: RunStatus; error: string | null; nodes: Record<string, NodeStat>;
    log: RunLogEntry[]; outputBytes: number; terminals: string[];
  }): Promise<void> {
    if (args.record) {
      await this.deps.runs.finish(args.runId, {
        status: args.status, error: args.error, finishedAt: new Date(), nodes: args.nodes, log: args.log, outputBytes: args.outputBytes,
      });
      await this.deps.runEnded?.(args.runId);
      return;
    }
    const out: Record<string, unknown> = {};
    for (const doc of await this.deps.outputs.find(args.runId, args.terminals)) out[doc.key] = decodeUserJson(await this.deps.outputs.read(doc));
    const json = encodeUserJson(out);
    const tooBig = runOutputError(Buffer.byteLength(json));
    if (tooBig) throw new NodeFailure(tooBig, false);
    await this.deps.outputs.save(args.runId, '#output', json);
  }
}
