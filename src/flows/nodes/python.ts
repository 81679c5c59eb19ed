/** `python`: a snippet in the jail (docs/contract.md §7 "Python snippet"); `input` is the run input, the output `{result, stdout}`. */
import { SnippetError } from '../../errors';
import { defineKind, NodeFailure } from './types';

export const pythonConfigSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['code'],
  properties: {
    code: { type: 'string', minLength: 1, maxLength: 64 * 1024, description: 'Python 3 source; reads `input`, sets `result` (JSON); not `{{ }}`-templated' },
  },
} as const;

export const pythonNode = defineKind<{ code: string }>({
  type: 'python',
  summary: 'Runs a Python snippet in a sandbox (no network, no host files); output {result, stdout}, capped by the plan',
  configSchema: pythonConfigSchema,
  example: { code: 'result = sum(o["total"] for o in input["orders"])\nprint("orders:", len(input["orders"]))' },
  // Python's own braces ({{ in f-strings) are not templates.
  rawKeys: ['code'],
  async execute(config, ctx, run, deps) {
    try {
      const out = await deps.snippets.runSnippet({ accountId: run.accountId, code: config.code, input: ctx.input, timeoutMs: run.timeoutMs, signal: run.signal });
      return { output: { result: out.result, stdout: out.stdout } };
    } catch (err) {
      // Only a missing sandbox may pass on another worker; the snippet's own failures repeat.
      if (err instanceof SnippetError) throw new NodeFailure(err.message, err.kind === 'unavailable');
      throw err;
    }
  },
});
