/**
 * A bound on how much of one kind of heavy work (python snippets: a process and up to 256 MB
 * each) a worker process runs at once, shared fairly between accounts:
 * - one account holds at most `perAccount` slots at once (by default `perAccountDefault(max)`:
 *   fewer than half, so two accounts busy together still leave a slot for a third). Without it an
 *   outside probe's one account held every slot with sleeping snippets, and every other account's
 *   python nodes timed out waiting;
 * - when slots are taken, a freed one goes to the account that waited least recently served
 *   (round robin over the accounts that wait and may take one), so one account's queue of hundreds
 *   never stands in front of another account's one.
 * A wait ends early when its signal aborts (the node's timeout or cancellation).
 */
interface Waiter { start: () => void; abandon: () => void }

/** Fewer than half of `max` (at least 1): any two accounts together leave a slot free when max >= 3. */
export const perAccountDefault = (max: number): number => Math.max(1, Math.floor((max - 1) / 2));

export class FairSlots {
  private busy = 0;
  /** Slots each account holds now. */
  private readonly held = new Map<string, number>();
  /** Waiters per account, in the order the accounts are served (a Map keeps insertion order). */
  private readonly waiting = new Map<string, Waiter[]>();
  readonly perAccount: number;

  constructor(readonly max: number, perAccount = perAccountDefault(max)) {
    this.perAccount = Math.max(1, Math.min(max, perAccount));
  }

  async run<T>(accountId: string, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    if (this.mayTake(accountId) && !this.waiting.size) this.take(accountId);
    else await this.wait(accountId, signal);
    try {
      return await fn();
    } finally {
      this.release(accountId);
    }
  }

  /** Slots taken and waits queued (health and tests). */
  stats(): { busy: number; waiting: number } {
    let waiting = 0;
    for (const line of this.waiting.values()) waiting += line.length;
    return { busy: this.busy, waiting };
  }

  private mayTake(accountId: string): boolean {
    return this.busy < this.max && (this.held.get(accountId) ?? 0) < this.perAccount;
  }

  private take(accountId: string): void {
    this.busy++;
    this.held.set(accountId, (this.held.get(accountId) ?? 0) + 1);
  }

  private wait(accountId: string, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        waiter.abandon();
        reject(signal.reason);
      };
      const waiter: Waiter = {
        // The slot is taken for it by serve() before this runs.
        start: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        abandon: () => {
          const line = this.waiting.get(accountId);
          const at = line?.indexOf(waiter) ?? -1;
          if (line && at >= 0) line.splice(at, 1);
          if (line?.length === 0) this.waiting.delete(accountId);
          // Its place may have been what kept another account's waiter from a free slot.
          this.serve();
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const line = this.waiting.get(accountId);
      if (line) line.push(waiter);
      else this.waiting.set(accountId, [waiter]);
      // Slots may be free for this account although it must queue behind others' waits.
      this.serve();
    });
  }

  private release(accountId: string): void {
    this.busy--;
    const n = (this.held.get(accountId) ?? 1) - 1;
    if (n > 0) this.held.set(accountId, n);
    else this.held.delete(accountId);
    this.serve();
  }

  /** Hands free slots to waiting accounts in round order, skipping those at their cap. */
  private serve(): void {
    for (const [accountId, line] of [...this.waiting]) {
      if (this.busy >= this.max) return;
      if (!this.mayTake(accountId)) continue;
      const waiter = line.shift() as Waiter;
      // The account goes to the back of the round; it leaves it when it has nobody waiting.
      this.waiting.delete(accountId);
      if (line.length) this.waiting.set(accountId, line);
      this.take(accountId);
      waiter.start();
    }
  }
}
