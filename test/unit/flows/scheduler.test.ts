/** The run queue's cadence: one pass at start, then a pass every 5 s and a sweep every 30 s, until stopped. */
import { ADMISSION_PASS_EVERY_MS, RUN_SWEEP_EVERY_MS, startRunQueueScheduler } from '../../../src/flows/scheduler';
import { createLogger } from '../../../src/log';

describe('run queue scheduler', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const work = () => {
    const calls = { pass: 0, sweep: 0 };
    return { calls, work: { pass: async () => { calls.pass++; }, sweep: async () => { calls.sweep++; } } };
  };

  it('passes at start and on its cadence, sweeps every 30 s, and does nothing once stopped', () => {
    const { calls, work: w } = work();
    const s = startRunQueueScheduler(w, createLogger('silent'));
    expect(calls).toEqual({ pass: 1, sweep: 0 });
    jest.advanceTimersByTime(RUN_SWEEP_EVERY_MS);
    expect(calls).toEqual({ pass: 1 + RUN_SWEEP_EVERY_MS / ADMISSION_PASS_EVERY_MS, sweep: 1 });
    s.stop();
    jest.advanceTimersByTime(10 * RUN_SWEEP_EVERY_MS);
    expect(calls).toEqual({ pass: 1 + RUN_SWEEP_EVERY_MS / ADMISSION_PASS_EVERY_MS, sweep: 1 });
  });

  it('a failing pass is logged and the cadence goes on', async () => {
    let passes = 0;
    const warnings: string[] = [];
    const logger = createLogger('silent');
    logger.warn = ((_: unknown, msg: string) => { warnings.push(msg); }) as typeof logger.warn;
    const s = startRunQueueScheduler({ pass: async () => { passes++; throw new Error('db down'); }, sweep: async () => undefined }, logger);
    await Promise.resolve();
    jest.advanceTimersByTime(ADMISSION_PASS_EVERY_MS);
    await Promise.resolve();
    s.stop();
    expect(passes).toBe(2);
    expect(warnings).toEqual(['workflow run admission pass failed', 'workflow run admission pass failed']);
  });
});
