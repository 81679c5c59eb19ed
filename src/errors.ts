/**
 * Named errors carrying an HTTP status, an optional machine code and extra body fields.
 * src/http/app.ts maps them to the dialect's body shape in one place; anything that is not an
 * AppError becomes a 500 whose internal message is logged, never sent.
 */
import type { Entitlement, PlanTier } from './accounts/plans';

export class AppError extends Error {
  /** Extra fields merged into the error body (e.g. fileType, profile, allowedTypes). */
  readonly extra: Record<string, unknown>;
  readonly code?: string;
  readonly headers: Record<string, string>;
  constructor(
    readonly status: number,
    message: string,
    opts: { code?: string; extra?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: opts.cause });
    this.name = new.target.name;
    this.code = opts.code;
    this.extra = opts.extra ?? {};
    this.headers = opts.headers ?? {};
  }
}

export class BadRequestError extends AppError {
  constructor(message: string, extra?: Record<string, unknown>, code = 'bad_request') {
    super(400, message, { code, extra });
  }
}
export class UnauthorizedError extends AppError {
  constructor(message = 'Missing or invalid API key') {
    super(401, message, { code: 'unauthorized' });
  }
}
export class ForbiddenError extends AppError {
  constructor(message: string, code = 'forbidden') {
    super(403, message, { code });
  }
}
/** A plan quota (workflows, connectors, vault entries, runs or compute per month) is used up. */
export class LimitReachedError extends AppError {
  /** `counted`: what the usage counts ("workflows"); `limit`: the limit's name ("workflow"). */
  constructor(counted: string, name: string, usage: number, limit: number, plan: string) {
    super(403, `Plan ${plan}, ${usage} of ${limit} ${counted}: ${name} limit reached`, {
      code: 'limit_reached', extra: { usage, limit, plan },
    });
  }
}
export class PlanRequiredError extends AppError {
  constructor(feature: Entitlement, currentPlan: PlanTier, message?: string) {
    super(403, message ?? `The ${feature.replace(/_/g, ' ')} feature is not included in the ${currentPlan} plan`, {
      code: 'plan_required',
      extra: { feature, current_plan: currentPlan, upgrade: true },
    });
  }
}
export class QuotaExceededError extends AppError {
  constructor(message: string, extra?: Record<string, unknown>) {
    super(402, message, { code: 'quota_exceeded', extra });
  }
}
export class NotFoundError extends AppError {
  constructor(what = 'Resource') {
    super(404, `${what} not found`, { code: 'not_found' });
  }
}
/** `allowed`: the methods the path does allow, sent in the Allow header. */
export class MethodNotAllowedError extends AppError {
  constructor(method: string, path: string, allowed: string[]) {
    super(405, `Method ${method} not allowed on ${path}`, { code: 'method_not_allowed', headers: { Allow: allowed.join(', ') } });
  }
}
export class ConflictError extends AppError {
  constructor(message: string) {
    super(409, message, { code: 'conflict' });
  }
}
export class PayloadTooLargeError extends AppError {
  constructor(message: string, extra?: Record<string, unknown>) {
    super(413, message, { code: 'payload_too_large', extra });
  }
}
export class RangeNotSatisfiableError extends AppError {
  constructor(size: number) {
    super(416, `Range not satisfiable: the content is ${size} bytes`, { code: 'range_not_satisfiable', headers: { 'Content-Range': `bytes */${size}` } });
  }
}
export class ValidationError extends AppError {
  constructor(message: string, extra?: Record<string, unknown>) {
    super(422, message, { code: 'validation_error', extra });
  }
}
export class RateLimitedError extends AppError {
  constructor(retryAfterSeconds: number, message = 'Rate limit reached; retry later', code = 'rate_limited') {
    super(429, message, { code, headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) } });
  }
}
export class ServiceUnavailableError extends AppError {
  constructor(message = 'Service Unavailable') {
    super(503, message, { code: 'unavailable' });
  }
}
/** The run queue (per account or in total) is full; running and queued runs go on. */
export class QueueFullError extends AppError {
  constructor(retryAfterSeconds: number) {
    super(503, 'Service Unavailable', { code: 'queue_full', headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) } });
  }
}

/**
 * A Python snippet that did not return a result (src/sandbox/python.ts). Not an HTTP error: it
 * fails a workflow node, and its message is what the run shows.
 */
export type SnippetFailure = 'python' | 'output_limit' | 'timeout' | 'memory' | 'killed' | 'unavailable';
export class SnippetError extends Error {
  constructor(readonly kind: SnippetFailure, message: string) {
    super(message);
    this.name = 'SnippetError';
  }
}
