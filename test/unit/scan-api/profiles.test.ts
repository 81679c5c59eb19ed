/**
 * Scan profiles (src/scan/profiles.ts) over an in-memory store: list validation, the plan gate and
 * the SSRF check on the webhook URL, and the AES-256-GCM sealing of webhook credentials (never
 * returned, random IV, tamper and wrong-key detection). DNS is faked.
 */
import dns from 'node:dns';
import { randomBytes } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import { MongoServerError } from 'mongodb';
import type { AccountDoc } from '../../../src/accounts/records';
import type { PlanTier } from '../../../src/accounts/plans';
import { ProfileService, publicProfile, type ProfileInput } from '../../../src/scan/profiles';
import type { ProfileDoc, ScanStore } from '../../../src/scan/records';
import { appErr } from './support/app-err';

const KEY = randomBytes(32);
const ACC = 'acc-1';
const account = (plan: PlanTier = 'starter', id = ACC): AccountDoc => ({ _id: id, name: 'acme', plan, region: 'local', entityCount: 0, createdAt: new Date(0) });

class MemoryProfiles {
  docs: ProfileDoc[] = [];
  clearDefaultCalls: Array<[string, string]> = [];
  async insertProfile(doc: ProfileDoc) {
    if (this.docs.some((d) => d.accountId === doc.accountId && d.name === doc.name)) {
      throw new MongoServerError({ message: 'E11000 duplicate key', code: 11000 });
    }
    this.docs.push(structuredClone(doc));
  }
  async findProfile(accountId: string, id: string) { return this.docs.find((d) => d._id === id && d.accountId === accountId) ?? null; }
  async findDefaultProfile(accountId: string) { return this.docs.find((d) => d.accountId === accountId && d.isDefault) ?? null; }
  async listProfiles(accountId: string) { return this.docs.filter((d) => d.accountId === accountId); }
  async updateProfile(accountId: string, id: string, set: Partial<ProfileDoc>, unset: string[] = []) {
    const d = this.docs.find((x) => x._id === id && x.accountId === accountId);
    if (!d) return null;
    Object.assign(d, set, { updatedAt: new Date() });
    for (const k of unset) delete (d as unknown as Record<string, unknown>)[k];
    return d;
  }
  async clearDefault(accountId: string, exceptId: string) {
    this.clearDefaultCalls.push([accountId, exceptId]);
    for (const d of this.docs) if (d.accountId === accountId && d._id !== exceptId) d.isDefault = false;
  }
  async deleteProfile(accountId: string, id: string) {
    const before = this.docs.length;
    this.docs = this.docs.filter((d) => !(d._id === id && d.accountId === accountId));
    return this.docs.length < before;
  }
}

const DNS: Record<string, string[]> = { 'hooks.example.com': ['93.184.216.34'], 'internal.example.com': ['10.1.2.3'], 'localhost': ['127.0.0.1'] };
beforeEach(() => {
  jest.spyOn(dns.promises, 'lookup').mockImplementation((async (name: string) => {
    const list = DNS[name];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return list.map((address): LookupAddress => ({ address, family: 4 }));
  }) as unknown as typeof dns.promises.lookup);
});
afterEach(() => jest.restoreAllMocks());

function setup(allowHosts: string[] = []) {
  const store = new MemoryProfiles();
  const svc = new ProfileService(store as unknown as ScanStore, KEY, allowHosts);
  return { store, svc };
}


const webhookProfile = (webhook: ProfileInput['webhook'], name = 'p'): ProfileInput => ({ name, webhook });
/** File type names as a caller that skipped the schema's enum could send them. */
const unchecked = (types: string[]) => types as ProfileInput['allowedTypes'];

describe('lists and names', () => {
  it('refuses an unknown file type or engine name with 400, accepts known ones', async () => {
    const { svc, store } = setup();
    expect((await appErr(svc.create(account(), { name: 'a', allowedTypes: unchecked(['pdf', 'exe']) }))).status).toBe(400);
    expect((await appErr(svc.create(account(), { name: 'b', suppressedEngines: ['yara', 'antivirus'] }))).message).toMatch(/antivirus/);
    expect(store.docs).toHaveLength(0);
    const ok = await svc.create(account(), { name: 'c', allowedTypes: ['pdf', 'office_ooxml'], suppressedEngines: ['yara'] });
    expect(ok).toMatchObject({ allowedTypes: ['pdf', 'office_ooxml'], suppressedEngines: ['yara'], isDefault: false });
  });

  it('a duplicate name is 409, not 500', async () => {
    const { svc } = setup();
    await svc.create(account(), { name: 'dup' });
    expect((await appErr(svc.create(account(), { name: 'dup' }))).status).toBe(409);
  });

  it('making a profile default clears the other defaults of the same account only', async () => {
    const { svc, store } = setup();
    const a = await svc.create(account(), { name: 'a', isDefault: true });
    const b = await svc.create(account(), { name: 'b', isDefault: true });
    expect(store.clearDefaultCalls).toEqual([[ACC, a._id], [ACC, b._id]]);
    expect((await svc.resolve(ACC, undefined))?._id).toBe(b._id);
    expect(await svc.resolve('other-account', undefined)).toBeNull();
    expect((await appErr(svc.resolve('other-account', a._id))).status).toBe(404);
  });
});

describe('webhook target checks at save time', () => {
  it('Free plan: 403 plan_required with feature and current_plan, nothing stored', async () => {
    const { svc, store } = setup();
    const e = await appErr(svc.create(account('free'), webhookProfile({ url: 'https://hooks.example.com/x' })));
    expect(e.status).toBe(403);
    expect(e.code).toBe('plan_required');
    expect(e.extra).toMatchObject({ feature: 'webhooks', current_plan: 'free', upgrade: true });
    expect(store.docs).toHaveLength(0);
  });

  it.each([
    ['not a URL', 'hooks.example.com/x'],
    ['ftp scheme', 'ftp://hooks.example.com/'],
    ['file scheme', 'file:///etc/passwd'],
    ['javascript scheme', 'javascript:alert(1)'],
    ['gopher scheme', 'gopher://hooks.example.com:70/'],
    ['userinfo', 'https://user:pw@hooks.example.com/'],
    ['userinfo trick', 'http://hooks.example.com@127.0.0.1/'],
  ])('refuses %s with 400', async (_what, url) => {
    const { svc, store } = setup();
    const e = await appErr(svc.create(account(), webhookProfile({ url })));
    expect(e.status).toBe(400);
    expect(store.docs).toHaveLength(0);
  });

  it.each([
    'http://127.0.0.1/', 'http://2130706433/', 'http://0x7f.1/', 'http://[::ffff:127.0.0.1]/', 'http://169.254.169.254/latest/meta-data/',
    'http://[::1]:8080/', 'http://localhost/', 'https://internal.example.com/', 'http://192.168.0.10:9200/',
  ])('refuses internal target %s with 400 webhook_target_refused', async (url) => {
    const { svc } = setup();
    const e = await appErr(svc.create(account(), webhookProfile({ url })));
    expect(e.status).toBe(400);
    expect(e.code).toBe('webhook_target_refused');
  });

  it('an unresolvable host is refused with the same code', async () => {
    const { svc } = setup();
    const e = await appErr(svc.create(account(), webhookProfile({ url: 'https://nowhere.invalid/' })));
    expect(e).toMatchObject({ status: 400, code: 'webhook_target_refused' });
  });

  it('WEBHOOK_ALLOW_HOSTS lets exactly that host and port through', async () => {
    const { svc } = setup(['127.0.0.1:9999']);
    const p = await svc.create(account(), webhookProfile({ url: 'http://127.0.0.1:9999/hook' }));
    expect(p.webhook?.url).toBe('http://127.0.0.1:9999/hook');
    expect((await appErr(svc.create(account(), webhookProfile({ url: 'http://localhost:9999/hook' }, 'q')))).code).toBe('webhook_target_refused');
    expect((await appErr(svc.create(account(), webhookProfile({ url: 'http://127.0.0.1:8233/hook' }, 'r')))).code).toBe('webhook_target_refused');
  });

  it('a bare host in WEBHOOK_ALLOW_HOSTS allows its web ports 80 and 443, no other', async () => {
    const { svc } = setup(['127.0.0.1']);
    expect((await svc.create(account(), webhookProfile({ url: 'http://127.0.0.1/hook' }))).webhook?.url).toBe('http://127.0.0.1/hook');
    expect((await appErr(svc.create(account(), webhookProfile({ url: 'http://127.0.0.1:8233/hook' }, 'q')))).code).toBe('webhook_target_refused');
  });

  it('credentials: value required for auth types, headerName required for custom_header', async () => {
    const { svc } = setup();
    const url = 'https://hooks.example.com/x';
    expect((await appErr(svc.create(account(), webhookProfile({ url, authType: 'api_key' })))).message).toMatch(/value is required/);
    expect((await appErr(svc.create(account(), webhookProfile({ url, authType: 'bearer', value: '' })))).message).toMatch(/value is required/);
    expect((await appErr(svc.create(account(), webhookProfile({ url, authType: 'custom_header', value: 'v' })))).message).toMatch(/headerName is required/);
  });

  it.each(['X-Scanner-Signature', 'x-scanner-request-id', 'Content-Length', 'HOST', 'Transfer-Encoding', 'bad name', 'x:y', 'x\r\ny', '', 'a'.repeat(65)])(
    'refuses header name %j as headerName and as an additional header',
    async (name) => {
      const { svc } = setup();
      const url = 'https://hooks.example.com/x';
      expect((await appErr(svc.create(account(), webhookProfile({ url, authType: 'custom_header', value: 'v', headerName: name })))).status).toBe(400);
      expect((await appErr(svc.create(account(), webhookProfile({ url, headers: { [name]: 'v' } }, 'h')))).status).toBe(400);
    },
  );

  // Header values (and credentials, which become header values) that http.request would refuse
  // ("Invalid character in header content") are refused when saved, or no delivery could be sent.
  it('refuses an additional header value or credential containing CR/LF', async () => {
    const { svc, store } = setup();
    const url = 'https://hooks.example.com/x';
    const e1 = await appErr(svc.create(account(), webhookProfile({ url, headers: { 'X-Tenant': 'a\r\nX-Injected: 1' } }, 'h1')));
    const e2 = await appErr(svc.create(account(), webhookProfile({ url, authType: 'bearer', value: 'tok\nen' }, 'h2')));
    const e3 = await appErr(svc.create(account(), webhookProfile({ url, authType: 'custom_header', headerName: 'X-Key', value: 'k-Ω' }, 'h3')));
    // Latin-1 letters go out as single bytes while the signature keys on UTF-8: a receiver could not verify it.
    const e4 = await appErr(svc.create(account(), webhookProfile({ url, authType: 'bearer', value: 's3cr3t-ké' }, 'h4')));
    const e5 = await appErr(svc.create(account(), webhookProfile({ url, headers: { 'X-Tenant': 'café' } }, 'h5')));
    for (const e of [e1, e2, e3, e4, e5]) expect(e.status).toBe(400);
    expect(e4.message).toBe('webhook.value must be printable ASCII (no CR, LF or other control characters, no letters beyond ASCII such as é)');
    expect(store.docs).toHaveLength(0);
  });
});

describe('sealed credentials', () => {
  const input = {
    url: 'https://hooks.example.com/scan?x=1', authType: 'custom_header' as const, value: 'S3cr3t-credential-e', headerName: 'X-Api-Key',
    headers: { 'X-Tenant': 'tenant-secret-value', 'X-Env': 'prod' },
  };

  it('the stored document holds no plaintext credential or header value', async () => {
    const { svc, store } = setup();
    await svc.create(account(), webhookProfile(input));
    const raw = JSON.stringify(store.docs);
    for (const secret of ['S3cr3t-credential', 'tenant-secret-value', 'prod']) expect(raw).not.toContain(secret);
    expect(store.docs[0].webhook).toMatchObject({ authType: 'custom_header', headerName: 'X-Api-Key', headerNames: ['X-Tenant', 'X-Env'] });
  });

  it('publicProfile shows configured: true and header names, never values or sealed blobs', async () => {
    const { svc } = setup();
    const p = await svc.create(account(), webhookProfile(input));
    const pub = publicProfile(p);
    expect(pub.webhook).toEqual({ url: input.url, authType: 'custom_header', headerName: 'X-Api-Key', configured: true, headers: ['X-Tenant', 'X-Env'] });
    const text = JSON.stringify(pub);
    for (const leak of ['S3cr3t', 'tenant-secret-value', p.webhook!.valueSealed!, p.webhook!.headersSealed!]) expect(text).not.toContain(leak);
  });

  it('authType none never stores a value (configured: false) even if one is sent', async () => {
    const { svc } = setup();
    const p = await svc.create(account(), webhookProfile({ url: 'https://hooks.example.com/', authType: 'none', value: 'ignored' }));
    expect(p.webhook?.valueSealed).toBeUndefined();
    expect(publicProfile(p).webhook?.configured).toBe(false);
    expect(svc.webhookTarget(p)).toEqual({ url: 'https://hooks.example.com/', authType: 'none', value: undefined, headerName: undefined, headers: {} });
  });

  it('webhookTarget round-trips the exact credential and headers', async () => {
    const { svc } = setup();
    const p = await svc.create(account(), webhookProfile(input));
    expect(svc.webhookTarget(p)).toEqual({ url: input.url, authType: 'custom_header', value: input.value, headerName: 'X-Api-Key', headers: input.headers });
  });

  it('sealing uses a fresh IV: the same secret seals differently', async () => {
    const { svc } = setup();
    const a = await svc.create(account(), webhookProfile({ url: 'https://hooks.example.com/', authType: 'bearer', value: 'same' }, 'a'));
    const b = await svc.create(account(), webhookProfile({ url: 'https://hooks.example.com/', authType: 'bearer', value: 'same' }, 'b'));
    expect(a.webhook!.valueSealed).not.toBe(b.webhook!.valueSealed);
  });

  it('a tampered ciphertext, tag or IV is detected, not decrypted to garbage', async () => {
    const { svc } = setup();
    const p = await svc.create(account(), webhookProfile({ url: 'https://hooks.example.com/', authType: 'bearer', value: 'token-value-123' }));
    const sealed = Buffer.from(p.webhook!.valueSealed!, 'base64');
    for (const at of [0, 12, 28, sealed.length - 1]) {
      const t = Buffer.from(sealed);
      t[at] ^= 0x01;
      const tampered: ProfileDoc = { ...p, webhook: { ...p.webhook!, valueSealed: t.toString('base64') } };
      expect(() => svc.webhookTarget(tampered)).toThrow();
    }
    const truncated: ProfileDoc = { ...p, webhook: { ...p.webhook!, valueSealed: sealed.subarray(0, sealed.length - 3).toString('base64') } };
    expect(() => svc.webhookTarget(truncated)).toThrow();
  });

  it('another key cannot open it', async () => {
    const { svc, store } = setup();
    const p = await svc.create(account(), webhookProfile({ url: 'https://hooks.example.com/', authType: 'api_key', value: 'k' }));
    const other = new ProfileService(store as unknown as ScanStore, randomBytes(32), []);
    expect(() => other.webhookTarget(p)).toThrow();
  });
});

describe('update', () => {
  it('webhook: null removes the webhook; another account cannot touch the profile', async () => {
    const { svc } = setup();
    const p = await svc.create(account(), webhookProfile({ url: 'https://hooks.example.com/', authType: 'bearer', value: 't' }));
    expect((await appErr(svc.update(account('starter', 'intruder'), p._id, { webhook: null }))).status).toBe(404);
    expect((await svc.get(ACC, p._id)).webhook).toBeDefined();
    const u = await svc.update(account(), p._id, { webhook: null });
    expect(u.webhook).toBeUndefined();
    expect(publicProfile(u).webhook).toBeNull();
    expect(svc.webhookTarget(u)).toBeUndefined();
  });

  it('a downgraded (Free) account cannot set a webhook via PATCH; lists are validated too', async () => {
    const { svc } = setup();
    const p = await svc.create(account(), { name: 'x' });
    expect((await appErr(svc.update(account('free'), p._id, { webhook: { url: 'https://hooks.example.com/' } }))).code).toBe('plan_required');
    expect((await appErr(svc.update(account(), p._id, { allowedTypes: unchecked(['nope']) }))).status).toBe(400);
    expect((await appErr(svc.update(account(), p._id, { webhook: { url: 'http://169.254.169.254/' } }))).code).toBe('webhook_target_refused');
    expect((await svc.get(ACC, p._id)).webhook).toBeUndefined();
  });

  it('isDefault: true clears the others', async () => {
    const { svc } = setup();
    const a = await svc.create(account(), { name: 'a', isDefault: true });
    const b = await svc.create(account(), { name: 'b' });
    await svc.update(account(), b._id, { isDefault: true });
    expect((await svc.get(ACC, a._id)).isDefault).toBe(false);
    expect((await svc.resolve(ACC, undefined))?._id).toBe(b._id);
  });
});
