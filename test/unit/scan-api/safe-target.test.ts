/**
 * The webhook SSRF guard (src/net/safe-target.ts) with hostile targets: every internal range,
 * IPv4-mapped IPv6, the alternative IPv4 spellings WHATWG URL normalises (decimal, octal, hex,
 * short forms), userinfo tricks, DNS names resolving to internal addresses (DNS is faked), and the
 * operator allow-list. Hosts are taken through `new URL(...).hostname`, as profiles.ts and
 * webhook.ts do.
 */
import dns from 'node:dns';
import type { LookupAddress } from 'node:dns';
import { loadConfig } from '../../../src/config';
import { assertPublicHost, hostAllowed, isPublicAddress, parseAllowEntry, safeLookup, UnsafeTargetError } from '../../../src/net/safe-target';

/** Fake resolver: name -> addresses. Unknown names fail like getaddrinfo does. */
function fakeDns(table: Record<string, string[]>) {
  const resolve = (name: string): LookupAddress[] => {
    const list = table[name.toLowerCase()];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const promisesLookup = jest.spyOn(dns.promises, 'lookup').mockImplementation((async (name: string) => resolve(name)) as unknown as typeof dns.promises.lookup);
  const cbLookup = jest.spyOn(dns, 'lookup').mockImplementation(((name: string, _opts: unknown, cb: (e: Error | null, a?: LookupAddress[]) => void) => {
    try {
      const list = resolve(name);
      process.nextTick(() => cb(null, list));
    } catch (err) {
      process.nextTick(() => cb(err as Error));
    }
  }) as unknown as typeof dns.lookup);
  return { promisesLookup, cbLookup };
}

afterEach(() => jest.restoreAllMocks());

const hostOf = (url: string) => new URL(url).hostname;
const refused = async (host: string, allow: string[] = [], port = 80) => {
  try {
    await assertPublicHost(host, port, allow);
    return false;
  } catch (err) {
    if (err instanceof UnsafeTargetError) return true;
    throw err;
  }
};

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1', '127.255.255.254', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.0.1', '169.254.169.254', '169.254.0.1',
    '100.64.0.1', '0.0.0.0', '0.1.2.3', '224.0.0.1', '255.255.255.255', '192.0.2.1', '198.18.0.1', '240.0.0.1',
    '::1', '::', 'fe80::1', 'fc00::1', 'fd00:ec2::254', 'ff02::1', '2001:db8::1',
  ])('refuses internal/reserved %s', (a) => {
    expect(isPublicAddress(a)).toBe(false);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '172.15.255.255', '100.128.0.1', '2001:4860:4860::8888', '2606:4700:4700::1111'])('accepts public %s', (a) => {
    expect(isPublicAddress(a)).toBe(true);
  });

  it('unwraps IPv4-mapped IPv6 in both notations', () => {
    expect(isPublicAddress('::ffff:127.0.0.1')).toBe(false);
    expect(isPublicAddress('::ffff:7f00:1')).toBe(false);
    expect(isPublicAddress('::ffff:a9fe:a9fe')).toBe(false); // 169.254.169.254
    expect(isPublicAddress('::ffff:10.0.0.1')).toBe(false);
    expect(isPublicAddress('::ffff:8.8.8.8')).toBe(true);
  });

  it('refuses NAT64 / 6to4 / Teredo wrappers of internal IPv4 (not plain unicast)', () => {
    expect(isPublicAddress('64:ff9b::7f00:1')).toBe(false);
    expect(isPublicAddress('2002:7f00:1::1')).toBe(false);
    expect(isPublicAddress('2001:0:4136:e378:8000:63bf:3fff:fdd2')).toBe(false);
  });

  it('refuses the deprecated IPv4-compatible form (first 96 bits zero), whatever the IPv4 inside', () => {
    expect(isPublicAddress('::127.0.0.1')).toBe(false);
    expect(isPublicAddress('::7f00:1')).toBe(false);
    expect(isPublicAddress('::808:808')).toBe(false); // what the URL parser makes of [::8.8.8.8]
  });

  it('the refusal does not echo the internal address a name resolves to', async () => {
    fakeDns({ 'intranet.evil.test': ['10.1.2.3'] });
    const err = await assertPublicHost('intranet.evil.test', 443, []).catch((e: Error) => e);
    expect(err).toBeInstanceOf(UnsafeTargetError);
    expect((err as Error).message).toMatch(/internal address/);
    expect((err as Error).message).not.toContain('10.1.2.3');
  });

  it('a name or garbage is never a public address', () => {
    expect(isPublicAddress('example.com')).toBe(false);
    expect(isPublicAddress('')).toBe(false);
    expect(isPublicAddress('1.2.3.4.5')).toBe(false);
  });
});

describe('assertPublicHost on URL hostnames (literal IPs never reach DNS)', () => {
  it.each([
    'http://127.0.0.1/', 'http://2130706433/', 'http://0x7f.1/', 'http://0x7f000001/', 'http://0177.0.0.1/', 'http://017700000001/',
    'http://127.1:8080/', 'http://0/', 'http://evil@127.0.0.1/', 'http://user:pw@10.0.0.1/', 'http://127.0.0.1./',
    'http://169.254.169.254/latest/meta-data/', 'http://0xa9.0xfe.0xa9.0xfe/', 'http://2852039166/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/',
    'http://[0:0:0:0:0:ffff:7f00:1]/', 'http://[::ffff:169.254.169.254]/', 'http://[fd00:ec2::254]/', 'https://[fe80::1]:8443/',
    'http://①②⑦.0.0.1/', 'http://192.168.1.1:22/',
  ])('refuses %s', async (url) => {
    const spy = fakeDns({});
    await expect(refused(hostOf(url))).resolves.toBe(true);
    expect(spy.promisesLookup).not.toHaveBeenCalled();
  });

  it('accepts a public literal address', async () => {
    fakeDns({});
    await expect(assertPublicHost(hostOf('https://8.8.8.8:8443/x'), 443, [])).resolves.toBeUndefined();
    await expect(assertPublicHost(hostOf('https://[2001:4860:4860::8888]/'), 443, [])).resolves.toBeUndefined();
  });

  it('refuses a name that resolves to an internal address, and one whose records mix public and internal', async () => {
    fakeDns({ 'localhost': ['127.0.0.1', '::1'], 'meta.evil.test': ['169.254.169.254'], 'mixed.evil.test': ['93.184.216.34', '10.0.0.7'], 'v6.evil.test': ['::ffff:127.0.0.1'] });
    await expect(refused('localhost')).resolves.toBe(true);
    await expect(refused('meta.evil.test')).resolves.toBe(true);
    await expect(refused('mixed.evil.test')).resolves.toBe(true);
    await expect(refused('v6.evil.test')).resolves.toBe(true);
  });

  it('accepts a name whose every record is public', async () => {
    const spy = fakeDns({ 'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'] });
    await expect(assertPublicHost('hooks.example.com', 443, [])).resolves.toBeUndefined();
    expect(spy.promisesLookup).toHaveBeenCalledWith('hooks.example.com', expect.objectContaining({ all: true }));
  });

  it('a name that does not resolve is an error, not a pass', async () => {
    fakeDns({});
    await expect(assertPublicHost('nowhere.invalid', 443, [])).rejects.toThrow(/ENOTFOUND/);
    fakeDns({ 'empty.test': [] });
    await expect(assertPublicHost('empty.test', 443, [])).rejects.toBeInstanceOf(UnsafeTargetError);
  });
});

describe('operator allow-list (WEBHOOK_ALLOW_HOSTS)', () => {
  it('matches the exact host, case-insensitively, with or without IPv6 brackets', () => {
    expect(hostAllowed('127.0.0.1', 80, ['127.0.0.1'])).toBe(true);
    expect(hostAllowed('LocalHost', 80, ['localhost'])).toBe(true);
    expect(hostAllowed('[::1]', 80, ['::1'])).toBe(true);
    expect(hostAllowed('127.0.0.2', 80, ['127.0.0.1'])).toBe(false);
    expect(hostAllowed('evil.localhost', 80, ['localhost'])).toBe(false);
    expect(hostAllowed('localhost.evil.com', 80, ['localhost'])).toBe(false);
  });

  it('an allowed host bypasses the check; another spelling of the same address does not', async () => {
    fakeDns({ 'localhost': ['127.0.0.1'] });
    await expect(assertPublicHost('127.0.0.1', 443, ['127.0.0.1'])).resolves.toBeUndefined();
    await expect(refused(hostOf('http://[::1]/'), ['127.0.0.1'])).resolves.toBe(true);
    await expect(refused('localhost', ['127.0.0.1'])).resolves.toBe(true);
    await expect(refused('10.0.0.1', ['127.0.0.1'])).resolves.toBe(true);
    // 2130706433 normalises to 127.0.0.1 in URL, so it is the allowed host (the same address).
    await expect(assertPublicHost(hostOf('http://2130706433/'), 443, ['127.0.0.1'])).resolves.toBeUndefined();
  });
});

describe('allow-list entries with a port', () => {
  it('host:port allows exactly that port; host:* every port; a bare host only 80 and 443', () => {
    expect(hostAllowed('localhost', 8080, ['localhost:8080'])).toBe(true);
    expect(hostAllowed('localhost', 8233, ['localhost:8080'])).toBe(false);
    expect(hostAllowed('localhost', 80, ['localhost:8080'])).toBe(false);
    expect(hostAllowed('localhost', 8233, ['localhost:*'])).toBe(true);
    expect(hostAllowed('localhost', 80, ['localhost'])).toBe(true);
    expect(hostAllowed('localhost', 443, ['localhost'])).toBe(true);
    expect(hostAllowed('localhost', 8233, ['localhost'])).toBe(false);
    expect(hostAllowed('[::1]', 9000, ['[::1]:9000'])).toBe(true);
    expect(hostAllowed('[::1]', 9001, ['[::1]:9000'])).toBe(false);
    expect(hostAllowed('[::1]', 443, ['::1'])).toBe(true);
  });

  it('parses every documented spelling and refuses the rest', () => {
    expect(parseAllowEntry('LocalHost:8080')).toEqual({ host: 'localhost', port: 8080 });
    expect(parseAllowEntry('127.0.0.1:*')).toEqual({ host: '127.0.0.1', port: '*' });
    expect(parseAllowEntry('hooks.internal')).toEqual({ host: 'hooks.internal' });
    expect(parseAllowEntry('[::1]:9000')).toEqual({ host: '::1', port: 9000 });
    expect(parseAllowEntry('::1')).toEqual({ host: '::1' });
    for (const bad of ['localhost:0', 'localhost:70000', 'localhost:http', 'a:b:c', 'http://localhost', '']) expect(parseAllowEntry(bad)).toBeUndefined();
  });

  it('the check and the connect-time lookup both follow the port', async () => {
    fakeDns({ 'localhost': ['127.0.0.1'] });
    await expect(assertPublicHost('localhost', 9000, ['localhost:9000'])).resolves.toBeUndefined();
    await expect(refused('localhost', ['localhost:9000'], 8233)).resolves.toBe(true);
    await expect(refused('localhost', ['localhost'], 8233)).resolves.toBe(true);
    const lookupAt = (port: number) => new Promise<Error | null>((resolve) => {
      (safeLookup(['localhost:9000'], port) as unknown as (h: string, o: dns.LookupOptions, cb: (e: Error | null) => void) => void)('localhost', {}, (err) => resolve(err));
    });
    expect(await lookupAt(9000)).toBeNull();
    expect(await lookupAt(8233)).toBeInstanceOf(UnsafeTargetError);
  });

  it('the configuration refuses an entry it cannot read', () => {
    expect(() => loadConfig({ WEBHOOK_ALLOW_HOSTS: 'localhost:9000,bad:port' })).toThrow(/WEBHOOK_ALLOW_HOSTS entry "bad:port"/);
    expect(loadConfig({ WEBHOOK_ALLOW_HOSTS: ' LocalHost:9000 , 127.0.0.1:* ' }).webhookAllowHosts).toEqual(['localhost:9000', '127.0.0.1:*']);
  });
});

describe('safeLookup (connect-time check against DNS rebinding)', () => {
  const call = (lookup: ReturnType<typeof safeLookup>, host: string, options: dns.LookupOptions) =>
    new Promise<{ err: Error | null; address: unknown; family?: number }>((resolve) => {
      (lookup as unknown as (h: string, o: dns.LookupOptions, cb: (e: Error | null, a: unknown, f?: number) => void) => void)(host, options, (err, address, family) => resolve({ err, address, family }));
    });

  it('passes public records through in both callback shapes', async () => {
    fakeDns({ 'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'] });
    const lookup = safeLookup([], 443);
    const one = await call(lookup, 'hooks.example.com', {});
    expect(one).toEqual({ err: null, address: '93.184.216.34', family: 4 });
    const all = await call(lookup, 'hooks.example.com', { all: true });
    expect(all.err).toBeNull();
    expect(all.address).toEqual([{ address: '93.184.216.34', family: 4 }, { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 }]);
  });

  it('refuses when any record is internal, for single and all lookups', async () => {
    fakeDns({ 'rebind.test': ['93.184.216.34', '127.0.0.1'], 'meta.test': ['169.254.169.254'] });
    const lookup = safeLookup([], 443);
    for (const [host, all] of [['rebind.test', false], ['rebind.test', true], ['meta.test', false]] as const) {
      const r = await call(lookup, host, { all });
      expect(r.err).toBeInstanceOf(UnsafeTargetError);
    }
  });

  it('lets an allow-listed name resolve to an internal address; DNS errors pass through', async () => {
    fakeDns({ 'localhost': ['127.0.0.1'] });
    expect(await call(safeLookup(['localhost'], 80), 'localhost', {})).toEqual({ err: null, address: '127.0.0.1', family: 4 });
    const missing = await call(safeLookup([], 443), 'nowhere.invalid', {});
    expect(missing.err?.message).toMatch(/ENOTFOUND/);
    expect(missing.err).not.toBeInstanceOf(UnsafeTargetError);
  });
});
