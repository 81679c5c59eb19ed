/** The HTTP server's series and spans: one middleware in front of everything else (app.ts). */
import { SpanStatusCode } from '@opentelemetry/api';
import type Koa from 'koa';
import { routeLabel } from './labels';
import { metricsEnabled, observeHttp } from './metrics';
import { inServerSpan, REQUEST_ID_ATTRIBUTE, tracing } from './tracing';

/**
 * The route template of a request: the router's matched route, or for a request no route ran
 * for (405, OPTIONS, 404 on a known pattern) the most specific registered pattern of its path.
 * Never the path itself.
 */
/** What of the router this needs: its match of a path to registered layers. */
export interface RouteMatcher {
  match(path: string, method: string): { path: Array<{ methods: string[]; paramNames: unknown[]; path: unknown }> };
}

export function routeTemplateOf(router: RouteMatcher, ctx: { path: string; _matchedRoute?: unknown }): string | undefined {
  if (typeof ctx._matchedRoute === 'string') return ctx._matchedRoute;
  const layers = router.match(ctx.path, 'GET').path.filter((l) => l.methods.length > 0);
  if (layers.length === 0) return undefined;
  const fewest = Math.min(...layers.map((l) => l.paramNames.length));
  return layers.find((l) => l.paramNames.length === fewest)?.path as string | undefined;
}

export function observeRequests<S extends { requestId?: string }>(router: RouteMatcher): Koa.Middleware<S> {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const route = () => routeLabel(routeTemplateOf(router, ctx as unknown as { path: string; _matchedRoute?: unknown }), ctx.path);
    const record = (label: string) => {
      if (metricsEnabled()) observeHttp(ctx.method, label, ctx.status, Number(process.hrtime.bigint() - started) / 1e9);
    };
    if (!tracing()) {
      try {
        await next();
      } finally {
        if (metricsEnabled()) record(route());
      }
      return;
    }
    await inServerSpan(ctx.headers, ctx.method, next, (span) => {
      const label = route();
      span.updateName(`${ctx.method} ${label}`);
      span.setAttribute('http.route', label);
      span.setAttribute('http.response.status_code', ctx.status);
      if (ctx.state.requestId) span.setAttribute(REQUEST_ID_ATTRIBUTE, ctx.state.requestId);
      if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      record(label);
    });
  };
}
