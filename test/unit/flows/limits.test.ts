/** src/flows/limits.ts and temporal/limits.ts: one test per product limit and its Temporal option. */
import { childDepthError, executionCapError, forEachCount, runOutputError, stepOutputError } from '../../../src/flows/limits';
import { shouldContinueAsNew, WORKER_ACTIVITY_SLOTS, nodePolicy, runStartOptions } from '../../../temporal/limits';

const T0 = Date.UTC(2026, 0, 1);
const TEN_MIN = 600_000;

describe('node timeout', () => {
  it('defaults to 30 s with nothing logged', () => {
    const p = nodePolicy({}, 'a', TEN_MIN, T0);
    expect(p.timeoutMs).toBe(30_000);
    expect(p.activity.startToCloseTimeout).toBe(30_000);
    expect(p.log).toEqual([]);
  });

  it('caps timeout_ms above 5 minutes at 300000 and logs it', () => {
    const p = nodePolicy({ timeout_ms: 600_000 }, 'a', TEN_MIN, T0);
    expect(p.timeoutMs).toBe(300_000);
    expect(p.log[0]).toMatchObject({ level: 'warn', node: 'a' });
    expect(p.log[0].message).toContain('capped to the ceiling of 300000 ms');
  });

  it('a node longer than 30 s gets a 30 s heartbeat timeout, so a worker that died under it is noticed then', () => {
    expect(nodePolicy({}, 'a', TEN_MIN, T0).activity).not.toHaveProperty('heartbeatTimeout');
    expect(nodePolicy({ timeout_ms: 30_000 }, 'a', TEN_MIN, T0).activity).not.toHaveProperty('heartbeatTimeout');
    expect(nodePolicy({ timeout_ms: 120_000 }, 'a', TEN_MIN, T0).activity).toMatchObject({ startToCloseTimeout: 120_000, heartbeatTimeout: 30_000 });
  });

  it('trims the timeout to the time left in the run and logs it', () => {
    const p = nodePolicy({ timeout_ms: 120_000 }, 'a', 45_000, T0);
    expect(p.timeoutMs).toBe(45_000);
    expect(p.activity.scheduleToCloseTimeout).toBe(45_000);
    expect(p.log.map((l) => l.message).join()).toContain('trimmed to the 45000 ms left');
  });
});

describe('retry attempts', () => {
  it('defaults to one attempt', () => {
    expect(nodePolicy({}, 'a', TEN_MIN, T0).activity.retry.maximumAttempts).toBe(1);
  });

  it('caps max_attempts above 5 at 5 and logs it', () => {
    const p = nodePolicy({ timeout_ms: 1_000, retry: { max_attempts: 9 } }, 'a', TEN_MIN, T0);
    expect(p.maxAttempts).toBe(5);
    expect(p.activity.retry.maximumAttempts).toBe(5);
    expect(p.log).toHaveLength(1);
    expect(p.log[0].message).toContain('capped to the ceiling of 5');
  });

  it('lowers attempts so attempts x timeout (with the waits between) fits the time left', () => {
    const p = nodePolicy({ timeout_ms: 100_000, retry: { max_attempts: 4, backoff_ms: 0 } }, 'a', 250_000, T0);
    expect(p.maxAttempts).toBe(2);
    expect(p.log[0].message).toContain('lowered to 2');
    // timeout 600000 and 9 attempts: capped twice, then only one 5-minute attempt fits 10 minutes.
    const big = nodePolicy({ timeout_ms: 600_000, retry: { max_attempts: 9 } }, 'b', TEN_MIN, T0);
    expect(big.timeoutMs).toBe(300_000);
    expect(big.maxAttempts).toBe(1);
    expect(big.log).toHaveLength(3);
  });
});

describe('forEach items', () => {
  it('defaults to 1,000 items and logs the truncation of a longer array', () => {
    const r = forEachCount(1_500, undefined, 'each', T0);
    expect(r.count).toBe(1_000);
    expect(r.log[0].message).toBe('forEach items truncated from 1500 to 1000');
  });

  it('caps max_items at the hard maximum of 10,000', () => {
    const r = forEachCount(12_000, 20_000, 'each', T0);
    expect(r.count).toBe(10_000);
    expect(r.log.map((l) => l.message)).toEqual(['max_items 20000 capped to the hard maximum of 10000', 'forEach items truncated from 12000 to 10000']);
  });

  it('keeps a short array whole with nothing logged', () => {
    expect(forEachCount(10, 5_000, 'each', T0)).toEqual({ count: 10, log: [] });
  });
});

it('child-run depth (flow.call and forEach alike): 10 is allowed, 11 is refused', () => {
  expect(childDepthError(10, 'flow.call')).toBeUndefined();
  expect(childDepthError(10, 'forEach')).toBeUndefined();
  expect(childDepthError(11, 'flow.call')).toBe('flow.call nesting depth 11 exceeds the maximum of 10');
  expect(childDepthError(11, 'forEach')).toContain('forEach child run nesting depth 11 exceeds the maximum of 10');
});

it('the worker has twice the activity slots the largest plan\'s account can hold (50 runs x width 10)', () => {
  expect(WORKER_ACTIVITY_SLOTS).toBe(1_000);
});

it('node execution cap: the 100th execution runs, the 101st fails naming the node', () => {
  expect(executionCapError('loop', 100)).toBeUndefined();
  expect(executionCapError('loop', 101)).toBe('Node "loop" reached the node execution cap of 100 executions per run');
});

it('step output: 10 MB passes, one byte more fails', () => {
  expect(stepOutputError('n', 10 * 1024 * 1024)).toBeUndefined();
  expect(stepOutputError('n', 10 * 1024 * 1024 + 1)).toContain('step output limit');
});

it('run output: 100 MB passes, one byte more fails', () => {
  expect(runOutputError(100 * 1024 * 1024)).toBeUndefined();
  expect(runOutputError(100 * 1024 * 1024 + 1)).toContain('limit per run');
});

it('a run has 10 minutes of wall clock', () => {
  expect(runStartOptions().workflowExecutionTimeout).toBe(600_000);
});

it('continues-as-new at 2,000 history events or when Temporal suggests it', () => {
  expect(shouldContinueAsNew({ continueAsNewSuggested: false, historyLength: 1_999 })).toBe(false);
  expect(shouldContinueAsNew({ continueAsNewSuggested: false, historyLength: 2_000 })).toBe(true);
  expect(shouldContinueAsNew({ continueAsNewSuggested: true, historyLength: 10 })).toBe(true);
});
