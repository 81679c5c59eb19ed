/** `switch`: a JSONata expression; the edge whose `when` equals the value is taken, else `default`. */
import { checkExpression, expressionConfigSchema } from './transform';
import { defineKind } from './types';

export const switchNode = defineKind<{ expression: string }>({
  type: 'switch',
  summary: 'A JSONata expression; output {value}; the edge whose when equals the value (as text) is taken, else the edge with when "default"',
  configSchema: expressionConfigSchema,
  example: { expression: 'input.kind' },
  rawKeys: ['expression'],
  check: checkExpression,
  async execute(config, ctx, run, deps) {
    const value = await deps.expressions.evaluate(run.accountId, config.expression, ctx, run.timeoutMs, run.signal);
    return { output: { value }, branch: typeof value === 'string' ? value : JSON.stringify(value) };
  },
});
