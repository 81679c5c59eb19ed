/**
 * The Koa application: request ids, the one error mapper, route registration, /healthz and
 * /openapi.json. Routes come from each capability's routes.ts through a RouteRegistry.
 */
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import type { Logger } from '../log';
import { AppError, MethodNotAllowedError } from '../errors';
import type { HealthReport } from '../health';
import type { ErrorDialect, AppState, RouteRegistry } from './route';
import { buildOpenApi } from './openapi';
import { observeRequests } from '../telemetry/http';
import { answerOf } from '../storage/errors';

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

export function dialectOfPath(p: string): ErrorDialect {
  if (p.startsWith('/api/scan') || p.startsWith('/api/account')) return 'scan';
  // Workflow-side resources answer in the scanning shape (docs/contract.md §4 "Error bodies").
  if (p.startsWith('/api/vault') || p.startsWith('/api/connectors')) return 'scan';
  if (p === '/api/workflows' || p.startsWith('/api/workflows/')) return 'workflow';
  if (p.startsWith('/api/')) return 'messaging';
  return 'system';
}

/** The error body of each dialect: scanning `{error, requestId, ...}`, messaging `{reason, requestId, ...}`. */
export function errorBody(dialect: ErrorDialect, requestId: string, message: string, code: string | undefined, extra: Record<string, unknown>): Record<string, unknown> {
  const base = dialect === 'messaging' ? { reason: message } : { error: message };
  return { ...base, requestId, ...(code ? { code } : {}), ...extra };
}

export function createApp(opts: {
  logger: Logger;
  registry: RouteRegistry;
  health: () => Promise<HealthReport>;
  version: string;
  /** Served before the API routes: the dashboard's static files. */
  pages?: Koa.Middleware<AppState>;
}): Koa<AppState> {
  const app = new Koa<AppState>({ proxy: false });
  const log = opts.logger.child({ component: 'http' });
  // Errors after the answer has started (a streamed export the client hung up on) reach Koa's
  // default handler, which printed raw multi-line stacks beside the JSON log: an outside probe's
  // aborted downloads wrote two per abort. A client that went away is not a server error.
  // Koa reports a failed stream twice (the pipe's end and the response's): one line per error.
  const reported = new WeakSet<object>();
  app.on('error', (err: NodeJS.ErrnoException, ctx?: Koa.Context) => {
    if (reported.has(err)) return;
    reported.add(err);
    const clientGone = err.code === 'ECONNRESET' || err.code === 'EPIPE' || err.code === 'ERR_STREAM_PREMATURE_CLOSE' || err.code === 'ECONNABORTED';
    const fields = { err, path: ctx?.path, requestId: (ctx?.state as AppState | undefined)?.requestId };
    if (clientGone) log.debug(fields, 'client went away while the answer was being sent');
    else log.error(fields, 'error after the answer started');
  });
  // A route sets its own dialect when it runs. When none ran (404, 405), the dialect of a path some
  // route is registered on still comes from that route (GET /api/account/notifications is
  // messaging although it sits under /api/account); other paths fall back to the prefix. Only
  // error answers pay for this lookup.
  const dialectByPattern = new Map<string, ErrorDialect>();
  for (const r of opts.registry.routes) if (!dialectByPattern.has(r.path)) dialectByPattern.set(r.path, r.dialect);
  const errorDialectOf = (ctx: Koa.ParameterizedContext<AppState>): ErrorDialect => {
    if ((ctx as { _matchedRoute?: unknown })._matchedRoute !== undefined) return ctx.state.dialect;
    for (const layer of opts.registry.router.match(ctx.path, ctx.method).path) {
      const dialect = dialectByPattern.get(layer.path as string);
      if (dialect) return dialect;
    }
    return ctx.state.dialect;
  };

  // Outermost: its span holds the whole request, and it sees the status the error mapper chose.
  app.use(observeRequests<AppState>(opts.registry.router));
  app.use(async (ctx, next) => {
    const supplied = ctx.get('x-request-id');
    ctx.state.requestId = supplied && REQUEST_ID_RE.test(supplied) ? supplied : randomUUID();
    ctx.set('X-Request-ID', ctx.state.requestId);
    ctx.state.dialect = dialectOfPath(ctx.path);
    const started = process.hrtime.bigint();
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = errorBody(errorDialectOf(ctx), ctx.state.requestId, `No route for ${ctx.method} ${ctx.path}`, 'not_found', {});
      }
    } catch (caught) {
      const err = answerOf(caught) ?? caught;
      if (err instanceof AppError) {
        ctx.status = err.status;
        for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
        ctx.body = errorBody(errorDialectOf(ctx), ctx.state.requestId, err.message, err.code, err.extra);
        if (err.status >= 500) log.error({ err: caught, requestId: ctx.state.requestId }, 'request failed');
      } else {
        // Errors from libraries that carry an HTTP status and mark themselves safe to show.
        // `throw undefined` / `Promise.reject(null)` carry no object at all.
        const e = (typeof err === 'object' && err !== null ? err : {}) as { status?: number; expose?: boolean; message?: string };
        const status = typeof e.status === 'number' && e.status >= 400 && e.status < 600 ? e.status : 500;
        const message = status < 500 && e.expose ? String(e.message) : 'Internal server error';
        ctx.status = status;
        ctx.body = errorBody(errorDialectOf(ctx), ctx.state.requestId, message, status === 500 ? 'internal' : undefined, {});
        if (status >= 500) log.error({ err, requestId: ctx.state.requestId, path: ctx.path }, 'unhandled error');
      }
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      log.debug({ method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 100) / 100, requestId: ctx.state.requestId }, 'request');
    }
  });

  // The methods a path allows are those of its most specific route pattern: POST /api/entities/bulk
  // owns its path, so GET there is 405 rather than a lookup of an entity named "bulk". OPTIONS
  // lists them. The router's own answer would merge every pattern the path matches.
  const systemPaths = new Set(['/healthz', '/openapi.json']);
  const allowedOn = (p: string): string[] | undefined => {
    if (systemPaths.has(p)) return ['GET', 'HEAD'];
    const layers = opts.registry.router.match(p, 'GET').path.filter((l) => l.methods.length > 0);
    if (layers.length === 0) return undefined;
    const fewest = Math.min(...layers.map((l) => l.paramNames.length));
    return [...new Set(layers.filter((l) => l.paramNames.length === fewest).flatMap((l) => l.methods))];
  };
  app.use(async (ctx, next) => {
    const allowed = allowedOn(ctx.path);
    if (allowed && !allowed.includes(ctx.method)) {
      if (ctx.method !== 'OPTIONS') throw new MethodNotAllowedError(ctx.method, ctx.path, allowed);
      ctx.set('Allow', allowed.join(', '));
      ctx.status = 204;
      return;
    }
    await next();
  });

  app.use(async (ctx, next) => {
    if (ctx.method === 'GET' && ctx.path === '/healthz') {
      const report = await opts.health();
      ctx.status = report.status === 'ok' ? 200 : 503;
      ctx.body = report;
      return;
    }
    if (ctx.method === 'GET' && ctx.path === '/openapi.json') {
      ctx.body = buildOpenApi(opts.registry.routes, opts.version);
      return;
    }
    await next();
  });

  if (opts.pages) app.use(opts.pages);
  app.use(opts.registry.router.routes());
  return app;
}
