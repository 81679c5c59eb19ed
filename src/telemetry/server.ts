/**
 * The metrics endpoint: `GET /metrics` on METRICS_HOST:METRICS_PORT, apart from the API port so
 * it is never exposed with it. It answers the service's registry and, in a worker process, the
 * Temporal SDK's own worker series (`temporal_*`), which the SDK's core serves on a loopback
 * port of its own (temporal/worker.ts) and which are read from there at each scrape.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log';
import { registry } from './metrics';
import { listenOn } from '../stack/net';

/** How long a scrape waits for the Temporal core's series before answering without them. */
const CORE_TIMEOUT_MS = 2_000;

let temporalCoreUrl: string | undefined;
/** Set by the worker role once the SDK's runtime serves its series on `url`. */
export function serveTemporalMetricsFrom(url: string): void {
  temporalCoreUrl = url;
}

/** The SDK's exposition, keeping only its `temporal_` families (and their HELP/TYPE lines). */
export function temporalFamilies(text: string): string {
  return text.split('\n').filter((line) => {
    if (line.startsWith('# HELP ') || line.startsWith('# TYPE ')) return line.split(' ')[2]?.startsWith('temporal_') ?? false;
    return line.startsWith('temporal_');
  }).join('\n');
}

function fetchText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: CORE_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new Error(`HTTP ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${CORE_TIMEOUT_MS} ms`)));
    req.on('error', reject);
  });
}

export async function exposition(logger: Logger): Promise<string> {
  let text = await registry.metrics();
  if (temporalCoreUrl) {
    try {
      const core = temporalFamilies(await fetchText(temporalCoreUrl));
      if (core) text += `${text.endsWith('\n') ? '' : '\n'}${core}\n`;
    } catch (err) {
      logger.warn({ err }, 'Temporal SDK metrics could not be read');
    }
  }
  return text;
}

export interface MetricsServer { port: number; close(): Promise<void> }

export async function startMetricsServer(opts: { port: number; host: string; logger: Logger }): Promise<MetricsServer> {
  const log = opts.logger.child({ component: 'metrics' });
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Only GET /metrics is served here\n');
      return;
    }
    exposition(log).then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
      (err: unknown) => {
        log.error({ err }, 'metrics exposition failed');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics exposition failed\n');
      },
    );
  });
  await listenOn(server, opts.port, opts.host, 'METRICS_PORT');
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
