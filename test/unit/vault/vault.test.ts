/** Vault rules without a database: sealing, reveal, templating and redaction. */
import { randomBytes } from 'node:crypto';
import { Redactor } from '../../../src/vault/redact';
import { VaultService } from '../../../src/vault/service';
import type { SealedVaultEntry, VaultEntries } from '../../../src/vault/records';
import { fillVaultRefs, vaultRefs } from '../../../src/vault/template';

class MemoryEntries implements VaultEntries {
  readonly rows = new Map<string, SealedVaultEntry & { accountId: string }>();
  async list(accountId: string) { return [...this.rows.values()].filter((r) => r.accountId === accountId); }
  async find(accountId: string, names: readonly string[]) { return names.map((n) => this.rows.get(`${accountId}/${n}`)).filter((r): r is SealedVaultEntry & { accountId: string } => r !== undefined); }
  async put(accountId: string, name: string, valueSealed: string, now: Date) {
    const before = this.rows.get(`${accountId}/${name}`);
    const entry = { accountId, name, valueSealed, createdAt: before?.createdAt ?? now, updatedAt: now };
    this.rows.set(`${accountId}/${name}`, entry);
    return { entry, created: !before };
  }
  async remove(accountId: string, name: string) { return this.rows.delete(`${accountId}/${name}`); }
}

describe('VaultService', () => {
  const entries = new MemoryEntries();
  const vault = new VaultService(entries, randomBytes(32));

  beforeAll(async () => {
    await vault.put('acc1', 'TOKEN', 's3cr3t-token', 'pro');
    await vault.put('acc1', 'PASS', 'p&ss "word"/+', 'pro');
  });

  it('stores only the sealed value, different each time it is sealed', async () => {
    const first = entries.rows.get('acc1/TOKEN')?.valueSealed as string;
    expect(first).not.toContain('s3cr3t-token');
    expect(Buffer.from(first, 'base64').toString('latin1')).not.toContain('s3cr3t-token');
    const { created } = await vault.put('acc1', 'TOKEN', 's3cr3t-token', 'pro');
    expect(created).toBe(false);
    expect(entries.rows.get('acc1/TOKEN')?.valueSealed).not.toBe(first);
  });

  it('reveals named values of the account only', async () => {
    expect(await vault.reveal('acc1', ['TOKEN'])).toEqual({ TOKEN: 's3cr3t-token' });
    expect(await vault.reveal('acc1', [])).toEqual({});
    await expect(vault.reveal('acc2', ['TOKEN'])).rejects.toThrow('Vault entry "TOKEN" not found');
  });

  it('withSecrets reveals the names the definition holds for the call and redacts its result', async () => {
    const definition = { url: 'https://x.test/?k={{vault.PASS}}', headers: { Authorization: 'Bearer {{ vault.TOKEN }}' }, keep: '{{ input.x }}' };
    let seen: Readonly<Record<string, string>> | undefined;
    const out = await vault.withSecrets('acc1', definition, async (secrets) => {
      seen = secrets;
      return { echoed: `Bearer ${secrets.TOKEN}`, url: `https://x.test/?k=${encodeURIComponent('p&ss "word"/+')}`, body: JSON.stringify({ p: 'p&ss "word"/+' }) };
    });
    expect(seen).toEqual({ PASS: 'p&ss "word"/+', TOKEN: 's3cr3t-token' });
    expect(out).toEqual({ echoed: 'Bearer [vault:TOKEN]', url: 'https://x.test/?k=[vault:PASS]', body: '{"p":"[vault:PASS]"}' });
  });

  it('withSecrets redacts the error of a failed call', async () => {
    const err = await vault.withSecrets('acc1', { h: '{{ vault.TOKEN }}' }, async (r) => { throw Object.assign(new Error(`401 for ${r.TOKEN}`), { detail: r.TOKEN }); })
      .catch((e: Error & { detail?: string }) => e);
    expect(err.message).toBe('401 for [vault:TOKEN]');
    expect((err as { detail?: string }).detail).toBe('[vault:TOKEN]');
    expect(err.stack ?? '').not.toContain('s3cr3t-token');
  });

  it('withSecrets fails, naming the entry, when a referenced entry does not exist', async () => {
    await expect(vault.withSecrets('acc1', { h: '{{ vault.MISSING }}' }, async () => 1)).rejects.toThrow('Vault entry "MISSING" not found');
  });
});

describe('vault templates', () => {
  it('finds each referenced name once, anywhere in the value', () => {
    expect(vaultRefs({ a: '{{ vault.A }} and {{vault.B}}', b: ['{{  vault.A  }}'], c: 1, d: null, e: '{{ vault.9bad }}', f: '{{ input.vault }}' })).toEqual(['A', 'B']);
  });
  it('fills only vault references', () => {
    expect(fillVaultRefs(['{{ vault.A }}-{{ x }}', { k: '{{vault.A}}' }, 3], { A: 'v' })).toEqual(['v-{{ x }}', { k: 'v' }, 3]);
  });
});

describe('Redactor', () => {
  const r = new Redactor({ SHORT: 'abc', LONG: 'abcdef' });
  it('replaces the longest value first, in strings, keys and nested values', () => {
    expect(r.text('x abcdef y abc')).toBe('x [vault:LONG] y [vault:SHORT]');
    expect(r.json({ abcdef: ['abc', { n: 1, t: true, z: null }] })).toEqual({ '[vault:LONG]': ['[vault:SHORT]', { n: 1, t: true, z: null }] });
  });
  // Found by an outside probe: an http node's URL `http://u:{{ vault.TOK }}@host/` made the client
  // send `Authorization: Basic base64("u:" + secret)`, which an echoing server put in the output.
  it('finds a value encoded in base64 together with other bytes, and replaces the whole token', () => {
    const secret = 'S3cr3t-Vault-Value-xyz123';
    const red = new Redactor({ TOK: secret });
    const basic = Buffer.from(`u:${secret}`).toString('base64');
    expect(red.text(`Authorization: Basic ${basic}`)).toBe('Authorization: Basic [vault:TOK]');
    const blob = Buffer.from(JSON.stringify({ user: 'x', password: secret, n: 1 })).toString('base64url');
    expect(red.json({ headers: { 'X-Echo': `v=${blob}` } })).toEqual({ headers: { 'X-Echo': 'v=[vault:TOK]' } });
    // Offset inside the encoded bytes: one, two or three leading bytes.
    for (const lead of ['a', 'ab', 'abc']) {
      const out = red.text(Buffer.from(lead + secret).toString('base64'));
      expect(out).toMatch(/\[vault:TOK\]$/);
      expect(Buffer.from(out.replace('[vault:TOK]', ''), 'base64').toString('latin1')).not.toContain(secret.slice(0, 6));
    }
    // Unrelated base64 and prose stay as they are.
    const other = Buffer.from('nothing to see here at all').toString('base64');
    expect(red.text(`${other} Authorization Basically`)).toBe(`${other} Authorization Basically`);
    // Short values are not looked for inside decoded bytes (random bytes would match them).
    expect(new Redactor({ S: 'abc' }).text(Buffer.from('xxabcxx').toString('base64'))).toBe(Buffer.from('xxabcxx').toString('base64'));
  });

  it('finds a value in the spellings a request gives it: URL path, query, form body, JSON, base64', () => {
    const secret = 'p@ss w=rd&x+y/z"';
    const red = new Redactor({ S: secret });
    const url = new URL(`https://api.test/v1/${secret}/items?k=${encodeURIComponent(secret)}`);
    expect(red.text(`GET ${url.href} answered 404`)).toBe('GET https://api.test/v1/[vault:S]/items?k=[vault:S] answered 404');
    expect(red.text(`GET https://api.test/${encodeURI(secret)}`)).toBe('GET https://api.test/[vault:S]');
    expect(red.text(new URLSearchParams({ p: secret }).toString())).toBe('p=[vault:S]');
    expect(red.text(JSON.stringify({ p: secret }))).toBe('{"p":"[vault:S]"}');
    expect(red.text(`Authorization: Basic ${Buffer.from(secret).toString('base64')}`)).toBe('Authorization: Basic [vault:S]');
    expect(red.text(`token=${Buffer.from(secret).toString('base64url')}`)).toBe('token=[vault:S]');
  });

  it('leaves values alone when nothing was revealed', () => {
    const v = { a: 'abc' };
    expect(new Redactor({}).json(v)).toBe(v);
  });
});
