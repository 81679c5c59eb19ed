/** GET /api/entities/:name/status-table: an account reads one of its devices' state tables. */
import { api, newAccount } from '../../support/env';

describe('account-side state table read', () => {
  it('answers the table the device wrote, only to its own account and only with an account key', async () => {
    const acct = await newAccount('starter');
    const bulk = await api('POST', '/api/entities/bulk', { key: acct.apiKey, body: { count: 1, prefix: 'thermo' } });
    expect(bulk.status).toBe(200);
    const deviceKey = bulk.body.results[0].apiKey as string;

    const empty = await api('GET', '/api/entities/thermo-1/status-table', { key: acct.apiKey });
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ statusTable: {} });

    expect((await api('PATCH', '/api/entities/status-table', { key: deviceKey, body: { mode: 'eco', setpoint: 21.5 } })).status).toBe(200);
    const after = await api('GET', '/api/entities/thermo-1/status-table', { key: acct.apiKey });
    expect(after.body).toEqual({ statusTable: { mode: 'eco', setpoint: 21.5 } });

    expect((await api('GET', '/api/entities/nobody/status-table', { key: acct.apiKey })).status).toBe(404);
    const other = await newAccount('starter');
    expect((await api('GET', '/api/entities/thermo-1/status-table', { key: other.apiKey })).status).toBe(404);
    const asDevice = await api('GET', '/api/entities/thermo-1/status-table', { key: deviceKey });
    expect(asDevice.status).toBe(403);
    expect(asDevice.body.reason).toBe('This endpoint requires an account API key');
  });
});
