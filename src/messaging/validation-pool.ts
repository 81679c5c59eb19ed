/**
 * Where validation services' rules run on device messages: worker threads, each message under a
 * hard time limit, shared fairly between accounts (the workflow expressions' arrangement,
 * src/flows/expression-pool.ts).
 *
 * Why: ajv runs a rule synchronously, and a rule can be made expensive within every static bound
 * (RE2 keeps each pattern linear, but a recursive `$ref` applied a few hundred times runs the
 * same pattern that many times: an outside probe's 6 KB rule took 1.7 s per 5 KB message). On the
 * thread that serves requests that held every account's requests, and `/healthz`, for as long.
 * Here such a rule holds one thread: past VALIDATION_BUDGET_MS the thread is terminated and
 * replaced, and the message's validation fails naming the budget. One account holds at most
 * `perAccount` threads, and at most MAX_WAITING_PER_ACCOUNT of its messages wait for one; more
 * are refused with 429, so a flood cannot queue memory without bound.
 */
import path from 'node:path';
import { Piscina } from 'piscina';
import { RateLimitedError } from '../errors';
import { FairSlots, perAccountDefault } from '../flows/fair-slots';
import type { ServiceDoc, ValidationOutcome } from './records';
import type { RuleRunner } from './validation';

/** How long all of a service's rules may take on one message. */
export const VALIDATION_BUDGET_MS = 500;
/** Messages of one account waiting for a validation thread, at most. */
export const MAX_WAITING_PER_ACCOUNT = 200;
export const VALIDATION_THREADS = 2;

export interface ValidationTask { serviceId: string; version: number; rules: ServiceDoc['rules']; data: Record<string, unknown> }
export type ValidationReply = { outcome: ValidationOutcome } | { error: string };

const NEVER = new AbortController().signal;

export class ValidationPool implements RuleRunner {
  private piscina: Piscina | undefined;
  private readonly slots: FairSlots;
  private readonly waiting = new Map<string, number>();

  constructor(
    private readonly threads = VALIDATION_THREADS,
    private readonly budgetMs = VALIDATION_BUDGET_MS,
    private readonly maxWaiting = MAX_WAITING_PER_ACCOUNT,
  ) {
    this.slots = new FairSlots(threads, perAccountDefault(threads));
  }

  /** Threads start on first use: a process that validates nothing never starts one. */
  private pool(): Piscina {
    this.piscina ??= new Piscina({
      filename: path.join(__dirname, 'validation-entry.js'),
      minThreads: this.threads,
      maxThreads: this.threads,
      idleTimeout: Number.POSITIVE_INFINITY,
      recordTiming: false,
      resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
    });
    return this.piscina;
  }

  async check(accountId: string, service: ServiceDoc, data: Record<string, unknown>): Promise<ValidationOutcome> {
    const queued = this.waiting.get(accountId) ?? 0;
    if (queued >= this.maxWaiting) throw new RateLimitedError(1, `Too many messages of this account wait for their validation rules (${this.maxWaiting}); retry later`);
    this.waiting.set(accountId, queued + 1);
    let counted = true;
    const started = () => {
      if (!counted) return;
      counted = false;
      const n = (this.waiting.get(accountId) ?? 1) - 1;
      if (n > 0) this.waiting.set(accountId, n);
      else this.waiting.delete(accountId);
    };
    try {
      return await this.slots.run(accountId, NEVER, () => {
        started();
        return this.onThread({ serviceId: service._id, version: service.version, rules: service.rules, data });
      });
    } finally {
      started();
    }
  }

  private async onThread(task: ValidationTask): Promise<ValidationOutcome> {
    const hard = AbortSignal.timeout(this.budgetMs);
    let reply: ValidationReply;
    try {
      reply = (await this.pool().run(task, { signal: hard })) as ValidationReply;
    } catch (err) {
      if (hard.aborted) return overBudget(task, `ran longer than ${this.budgetMs} ms on this message (stopped)`);
      if ((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') return overBudget(task, 'used more than 128 MB of memory on this message (stopped)');
      throw err;
    }
    if ('error' in reply) throw new Error(reply.error);
    return reply.outcome;
  }

  /** Threads busy and messages waiting (tests). */
  stats(): { busy: number; waiting: number } {
    return this.slots.stats();
  }

  async close(): Promise<void> {
    await this.piscina?.destroy();
    this.piscina = undefined;
  }
}

/** A message whose rules were stopped fails every rule: none of them was seen to pass. */
function overBudget(task: ValidationTask, why: string): ValidationOutcome {
  return {
    result: 'failed',
    actionResults: task.rules.map((r) => ({ rule: r.name, passed: false, errors: [`the service's rules ${why}`] })),
  };
}
