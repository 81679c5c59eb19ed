/**
 * The device library on a real MicroPython interpreter (WebAssembly build, in Node): the package
 * imports with no CPython-only module, and its routing table (the same 12 cases as on CPython),
 * local database, offline queue, reconnect/resubscribe and message framing work over the vendored
 * umqtt against a fake socket module, and streaming runs under the port's asyncio
 * (sdk/python/tests/micropython/).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';

const RUNNER = path.join(__dirname, 'micropython-runner.mjs');

function runMicroPython(): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [RUNNER], { timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

test('sentinel_device runs on MicroPython: imports, routing, local database, offline queue, framing', async () => {
  const run = await runMicroPython();
  const line = run.output.split('\n').find((l) => l.startsWith('RESULT '));
  if (run.code !== 0 || !line) throw new Error(`MicroPython run failed (exit ${run.code}):\n${run.output}`);
  const result = JSON.parse(line.slice('RESULT '.length)) as { checks: Record<string, true | string> };
  expect(result.checks).toEqual({
    'imports only MicroPython modules': true,
    'routing table: 12 cases on Router and Device': true,
    'local database: put/get/query/delete with TTL, persisted': true,
    'HTTP framing and typed errors through requests': true,
    'MQTT framing, routing, offline queue, reconnect and resubscribe': true,
    'stored zip and multipart': true,
    'streaming uploads jpeg_burst segments under asyncio': true,
  });
  // The queue overflow warned instead of failing silently.
  expect(run.output).toContain('offline queue full (5 messages): dropped the 1 oldest');
}, 180_000);
