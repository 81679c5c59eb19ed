/**
 * A bound on how much of one kind of heavy work (python snippets: a process and up to 256 MB
 * each) a worker process runs at once, shared fairly between accounts: when every slot is busy,
 * a freed slot goes to the account that waited least recently served (round robin over the
 * accounts that wait), so one account's queue of hundreds never stands in front of another
 * account's one. A wait ends early when its signal aborts (the node's timeout or cancellation).
 */
interface Waiter { start: () => void; abandon: () => void }

export class FairSlots {
  private busy = 0;
  /** Waiters per account, in the order the accounts are served (a Map keeps insertion order). */
  private readonly waiting = new Map<string, Waiter[]>();

  constructor(readonly max: number) {}

  async run<T>(accountId: string, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    if (this.busy >= this.max) await this.wait(accountId, signal);
    else this.busy++;
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  private wait(accountId: string, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        waiter.abandon();
        reject(signal.reason);
      };
      const waiter: Waiter = {
        // The slot is handed over by release(): `busy` is not lowered in between.
        start: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        abandon: () => {
          const line = this.waiting.get(accountId);
          const at = line?.indexOf(waiter) ?? -1;
          if (line && at >= 0) line.splice(at, 1);
          if (line?.length === 0) this.waiting.delete(accountId);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const line = this.waiting.get(accountId);
      if (line) line.push(waiter);
      else this.waiting.set(accountId, [waiter]);
    });
  }

  private release(): void {
    const next = this.waiting.entries().next();
    if (next.done) {
      this.busy--;
      return;
    }
    const [accountId, line] = next.value;
    const waiter = line.shift() as Waiter;
    // The account goes to the back of the round; it leaves it when it has nobody waiting.
    this.waiting.delete(accountId);
    if (line.length) this.waiting.set(accountId, line);
    waiter.start();
  }
}
