/**
 * A tiny in-memory stand-in for the parts of a MongoDB collection that src/limits/store.ts uses
 * (findOneAndUpdate with upsert, findOne, find().toArray(), deleteMany), with the same
 * semantics for the operators those filters use. Upserts are not atomic with respect to each
 * other, exactly like MongoDB: two upserts that both find no document race to insert it and the
 * loser gets a duplicate-key error (E11000), which is the case the store's retries exist for.
 */
import { MongoServerError } from 'mongodb';

type Doc = Record<string, unknown> & { _id: string };
type Filter = Record<string, unknown>;

const tick = () => new Promise<void>((r) => setImmediate(r));

function getPath(doc: Record<string, unknown>, path: string): unknown {
  let v: unknown = doc;
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

function setPath(doc: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let o = doc;
  for (const p of parts.slice(0, -1)) {
    if (o[p] === undefined || o[p] === null || typeof o[p] !== 'object') o[p] = {};
    o = o[p] as Record<string, unknown>;
  }
  o[parts[parts.length - 1]] = value;
}

function cmp(v: unknown, op: string, arg: unknown): boolean {
  switch (op) {
    case '$exists': return (v !== undefined) === Boolean(arg);
    case '$lte': return v !== undefined && (v as number) <= (arg as number);
    case '$lt': return v !== undefined && (v as number) < (arg as number);
    case '$gte': return v !== undefined && (v as number) >= (arg as number);
    case '$gt': return v !== undefined && (v as number) > (arg as number);
    case '$in': return (arg as unknown[]).includes(v);
    default: throw new Error(`fake mongo: unsupported operator ${op}`);
  }
}

export function matches(doc: Doc, filter: Filter): boolean {
  for (const [k, cond] of Object.entries(filter)) {
    if (k === '$or') {
      if (!(cond as Filter[]).some((f) => matches(doc, f))) return false;
      continue;
    }
    const v = getPath(doc, k);
    if (cond !== null && typeof cond === 'object' && !(cond instanceof Date) && Object.keys(cond).every((x) => x.startsWith('$'))) {
      for (const [op, arg] of Object.entries(cond as Record<string, unknown>)) if (!cmp(v, op, arg)) return false;
    } else if (v !== cond) {
      return false;
    }
  }
  return true;
}

interface Update { $inc?: Record<string, number>; $set?: Record<string, unknown>; $setOnInsert?: Record<string, unknown> }

function apply(doc: Doc, u: Update, inserting: boolean): void {
  for (const [p, n] of Object.entries(u.$inc ?? {})) setPath(doc, p, ((getPath(doc, p) as number | undefined) ?? 0) + n);
  for (const [p, v] of Object.entries(u.$set ?? {})) setPath(doc, p, v);
  if (inserting) for (const [p, v] of Object.entries(u.$setOnInsert ?? {})) setPath(doc, p, v);
}

export class FakeCollection {
  readonly docs = new Map<string, Doc>();
  /** Round trips of findOneAndUpdate, for tests that count them. */
  updates = 0;

  async findOneAndUpdate(filter: Filter, update: Update, opts: { upsert?: boolean; returnDocument?: 'after' | 'before' } = {}): Promise<Doc | null> {
    this.updates++;
    await tick();
    // The match and the update of an existing document are one atomic step.
    const found = [...this.docs.values()].find((d) => matches(d, filter));
    if (found) {
      apply(found, update, false);
      return structuredClone(found);
    }
    if (!opts.upsert) return null;
    // Insert path: another writer may insert the same _id in between.
    await tick();
    const id = filter._id as string;
    if (this.docs.has(id)) throw new MongoServerError({ message: `E11000 duplicate key error collection: fake index: _id_ dup key: { _id: "${id}" }`, code: 11000 });
    const doc: Doc = { _id: id };
    apply(doc, update, true);
    this.docs.set(id, doc);
    return structuredClone(doc);
  }

  async findOne(filter: Filter): Promise<Doc | null> {
    await tick();
    const d = [...this.docs.values()].find((x) => matches(x, filter));
    return d ? structuredClone(d) : null;
  }

  find(filter: Filter) {
    return { toArray: async () => { await tick(); return [...this.docs.values()].filter((d) => matches(d, filter)).map((d) => structuredClone(d)); } };
  }

  async deleteMany(filter: Filter): Promise<{ deletedCount: number }> {
    await tick();
    let n = 0;
    for (const [id, d] of [...this.docs]) if (matches(d, filter)) { this.docs.delete(id); n++; }
    return { deletedCount: n };
  }
}

export class FakeDb {
  readonly collections = new Map<string, FakeCollection>();
  collection(name: string): FakeCollection {
    let c = this.collections.get(name);
    if (!c) this.collections.set(name, (c = new FakeCollection()));
    return c;
  }
}
