/** Trace configuration from the OTEL_* variables, the span helpers, and the metrics endpoint's merge of the SDK's series. */
import { context, propagation, trace } from '@opentelemetry/api';
import { Resource } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { loadConfig } from '../../../src/config';
import { tracesExporterFromEnv } from '../../../src/telemetry/otel-env';
import { temporalFamilies } from '../../../src/telemetry/server';
import { inClientSpan, inConsumerSpan, inServerSpan, tracing, tracingStarted } from '../../../src/telemetry/tracing';

describe('OTEL_* variables', () => {
  test('traces are off unless an exporter or an endpoint is given, or when the SDK is disabled', () => {
    expect(tracesExporterFromEnv({})).toBeUndefined();
    expect(tracesExporterFromEnv({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBeUndefined();
    expect(tracesExporterFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(tracesExporterFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
  });

  test('an endpoint means OTLP over HTTP, protobuf unless JSON is asked for', () => {
    expect(tracesExporterFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual({ kind: 'otlp', protocol: 'http/protobuf' });
    expect(tracesExporterFromEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toEqual({ kind: 'otlp', protocol: 'http/json' });
    expect(tracesExporterFromEnv({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })).toEqual({ kind: 'otlp', protocol: 'http/protobuf' });
    expect(tracesExporterFromEnv({ OTEL_TRACES_EXPORTER: 'console' })).toEqual({ kind: 'console' });
  });

  test('what the service cannot send is refused at start, naming the variable', () => {
    expect(() => tracesExporterFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow('OTEL_EXPORTER_OTLP_PROTOCOL="grpc" must be http/protobuf or http/json');
    expect(() => tracesExporterFromEnv({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow('OTEL_TRACES_EXPORTER="zipkin" must be otlp, console or none');
    expect(() => loadConfig({ OTEL_TRACES_EXPORTER: 'jaeger' })).toThrow(/OTEL_TRACES_EXPORTER="jaeger"/);
  });

  test('METRICS_PORT and METRICS_HOST: defaults, 0 turns the endpoint off, bad ports are refused', () => {
    expect(loadConfig({})).toMatchObject({ metricsPort: 9464, metricsHost: '127.0.0.1', traces: undefined });
    expect(loadConfig({ METRICS_PORT: '0', METRICS_HOST: '0.0.0.0' })).toMatchObject({ metricsPort: 0, metricsHost: '0.0.0.0' });
    expect(() => loadConfig({ METRICS_PORT: '70000' })).toThrow(/METRICS_PORT="70000" must be a TCP port/);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).traces).toEqual({ kind: 'otlp', protocol: 'http/protobuf' });
  });
});

describe('spans', () => {
  const exporter = new InMemorySpanExporter();
  beforeAll(() => {
    const spanProcessor = new SimpleSpanProcessor(exporter);
    const provider = new NodeTracerProvider({ spanProcessors: [spanProcessor] });
    provider.register();
    tracingStarted({ spanProcessor, resource: Resource.empty(), shutdown: () => provider.shutdown() });
  });
  beforeEach(() => exporter.reset());

  test('an outbound call is a client span of the active span, and its headers carry that span as traceparent', async () => {
    expect(tracing()).toBeDefined();
    const headers: Record<string, string> = { accept: 'application/json' };
    const parent = trace.getTracer('t').startSpan('activity');
    const result = await context.with(trace.setSpan(context.active(), parent), () =>
      inClientSpan('HTTP GET', { 'http.request.method': 'GET' }, headers, async () => ({ status: 503 }), (r) => r.status));
    parent.end();
    expect(result).toEqual({ status: 503 });
    const client = exporter.getFinishedSpans().find((s) => s.name === 'HTTP GET');
    expect(client?.parentSpanId).toBe(parent.spanContext().spanId);
    expect(client?.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect(headers.traceparent).toBe(`00-${client?.spanContext().traceId}-${client?.spanContext().spanId}-01`);
    expect(client?.attributes).toEqual({ 'http.request.method': 'GET', 'http.response.status_code': 503 });
    expect(client?.status.code).toBe(2);
  });

  test('a failed call records the error class, not its message', async () => {
    await expect(inClientSpan('S3 GetObjectCommand', {}, {}, async () => { throw new TypeError('https://bucket.example/secret-key?X-Amz-Signature=abc'); }, () => 200)).rejects.toThrow(TypeError);
    const [span] = exporter.getFinishedSpans();
    expect(span.attributes).toEqual({ 'error.type': 'TypeError' });
    expect(JSON.stringify({ attributes: span.attributes, events: span.events, status: span.status })).not.toContain('secret-key');
  });

  test('a server span continues the caller\'s traceparent; a consumer span starts a trace of its own', async () => {
    const callerTrace = '0af7651916cd43dd8448eb211c80319c';
    let inside: string | undefined;
    await inServerSpan({ traceparent: `00-${callerTrace}-b7ad6b7169203331-01` }, 'POST', async () => {
      inside = trace.getSpan(context.active())?.spanContext().traceId;
    }, (span) => span.updateName('POST /api/things/:id'));
    const server = exporter.getFinishedSpans().find((s) => s.name === 'POST /api/things/:id');
    expect(server?.spanContext().traceId).toBe(callerTrace);
    expect(server?.parentSpanId).toBe('b7ad6b7169203331');
    expect(inside).toBe(callerTrace);

    const carrier: Record<string, string> = {};
    await inConsumerSpan('mqtt publish', { 'messaging.system': 'mqtt' }, async () => propagation.inject(context.active(), carrier));
    const consumer = exporter.getFinishedSpans().find((s) => s.name === 'mqtt publish');
    expect(consumer?.parentSpanId).toBeUndefined();
    expect(carrier.traceparent).toContain(consumer?.spanContext().traceId);
  });
});

test('of the SDK core\'s exposition only the temporal_ families are kept', () => {
  const core = [
    '# HELP target_info Target metadata', '# TYPE target_info gauge', 'target_info{service_name="temporal-core-sdk"} 1',
    '# HELP temporal_num_pollers Current number of active pollers', '# TYPE temporal_num_pollers gauge',
    'temporal_num_pollers{poller_type="workflow_task",task_queue="sentinel"} 2', '',
  ].join('\n');
  expect(temporalFamilies(core).split('\n')).toEqual([
    '# HELP temporal_num_pollers Current number of active pollers', '# TYPE temporal_num_pollers gauge',
    'temporal_num_pollers{poller_type="workflow_task",task_queue="sentinel"} 2',
  ]);
});
