/**
 * A span exporter that says when traces are being lost. The OTLP exporters report a failed
 * export only through OpenTelemetry's diag channel, which nobody reads: with the collector down,
 * every span of the process was dropped without a word.
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../log';
import { observeSpansLost } from './metrics';

/** At most one warning this often while exports keep failing. */
export const LOST_SPANS_WARN_MS = 60_000;

export class ReportingExporter implements SpanExporter {
  private lostSinceWarn = 0;
  private lostInOutage = 0;
  private lastWarnAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly inner: SpanExporter,
    private readonly logger: Logger,
    private readonly now: () => number = () => Date.now(),
  ) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      try {
        if (result.code === ExportResultCode.SUCCESS) this.exported();
        else this.lost(spans.length, result.error);
      } finally {
        resultCallback(result);
      }
    });
  }

  private exported(): void {
    if (this.lostInOutage === 0) return;
    this.logger.info({ lostSpans: this.lostInOutage }, 'traces reach the collector again');
    this.lostInOutage = 0;
    this.lostSinceWarn = 0;
    this.lastWarnAt = Number.NEGATIVE_INFINITY;
  }

  private lost(count: number, error: Error | undefined): void {
    observeSpansLost(count);
    this.lostInOutage += count;
    this.lostSinceWarn += count;
    const t = this.now();
    if (t - this.lastWarnAt < LOST_SPANS_WARN_MS) return;
    // The error's message only ("connect ECONNREFUSED 127.0.0.1:4318", an HTTP status): never the
    // spans, the request or its headers, which may carry OTEL_EXPORTER_OTLP_HEADERS credentials.
    this.logger.warn({ lostSpans: this.lostSinceWarn, reason: error?.message ?? 'unknown' },
      'spans could not be sent to the trace collector and were dropped');
    this.lastWarnAt = t;
    this.lostSinceWarn = 0;
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
