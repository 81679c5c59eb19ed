/**
 * The device library's file transfer, clips and streaming end to end (sdk/python/tests/
 * test_e2e_files.py). Needs the file-transfer capability (docs/contract.md §8) on the branch.
 */
import { newAccount, stack } from '../../support/env';
import { expectPassed, pytest } from '../../support/pytest';

test('sdk/python file and clip tests pass against the running service', async () => {
  const s = stack();
  const account = await newAccount('pro', `sdk-files-${Date.now()}`);
  const run = await pytest(['test_e2e_files.py'], { SENTINEL_BASE_URL: s.baseUrl, SENTINEL_ACCOUNT_KEY: account.apiKey });
  expectPassed(run);
  expect(run.output).toMatch(/\b4 passed\b/);
}, 600_000);
