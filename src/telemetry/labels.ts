/**
 * The label rules of every series: each label takes its value from a small fixed set (a route
 * template, a method, a status code, an engine or message type the code defines), never from a
 * raw path, id, entity name, key or message content. Anything outside the set becomes `other`,
 * so a caller that sends junk cannot grow the number of series.
 */

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export const OTHER = 'other';

export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : OTHER;
}

/** A three-digit HTTP status, or `other`. */
export function statusLabel(status: number): string {
  return Number.isInteger(status) && status >= 100 && status <= 599 ? String(status) : OTHER;
}

/** Paths served outside the router, each a fixed label. */
const FIXED_PATHS = new Set(['/healthz', '/openapi.json']);

/**
 * The route label of a request: the matched route's template (`/api/workflows/:id/run`) as the
 * router registered it, the fixed system paths, `/dashboard/*` for the operator dashboard's files,
 * and `unmatched` for everything else. `template` must come from the router, never from the path.
 */
export function routeLabel(template: string | undefined, path: string): string {
  if (template !== undefined) return template;
  if (FIXED_PATHS.has(path)) return path;
  if (path === '/dashboard' || path.startsWith('/dashboard/')) return '/dashboard/*';
  return 'unmatched';
}

/** `value` when it is one of `allowed`, else `other`. */
export function oneOf(value: unknown, allowed: readonly string[]): string {
  return typeof value === 'string' && allowed.includes(value) ? value : OTHER;
}

/** Scan engine names: lower-case identifiers the engine registry defines. */
const ENGINE_NAME_RE = /^[a-z][a-z0-9_-]{0,39}$/;
export function engineLabel(name: string, known: ReadonlySet<string>): string {
  return known.has(name) && ENGINE_NAME_RE.test(name) ? name : OTHER;
}

/** The MongoDB commands the service issues; any other command name is `other`. */
export const DB_COMMANDS = [
  'find', 'insert', 'update', 'delete', 'findAndModify', 'aggregate', 'count', 'distinct', 'getMore',
  'create', 'createIndexes', 'dropIndexes', 'collMod', 'listIndexes', 'listCollections', 'listDatabases', 'drop', 'dropDatabase',
  'ping', 'hello', 'isMaster', 'buildInfo', 'killCursors', 'endSessions',
] as const;

export function dbCommandLabel(name: string): string {
  return oneOf(name, DB_COMMANDS);
}
