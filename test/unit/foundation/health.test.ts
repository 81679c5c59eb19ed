/** src/health.ts: every part asked at once; a part that throws or does not answer within 5 s is down, saying why. */
import { HEALTH_PART_TIMEOUT_MS, healthCheck } from '../../../src/health';

describe('health check', () => {
  afterEach(() => jest.useRealTimers());

  it('is ok when every part answers', async () => {
    const check = healthCheck(() => [{ name: 'database', probe: async () => undefined }, { name: 'temporal', probe: async () => undefined }]);
    expect(await check()).toEqual({ status: 'ok', parts: { database: { ok: true }, temporal: { ok: true } } });
  });

  it('names a failing part and one that does not answer in time, and asks the parts afresh each time', async () => {
    jest.useFakeTimers();
    let calls = 0;
    const check = healthCheck(() => {
      calls++;
      return [
        { name: 'database', probe: async () => undefined },
        { name: 'worker', probe: async () => { throw new Error('worker is STOPPED'); } },
        { name: 'temporal', probe: () => new Promise<void>(() => undefined) },
      ];
    });
    const report = check();
    await jest.advanceTimersByTimeAsync(HEALTH_PART_TIMEOUT_MS);
    expect(await report).toEqual({
      status: 'degraded',
      parts: { database: { ok: true }, worker: { ok: false, detail: 'worker is STOPPED' }, temporal: { ok: false, detail: 'no answer within 5 s' } },
    });
    void check();
    expect(calls).toBe(2);
  });

  it('an optional part is reported but leaves the status ok', async () => {
    const check = healthCheck(() => [
      { name: 'database', probe: async () => undefined },
      { name: 'clamd', optional: true, probe: async () => { throw new Error('connect ECONNREFUSED 127.0.0.1:1'); } },
    ]);
    expect(await check()).toEqual({ status: 'ok', parts: { database: { ok: true }, clamd: { ok: false, detail: 'connect ECONNREFUSED 127.0.0.1:1' } } });
  });
});
