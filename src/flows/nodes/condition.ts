/** `condition`: a JSONata expression; a truthy value takes the `true` edges, else the `false` edges. */
import { checkExpression, expressionConfigSchema } from './transform';
import { defineKind } from './types';

export const conditionNode = defineKind<{ expression: string }>({
  type: 'condition',
  summary: 'A JSONata expression; output {result}; edges with when "true" or "false" are taken accordingly',
  configSchema: expressionConfigSchema,
  example: { expression: 'nodes.convert.celsius > 30' },
  rawKeys: ['expression'],
  check: checkExpression,
  async execute(config, ctx, run, deps) {
    const value = await deps.expressions.evaluate(run.accountId, config.expression, ctx, run.timeoutMs, run.signal);
    const result = Array.isArray(value) ? value.length > 0 : Boolean(value);
    return { output: { result }, branch: String(result) };
  },
});
