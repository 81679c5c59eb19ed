/**
 * Engine-neutral reading of a store error, so services can tell "that key exists" apart without
 * knowing which engine raised it (and without loading either driver).
 */
import { AppError, ServiceUnavailableError } from '../errors';

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

/** MongoDB driver errors that mean the database cannot be reached now, not a bad request or a bug. */
const MONGO_UNREACHABLE = new Set([
  'MongoServerSelectionError', 'MongoNetworkError', 'MongoNetworkTimeoutError', 'MongoPoolClearedError',
  'MongoTopologyClosedError', 'MongoNotConnectedError',
]);

/**
 * The database is down, unreachable or, on the embedded store, locked past the busy timeout or
 * out of disk: the request may succeed later, so it is a 503 `unavailable`, not a 500. An
 * outside probe saw 500 `internal` for every request while the database was away.
 */
export function isStoreUnavailable(err: unknown): boolean {
  if (!hasCode(err) && !(typeof err === 'object' && err !== null && 'name' in err)) return false;
  const name = (err as { name: unknown }).name;
  if (typeof name === 'string' && MONGO_UNREACHABLE.has(name)) return true;
  if (name === 'SqliteError') {
    const code = String((err as { code?: unknown }).code ?? '');
    return code.startsWith('SQLITE_BUSY') || code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR');
  }
  return false;
}

/**
 * The answer an error makes, where it has one: an AppError itself, or 503 `unavailable` for a
 * database that is down (isStoreUnavailable); undefined for anything else (a 500). HTTP and MQTT
 * answer by this one rule.
 */
export function answerOf(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  return isStoreUnavailable(err) ? new ServiceUnavailableError('The database cannot be reached right now; retry later') : undefined;
}
