/**
 * Group commit, the one write-batching helper: while a write for a key is in flight, later items
 * for that key wait and go out together as the next write. An item alone is written at once, and
 * a burst costs one round trip per write in flight instead of one per item. Used for rate-window
 * counters (limits/), data-limit charges and message/inbox inserts (messaging/).
 */

/** Returned in place of an item's result to fail that item only. */
export class ItemFailure {
  constructor(readonly error: unknown) {}
}

interface Waiting<I, R> { item: I; resolve: (r: R) => void; reject: (err: unknown) => void }

export class GroupCommit<I, R> {
  private readonly queued = new Map<string, Array<Waiting<I, R>>>();
  private readonly inFlight = new Set<string>();

  /**
   * `write` gets the items of one group in arrival order and answers one result (or ItemFailure)
   * per item, in the same order; a throw fails the whole group. `maxBatch` caps a group's size.
   */
  constructor(
    private readonly write: (key: string, items: I[]) => Promise<Array<R | ItemFailure>>,
    private readonly maxBatch = Number.POSITIVE_INFINITY,
  ) {}

  submit(key: string, item: I): Promise<R> {
    return new Promise((resolve, reject) => {
      let list = this.queued.get(key);
      if (!list) this.queued.set(key, (list = []));
      list.push({ item, resolve, reject });
      if (!this.inFlight.has(key)) void this.drain(key);
    });
  }

  private async drain(key: string): Promise<void> {
    this.inFlight.add(key);
    try {
      for (let list = this.queued.get(key); list?.length; list = this.queued.get(key)) {
        const group = list.splice(0, this.maxBatch);
        if (!list.length) this.queued.delete(key);
        try {
          const results = await this.write(key, group.map((w) => w.item));
          if (results.length !== group.length) throw new Error(`group commit: ${results.length} results for ${group.length} items`);
          group.forEach((w, i) => {
            const r = results[i];
            if (r instanceof ItemFailure) w.reject(r.error);
            else w.resolve(r);
          });
        } catch (err) {
          for (const w of group) w.reject(err);
        }
      }
    } finally {
      this.inFlight.delete(key);
    }
  }
}
