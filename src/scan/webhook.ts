/**
 * Scan-result webhooks: the payload of docs/contract.md §5 "Webhooks", auth headers per auth type, and the
 * signature `X-Scanner-Signature: sha256=<hex HMAC-SHA256 of the raw body>` keyed by the
 * credential exactly as entered, sent with `X-Scanner-Request-ID` only when auth is configured.
 * Delivery is one attempt with a short timeout (fire-and-forget); the connection is refused when
 * the target resolves to an internal address.
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { WebhookTarget } from './profiles';
import { assertPublicHost, portOf, safeLookup } from '../net/safe-target';
import type { ScanResult } from './schemas';
import { inClientSpan } from '../telemetry/tracing';

/** The fields of a scan result a webhook reports. */
export type ScanResultBody = Pick<ScanResult, 'requestId' | 'name' | 'hash' | 'size' | 'contentType' | 'safetyScore' | 'scanTimeMs'>;

export function webhookPayload(result: ScanResultBody, completedAt: Date): Record<string, unknown> {
  const s = result.safetyScore;
  return {
    requestId: result.requestId,
    file: { name: result.name, size: result.size, hash: result.hash, contentType: result.contentType },
    scanResult: { safetyScore: s },
    threatLevel: s.threatLevel,
    isMalicious: s.threatLevel === 'Malicious',
    isSuspicious: s.threatLevel === 'Suspicious',
    timestamp: completedAt.toISOString(),
    scanDuration: `${(result.scanTimeMs / 1000).toFixed(2)}s`,
  };
}

export const signBody = (secret: string, body: Buffer): string => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** The headers of one delivery. Authentication is configured when the auth type is not none and a value is set. */
export function webhookHeaders(target: WebhookTarget, body: Buffer, requestId: string): Record<string, string> {
  const headers: Record<string, string> = { ...target.headers };
  headers['content-type'] = 'application/json';
  headers['user-agent'] = 'sentinel-webhook/1';
  const authConfigured = target.authType !== 'none' && !!target.value;
  if (authConfigured && target.value) {
    if (target.authType === 'api_key' || target.authType === 'bearer') headers.authorization = `Bearer ${target.value}`;
    if (target.authType === 'custom_header' && target.headerName) headers[target.headerName] = target.value;
    headers['x-scanner-signature'] = signBody(target.value, body);
    headers['x-scanner-request-id'] = requestId;
  }
  return headers;
}

export interface DeliveryOutcome { ok: boolean; status?: number; error?: string; ms: number }

export async function deliverWebhook(target: WebhookTarget, body: Buffer, requestId: string, opts: { timeoutMs: number; allowHosts: readonly string[] }): Promise<DeliveryOutcome> {
  const started = Date.now();
  const url = new URL(target.url);
  try {
    // Literal IPs skip DNS lookups, so they are checked here; names are checked at connect time.
    await assertPublicHost(url.hostname, portOf(url), opts.allowHosts);
  } catch (err) {
    return { ok: false, error: (err as Error).message, ms: Date.now() - started };
  }
  const headers = { ...webhookHeaders(target, body, requestId), 'content-length': String(body.length) };
  const mod = url.protocol === 'https:' ? https : http;
  return inClientSpan('webhook POST', { 'http.request.method': 'POST' }, headers, () => new Promise<DeliveryOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<DeliveryOutcome, 'ms'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({ ...outcome, ms: Date.now() - started });
    };
    let req: http.ClientRequest;
    // `timeout` below is only a socket idle timeout: a receiver that trickles its answer a byte
    // at a time would never trip it. The deadline bounds the whole delivery.
    const deadline = setTimeout(() => {
      const err = new Error(`no answer within ${opts.timeoutMs} ms`);
      finish({ ok: false, error: err.message });
      req?.destroy(err);
    }, opts.timeoutMs);
    try {
      req = mod.request(url, { method: 'POST', headers, lookup: safeLookup(opts.allowHosts, portOf(url)), timeout: opts.timeoutMs }, (res) => {
        res.on('error', (err) => finish({ ok: false, status: res.statusCode, error: err.message }));
        res.on('end', () => finish({ ok: (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300, status: res.statusCode }));
        res.resume();
      });
    } catch (err) {
      // An invalid header (a value stored before values were checked) throws synchronously.
      finish({ ok: false, error: (err as Error).message });
      return;
    }
    req.on('timeout', () => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)));
    req.on('error', (err) => finish({ ok: false, error: err.message }));
    req.end(body);
  }), (o) => o.status);
}
