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
 * its share of the threads (fair-threads.ts), and at most MAX_IN_FLIGHT_PER_ACCOUNT of its messages are waiting or running; more
 * are refused with 429, so a flood cannot queue memory without bound.
 */
import path from 'node:path';
import { RateLimitedError } from '../errors';
import { FairThreads, type ThreadOutcome } from '../fair-threads';
import type { ServiceDoc, ValidationOutcome } from './records';
import type { RuleRunner } from './validation';

/** How long all of a service's rules may take on one message. */
export const VALIDATION_BUDGET_MS = 500;
/** Messages of one account waiting for a validation thread or running on one, at most. */
export const MAX_IN_FLIGHT_PER_ACCOUNT = 200;
export const VALIDATION_THREADS = 2;

export interface ValidationTask { serviceId: string; version: number; rules: ServiceDoc['rules']; data: Record<string, unknown> }
export type ValidationReply = { outcome: ValidationOutcome } | { error: string };

/** Heap of one validation thread, in MB. */
const HEAP_MB = 128;

export class ValidationPool implements RuleRunner {
  private readonly pool: FairThreads;
  private readonly inFlight = new Map<string, number>();

  constructor(
    threads = VALIDATION_THREADS,
    private readonly budgetMs = VALIDATION_BUDGET_MS,
    private readonly maxInFlight = MAX_IN_FLIGHT_PER_ACCOUNT,
  ) {
    this.pool = new FairThreads({ filename: path.join(__dirname, 'validation-entry.js'), threads, heapMb: HEAP_MB });
  }

  async check(accountId: string, service: ServiceDoc, data: Record<string, unknown>): Promise<ValidationOutcome> {
    const held = this.inFlight.get(accountId) ?? 0;
    if (held >= this.maxInFlight) throw new RateLimitedError(1, `Too many messages of this account are waiting for their validation rules (${this.maxInFlight}); retry later`);
    this.inFlight.set(accountId, held + 1);
    let outcome: ThreadOutcome<ValidationReply>;
    try {
      const task: ValidationTask = { serviceId: service._id, version: service.version, rules: service.rules, data };
      outcome = await this.pool.run<ValidationReply>(accountId, task, this.budgetMs);
    } finally {
      const n = (this.inFlight.get(accountId) ?? 1) - 1;
      if (n > 0) this.inFlight.set(accountId, n);
      else this.inFlight.delete(accountId);
    }
    if ('stopped' in outcome) {
      return overBudget(service.rules, outcome.stopped === 'time' ? `ran longer than ${this.budgetMs} ms on this message (stopped)` : `used more than ${HEAP_MB} MB of memory on this message (stopped)`);
    }
    if ('error' in outcome.reply) throw new Error(outcome.reply.error);
    return outcome.reply.outcome;
  }

  /** Threads busy and messages waiting (tests). */
  stats(): { busy: number; waiting: number } {
    return this.pool.stats();
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** A message whose rules were stopped fails every rule: none of them was seen to pass. */
function overBudget(rules: ServiceDoc['rules'], why: string): ValidationOutcome {
  return {
    result: 'failed',
    actionResults: rules.map((r) => ({ rule: r.name, passed: false, errors: [`the service's rules ${why}`] })),
  };
}
