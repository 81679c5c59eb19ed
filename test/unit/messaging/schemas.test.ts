/**
 * Request schemas of the messaging API (src/messaging/schemas.ts), validated the way the routes
 * do (src/http/schema.ts: bodies strict, query strings coerced). These are the limits documented
 * in docs/messaging.md: page sizes, name patterns, tag limits, bulk and rule counts.
 */
import { validatorFor } from '../../../src/http/schema';
import { bulkBodySchema, entityPatchSchema } from '../../../src/entities/schemas';
import {
  batchBodySchema, checkMessagesQuerySchema, messageListQuerySchema, messageSchema,
  messageSearchSchema, messagesExportQuerySchema, serviceBodySchema, servicePatchSchema,
} from '../../../src/messaging/schemas';

const body = (schema: Record<string, unknown>) => {
  const v = validatorFor(schema);
  return (x: unknown) => v(structuredClone(x));
};
const query = (schema: Record<string, unknown>) => {
  const v = validatorFor(schema, true);
  return (q: Record<string, unknown>) => {
    const copy = { ...q };
    return { ok: v(copy), value: copy };
  };
};

describe('message (all five types share one schema; data presence is judged by the pipeline)', () => {
  const ok = body(messageSchema);
  test('accepts the documented shape', () => {
    expect(ok({ msg_type: 'publish', data: { a: 1 }, timestamp: '2026-01-01T00:00:00Z', dest: 'b', context: { tags: ['t'] } })).toBe(true);
    expect(ok({ msg_type: 'heartbeat' })).toBe(true);
  });
  test('unknown top-level fields are tolerated (forward compatibility), unknown msg_type is not', () => {
    expect(ok({ msg_type: 'publish', data: {}, extra: 1 })).toBe(true);
    expect(ok({ msg_type: 'alert', data: {} })).toBe(false);
  });
});

describe('batch body', () => {
  const ok = body(batchBodySchema);
  test('1 to 100 objects', () => {
    expect(ok([])).toBe(false);
    expect(ok([{}])).toBe(true);
    expect(ok(Array.from({ length: 100 }, () => ({})))).toBe(true);
    expect(ok(Array.from({ length: 101 }, () => ({})))).toBe(false);
  });
  test('the body must be an array; its entries are judged one by one by the pipeline, not here', () => {
    expect(ok({ 0: {} })).toBe(false);
    expect(ok('publish')).toBe(false);
    // A bad entry gets its own 400 in the results (decisions §5: one bad message does not fail the others).
    expect(ok([{}, 'publish', null, 7])).toBe(true);
  });
});

describe('check_messages query', () => {
  const q = query(checkMessagesQuerySchema);
  test('limit defaults to 1 and is coerced from the query string', () => {
    expect(q({})).toEqual({ ok: true, value: { limit: 1 } });
    expect(q({ limit: '100' })).toEqual({ ok: true, value: { limit: 100 } });
  });
  test.each(['0', '101', '-1', '1.5', 'abc', '1e3', ''])('limit=%j is refused', (limit) => {
    expect(q({ limit }).ok).toBe(false);
  });
  test('unknown parameters are refused', () => {
    expect(q({ limit: '1', $where: '1' }).ok).toBe(false);
  });
});

describe('messages list query', () => {
  const q = query(messageListQuerySchema);
  test('defaults: limit 10, offset 0', () => {
    expect(q({})).toEqual({ ok: true, value: { limit: 10, offset: 0 } });
  });
  test.each(['sensor-1', 'a', 'A_b.c-9', 'x'.repeat(64)])('entity_name %j is accepted', (name) => {
    expect(q({ entity_name: name }).ok).toBe(true);
  });
  test.each(['', 'x'.repeat(65), '../other', 'a/b', 'a b', 'ünï', '{"$ne":null}', 'a\u0000', 'a\n'])('entity_name %j is refused', (name) => {
    expect(q({ entity_name: name }).ok).toBe(false);
  });
  test('offset must be a non-negative integer; limit 1..100', () => {
    expect(q({ offset: '-1' }).ok).toBe(false);
    expect(q({ offset: '1000000' }).ok).toBe(true);
    expect(q({ limit: '101' }).ok).toBe(false);
  });
});

describe('messages search body', () => {
  const ok = body(messageSearchSchema);
  test('accepts the documented fields', () => {
    expect(ok({ entity_name: 'a', tags: ['x'], from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00+01:00', limit: 5, offset: 0 })).toBe(true);
  });
  test.each([
    ['11 tags', { tags: Array.from({ length: 11 }, () => 'x') }],
    ['a date without a zone', { from: '2026-01-01T00:00:00' }],
    ['a unix timestamp', { to: 1700000000 }],
    ['an operator object as tags', { tags: { $ne: null } }],
    ['an unknown field', { sort: { _id: 1 } }],
    ['a string limit (bodies are not coerced)', { limit: '5' }],
  ])('%s is refused', (_what, b) => {
    expect(ok(b)).toBe(false);
  });
});

describe('bulk registration body', () => {
  const ok = body(bulkBodySchema);
  test('count 1..1000 with a prefix of at most 58 characters (prefix-1000 fits in 64)', () => {
    expect(ok({ count: 1000, prefix: 'p'.repeat(58) })).toBe(true);
    expect(ok({ count: 1001, prefix: 'p' })).toBe(false);
    expect(ok({ count: 0, prefix: 'p' })).toBe(false);
    expect(ok({ count: 1, prefix: 'p'.repeat(59) })).toBe(false);
    expect(ok({ count: 1, prefix: '' })).toBe(false);
  });
  test('entity list 1..1000, each with a string name', () => {
    expect(ok({ entities: [] })).toBe(false);
    expect(ok({ entities: Array.from({ length: 1001 }, (_, i) => ({ name: `e${i}` })) })).toBe(false);
    expect(ok({ entities: [{ tags: ['x'] }] })).toBe(false);
    expect(ok({ entities: [{ name: 5 }] })).toBe(false);
  });
  test('tags limits apply to request and entry tags', () => {
    expect(ok({ count: 1, prefix: 'p', tags: Array.from({ length: 11 }, () => 't') })).toBe(false);
    expect(ok({ entities: [{ name: 'a', tags: [''] }] })).toBe(false);
  });
});

describe('entity patch body', () => {
  const ok = body(entityPatchSchema);
  test('at least one known field; service may be null', () => {
    expect(ok({})).toBe(false);
    expect(ok({ service: null })).toBe(true);
    expect(ok({ tags: ['a'], metadata: { k: 1 }, role: 'default' })).toBe(true);
  });
  test.each([
    ['a protected field', { apiKeyId: 'x' }],
    ['statusTable', { statusTable: {} }],
    ['metadata as an array', { metadata: [] }],
    ['service as a number', { service: 1 }],
  ])('%s is refused', (_what, b) => {
    expect(ok(b)).toBe(false);
  });
});

describe('validation service bodies', () => {
  const ok = body(serviceBodySchema);
  const patch = body(servicePatchSchema);
  const rule = { name: 'r', schema: { type: 'object' } };
  test('name 1..100, at most 50 rules, each {name, schema object} only', () => {
    expect(ok({ name: 'svc', rules: [rule] })).toBe(true);
    expect(ok({ name: 'svc', rules: [] })).toBe(true);
    expect(ok({ name: '', rules: [] })).toBe(false);
    expect(ok({ name: 'n'.repeat(101), rules: [] })).toBe(false);
    expect(ok({ name: 'svc', rules: Array.from({ length: 51 }, (_, i) => ({ ...rule, name: `r${i}` })) })).toBe(false);
    expect(ok({ name: 'svc', rules: [{ ...rule, code: 'process.exit()' }] })).toBe(false);
    expect(ok({ name: 'svc', rules: [{ name: 'r', schema: true }] })).toBe(false);
    expect(ok({ name: 'svc', rules: [{ name: 'r', schema: [] }] })).toBe(false);
    expect(ok({ name: 'svc' })).toBe(false);
    expect(ok({ name: 'svc', rules: [], accountId: 'other' })).toBe(false);
  });
  test('patch needs at least one of name or rules', () => {
    expect(patch({})).toBe(false);
    expect(patch({ name: 'x' })).toBe(true);
    expect(patch({ version: 9 })).toBe(false);
  });
});

describe('export query', () => {
  const q = query(messagesExportQuerySchema);
  test('format defaults to csv; only csv or json', () => {
    expect(q({}).value).toEqual({ format: 'csv' });
    expect(q({ format: 'json' }).ok).toBe(true);
    expect(q({ format: 'xlsx' }).ok).toBe(false);
    expect(q({ format: 'CSV' }).ok).toBe(false);
  });
  test('from/to must be RFC 3339 with a zone; no other parameters', () => {
    expect(q({ from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00-05:00' }).ok).toBe(true);
    expect(q({ from: '2026-01-01' }).ok).toBe(false);
    expect(q({ accountId: 'other' }).ok).toBe(false);
  });
});

describe('timestamps JavaScript cannot represent', () => {
  // ajv-formats accepts a leap second and an hour-only offset as RFC 3339; `new Date()` makes both
  // Invalid Date (stored as 1970, or a RangeError later). Every date-time field refuses them.
  const unrepresentable = ['2016-12-31T23:59:60Z', '2026-01-01T10:00:00+01'];
  test.each(unrepresentable)('%s is refused in a message, a search body and export queries', (t) => {
    expect(body(messageSchema)({ msg_type: 'publish', data: {}, timestamp: t })).toBe(false);
    expect(body(messageSearchSchema)({ from: t })).toBe(false);
    expect(body(messageSearchSchema)({ to: t })).toBe(false);
    expect(query(messagesExportQuerySchema)({ format: 'csv', from: t }).ok).toBe(false);
  });
  test('ordinary RFC 3339 forms still pass', () => {
    for (const t of ['2026-01-01T10:00:00Z', '2026-01-01T10:00:00.123+01:00', '2026-01-01t10:00:00z']) {
      expect(body(messageSchema)({ msg_type: 'publish', data: {}, timestamp: t })).toBe(true);
      expect(query(messagesExportQuerySchema)({ format: 'csv', from: t }).ok).toBe(true);
    }
  });
});
