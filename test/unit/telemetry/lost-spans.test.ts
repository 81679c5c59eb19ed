/**
 * ReportingExporter: a collector that is down makes the service say so (one warning a minute,
 * with how many spans were dropped, and trace_spans_lost_total), and says so again when it is
 * back. A real OTLP exporter, first against a closed port, then against a receiver.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { BasicTracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../../../src/log';
import { enableMetrics, registry } from '../../../src/telemetry/metrics';
import { ReportingExporter } from '../../../src/telemetry/reporting-exporter';
import { findFreePort } from '../../../src/stack/net';

function spans(n: number): ReadableSpan[] {
  const tracer = new BasicTracerProvider().getTracer('t');
  return Array.from({ length: n }, (_, i) => {
    const s = tracer.startSpan(`s${i}`);
    s.end();
    return s as unknown as ReadableSpan;
  });
}

const send = (e: SpanExporter, list: ReadableSpan[]) => new Promise<ExportResult>((resolve) => e.export(list, resolve));
const lostTotal = async () => Number((await registry.getSingleMetricAsString('trace_spans_lost_total')).split('\n').find((l) => l.startsWith('trace_spans_lost_total '))?.split(' ')[1] ?? 0);

test('spans lost to a collector that is down are warned about once a minute, counted, and the recovery is logged', async () => {
  enableMetrics();
  const port = await findFreePort();
  const url = `http://127.0.0.1:${port}/v1/traces`;
  const logger = { warn: jest.fn(), info: jest.fn() };
  let clock = 1_000_000;
  const before = await lostTotal();
  const exporter = new ReportingExporter(new OTLPTraceExporter({ url, headers: { authorization: 'Bearer very-secret' }, timeoutMillis: 2000 }), logger as unknown as Logger, () => clock);

  expect((await send(exporter, spans(3))).code).toBe(ExportResultCode.FAILED);
  expect(logger.warn).toHaveBeenCalledTimes(1);
  const [fields, message] = logger.warn.mock.calls[0] as [Record<string, unknown>, string];
  expect(message).toBe('spans could not be sent to the trace collector and were dropped');
  expect(fields.lostSpans).toBe(3);
  expect(String(fields.reason)).toMatch(/ECONNREFUSED/);
  expect(JSON.stringify(logger.warn.mock.calls)).not.toContain('very-secret');

  clock += 30_000; // within the minute: counted, not warned
  await send(exporter, spans(2));
  expect(logger.warn).toHaveBeenCalledTimes(1);
  clock += 30_000;
  await send(exporter, spans(1));
  expect(logger.warn).toHaveBeenCalledTimes(2);
  expect((logger.warn.mock.calls[1] as [Record<string, unknown>])[0].lostSpans).toBe(3); // 2 + 1 since the last warning
  expect(await lostTotal()).toBe(before + 6);

  const receiver = http.createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()); });
  await new Promise<void>((resolve) => receiver.listen(port, '127.0.0.1', () => resolve()));
  try {
    expect((await send(exporter, spans(1))).code).toBe(ExportResultCode.SUCCESS);
    expect(logger.info).toHaveBeenCalledWith({ lostSpans: 6 }, 'traces reach the collector again');
    await send(exporter, spans(1));
    expect(logger.info).toHaveBeenCalledTimes(1);
  } finally {
    await exporter.shutdown();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
});

test('no warning without a failure', async () => {
  const logger = { warn: jest.fn(), info: jest.fn() };
  const inner: SpanExporter = { export: (_s, cb) => cb({ code: ExportResultCode.SUCCESS }), shutdown: async () => undefined };
  const exporter = new ReportingExporter(inner, logger as unknown as Logger);
  await send(exporter, spans(2));
  expect(logger.warn).not.toHaveBeenCalled();
  expect(logger.info).not.toHaveBeenCalled();
});
