/**
 * Outbound targets chosen by customers (webhooks) must not reach internal addresses: loopback,
 * private, link-local (cloud metadata 169.254.169.254), unique-local, CGNAT, multicast,
 * unspecified or reserved ranges. The check runs at save time and again at connect time through
 * a custom DNS lookup, so a name that later resolves to an internal address (DNS rebinding) is
 * refused too. Hosts in WEBHOOK_ALLOW_HOSTS bypass the check (e.g. 127.0.0.1 for local testing).
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

export function hostAllowed(host: string, allowHosts: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return allowHosts.includes(h);
}

/** Resolves the host and throws UnsafeTargetError when any address is internal. */
export async function assertPublicHost(host: string, allowHosts: readonly string[]): Promise<void> {
  if (hostAllowed(host, allowHosts)) return;
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
    await assertPublicHost(url.hostname, allowHosts);
  } catch (err) {
    const why = err instanceof UnsafeTargetError ? err.message : `${url.hostname} cannot be resolved: ${(err as Error).message}`;
    throw new BadRequestError(`${field} refused: ${why}`, undefined, code);
  }
  return url;
}

/** A dns.lookup replacement for http.request that refuses internal addresses at connect time. */
export function safeLookup(allowHosts: readonly string[]): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true, verbatim: true }, (err, addresses) => {
      if (err) return (callback as (e: Error | null, a: string, f: number) => void)(err, '', 0);
      const list = addresses as dns.LookupAddress[];
      if (!hostAllowed(hostname, allowHosts)) {
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
