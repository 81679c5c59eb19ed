/**
 * Which of many literal needles occur in a text, in one pass over it (an Aho-Corasick automaton
 * over ASCII). The technique rules gate each regex on literal needles; asking `includes` for each
 * of their ~700 needles read every view ~700 times, which was nine tenths of the rules' time.
 * Needles are ASCII (the rules' are lower-case, as the views are); a character outside ASCII
 * matches no needle, so the automaton restarts after it. Same answer as `text.includes(needle)`
 * for every needle (test/unit/scan/needle-index.test.ts checks it against `includes`).
 *
 * Why not a package: npm's Aho-Corasick packages (modern-ahocorasick 3.3.0, ahocorasick 1.0.2,
 * @monyone/aho-corasick 1.1.11) gave the same answers on 2,000 detection-corpus texts with the
 * technique rules' 674 needles, but took 9 to 20 times as long (they build a match object per
 * occurrence over map-based tries, and the first segments graphemes), where this table-driven
 * automaton reads each character once.
 */
const ALPHABET = 128;

export class NeedleIndex {
  /** Index of each needle in `needles`, the order `present` reports in. */
  readonly ids: ReadonlyMap<string, number>;
  readonly needles: readonly string[];
  /** Full transition table: state * ALPHABET + char code -> state. */
  private readonly next: Int32Array;
  /** Needle ids that end in each state (through its suffix links too); undefined when none. */
  private readonly out: Array<number[] | undefined>;

  constructor(needles: Iterable<string>) {
    this.needles = [...new Set(needles)];
    for (const n of this.needles) {
      if (n === '' || /[^\x00-\x7f]/.test(n)) throw new Error(`needle ${JSON.stringify(n)}: needles are non-empty ASCII`);
    }
    this.ids = new Map(this.needles.map((n, i) => [n, i]));
    // The trie: goto edges, -1 where there is none.
    const edges: number[][] = [new Array<number>(ALPHABET).fill(-1)];
    const own: number[][] = [[]];
    this.needles.forEach((needle, id) => {
      let s = 0;
      for (let i = 0; i < needle.length; i++) {
        const c = needle.charCodeAt(i);
        if (edges[s][c] === -1) {
          edges[s][c] = edges.length;
          edges.push(new Array<number>(ALPHABET).fill(-1));
          own.push([]);
        }
        s = edges[s][c];
      }
      own[s].push(id);
    });
    // Breadth first: each state's failure link, its output merged with the link's, and the
    // missing edges filled from the link's so that scanning never follows links at run time.
    const states = edges.length;
    const next = new Int32Array(states * ALPHABET);
    const fail = new Int32Array(states);
    const out: Array<number[] | undefined> = new Array(states);
    const queue: number[] = [];
    for (let c = 0; c < ALPHABET; c++) {
      const t = edges[0][c];
      if (t === -1) next[c] = 0;
      else {
        next[c] = t;
        fail[t] = 0;
        queue.push(t);
      }
    }
    out[0] = own[0].length ? own[0] : undefined;
    for (let head = 0; head < queue.length; head++) {
      const s = queue[head];
      const merged = [...own[s], ...(out[fail[s]] ?? [])];
      out[s] = merged.length ? merged : undefined;
      for (let c = 0; c < ALPHABET; c++) {
        const t = edges[s][c];
        if (t === -1) next[s * ALPHABET + c] = next[fail[s] * ALPHABET + c];
        else {
          fail[t] = next[fail[s] * ALPHABET + c];
          next[s * ALPHABET + c] = t;
          queue.push(t);
        }
      }
    }
    this.next = next;
    this.out = out;
  }

  /** 1 at the index of every needle that occurs in `text`, 0 elsewhere. */
  present(text: string): Uint8Array {
    const seen = new Uint8Array(this.needles.length);
    const { next, out } = this;
    let s = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      s = c < ALPHABET ? next[s * ALPHABET + c] : 0;
      const found = out[s];
      if (found !== undefined) for (const id of found) seen[id] = 1;
    }
    return seen;
  }

  /** Whether any needle occurs in `text` (stops at the first). */
  occursIn(text: string): boolean {
    const { next, out } = this;
    let s = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      s = c < ALPHABET ? next[s * ALPHABET + c] : 0;
      if (out[s] !== undefined) return true;
    }
    return false;
  }
}

/**
 * Items that each carry needles (rules, indicators), gated on one automaton over all of them:
 * `in(text)` makes one pass over the text and answers, per item, whether one of its needles
 * occurs in it, as `item.needles.some((n) => text.includes(n))` would.
 */
export class NeedleGate<T extends { readonly needles: readonly string[] }> {
  private readonly index: NeedleIndex;
  private readonly ids: ReadonlyMap<T, readonly number[]>;

  constructor(items: readonly T[]) {
    this.index = new NeedleIndex(items.flatMap((i) => i.needles));
    this.ids = new Map(items.map((i) => [i, i.needles.map((n) => this.index.ids.get(n) as number)]));
  }

  /** Whether one of an item's needles occurs in `text` (an item the gate was not built with: false). */
  in(text: string): (item: T) => boolean {
    const seen = this.index.present(text);
    return (item) => (this.ids.get(item) ?? []).some((id) => seen[id] === 1);
  }
}
