/**
 * Where workflow expressions run: JSONata and `{{ }}` templates of every account, on worker
 * threads with a hard time and heap limit, shared fairly between accounts.
 *
 * Why: on the thread that serves requests, one account's `$reduce`, backtracking `$match` or
 * 60-million-character `$pad` held every other account's requests (and `/healthz`) for as long as
 * it ran; JSONata's own timeout only fires between evaluation steps. Here such an expression only
 * ever holds its own thread: past its node's time budget (plus a grace for the soft timeout to
 * answer first) or its heap, the pool terminates the thread and starts a fresh one, and the node
 * fails with a clear message. An account may hold at most `perAccount` threads at once, so the
 * other accounts' expressions always find one free (with two or more threads).
 */
import path from 'node:path';
import { Piscina } from 'piscina';
import { FIXED_LIMITS } from '../accounts/plans';
import { ExpressionError, hasExpressionTemplate, resolveTemplates, type ExpressionContext, type TemplateOptions } from './expressions';

export type ExpressionTask =
  | { kind: 'evaluate'; expression: string; context: ExpressionContext; timeoutMs: number }
  | { kind: 'templates'; value: unknown; context: ExpressionContext; timeoutMs: number; options: TemplateOptions };

export type ExpressionReply = { value: unknown } | { error: string };

export interface ExpressionPoolOptions {
  /** Expression threads (default 2). */
  threads?: number;
  /** Threads one account may hold at once (default threads - 1, at least 1). */
  perAccount?: number;
  /** Heap of one thread in MB (default FIXED_LIMITS.expressionHeapMb). */
  heapMb?: number;
}

/** After JSONata's own timeout should have answered, the thread is terminated. */
const HARD_LIMIT_GRACE_MS = 1_000;

interface Waiter { accountId: string; start: () => void }

export class ExpressionPool {
  private piscina: Piscina | undefined;
  private readonly threads: number;
  private readonly perAccount: number;
  private readonly heapMb: number;
  private busy = 0;
  private readonly byAccount = new Map<string, number>();
  private readonly waiting: Waiter[] = [];

  constructor(options: ExpressionPoolOptions = {}) {
    this.threads = Math.max(1, options.threads ?? 2);
    this.perAccount = Math.max(1, Math.min(this.threads, options.perAccount ?? this.threads - 1));
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
    await this.acquire(accountId, signal);
    const limitMs = Math.max(1, task.timeoutMs) + HARD_LIMIT_GRACE_MS;
    const hard = AbortSignal.timeout(limitMs);
    let reply: ExpressionReply;
    try {
      reply = (await this.pool().run(task, { signal: signal ? AbortSignal.any([signal, hard]) : hard })) as ExpressionReply;
    } catch (err) {
      if (hard.aborted) throw new ExpressionError(`expression ran longer than its ${task.timeoutMs} ms budget (stopped)`);
      if ((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') throw new ExpressionError(`expression used more than ${this.heapMb} MB of memory (stopped)`);
      throw err;
    } finally {
      this.release(accountId);
    }
    if ('error' in reply) throw new ExpressionError(reply.error);
    return reply.value;
  }

  private acquire(accountId: string, signal?: AbortSignal): Promise<void> {
    if (this.canStart(accountId)) {
      this.take(accountId);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { accountId, start: () => { signal?.removeEventListener('abort', onAbort); resolve(); } };
      const onAbort = () => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('expression cancelled'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private canStart(accountId: string): boolean {
    return this.busy < this.threads && (this.byAccount.get(accountId) ?? 0) < this.perAccount;
  }

  private take(accountId: string): void {
    this.busy++;
    this.byAccount.set(accountId, (this.byAccount.get(accountId) ?? 0) + 1);
  }

  /** Frees a thread and hands it to the longest-waiting task whose account is under its share. */
  private release(accountId: string): void {
    this.busy--;
    const held = (this.byAccount.get(accountId) ?? 1) - 1;
    if (held > 0) this.byAccount.set(accountId, held);
    else this.byAccount.delete(accountId);
    for (let i = 0; i < this.waiting.length && this.busy < this.threads; i++) {
      const w = this.waiting[i];
      if (!this.canStart(w.accountId)) continue;
      this.waiting.splice(i--, 1);
      this.take(w.accountId);
      w.start();
    }
  }

  /** Tasks waiting for a thread and threads busy (health and tests). */
  stats(): { busy: number; waiting: number; threads: number } {
    return { busy: this.busy, waiting: this.waiting.length, threads: this.threads };
  }

  async close(): Promise<void> {
    await this.piscina?.destroy();
    this.piscina = undefined;
  }
}
