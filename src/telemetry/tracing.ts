/**
 * OpenTelemetry traces, configured only by the standard OTEL_* variables and off unless an
 * exporter is asked for (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
 * OTEL_TRACES_EXPORTER). The OTLP exporters read their endpoint, headers and timeout from the
 * environment themselves; the provider reads the sampler (OTEL_TRACES_SAMPLER) and batching
 * (OTEL_BSP_*), the resource OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES, and propagation
 * OTEL_PROPAGATORS (W3C trace context by default).
 *
 * Spans carry ids, route templates, methods and status codes only: never a key, an account id,
 * an entity or workflow name, a URL or message content. The Temporal spans come from
 * @temporalio/interceptors-opentelemetry (temporal/).
 */
import { Attributes, context, propagation, ROOT_CONTEXT, Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';

export interface Tracing {
  /** Where finished spans go; the Temporal worker hands it the workflow spans too. */
  spanProcessor: SpanProcessor;
  resource: Resource;
  /** Sends the spans still buffered and stops. */
  shutdown(): Promise<void>;
}

let active: Tracing | undefined;
export const tracing = (): Tracing | undefined => active;
/** Called once by sdk.ts after it registered the global provider. */
export function tracingStarted(t: Tracing): void {
  active = t;
}

const tracer = () => trace.getTracer('sentinel-service');

/** The span attribute that carries a request's id (X-Request-ID). */
export const REQUEST_ID_ATTRIBUTE = 'sentinel.request_id';

/**
 * A server span for one incoming request, continuing the caller's `traceparent`. `finish` runs
 * after `handle` with the span to name and describe (route template, status).
 */
export async function inServerSpan(headers: Record<string, string | string[] | undefined>, method: string, handle: () => Promise<void>, finish: (span: Span) => void): Promise<void> {
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  const span = tracer().startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, parent);
  try {
    await context.with(trace.setSpan(parent, span), handle);
  } finally {
    finish(span);
    span.end();
  }
}

/** A span of work that arrives without an HTTP request (an MQTT publish): a trace of its own. */
export async function inConsumerSpan<T>(name: string, attributes: Attributes, fn: () => Promise<T>): Promise<T> {
  if (!active) return fn();
  const span = tracer().startSpan(name, { kind: SpanKind.CONSUMER, attributes }, ROOT_CONTEXT);
  try {
    return await context.with(trace.setSpan(ROOT_CONTEXT, span), fn);
  } catch (err) {
    failed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * A client span around one outbound request (the `http` node, webhooks, S3), child of whatever
 * span is active (the activity's), with `traceparent` written into `headers` so the target
 * continues the trace. `statusOf` reads the HTTP status from the result; 400 and above mark the
 * span failed.
 */
export async function inClientSpan<T>(name: string, attributes: Attributes, headers: Record<string, string>, fn: () => Promise<T>, statusOf: (result: T) => number | undefined): Promise<T> {
  if (!active) return fn();
  const span = tracer().startSpan(name, { kind: SpanKind.CLIENT, attributes }, context.active());
  const ctx = trace.setSpan(context.active(), span);
  propagation.inject(ctx, headers);
  try {
    const result = await context.with(ctx, fn);
    const status = statusOf(result);
    if (status !== undefined) span.setAttribute('http.response.status_code', status);
    if (status === undefined || status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
    return result;
  } catch (err) {
    failed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** Marks a span failed with the error's class only: messages may quote URLs or user content. */
function failed(span: Span, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute('error.type', err instanceof Error ? err.name : 'unknown');
}
