/**
 * One local stack per test run: the real service (on the embedded store, the default), Temporal and
 * broker, and a MongoDB-wire server beside it (FerretDB, the stand-in) for the MongoDB side of the
 * store contract suite and the tests of MongoDB-only parts.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { clamdCommand } from '../../src/stack/clamd';
import { startLocalStack, LocalStack } from '../../src/stack';
import { ROOT, startServiceProcess, StartedService } from './service';
import { CLAMD_INSTALL, IN_CI, requireTool } from './tools';

declare global {
  // eslint-disable-next-line no-var
  var __SENTINEL_SERVICE__: StartedService | undefined;
  // eslint-disable-next-line no-var
  var __SENTINEL_MONGO_STAND_IN__: LocalStack | undefined;
}

const quiet = { info: () => undefined, warn: () => undefined, error: (o: object | string, m?: string) => console.error(m ?? o) };

export default async function globalSetup(): Promise<void> {
  // Under CI=true the stack must include clamd: the scan tests would otherwise pass without it.
  requireTool('clamd', CLAMD_INSTALL);
  const started = await startServiceProcess();
  if (IN_CI && (await clamdCommand('127.0.0.1', started.env.clamdPort, 'PING').catch(() => '')) !== 'PONG') {
    await started.stop({ keepData: true });
    throw new Error(`clamd did not start in the test stack (CI=true); see ${started.env.logFile}`);
  }
  globalThis.__SENTINEL_SERVICE__ = started;
  globalThis.__SENTINEL_MONGO_STAND_IN__ = await startLocalStack({
    rootDir: ROOT, dataDir: path.join(started.env.dataDir, 'mongo-stand-in'), logger: quiet,
    mongo: { port: started.env.mongoPort }, blobs: { port: started.env.mongoBlobPort },
  });
  // Per run, inside the run's DATA_DIR, so concurrent test runs never read each other's stack.
  const file = path.join(started.env.dataDir, 'test-stack.json');
  writeFileSync(file, JSON.stringify(started.env));
  process.env.SENTINEL_TEST_STACK = file;
}
