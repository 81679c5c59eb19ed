/**
 * Temporal's time-skipping test server (.tools/bin/temporal-test-server, a JVM) for workflow unit
 * tests. The SDK gives the server a fixed 5 s to answer after it is spawned; on a busy machine the
 * JVM's start can take longer, so a start that timed out is tried again (the JVM's files are then
 * in the page cache and it starts faster). Any other failure is thrown at once.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';

const TEST_SERVER = path.resolve(__dirname, '..', '..', '.tools', 'bin', 'temporal-test-server');
const ATTEMPTS = 5;

export async function timeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  if (!existsSync(TEST_SERVER)) throw new Error(`${TEST_SERVER} is missing: run npm run setup (it installs Temporal's time-skipping test server)`);
  for (let attempt = 1; ; attempt++) {
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: TEST_SERVER } } });
    } catch (err) {
      if (attempt >= ATTEMPTS || !/did not start within/.test(String(err))) throw err;
    }
  }
}
