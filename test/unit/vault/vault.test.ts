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

  it('withSecrets fills {{ vault.NAME }} for the call and redacts its result', async () => {
    const config = { url: 'https://x.test/?k={{vault.PASS}}', headers: { Authorization: 'Bearer {{ vault.TOKEN }}' }, keep: '{{ input.x }}' };
    let seen: typeof config | undefined;
    const out = await vault.withSecrets('acc1', config, async (resolved) => {
      seen = resolved;
      return { echoed: resolved.headers.Authorization, url: `https://x.test/?k=${encodeURIComponent('p&ss "word"/+')}`, body: JSON.stringify({ p: 'p&ss "word"/+' }) };
    });
    expect(seen).toEqual({ url: 'https://x.test/?k=p&ss "word"/+', headers: { Authorization: 'Bearer s3cr3t-token' }, keep: '{{ input.x }}' });
    expect(out).toEqual({ echoed: 'Bearer [vault:TOKEN]', url: 'https://x.test/?k=[vault:PASS]', body: '{"p":"[vault:PASS]"}' });
  });

  it('withSecrets redacts the error of a failed call', async () => {
    const err = await vault.withSecrets('acc1', { h: '{{ vault.TOKEN }}' }, async (r) => { throw Object.assign(new Error(`401 for ${r.h}`), { detail: r.h }); })
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
  it('leaves values alone when nothing was revealed', () => {
    const v = { a: 'abc' };
    expect(new Redactor({}).json(v)).toBe(v);
  });
});
