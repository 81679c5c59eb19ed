/** The vault over HTTP against the real stack, and reveal() on what the service stored. */
import { readFileSync } from 'node:fs';
import { api, clearOfWindowEdge, newAccount, stack } from '../../support/env';
import { filesHolding, withStackRecords } from '../../support/db';
import { stackDataKey } from '../../support/keys';
import { VaultService } from '../../../src/vault/service';

const SECRET = `vault-value-${Date.now()}-Zq9`;

describe('vault API', () => {
  let a: { accountId: string; apiKey: string };
  let b: { accountId: string; apiKey: string };
  beforeAll(async () => {
    a = await newAccount('free', `vault-a-${Date.now()}`);
    b = await newAccount('free', `vault-b-${Date.now()}`);
  });

  it('stores a value and never returns it', async () => {
    const created = await api('POST', '/api/vault', { key: a.apiKey, body: { name: 'API_TOKEN', value: SECRET } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ name: 'API_TOKEN', configured: true, createdAt: expect.any(String), updatedAt: expect.any(String) });
    expect(created.text).not.toContain(SECRET);

    const replaced = await api('POST', '/api/vault', { key: a.apiKey, body: { name: 'API_TOKEN', value: `${SECRET}-2` } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.createdAt).toBe(created.body.createdAt);

    await api('POST', '/api/vault', { key: a.apiKey, body: { name: 'other_one', value: 'x' } });
    const list = await api('GET', '/api/vault', { key: a.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.entries.map((e: { name: string }) => e.name)).toEqual(['API_TOKEN', 'other_one']);
    expect(list.body.entries.every((e: { configured: boolean }) => e.configured)).toBe(true);
    expect(list.text).not.toContain(SECRET);
  });

  it('refuses a name that cannot be used as {{ vault.NAME }} and a missing value', async () => {
    for (const body of [{ name: '1abc', value: 'v' }, { name: 'has-dash', value: 'v' }, { name: 'ok', value: '' }, { name: 'ok' }, { name: 'ok', value: 'v', extra: 1 }]) {
      const r = await api('POST', '/api/vault', { key: a.apiKey, body });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: expect.any(String), requestId: expect.any(String) });
    }
  });

  it("hides one account's entries from another: not listed, 404 on delete", async () => {
    await api('POST', '/api/vault', { key: a.apiKey, body: { name: 'PRIVATE', value: SECRET } });
    expect((await api('GET', '/api/vault', { key: b.apiKey })).body.entries).toEqual([]);
    const del = await api('DELETE', '/api/vault/PRIVATE', { key: b.apiKey });
    expect(del.status).toBe(404);
    expect(del.body).toMatchObject({ error: 'Vault entry not found', code: 'not_found' });
    expect((await api('GET', '/api/vault', { key: a.apiKey })).body.entries.map((e: { name: string }) => e.name)).toContain('PRIVATE');
  });

  it('deletes an entry', async () => {
    await api('POST', '/api/vault', { key: a.apiKey, body: { name: 'TEMP', value: 'v' } });
    expect((await api('DELETE', '/api/vault/TEMP', { key: a.apiKey })).status).toBe(204);
    expect((await api('DELETE', '/api/vault/TEMP', { key: a.apiKey })).status).toBe(404);
  });

  it('needs an account key', async () => {
    expect((await api('GET', '/api/vault')).status).toBe(401);
  });

  it('keeps values sealed at rest; reveal opens them for the owning account only', async () => {
    await withStackRecords(async ({ stores }) => {
      const entries = await stores.vault.list(a.accountId);
      expect(entries.length).toBeGreaterThanOrEqual(2);
      expect(JSON.stringify(entries)).not.toContain(SECRET);
      // Nor anywhere in the store's files (records, write-ahead log, stored bytes).
      expect(filesHolding(Buffer.from(SECRET))).toEqual([]);

      const vault = new VaultService(stores.vault, stackDataKey());
      expect(await vault.reveal(a.accountId, ['API_TOKEN', 'PRIVATE', 'API_TOKEN'])).toEqual({ API_TOKEN: `${SECRET}-2`, PRIVATE: SECRET });
      await expect(vault.reveal(b.accountId, ['PRIVATE'])).rejects.toThrow('Vault entry "PRIVATE" not found');
      await expect(vault.reveal(a.accountId, ['API_TOKEN', 'NOPE'])).rejects.toThrow('Vault entry "NOPE" not found');
    });
    expect(readFileSync(stack().logFile, 'utf8')).not.toContain(SECRET);
  });

  it('limits writes to 30 per minute per account (vault and connectors together)', async () => {
    const c = await newAccount('pro', `vault-rate-${Date.now()}`);
    await clearOfWindowEdge(60_000, 20_000);
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await api('POST', '/api/vault', { key: c.apiKey, body: { name: `K${i % 3}`, value: 'v' } })).status);
    expect(statuses.every((s) => s === 200 || s === 201)).toBe(true);
    const over = await api('POST', '/api/connectors', { key: c.apiKey, body: { name: 'x', type: 'aws', region: 'us-east-1', access_key_id: 'a', secret_access_key: 'b' } });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await api('GET', '/api/vault', { key: c.apiKey })).status).toBe(200);
  });
});
