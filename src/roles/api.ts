/**
 * Starts the `api` role: the HTTP server with every route, /healthz and the dashboard's pages.
 */
import http from 'node:http';
import type Koa from 'koa';
import type { Config } from '../config';
import type { Logger } from '../log';
import type { Services } from '../services';
import type { HealthReport } from '../health';
import { createApp } from '../http/app';
import { RouteRegistry, type AppState } from '../http/route';
import { makeRateLimiter } from '../http/limits';
import { registerAllRoutes } from '../http/routes';
import { answerClientError } from '../http/client-error';
import { listenOn } from '../stack/net';

export interface ApiRole {
  server: http.Server;
  stop(): Promise<void>;
}

export async function startApiRole(opts: {
  config: Config; services: Services; logger: Logger; version: string;
  health: () => Promise<HealthReport>;
  pages?: Koa.Middleware<AppState>;
}): Promise<ApiRole> {
  const { config, services } = opts;
  const registry = new RouteRegistry({
    authenticate: (token) => services.accounts.authenticate(token),
    rateLimit: makeRateLimiter(services.limits),
  });
  registerAllRoutes(registry, services);
  const app = createApp({ logger: opts.logger, registry, health: opts.health, version: opts.version, pages: opts.pages });
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  server.on('clientError', answerClientError);
  await listenOn(server, config.port, config.host, 'PORT');
  return {
    server,
    stop: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
