/**
 * Validation services (src/messaging/validation.ts): rules are user-supplied JSON Schemas for a
 * publish's `data`, compiled per (service id, version) and cached. The store is an in-memory fake
 * holding only what `validate` reads (findService).
 */
import Ajv from 'ajv';
import { AppError } from '../../../src/errors';
import type { ServiceRule } from '../../../src/messaging/schemas';
import type { MessageStore, ServiceDoc } from '../../../src/messaging/records';
import { CompiledCache, InlineRuleRunner, runRules, ServiceValidator } from '../../../src/messaging/validation';

function fakeStore() {
  const docs = new Map<string, ServiceDoc>();
  const reads: string[][] = [];
  const store = {
    findService: async (accountId: string, id: string) => {
      reads.push([accountId, id]);
      const d = docs.get(id);
      return d && d.accountId === accountId ? d : null;
    },
  };
  const put = (id: string, rules: ServiceRule[], version = 1, accountId = 'acc1') => {
    docs.set(id, { _id: id, accountId, name: `svc-${id}`, rules, version, createdAt: new Date(0), updatedAt: new Date(0) });
  };
  return { store: store as unknown as MessageStore, put, reads, docs };
}

const tempRule: ServiceRule = {
  name: 'temp-range',
  schema: { type: 'object', required: ['temp'], properties: { temp: { type: 'number', minimum: -40, maximum: 85 } } },
};
const unitRule: ServiceRule = {
  name: 'unit',
  schema: { type: 'object', properties: { unit: { enum: ['C', 'F'] } } },
};

function thrown(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected a throw');
}

describe('compile', () => {
  test('compiles every rule, in order', () => {
    const c = new ServiceValidator(fakeStore().store, new InlineRuleRunner()).compile([tempRule, unitRule], 3);
    expect(c.version).toBe(3);
    expect(c.rules.map((r) => r.name)).toEqual(['temp-range', 'unit']);
    expect(c.rules[0].validate({ temp: 20 })).toBe(true);
    expect(c.rules[0].validate({ temp: 200 })).toBe(false);
  });

  test('an empty rule list compiles to nothing', () => {
    expect(new ServiceValidator(fakeStore().store, new InlineRuleRunner()).compile([]).rules).toEqual([]);
  });

  test('a rule name used twice is a 400 naming it', () => {
    const e = thrown(() => new ServiceValidator(fakeStore().store, new InlineRuleRunner()).compile([tempRule, { ...unitRule, name: 'temp-range' }]));
    expect(e.status).toBe(400);
    expect(e.message).toBe('rule name "temp-range" is used twice');
  });

  test.each([
    ['an unknown type', { type: 'banana' }],
    ['a non-array required', { type: 'object', required: 'temp' }],
    ['a negative maxLength', { type: 'string', maxLength: -1 }],
    ['an invalid regex pattern', { type: 'string', pattern: '(' }],
    ['an unresolvable remote $ref', { $ref: 'http://169.254.169.254/latest/meta-data#' }],
    ['an unresolvable local $ref', { $ref: '#/definitions/missing' }],
  ])('%s is a 400 naming the rule', (_what, schema) => {
    const e = thrown(() => new ServiceValidator(fakeStore().store, new InlineRuleRunner()).compile([tempRule, { name: 'bad rule', schema }]));
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/^rule "bad rule" is not a valid JSON Schema: /);
  });

  // Found by an outside probe: one pattern of twenty (?:[ab]{0,1000}) (40,000 RE2 instructions)
  // held the event loop 2.3 s per 4 KB message, for every account.
  test('a pattern too large for RE2 to run cheaply, or patterns too large together, are a 400 naming the rule', () => {
    const v = new ServiceValidator(fakeStore().store, new InlineRuleRunner());
    const huge = { name: 'huge', schema: { type: 'object', properties: { s: { type: 'string', pattern: `^${'(?:[ab]{0,1000})'.repeat(20)}$` } } } };
    const e = thrown(() => v.compile([tempRule, huge]));
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/^rule "huge" is not a valid JSON Schema: pattern .* compiles to \d+ RE2 instructions; at most 1000/);
    // Each of these is allowed alone (about 800 instructions); six of them together are not.
    const medium = (i: number) => ({ name: `m${i}`, schema: { type: 'object', properties: { [`s${i}`]: { type: 'string', pattern: `^${'(?:[ab]{0,100})'.repeat(4)}x${i}$` } } } });
    expect(() => v.compile([medium(0)])).not.toThrow();
    const together = thrown(() => v.compile([0, 1, 2, 3, 4, 5].map(medium)));
    expect(together.message).toMatch(/together compile to more than 4000 RE2 instructions/);
    // Everyday patterns are far below the bounds.
    const everyday = { name: 'ids', schema: { type: 'object', properties: { id: { type: 'string', pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' }, mail: { type: 'string', pattern: '^[^@]+@[^@]+\\.[a-z]{2,}$' } } } };
    expect(() => v.compile([tempRule, everyday])).not.toThrow();
  });

  test('two rules declaring the same $id do not collide across services (one ajv per compile)', () => {
    const v = new ServiceValidator(fakeStore().store, new InlineRuleRunner());
    const rule = { name: 'a', schema: { $id: 'https://example.com/s', type: 'object' } };
    expect(() => v.compile([rule])).not.toThrow();
    expect(() => v.compile([rule])).not.toThrow();
    // Within one service the duplicate id is refused as a 400, not a 500.
    const e = thrown(() => v.compile([rule, { name: 'b', schema: { $id: 'https://example.com/s', type: 'string' } }]));
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/^rule "b"/);
  });
});

describe('validate', () => {
  test('no such service (deleted, or another account\'s id) → skipped, without actionResults', async () => {
    const f = fakeStore();
    f.put('svc1', [tempRule], 1, 'acc2');
    const v = new ServiceValidator(f.store, new InlineRuleRunner());
    expect(await v.validate('acc1', 'svc1', { temp: 1 })).toEqual({ result: 'skipped' });
    expect(await v.validate('acc1', 'nope', { temp: 1 })).toEqual({ result: 'skipped' });
    expect(f.reads).toEqual([['acc1', 'svc1'], ['acc1', 'nope']]);
  });

  test('all rules pass → passed with one result per rule', async () => {
    const f = fakeStore();
    f.put('svc1', [tempRule, unitRule]);
    expect(await new ServiceValidator(f.store, new InlineRuleRunner()).validate('acc1', 'svc1', { temp: 21.5, unit: 'C' })).toEqual({
      result: 'passed',
      actionResults: [{ rule: 'temp-range', passed: true, errors: [] }, { rule: 'unit', passed: true, errors: [] }],
    });
  });

  test('one failing rule → failed; errors are "data.<path> <message>", all errors of the rule listed', async () => {
    const f = fakeStore();
    f.put('svc1', [tempRule, unitRule]);
    const r = await new ServiceValidator(f.store, new InlineRuleRunner()).validate('acc1', 'svc1', { temp: 200, unit: 'K' });
    expect(r.result).toBe('failed');
    expect(r.actionResults).toEqual([
      { rule: 'temp-range', passed: false, errors: ['data.temp must be <= 85'] },
      { rule: 'unit', passed: false, errors: ['data.unit must be equal to one of the allowed values'] },
    ]);
  });

  test('a missing required property is reported at the root as "data ..."', async () => {
    const f = fakeStore();
    f.put('svc1', [tempRule]);
    const r = await new ServiceValidator(f.store, new InlineRuleRunner()).validate('acc1', 'svc1', {});
    expect(r.actionResults?.[0].errors).toEqual(["data must have required property 'temp'"]);
  });

  test('nested and array paths use dots', async () => {
    const f = fakeStore();
    f.put('svc1', [{ name: 'n', schema: { properties: { a: { properties: { b: { type: 'array', items: { type: 'integer' } } } } } } }]);
    const r = await new ServiceValidator(f.store, new InlineRuleRunner()).validate('acc1', 'svc1', { a: { b: [1, 'x', 2.5] } });
    expect(r.actionResults?.[0].errors).toEqual(['data.a.b.1 must be integer', 'data.a.b.2 must be integer']);
  });

  test('allErrors: every violation of one rule is listed, not only the first', async () => {
    const f = fakeStore();
    f.put('svc1', [{ name: 'r', schema: { type: 'object', required: ['a', 'b', 'c'] } }]);
    const r = await new ServiceValidator(f.store, new InlineRuleRunner()).validate('acc1', 'svc1', {});
    expect(r.actionResults?.[0].errors).toHaveLength(3);
  });

  test('a service with no rules passes everything', async () => {
    const f = fakeStore();
    f.put('svc1', []);
    expect(await new ServiceValidator(f.store, new InlineRuleRunner()).validate('acc1', 'svc1', { anything: 1 })).toEqual({ result: 'passed', actionResults: [] });
  });

  test('formats are enforced (ajv-formats) and unicode strings are measured in code points', async () => {
    const f = fakeStore();
    f.put('svc1', [{ name: 'f', schema: { properties: { at: { type: 'string', format: 'date-time' }, s: { type: 'string', maxLength: 2 } } } }]);
    const v = new ServiceValidator(f.store, new InlineRuleRunner());
    expect((await v.validate('acc1', 'svc1', { at: '2026-01-01T00:00:00Z', s: '😀😀' })).result).toBe('passed');
    expect((await v.validate('acc1', 'svc1', { at: 'yesterday' })).result).toBe('failed');
    expect((await v.validate('acc1', 'svc1', { s: '😀😀😀' })).result).toBe('failed');
  });

  test('hostile data (a JSON-parsed __proto__ key) is validated without polluting prototypes', async () => {
    const f = fakeStore();
    f.put('svc1', [{ name: 'no-admin', schema: { not: { required: ['admin'] } } }]);
    const data = JSON.parse('{"__proto__": {"admin": true}, "x": 1}') as Record<string, unknown>;
    const r = await new ServiceValidator(f.store, new InlineRuleRunner()).validate('acc1', 'svc1', data);
    expect(r.result).toBe('passed');
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});

describe('cache', () => {
  const doc = (id: string, version: number, rules = [tempRule]) => ({ _id: id, version, rules });

  test('compiled once per (id, version): a new version recompiles, the same version does not', async () => {
    const c = new CompiledCache();
    const first = c.of(doc('svc1', 1));
    expect(c.of(doc('svc1', 1))).toBe(first);
    // An edit through another replica: same id, new version, stricter rule.
    const stricter = c.of(doc('svc1', 2, [{ name: 'temp-range', schema: { type: 'object', properties: { temp: { maximum: 0 } } } }]));
    expect(stricter).not.toBe(first);
    expect(runRules(stricter, { temp: 1 }).result).toBe('failed');
  });

  test('bounded: the oldest entry is evicted first', () => {
    const c = new CompiledCache(3);
    const trivial = [{ name: 'r', schema: { type: 'object' } }];
    const kept = [0, 1, 2].map((i) => c.of(doc(`s${i}`, 1, trivial)));
    expect(c.of(doc('s1', 1, trivial))).toBe(kept[1]);
    c.of(doc('s3', 1, trivial)); // evicts s0
    expect(c.of(doc('s1', 1, trivial))).toBe(kept[1]);
    expect(c.of(doc('s0', 1, trivial))).not.toBe(kept[0]);
  });
});

describe('asynchronous schemas', () => {
  /**
   * ajv compiles a `"$async": true` schema to a function returning a Promise. Treated as a boolean
   * it is truthy, so invalid data would be reported `passed` (and trigger flows) while the Promise
   * rejected unobserved. Such rules are refused when the service is created or edited.
   */
  it('refuses an "$async" rule, which would otherwise pass every message', async () => {
    const v = new ServiceValidator(fakeStore().store, new InlineRuleRunner());
    expect(() => v.compile([{ name: 'needs-temp', schema: { $async: true, type: 'object', required: ['temp'] } }]))
      .toThrow(expect.objectContaining({ status: 400, message: expect.stringContaining('$async') }));
    const f = fakeStore();
    f.put('svc1', [{ name: 'needs-temp', schema: { $async: true, type: 'object', required: ['temp'] } }]);
    await expect(new ServiceValidator(f.store, new InlineRuleRunner()).validate('acc1', 'svc1', {})).rejects.toMatchObject({ status: 400 });
  });
});
