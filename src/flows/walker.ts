/**
 * The walk over a workflow graph (docs/contract.md §7): which node runs next, which are skipped,
 * which edges a success or a failure takes, and when the run fails. Pure data and functions with
 * no I/O and no Temporal import, so the interpreter workflow (workflows/flow.ts) only executes
 * what the walk hands it, and every rule is unit-tested without a Temporal server.
 *
 * A run starts at every node with no incoming edge; a node runs once every forward incoming edge
 * has been decided and at least one was taken (join); a node whose incoming edges were all not
 * taken is skipped and passes "not taken" on. An edge that closes a loop re-runs its target when
 * taken; each node runs at most 100 times per run. The whole walk is the `WalkState`, which is
 * plain JSON and carried across continue-as-new.
 */
import { analyzeGraph, GraphShape } from './graph';
import type { NodeOutcome } from './node-runner';
import type { NodeStat } from './records';
import type { EdgeDef, NodeDef } from './schemas';
import { executionCapError, runOutputError, type RunLogEntry } from './limits';

export interface WalkState {
  /** Per edge index: decided taken or not taken. */
  signals: Record<number, 'taken' | 'not_taken'>;
  /** Edges decided since their target last looked at them. */
  fresh: number[];
  stats: Record<string, NodeStat>;
  /** Nodes whose inputs are in, in the order they became ready. */
  ready: string[];
  log: RunLogEntry[];
  outputBytes: number;
}

/** `limit`: a run limit (child-run depth or budget), which ends the whole run whatever on_error says. */
export interface NodeFailure { message: string; attempts: number; log: RunLogEntry[]; limit: boolean }

export class Walk {
  readonly state: WalkState;
  /** Why the run fails; once set, no node starts. */
  failure?: string;
  /** The error at the origin of the failure, handed to a parent run as is. */
  root?: string;
  /** A run limit was hit: the run stops now, without waiting for what is in flight. */
  limited = false;
  private readonly shape: GraphShape;
  private readonly byId: Map<string, NodeDef>;
  private readonly forwardIn: Map<string, number[]>;
  private readonly fresh: Set<number>;
  private readonly inFlight = new Set<string>();
  /** Nodes changed and log entries added since `progress()` last handed them out. */
  private readonly dirty = new Set<string>();
  private logSeen: number;

  constructor(readonly nodes: readonly NodeDef[], readonly edges: readonly EdgeDef[], state: WalkState | undefined, private readonly now: () => number) {
    this.shape = analyzeGraph(nodes, edges);
    this.byId = new Map(nodes.map((n) => [n.id, n]));
    this.forwardIn = new Map(nodes.map((n) => [n.id, (this.shape.incoming.get(n.id) ?? []).filter((i) => !this.shape.backEdges.has(i))]));
    this.state = state ?? {
      signals: {}, fresh: [], log: [], outputBytes: 0, ready: [...this.shape.starts],
      stats: Object.fromEntries(nodes.map((n) => [n.id, { status: 'pending', executions: 0, attempts: 0, durationMs: 0, outputBytes: 0 } as NodeStat])),
    };
    this.fresh = new Set(this.state.fresh);
    this.logSeen = this.state.log.length;
  }

  get running(): number { return this.inFlight.size; }
  get hasReady(): boolean { return this.state.ready.length > 0; }

  /**
   * The next ready node and its execution number, marked running; undefined when none is ready
   * or the node reached the execution cap (which fails the run).
   */
  take(): { node: NodeDef; execution: number } | undefined {
    const id = this.state.ready.shift();
    if (id === undefined) return undefined;
    const s = this.state.stats[id];
    const execution = s.executions + 1;
    const capped = executionCapError(id, execution);
    if (capped) {
      this.note('error', id, capped);
      this.failure ??= capped;
      return undefined;
    }
    s.executions = execution;
    s.status = 'running';
    this.inFlight.add(id);
    this.dirty.add(id);
    return { node: this.byId.get(id) as NodeDef, execution };
  }

  /** Takes the edges a success decides: plain ones, and the branch's (condition "true"/"false"; switch the value, else "default"). */
  succeeded(id: string, outcome: NodeOutcome): void {
    if (outcome.log) this.state.log.push(...outcome.log);
    const s = this.state.stats[id];
    Object.assign(s, { status: 'completed', attempts: outcome.attempt, durationMs: s.durationMs + outcome.durationMs, outputBytes: outcome.bytes });
    delete s.error;
    this.state.outputBytes += outcome.bytes;
    const over = runOutputError(this.state.outputBytes);
    if (over) {
      this.failure ??= over;
      return;
    }
    const outs = this.outgoing(id);
    const branch = outcome.branch;
    const matched = branch !== undefined && outs.some((i) => this.edges[i].when !== 'error' && this.edges[i].when === branch);
    const isSwitch = this.byId.get(id)?.type === 'switch';
    for (const i of outs) {
      const when = this.edges[i].when;
      this.signal(i, when === undefined || (when !== 'error' && (when === branch || (!matched && branch !== undefined && when === 'default' && isSwitch))));
    }
  }

  /** Error edges catch a failure; else `on_error: continue` takes the plain edges; else the run fails naming the node. */
  failed(id: string, err: NodeFailure): void {
    const s = this.state.stats[id];
    this.state.log.push(...err.log);
    Object.assign(s, { status: 'failed', attempts: err.attempts, error: err.message });
    const outs = this.outgoing(id);
    if (!err.limit && outs.some((i) => this.edges[i].when === 'error')) {
      this.note('warn', id, `failed, following its error edges: ${err.message}`);
      for (const i of outs) this.signal(i, this.edges[i].when === 'error');
    } else if (!err.limit && this.byId.get(id)?.on_error === 'continue') {
      this.note('warn', id, `failed, continuing (on_error: continue): ${err.message}`);
      for (const i of outs) this.signal(i, this.edges[i].when === undefined);
    } else {
      this.note('error', id, err.message);
      this.root ??= err.message;
      this.failure ??= `Node "${id}" failed: ${err.message}`;
      if (err.limit) this.limited = true;
    }
  }

  /** The node's execution is over (either way): signals that arrived while it ran (a loop coming round) are looked at now. */
  settled(id: string): void {
    this.inFlight.delete(id);
    this.dirty.add(id);
    this.consider(id);
  }

  /** Outputs a node may read: the nodes its config names (an id is a plain word, so text search finds every use). */
  contextKeys(config: unknown): string[] {
    const text = JSON.stringify(config);
    return this.nodes.filter((m) => text.includes(m.id) && this.state.stats[m.id].executions > 0).map((m) => m.id);
  }

  note(level: RunLogEntry['level'], node: string, message: string): void {
    this.state.log.push({ level, node, message, at: new Date(this.now()).toISOString() });
  }

  /** Node stats changed and log entries added since the last call; undefined when nothing changed. */
  progress(): { nodes: Record<string, NodeStat>; log: RunLogEntry[] } | undefined {
    if (this.dirty.size === 0 && this.logSeen === this.state.log.length) return undefined;
    const nodes = Object.fromEntries([...this.dirty].map((id) => [id, { ...this.state.stats[id] }]));
    const log = this.state.log.slice(this.logSeen);
    this.dirty.clear();
    this.logSeen = this.state.log.length;
    return { nodes, log };
  }

  /** The state to continue in a new execution with: what is ready and every decided edge. */
  snapshot(): WalkState {
    return { ...this.state, fresh: [...this.fresh] };
  }

  /**
   * The run is over: nodes never reached are skipped, nodes still in flight (cancelled, or
   * abandoned at a run limit) are cancelled. Returns the terminals that completed (the run output).
   */
  close(): string[] {
    for (const s of Object.values(this.state.stats)) {
      if (s.status === 'pending') s.status = 'skipped';
      if (s.status === 'running') s.status = 'cancelled';
    }
    return this.nodes.filter((n) => this.outgoing(n.id).length === 0 && this.state.stats[n.id].status === 'completed').map((n) => n.id);
  }

  private outgoing(id: string): number[] {
    return this.shape.outgoing.get(id) ?? [];
  }

  private signal(edgeIndex: number, taken: boolean): void {
    this.state.signals[edgeIndex] = taken ? 'taken' : 'not_taken';
    this.fresh.add(edgeIndex);
    this.consider(this.edges[edgeIndex].to);
  }

  private consider(id: string): void {
    if (this.inFlight.has(id) || this.state.ready.includes(id)) return;
    if ((this.forwardIn.get(id) ?? []).some((i) => this.state.signals[i] === undefined)) return;
    const arrived = (this.shape.incoming.get(id) ?? []).filter((i) => this.fresh.has(i));
    if (arrived.length === 0) return;
    for (const i of arrived) this.fresh.delete(i);
    if (arrived.some((i) => this.state.signals[i] === 'taken')) {
      this.state.ready.push(id);
    } else if (this.state.stats[id].status === 'pending') {
      this.state.stats[id].status = 'skipped';
      for (const i of this.outgoing(id)) this.signal(i, false);
    }
  }
}
