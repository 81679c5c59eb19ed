/**
 * Route definitions: one object per endpoint says its error dialect, auth, permission, rate class, body
 * and query schemas, and responses. The same object drives the middleware chain and the
 * OpenAPI document, so the two cannot disagree.
 */
import type Koa from 'koa';
import { Router } from '@koa/router';
import { koaBody, HttpMethodEnum } from 'koa-body';
import type { Principal } from '../accounts/service';
import type { Permission } from '../accounts/roles';
import { BadRequestError, ForbiddenError, PayloadTooLargeError, UnauthorizedError } from '../errors';
import type { RateClass } from '../limits/rates';
import { JsonSchema, checkJsonShape, describeAjvError, validatorFor } from './schema';

/** `workflow` answers errors in the scanning shape `{error, requestId, code?}` (docs/contract.md §4 "Error bodies"). */
export type ErrorDialect = 'scan' | 'messaging' | 'workflow' | 'system';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type { RateClass };

export interface AppState {
  requestId: string;
  dialect: ErrorDialect;
  principal?: Principal;
}
export type AppContext = Koa.ParameterizedContext<AppState> & { params: Record<string, string> };

export interface ResponseDef {
  description: string;
  schema?: JsonSchema;
  contentType?: string;
  /** Further media types the same status may be answered with, each with its schema. */
  otherContent?: Record<string, JsonSchema>;
}

export interface RouteDef {
  method: HttpMethod;
  /** koa-router path, e.g. /api/scan/:scanId */
  path: string;
  dialect: ErrorDialect;
  summary: string;
  description?: string;
  tags: string[];
  /** `account`: account key only; `entity`: entity key only; `any`: either; `none`: public. */
  auth: 'account' | 'entity' | 'any' | 'none';
  permission?: Permission;
  rate: RateClass;
  /** JSON body: parsed with a size limit, checked for nesting depth, validated. */
  body?: { schema: JsonSchema; maxBytes: number };
  /** Non-JSON body documented in OpenAPI; the handler reads the stream itself. */
  /** `optional`: an empty body is accepted (documented as a request body that is not required). */
  rawBody?: { contentType: string; schema: JsonSchema; optional?: boolean };
  query?: JsonSchema;
  responses: Record<number, ResponseDef>;
  handler: (ctx: AppContext) => Promise<void>;
}

export interface RouteHooks {
  authenticate(token: string): Promise<Principal | undefined>;
  rateLimit(ctx: AppContext, rate: RateClass): Promise<void>;
}

/** Every route registered in this process, for the OpenAPI document. */
export class RouteRegistry {
  readonly routes: RouteDef[] = [];
  readonly router = new Router<AppState>();

  constructor(private readonly hooks: RouteHooks) {}

  add(def: RouteDef): void {
    this.routes.push(def);
    const chain: Koa.Middleware<AppState>[] = [
      async (ctx, next) => {
        ctx.state.dialect = def.dialect;
        await next();
      },
    ];
    if (def.auth !== 'none') chain.push(this.authMiddleware(def));
    if (def.rate !== 'none') chain.push(async (ctx, next) => { await this.hooks.rateLimit(ctx as AppContext, def.rate); await next(); });
    if (def.query) chain.push(queryMiddleware(def.query));
    if (def.body) chain.push(...jsonBodyMiddleware(def.body.schema, def.body.maxBytes));
    chain.push(async (ctx) => def.handler(ctx as AppContext));
    const method = def.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    this.router[method](def.path, ...(chain as Parameters<Router<AppState>['get']>[1][]));
  }

  private authMiddleware(def: RouteDef): Koa.Middleware<AppState> {
    return async (ctx, next) => {
      const header = ctx.get('authorization');
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!m) throw new UnauthorizedError(header ? 'Invalid Authorization header: expected "Bearer <API key>"' : 'Missing API key: send "Authorization: Bearer <API key>"');
      const principal = await this.hooks.authenticate(m[1]);
      if (!principal) throw new UnauthorizedError('Invalid API key');
      if (def.auth === 'account' && principal.kind !== 'account') throw new ForbiddenError('This endpoint requires an account API key');
      if (def.auth === 'entity' && principal.kind !== 'entity') throw new ForbiddenError('This endpoint requires an entity API key');
      if (def.permission && !principal.permissions.has(def.permission)) {
        throw new ForbiddenError(`The key's role lacks the permission ${def.permission}`, 'permission_denied');
      }
      ctx.state.principal = principal;
      await next();
    };
  }
}

function queryMiddleware(schema: JsonSchema): Koa.Middleware<AppState> {
  const validate = validatorFor(schema, true);
  return async (ctx, next) => {
    // A repeated parameter keeps its first value; arrays in queries are not part of any contract here.
    const q: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(ctx.query)) q[k] = Array.isArray(v) ? v[0] : v;
    if (!validate(q)) throw new BadRequestError(describeAjvError('query', validate.errors));
    (ctx.state as AppState & { query: Record<string, unknown> }).query = q;
    await next();
  };
}

function jsonBodyMiddleware(schema: JsonSchema, maxBytes: number): Koa.Middleware<AppState>[] {
  const validate = validatorFor(schema);
  const parse = koaBody({
    json: true, multipart: false, urlencoded: false, text: false,
    // The same types the pre-check below accepts: application/json and any +json type (merge-patch+json).
    jsonTypes: ['application/json', '+json'],
    jsonLimit: maxBytes, jsonStrict: true, parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
    onError: (err: Error & { status?: number; type?: string }) => {
      if (err.status === 413 || err.type === 'entity.too.large') throw new PayloadTooLargeError(`Request body exceeds ${maxBytes} bytes`);
      throw new BadRequestError(`Malformed JSON body: ${err.message}`, undefined, 'invalid_json');
    },
  });
  return [
    async (ctx, next) => {
      const declared = Number(ctx.get('content-length') || 0);
      if (declared > maxBytes) throw new PayloadTooLargeError(`Request body exceeds ${maxBytes} bytes`);
      if (!ctx.is('application/json', '+json')) throw new BadRequestError('Request body must be JSON (Content-Type: application/json)', undefined, 'invalid_json');
      await next();
    },
    parse as unknown as Koa.Middleware<AppState>,
    async (ctx, next) => {
      const body: unknown = ctx.request.body;
      if (body === undefined) throw new BadRequestError('Request body must be JSON', undefined, 'invalid_json');
      checkJsonShape(body);
      if (!validate(body)) throw new BadRequestError(describeAjvError('body', validate.errors));
      await next();
    },
  ];
}

export const queryOf = <T>(ctx: AppContext): T => (ctx.state as AppState & { query: T }).query;
export const bodyOf = <T>(ctx: AppContext): T => ctx.request.body as T;
export function principalOf(ctx: AppContext): Principal {
  const p = ctx.state.principal;
  if (!p) throw new UnauthorizedError();
  return p;
}
