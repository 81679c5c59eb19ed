/** The Temporal SDK's log lines through pino: a failure is written with its type and message, not `{}`. */
import { Writable } from 'node:stream';
import pino from 'pino';
import { ApplicationFailure } from '@temporalio/common';
import { sdkLogFields } from '../../../temporal/worker';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } });
  return { log: pino({ level: 'info' }, stream), lines };
}

test('an SDK failure under `error` is logged with its type and message', () => {
  const { log, lines } = capture();
  const failure = ApplicationFailure.create({ message: 'node "fetch" failed: HTTP 502', type: 'NodeFailed', nonRetryable: true });
  log.warn(sdkLogFields({ error: failure, workflowId: 'run-1' }), 'Workflow failed');
  const line = JSON.parse(lines[0]) as { err?: { type: string; message: string }; error?: unknown; workflowId: string };
  expect(line.error).toBeUndefined();
  expect(line.err?.type).toBe('ApplicationFailure');
  expect(line.err?.message).toBe('node "fetch" failed: HTTP 502');
  expect(line.workflowId).toBe('run-1');
});

test('an Error under another key is serialized in place; plain fields pass through', () => {
  const { log, lines } = capture();
  log.warn(sdkLogFields({ cause: new TypeError('boom'), attempt: 3 }), 'x');
  const line = JSON.parse(lines[0]) as { cause: { type: string; message: string }; attempt: number };
  expect(line.cause).toMatchObject({ type: 'TypeError', message: 'boom' });
  expect(line.attempt).toBe(3);
  expect(sdkLogFields(undefined)).toEqual({});
});
