/** The dashboard's link to a run in the Temporal Web UI follows the service's configuration, never a fixed port. */
import { loadConfig, temporalUiOf } from '../../../src/config';
import { temporalRunUrl } from '../../../web/src/pages/temporal-link';

const page = { protocol: 'http:', hostname: 'ops.example.com' };

describe('Temporal Web UI link', () => {
  it('uses the local UI port of TEMPORAL_UI_PORT and the namespace, on the dashboard host', () => {
    const ui = temporalUiOf(loadConfig({ TEMPORAL_UI_PORT: '18233', TEMPORAL_NAMESPACE: 'team a' }));
    expect(ui).toEqual({ port: 18233, namespace: 'team a' });
    expect(temporalRunUrl(ui, page, 'run-1/x')).toBe('http://ops.example.com:18233/namespaces/team%20a/workflows/run-1%2Fx');
    expect(temporalRunUrl(ui, { protocol: 'http:', hostname: '::1' }, 'run-1')).toBe('http://[::1]:18233/namespaces/team%20a/workflows/run-1');
  });

  it('uses TEMPORAL_UI_URL when set, with a remote Temporal too', () => {
    const ui = temporalUiOf(loadConfig({ TEMPORAL_ADDRESS: 'temporal.internal:7233', TEMPORAL_UI_URL: 'https://temporal-ui.example.com/' }));
    expect(temporalRunUrl(ui, page, 'run-2')).toBe('https://temporal-ui.example.com/namespaces/default/workflows/run-2');
  });

  it('shows no link for a remote Temporal whose UI is not configured, and refuses a UI address that is not http(s)', () => {
    const ui = temporalUiOf(loadConfig({ TEMPORAL_ADDRESS: 'temporal.internal:7233' }));
    expect(ui).toBeNull();
    expect(temporalRunUrl(ui, page, 'run-3')).toBeNull();
    expect(() => loadConfig({ TEMPORAL_UI_URL: 'ftp://x' })).toThrow(/TEMPORAL_UI_URL/);
  });
});
