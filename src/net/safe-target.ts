/**
 * Outbound targets chosen by customers (webhooks) must not reach internal addresses: loopback,
 * private, link-local (cloud metadata 169.254.169.254), unique-local, CGNAT, multicast,
 * unspecified or reserved ranges. The check runs at save time and again at connect time through
 * a custom DNS lookup, so a name that later resolves to an internal address (DNS rebinding) is
 * refused too. Entries of WEBHOOK_ALLOW_HOSTS bypass the check for their host and port:
 * `host:port` that port only, `host:*` every port, a bare `host` the web ports 80 and 443 only (so
 * allowing `localhost` for a test webhook does not open every service listening on it).
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { BadRequestError } from '../errors';

const PUBLIC_RANGE = 'unicast';

/** True when the literal address is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
    // The deprecated IPv4-compatible form ::a.b.c.d (first 96 bits zero) is never a public
    // target; ipaddr.js calls it unicast, so ::127.0.0.1 would pass otherwise.
    else if (v6.parts.slice(0, 6).every((p) => p === 0)) return false;
  }
  return parsed.range() === PUBLIC_RANGE;
}

export class UnsafeTargetError extends Error {}

/** An allow-list entry: a host, and the port it allows (`*` every port, absent 80 and 443). */
export interface AllowEntry { host: string; port?: number | '*' }

const bareHost = (host: string) => host.toLowerCase().replace(/^\[|\]$/g, '');

/**
 * `host`, `host:port`, `host:*`, `[v6]`, `[v6]:port`, or a bare IPv6 literal (several colons, no
 * port); undefined when the entry is none of these.
 */
export function parseAllowEntry(raw: string): AllowEntry | undefined {
  const entry = raw.trim().toLowerCase();
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]\s]+)(?::(\*|\d{1,5}))?$/.exec(entry);
  if (!m) return ipaddr.IPv6.isValid(entry) ? { host: entry } : undefined;
  const port = m[2] === undefined ? undefined : m[2] === '*' ? '*' as const : Number(m[2]);
  if (typeof port === 'number' && (port < 1 || port > 65535)) return undefined;
  return { host: bareHost(m[1]), ...(port === undefined ? {} : { port }) };
}

/** The port a URL connects to. */
export const portOf = (url: URL): number => (url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80);

export function hostAllowed(host: string, port: number, allowHosts: readonly string[]): boolean {
  const h = bareHost(host);
  return allowHosts.some((raw) => {
    const e = parseAllowEntry(raw);
    if (!e || e.host !== h) return false;
    return e.port === '*' || (e.port === undefined ? port === 80 || port === 443 : e.port === port);
  });
}

/** Resolves the host and throws UnsafeTargetError when any address is internal (unless allowed for this port). */
export async function assertPublicHost(host: string, port: number, allowHosts: readonly string[]): Promise<void> {
  if (hostAllowed(host, port, allowHosts)) return;
  const bare = host.replace(/^\[|\]$/g, '');
  const addresses = ipaddr.isValid(bare) ? [bare] : (await dns.promises.lookup(bare, { all: true, verbatim: true })).map((a) => a.address);
  if (addresses.length === 0) throw new UnsafeTargetError(`${host} does not resolve`);
  const internal = addresses.find((a) => !isPublicAddress(a));
  // The address itself is not echoed: that would let a caller map internal DNS names.
  if (internal) throw new UnsafeTargetError(`${host} resolves to an internal address`);
}

/**
 * A customer's outbound URL (a webhook, a connector endpoint), checked before it is stored:
 * it parses, is http or https, carries no credentials (`credentialsHint` says what to use
 * instead) and its host resolves to public addresses only. Errors are 400s naming `field`;
 * a refused or unresolvable host carries `code`.
 */
export async function checkOutboundUrl(raw: string, field: string, allowHosts: readonly string[], code: string, credentialsHint = ''): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BadRequestError(`${field} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new BadRequestError(`${field} must be http or https`);
  if (url.username || url.password) throw new BadRequestError(`${field} must not carry credentials${credentialsHint}`);
  try {
    await assertPublicHost(url.hostname, portOf(url), allowHosts);
  } catch (err) {
    const why = err instanceof UnsafeTargetError ? err.message : `${url.hostname} cannot be resolved: ${(err as Error).message}`;
    throw new BadRequestError(`${field} refused: ${why}`, undefined, code);
  }
  return url;
}

/** A dns.lookup replacement for http.request to `port` that refuses internal addresses at connect time. */
export function safeLookup(allowHosts: readonly string[], port: number): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true, verbatim: true }, (err, addresses) => {
      if (err) return (callback as (e: Error | null, a: string, f: number) => void)(err, '', 0);
      const list = addresses as dns.LookupAddress[];
      if (!hostAllowed(hostname, port, allowHosts)) {
        const internal = list.find((a) => !isPublicAddress(a.address));
        if (internal || list.length === 0) {
          return (callback as (e: Error | null, a: string, f: number) => void)(new UnsafeTargetError(`${hostname} resolves to an internal address`), '', 0);
        }
      }
      if ((options as dns.LookupOptions).all) return (callback as (e: Error | null, a: dns.LookupAddress[]) => void)(null, list);
      (callback as (e: Error | null, a: string, f: number) => void)(null, list[0].address, list[0].family);
    });
  };
}
