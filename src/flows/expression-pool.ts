/**
 * Where workflow expressions run: JSONata and `{{ }}` templates of every account, on worker
 * threads with a hard time and heap limit, shared fairly between accounts.
 *
 * Why: on the thread that serves requests, one account's `$reduce`, backtracking `$match` or
 * 60-million-character `$pad` held every other account's requests (and `/healthz`) for as long as
 * it ran; JSONata's own timeout only fires between evaluation steps. Here such an expression only
 * ever holds its own thread: past its node's time budget (plus a grace for the soft timeout to
 * answer first) or its heap, the pool terminates the thread and starts a fresh one, and the node
 * fails with a clear message. An account may hold at most `perAccount` threads at once (fewer
 * than half by default), and a freed thread goes round the waiting accounts: an outside probe's
 * two accounts each holding "all threads but one" of two left none for a third. With the default 4
 * threads, one per account, three accounts' runaway expressions at once still leave one free.
 */
import path from 'node:path';
import { Piscina } from 'piscina';
import { FIXED_LIMITS } from '../accounts/plans';
import { ExpressionError, hasExpressionTemplate, resolveTemplates, type ExpressionContext, type TemplateOptions } from './expressions';
import { FairSlots, perAccountDefault } from './fair-slots';
import { DEFAULT_EXPRESSION_THREADS } from '../config';

export type ExpressionTask =
  | { kind: 'evaluate'; expression: string; context: ExpressionContext; timeoutMs: number }
  | { kind: 'templates'; value: unknown; context: ExpressionContext; timeoutMs: number; options: TemplateOptions };

export type ExpressionReply = { value: unknown } | { error: string };

export interface ExpressionPoolOptions {
  /** Expression threads (default DEFAULT_EXPRESSION_THREADS). */
  threads?: number;
  /** Threads one account may hold at once (default: fewer than half, at least 1; `perAccountDefault`). */
  perAccount?: number;
  /** Heap of one thread in MB (default FIXED_LIMITS.expressionHeapMb). */
  heapMb?: number;
}

/** After JSONata's own timeout should have answered, the thread is terminated. */
const HARD_LIMIT_GRACE_MS = 1_000;

/** The signal of a task that nothing cancels. */
const NEVER = new AbortController().signal;

export class ExpressionPool {
  private piscina: Piscina | undefined;
  private readonly threads: number;
  private readonly heapMb: number;
  /** Threads taken in turn by accounts, each holding at most its share (src/flows/fair-slots.ts). */
  private readonly slots: FairSlots;

  constructor(options: ExpressionPoolOptions = {}) {
    this.threads = Math.max(1, options.threads ?? DEFAULT_EXPRESSION_THREADS);
    this.slots = new FairSlots(this.threads, options.perAccount ?? perAccountDefault(this.threads));
    this.heapMb = options.heapMb ?? FIXED_LIMITS.expressionHeapMb;
  }

  /** Threads start on first use: a process that runs no workflow nodes never starts one. */
  private pool(): Piscina {
    this.piscina ??= new Piscina({
      filename: path.join(__dirname, 'expression-entry.js'),
      minThreads: this.threads,
      maxThreads: this.threads,
      idleTimeout: Number.POSITIVE_INFINITY,
      recordTiming: false,
      resourceLimits: { maxOldGenerationSizeMb: this.heapMb, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
    });
    return this.piscina;
  }

  evaluate(accountId: string, expression: string, context: ExpressionContext, timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
    return this.run(accountId, { kind: 'evaluate', expression, context, timeoutMs }, signal);
  }

  resolveTemplates(accountId: string, value: unknown, context: ExpressionContext, timeoutMs: number, options: TemplateOptions = {}, signal?: AbortSignal): Promise<unknown> {
    // Nothing to evaluate (no template outside the skipped keys): filling vault references is a
    // string copy, cheaper here than cloning the context to a thread, as forEach does per item.
    if (!hasExpressionTemplate(value, options.skipKeys ?? [])) return resolveTemplates(value, context, timeoutMs, options);
    return this.run(accountId, { kind: 'templates', value, context, timeoutMs, options }, signal);
  }

  private async run(accountId: string, task: ExpressionTask, signal?: AbortSignal): Promise<unknown> {
    try {
      return await this.slots.run(accountId, signal ?? NEVER, () => this.onThread(task, signal));
    } catch (err) {
      // A wait for a thread that its signal ended reports the signal's reason.
      if (signal?.aborted && err === signal.reason && !(err instanceof Error)) throw new Error('expression cancelled');
      throw err;
    }
  }

  private async onThread(task: ExpressionTask, signal?: AbortSignal): Promise<unknown> {
    const limitMs = Math.max(1, task.timeoutMs) + HARD_LIMIT_GRACE_MS;
    const hard = AbortSignal.timeout(limitMs);
    let reply: ExpressionReply;
    try {
      reply = (await this.pool().run(task, { signal: signal ? AbortSignal.any([signal, hard]) : hard })) as ExpressionReply;
    } catch (err) {
      if (hard.aborted) throw new ExpressionError(`expression ran longer than its ${task.timeoutMs} ms budget (stopped)`);
      if ((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') throw new ExpressionError(`expression used more than ${this.heapMb} MB of memory (stopped)`);
      throw err;
    }
    if ('error' in reply) throw new ExpressionError(reply.error);
    return reply.value;
  }

  /** Tasks waiting for a thread and threads busy (health and tests). */
  stats(): { busy: number; waiting: number; threads: number } {
    return { ...this.slots.stats(), threads: this.threads };
  }

  async close(): Promise<void> {
    await this.piscina?.destroy();
    this.piscina = undefined;
  }
}
