/** Shared set-up for the messaging integration tests: accounts with devices made through the API. */
import { api, Json, newAccount } from '../../support/env';

export interface Device { name: string; apiKey: string; apiKeyId: string; resourcePath: string }
export interface Fleet { accountId: string; apiKey: string; devices: Record<string, Device> }

/** A new account with devices registered through POST /api/entities/bulk (explicit list). */
export async function fleet(plan: string, names: string[]): Promise<Fleet> {
  const acct = await newAccount(plan);
  const r = await api('POST', '/api/entities/bulk', { key: acct.apiKey, body: { entities: names.map((name) => ({ name })) } });
  if (r.status !== 200 || r.body.created !== names.length) throw new Error(`bulk failed: ${r.status} ${r.text}`);
  const devices: Record<string, Device> = {};
  for (const d of r.body.results as Json[]) devices[d.name] = d as Device;
  return { accountId: acct.accountId, apiKey: acct.apiKey, devices };
}

export const publish = (key: string, body: unknown) => api('POST', '/api/entities/message', { key, body });

