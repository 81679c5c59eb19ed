/**
 * Worker threads for one kind of user-supplied work (workflow expressions, message validation
 * rules), shared fairly between accounts: a task holds a thread under a hard time limit and the
 * thread's heap limit, past which the thread is terminated and replaced, and one account holds at
 * most its share of the threads at once (flows/fair-slots.ts). Threads start on first use.
 */
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { FairSlots, perAccountDefault } from './flows/fair-slots';

/** A task's answer, or why its thread was stopped. */
export type ThreadOutcome<R> = { reply: R } | { stopped: 'time' | 'memory' };

/** How long a thread may take to start before the task it was given counts as stopped. */
const STARTUP_LIMIT_MS = 60_000;

/** Called first by a worker's task function with the task it got: its time limit starts now. */
export function taskStarted(task: object): void {
  const { started } = task as { started?: MessagePort };
  started?.postMessage(null);
  started?.close();
}

/** The signal of a task that nothing cancels. */
const NEVER = new AbortController().signal;

export class FairThreads {
  private piscina: Piscina | undefined;
  private readonly slots: FairSlots;

  constructor(private readonly opts: { filename: string; threads: number; perAccount?: number; heapMb: number }) {
    this.slots = new FairSlots(opts.threads, opts.perAccount ?? perAccountDefault(opts.threads));
  }

  private pool(): Piscina {
    this.piscina ??= new Piscina({
      filename: this.opts.filename,
      minThreads: this.opts.threads,
      maxThreads: this.opts.threads,
      idleTimeout: Number.POSITIVE_INFINITY,
      recordTiming: false,
      resourceLimits: { maxOldGenerationSizeMb: this.opts.heapMb, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
    });
    return this.piscina;
  }

  /**
   * Runs `task` on a thread once the account's turn comes. `signal` ends the wait or the run
   * (rejecting with its reason); past `limitMs` on the thread, or over the heap, the outcome says so.
   * The limit counts from when the thread takes the task (the worker calls `taskStarted`), not
   * from when it was handed over: a thread that is still starting (loading its modules takes
   * hundreds of milliseconds on a busy machine) must not eat a short budget. Starting itself gets
   * STARTUP_LIMIT_MS.
   */
  run<R>(accountId: string, task: object, limitMs: number, signal?: AbortSignal): Promise<ThreadOutcome<R>> {
    return this.slots.run(accountId, signal ?? NEVER, async () => {
      const hard = new AbortController();
      let timer = setTimeout(() => hard.abort(), STARTUP_LIMIT_MS);
      const { port1, port2 } = new MessageChannel();
      port1.once('message', () => {
        clearTimeout(timer);
        timer = setTimeout(() => hard.abort(), limitMs);
      });
      try {
        const run = this.pool().run({ ...task, started: port2 }, { transferList: [port2], signal: signal ? AbortSignal.any([signal, hard.signal]) : hard.signal });
        return { reply: (await run) as R };
      } catch (err) {
        if (hard.signal.aborted) return { stopped: 'time' };
        if ((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') return { stopped: 'memory' };
        throw err;
      } finally {
        clearTimeout(timer);
        port1.close();
      }
    });
  }

  /** Tasks waiting for a thread and threads busy (health and tests). */
  stats(): { busy: number; waiting: number } {
    return this.slots.stats();
  }

  async close(): Promise<void> {
    await this.piscina?.destroy();
    this.piscina = undefined;
  }
}
