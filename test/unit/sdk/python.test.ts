/**
 * The device library on CPython without a service: the 12-case routing table, the local database
 * and offline queue, message framing, typed errors and Retry-After, and the request building of
 * the file, clip and streaming calls against a local fake HTTP server (sdk/python/tests).
 */
import { expectPassed, pytest } from '../../support/pytest';

test('sdk/python unit tests pass on CPython', async () => {
  const run = await pytest(['test_routing.py', 'test_localdb.py', 'test_framing.py', 'test_http_files.py'], { SENTINEL_BASE_URL: '' });
  expectPassed(run);
  expect(run.output).toMatch(/\b\d+ passed\b/);
}, 180_000);
