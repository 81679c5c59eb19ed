/** One local stack per test run: the real service, MongoDB-wire server, Temporal and broker. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startServiceProcess, StartedService } from './service';

declare global {
  // eslint-disable-next-line no-var
  var __SENTINEL_SERVICE__: StartedService | undefined;
}

export default async function globalSetup(): Promise<void> {
  const started = await startServiceProcess();
  globalThis.__SENTINEL_SERVICE__ = started;
  // Per run, inside the run's DATA_DIR, so concurrent test runs never read each other's stack.
  const file = path.join(started.env.dataDir, 'test-stack.json');
  writeFileSync(file, JSON.stringify(started.env));
  process.env.SENTINEL_TEST_STACK = file;
}
