/** `http`: one request to a public address (the webhook SSRF guard applies). */
import http from 'node:http';
import https from 'node:https';
import { assertPublicHost, portOf, safeLookup, UnsafeTargetError } from '../../net/safe-target';
import { FIXED_LIMITS } from '../../accounts/plans';
import { inClientSpan } from '../../telemetry/tracing';
import { defineKind, NodeFailure } from './types';

export const httpConfigSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['method', 'url'],
  properties: {
    method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] },
    url: { type: 'string', minLength: 1, maxLength: 8192, description: 'http(s) URL; `{{ }}` templates allowed' },
    headers: { type: 'object', additionalProperties: { type: 'string', maxLength: 8192 }, maxProperties: 50 },
    body: { description: 'Sent as JSON unless it is a string' },
  },
} as const;

interface HttpConfig { method: string; url: string; headers?: Record<string, string>; body?: unknown }

export const httpNode = defineKind<HttpConfig>({
  type: 'http',
  summary: 'One HTTP request; output {status, headers, body} with body parsed when the answer is JSON; a status of 400 or more fails the node',
  configSchema: httpConfigSchema,
  example: { method: 'GET', url: 'https://api.example.com/orders/{{ input.orderId }}', headers: { accept: 'application/json' } },
  async execute(config, _ctx, run, deps) {
    let url: URL;
    try {
      url = new URL(config.url);
    } catch {
      throw new NodeFailure(`url "${config.url}" is not a valid URL`, false);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new NodeFailure(`url must be http or https, not ${url.protocol}`, false);
    try {
      await assertPublicHost(url.hostname, portOf(url), deps.allowHosts);
    } catch (err) {
      if (err instanceof UnsafeTargetError) throw new NodeFailure(`refused target: ${err.message}`, false);
      throw new NodeFailure(`cannot resolve ${url.hostname}: ${(err as Error).message}`);
    }
    const headers: Record<string, string> = { ...config.headers };
    let payload: Buffer | undefined;
    if (config.body !== undefined && config.method !== 'GET' && config.method !== 'HEAD') {
      if (typeof config.body === 'string') payload = Buffer.from(config.body);
      else {
        payload = Buffer.from(JSON.stringify(config.body));
        if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
      }
      headers['content-length'] = String(payload.length);
    }
    const limit = FIXED_LIMITS.workflowStepOutputBytes;
    // The request is a client span of the node's activity; the target receives its traceparent.
    const res = await inClientSpan(`HTTP ${config.method}`, { 'http.request.method': config.method }, headers, () => new Promise<{ status: number; headers: Record<string, string>; body: Buffer }>((resolve, reject) => {
      const mod = url.protocol === 'https:' ? https : http;
      let req: http.ClientRequest;
      try {
        req = mod.request(url, { method: config.method, headers, lookup: safeLookup(deps.allowHosts, portOf(url)), signal: run.signal }, (r) => {
          const chunks: Buffer[] = [];
          let size = 0;
          r.on('data', (c: Buffer) => {
            size += c.length;
            if (size > limit) {
              r.destroy();
              reject(new NodeFailure(`response body exceeds the step output limit of ${limit} bytes (10 MB)`, false));
              return;
            }
            chunks.push(c);
          });
          r.on('end', () => {
            const h: Record<string, string> = {};
            for (const [k, v] of Object.entries(r.headers)) if (v !== undefined) h[k] = Array.isArray(v) ? v.join(', ') : v;
            resolve({ status: r.statusCode ?? 0, headers: h, body: Buffer.concat(chunks) });
          });
          r.on('error', reject);
        });
      } catch (err) {
        reject(new NodeFailure(`invalid request: ${(err as Error).message}`, false));
        return;
      }
      req.on('error', (err) => reject(err instanceof UnsafeTargetError ? new NodeFailure(`refused target: ${err.message}`, false) : new NodeFailure(`request failed: ${err.message}`)));
      req.end(payload);
    }), (r) => r.status);
    const text = res.body.toString('utf8');
    let body: unknown = text;
    if (/[/+]json\b/i.test(res.headers['content-type'] ?? '')) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    if (res.status >= 400) {
      // 408, 429 and 5xx may pass on a retry; other 4xx answers will not.
      const retryable = res.status >= 500 || res.status === 429 || res.status === 408;
      throw new NodeFailure(`HTTP ${res.status} from ${url.host}${url.pathname}`, retryable);
    }
    return { output: { status: res.status, headers: res.headers, body } };
  },
});
