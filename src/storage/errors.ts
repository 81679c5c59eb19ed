/**
 * Engine-neutral reading of a store error, so services can tell "that key exists" apart without
 * knowing which engine raised it (and without loading either driver).
 */

/** Duck-typed: better-sqlite3's errors are not `instanceof Error` across realms (Jest's VM contexts). */
const hasCode = (err: unknown): err is { name: unknown; code: unknown; message: string } =>
  typeof err === 'object' && err !== null && 'code' in err && 'name' in err && typeof (err as { message?: unknown }).message === 'string';

/**
 * A unique-key violation. MongoDB (and the local FerretDB on inserts): E11000. FerretDB v1 on an
 * update that collides: an InternalError (code 1) quoting SQLite's UNIQUE constraint failure
 * (extended code 2067). The embedded store: better-sqlite3's SqliteError with a primary-key or
 * unique constraint code.
 */
export function isDuplicateKey(err: unknown): boolean {
  if (!hasCode(err)) return false;
  if (err.name === 'MongoServerError') return err.code === 11000 || (err.code === 1 && /UNIQUE constraint failed/.test(err.message));
  if (err.name === 'SqliteError') return err.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || err.code === 'SQLITE_CONSTRAINT_UNIQUE';
  return false;
}
