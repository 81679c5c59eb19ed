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
import { FIXED_LIMITS } from '../accounts/plans';
import { ExpressionError, hasExpressionTemplate, resolveTemplates, type ExpressionContext, type TemplateOptions } from './expressions';
import { FairThreads } from '../fair-threads';
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

export class ExpressionPool {
  private readonly threads: number;
  private readonly heapMb: number;
  /** Threads taken in turn by accounts, each holding at most its share (src/fair-threads.ts). */
  private readonly pool: FairThreads;

  constructor(options: ExpressionPoolOptions = {}) {
    this.threads = Math.max(1, options.threads ?? DEFAULT_EXPRESSION_THREADS);
    this.heapMb = options.heapMb ?? FIXED_LIMITS.expressionHeapMb;
    this.pool = new FairThreads({ filename: path.join(__dirname, 'expression-entry.js'), threads: this.threads, perAccount: options.perAccount, heapMb: this.heapMb });
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
    let outcome;
    try {
      outcome = await this.pool.run<ExpressionReply>(accountId, task, Math.max(1, task.timeoutMs) + HARD_LIMIT_GRACE_MS, signal);
    } catch (err) {
      // A wait for a thread that its signal ended reports the signal's reason.
      if (signal?.aborted && err === signal.reason && !(err instanceof Error)) throw new Error('expression cancelled');
      throw err;
    }
    if ('stopped' in outcome) {
      throw new ExpressionError(outcome.stopped === 'time'
        ? `expression ran longer than its ${task.timeoutMs} ms budget (stopped)`
        : `expression used more than ${this.heapMb} MB of memory (stopped)`);
    }
    if ('error' in outcome.reply) throw new ExpressionError(outcome.reply.error);
    return outcome.reply.value;
  }

  /** Tasks waiting for a thread and threads busy (health and tests). */
  stats(): { busy: number; waiting: number; threads: number } {
    return { ...this.pool.stats(), threads: this.threads };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
