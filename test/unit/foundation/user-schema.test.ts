/**
 * Schemas that users write (workflow input_schema, message validation rules) run their patterns
 * on RE2: a pattern that backtracks catastrophically in JavaScript's engine answers at once here
 * (with JavaScript's engine this validation would not end within the test's timeout), distinct
 * patterns stay distinct, and what RE2 cannot run in linear time is refused when compiled.
 */
import { userSchemaAjv } from '../../../src/json-schema';
import { compileInputSchema } from '../../../src/flows/validate';
import { InlineRuleRunner, ServiceValidator } from '../../../src/messaging/validation';

const hostile = `${'a'.repeat(5_000)}!`;

it('a catastrophic pattern in a workflow input_schema answers without backtracking', () => {
  const validate = compileInputSchema({ type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } });
  expect(validate({ s: hostile })).toBe(false);
  expect(validate.errors?.[0]).toMatchObject({ instancePath: '/s', keyword: 'pattern' });
  expect(validate({ s: 'aaaa' })).toBe(true);
});

it('a catastrophic pattern in a message validation rule answers without backtracking', () => {
  const compiled = new ServiceValidator({ findService: async () => null }, new InlineRuleRunner()).compile([{ name: 'r', schema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a|aa)+$' } } } }]);
  expect(compiled.rules[0].validate({ s: hostile })).toBe(false);
  expect(compiled.rules[0].validate({ s: 'aaa' })).toBe(true);
});

it('keeps each pattern its own (search semantics, patternProperties, unicode classes)', () => {
  const validate = userSchemaAjv().compile({
    type: 'object',
    properties: { t: { type: 'string', pattern: 'b' }, u: { type: 'string', pattern: '^\\p{L}+$' } },
    patternProperties: { '^x_': { type: 'number' } },
  });
  expect(validate({ t: 'abc', u: 'été', x_1: 3 })).toBe(true);
  expect(validate({ t: 'zzz' })).toBe(false);
  expect(validate({ x_1: 'not a number' })).toBe(false);
  expect(validate({ u: 'a1' })).toBe(false);
});

it('refuses, when the schema is compiled, what RE2 cannot run in linear time', () => {
  expect(() => compileInputSchema({ type: 'string', pattern: '(?=a)a' })).toThrow(/invalid or unsupported Perl syntax/);
  expect(() => new ServiceValidator({ findService: async () => null }, new InlineRuleRunner()).compile([{ name: 'back', schema: { type: 'string', pattern: '(a)\\1' } }]))
    .toThrow(/rule "back" is not a valid JSON Schema: .*invalid escape sequence/);
});
