/** Builds the OpenAPI 3.1 document from the registered route definitions. */
import type { RouteDef } from './route';
import type { JsonSchema } from './schema';

const scanError: JsonSchema = {
  type: 'object',
  required: ['error', 'requestId'],
  properties: {
    error: { type: 'string' }, requestId: { type: 'string' }, code: { type: 'string' },
    fileType: { type: 'string' }, profile: { type: 'string' }, allowedTypes: { type: 'array', items: { type: 'string' } },
    feature: { type: 'string' }, current_plan: { type: 'string' }, upgrade: { type: 'boolean' },
  },
};
const messagingError: JsonSchema = {
  type: 'object',
  required: ['reason'],
  properties: { reason: { type: 'string' }, code: { type: 'string' }, requestId: { type: 'string' }, feature: { type: 'string' }, current_plan: { type: 'string' }, upgrade: { type: 'boolean' } },
};

const STANDARD_ERRORS: Record<number, string> = {
  400: 'Invalid request', 401: 'Missing or invalid API key', 403: 'Permission or plan entitlement missing',
  404: 'Not found (another account\'s object is indistinguishable from a missing one)', 413: 'Body too large',
  429: 'Rate limited; see Retry-After', 500: 'Internal server error',
};

export function buildOpenApi(routes: RouteDef[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const oaPath = r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const params: unknown[] = [...r.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const q = r.query as { properties?: Record<string, JsonSchema>; required?: string[] } | undefined;
    for (const [name, schema] of Object.entries(q?.properties ?? {})) {
      params.push({ name, in: 'query', required: q?.required?.includes(name) ?? false, schema });
    }
    const errorSchema = r.dialect === 'messaging' ? messagingError : scanError;
    const responses: Record<string, unknown> = {};
    for (const [status, def] of Object.entries(r.responses)) {
      const content: Record<string, { schema: JsonSchema }> = {};
      if (def.schema || def.contentType) content[def.contentType ?? 'application/json'] = { schema: def.schema ?? {} };
      for (const [type, schema] of Object.entries(def.otherContent ?? {})) content[type] = { schema };
      responses[status] = { description: def.description, ...(Object.keys(content).length ? { content } : {}) };
    }
    const errorStatuses = [
      400, 500, ...(r.auth !== 'none' ? [401, 403] : []), ...(r.rate !== 'none' ? [429] : []), ...(r.body || r.rawBody ? [413] : []),
      // A path naming an object answers 404 when there is no such object in the account.
      ...(params.some((p) => (p as { in: string }).in === 'path') ? [404] : []),
    ];
    for (const s of errorStatuses) {
      if (!responses[s]) responses[s] = { description: STANDARD_ERRORS[s], content: { 'application/json': { schema: errorSchema } } };
    }
    paths[oaPath] ??= {};
    paths[oaPath][r.method.toLowerCase()] = {
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      tags: r.tags,
      ...(r.auth !== 'none' ? { security: [{ bearer: [] }] } : {}),
      ...(r.permission ? { 'x-permission': r.permission } : {}),
      parameters: [{ name: 'X-Request-ID', in: 'header', required: false, schema: { type: 'string' } }, ...params],
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: r.body.schema } } } } : {}),
      ...(r.rawBody ? { requestBody: { required: !r.rawBody.optional, content: { [r.rawBody.contentType]: { schema: r.rawBody.schema } } } } : {}),
      responses,
    };
  }
  paths['/healthz'] = {
    get: { summary: 'Health of HTTP, MQTT, MongoDB and Temporal', tags: ['system'], responses: { 200: { description: 'All parts answer' }, 503: { description: 'A part is failing; the body names it' } } },
  };
  paths['/openapi.json'] = { get: { summary: 'This document', tags: ['system'], responses: { 200: { description: 'OpenAPI 3.1 document' } } } };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Sentinel: scanning, device messaging and workflows',
      version,
      description: 'One origin serves both {scan_url} and {base_url}. Scanning errors are {error, requestId, ...}; messaging errors are {reason, ...}. The contract in full: docs/contract.md.',
    },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Account API key (sk_...) or entity API key (JWT)' } } },
    paths,
  };
}
