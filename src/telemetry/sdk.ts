/** The OpenTelemetry SDK of a service process: loaded only when traces are configured (main.ts). */
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResourcesSync, envDetectorSync, Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, ConsoleSpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Logger } from '../log';
import type { TracesExporter } from './otel-env';
import { ReportingExporter } from './reporting-exporter';
import { tracingStarted, type Tracing } from './tracing';

/** Installs the global tracer provider, context manager and propagators. Once per process. */
export function startTracing(exporter: TracesExporter, version: string, logger: Logger): Tracing {
  const resource = Resource.default()
    .merge(new Resource({ 'service.name': 'sentinel-service', 'service.version': version }))
    .merge(detectResourcesSync({ detectors: [envDetectorSync] }));
  const spanExporter = exporter.kind === 'console' ? new ConsoleSpanExporter()
    : exporter.protocol === 'http/json' ? new OtlpJsonExporter() : new OtlpProtoExporter();
  const spanProcessor = new BatchSpanProcessor(exporter.kind === 'console' ? spanExporter : new ReportingExporter(spanExporter, logger.child({ component: 'traces' })));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  const t: Tracing = { spanProcessor, resource, shutdown: () => provider.shutdown() };
  tracingStarted(t);
  return t;
}
