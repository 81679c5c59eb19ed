/**
 * Whether the standard OTEL_* variables ask for traces, and how they are to be sent; read by
 * config.ts without loading the OpenTelemetry SDK (tracing.ts does that when traces are on).
 */

export type TracesExporter = { kind: 'otlp'; protocol: 'http/protobuf' | 'http/json' } | { kind: 'console' };

/**
 * The exporter the environment asks for; undefined when tracing is off. Throws an Error whose
 * message names the variable for values the service cannot honour (grpc, unknown exporters).
 */
export function tracesExporterFromEnv(env: Record<string, string | undefined>): TracesExporter | undefined {
  const get = (name: string): string | undefined => {
    const v = env[name]?.trim();
    return v ? v : undefined;
  };
  if (get('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const named = get('OTEL_TRACES_EXPORTER');
  const endpoint = get('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? get('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (named === undefined && endpoint === undefined) return undefined;
  const exporter = named ?? 'otlp';
  if (exporter === 'none') return undefined;
  if (exporter === 'console') return { kind: 'console' };
  if (exporter !== 'otlp') throw new Error(`OTEL_TRACES_EXPORTER="${exporter}" must be otlp, console or none`);
  const which = get('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = get(which) ?? 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') throw new Error(`${which}="${protocol}" must be http/protobuf or http/json`);
  return { kind: 'otlp', protocol };
}
