/** One local stack per test run: the real service, MongoDB-wire server, Temporal and broker. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { clamdCommand } from '../../src/stack/clamd';
import { startServiceProcess, StartedService } from './service';
import { CLAMD_INSTALL, IN_CI, requireTool } from './tools';

declare global {
  // eslint-disable-next-line no-var
  var __SENTINEL_SERVICE__: StartedService | undefined;
}

export default async function globalSetup(): Promise<void> {
  // Under CI=true the stack must include clamd: the scan tests would otherwise pass without it.
  requireTool('clamd', CLAMD_INSTALL);
  const started = await startServiceProcess();
  if (IN_CI && (await clamdCommand('127.0.0.1', started.env.clamdPort, 'PING').catch(() => '')) !== 'PONG') {
    await started.stop({ keepData: true });
    throw new Error(`clamd did not start in the test stack (CI=true); see ${started.env.logFile}`);
  }
  globalThis.__SENTINEL_SERVICE__ = started;
  // Per run, inside the run's DATA_DIR, so concurrent test runs never read each other's stack.
  const file = path.join(started.env.dataDir, 'test-stack.json');
  writeFileSync(file, JSON.stringify(started.env));
  process.env.SENTINEL_TEST_STACK = file;
}
