/**
 * The device library end to end on CPython against the test stack: HTTP and MQTT publishes,
 * directed messages through routes, state both ways, typed errors, and managed mode's offline
 * queue across a broker restart (sdk/python/tests/test_e2e_messaging.py, test_e2e_offline.py), and
 * `pip install ./sdk/python` into a fresh venv (test_install.py, offline from .tools/wheels).
 */
import { newAccount, stack } from '../../support/env';
import { ROOT, storageEnvOf } from '../../support/service';
import { expectPassed, pytest } from '../../support/pytest';

test('sdk/python end-to-end tests pass against the running service', async () => {
  const s = stack();
  const account = await newAccount('pro', `sdk-${Date.now()}`);
  const run = await pytest(['test_e2e_messaging.py', 'test_e2e_offline.py', 'test_install.py'], {
    SENTINEL_BASE_URL: s.baseUrl,
    SENTINEL_ACCOUNT_KEY: account.apiKey,
    SENTINEL_ROOT: ROOT,
    SENTINEL_DATA_DIR: s.dataDir,
    // What a second service process needs to share the stack's records (test_e2e_offline.py's broker).
    SENTINEL_STORAGE_ENV: JSON.stringify(storageEnvOf(s)),
    SENTINEL_NODE: process.execPath,
  });
  expectPassed(run);
  expect(run.output).toMatch(/\b7 passed\b/);
}, 600_000);
