/** `transform`: a JSONata expression over {input, nodes, vars}; its value is the output. */
import { expressionSyntaxError } from '../expressions';
import { defineKind } from './types';

export const expressionConfigSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['expression'],
  properties: { expression: { type: 'string', minLength: 1, maxLength: 65536, description: 'JSONata over {input, nodes: {<id>: output}, vars}' } },
} as const;

export const checkExpression = (config: { expression: string }): Array<[string, string]> => {
  const err = expressionSyntaxError(config.expression);
  return err ? [['expression', `invalid JSONata: ${err}`]] : [];
};

export const transformNode = defineKind<{ expression: string }>({
  type: 'transform',
  summary: 'A JSONata expression; its value is the output',
  configSchema: expressionConfigSchema,
  example: { expression: '{ "celsius": nodes.fetch.body.temp, "hot": nodes.fetch.body.temp > 30 }' },
  rawKeys: ['expression'],
  check: checkExpression,
  async execute(config, ctx, run, deps) {
    return { output: await deps.expressions.evaluate(run.accountId, config.expression, ctx, run.timeoutMs, run.signal) };
  },
});
