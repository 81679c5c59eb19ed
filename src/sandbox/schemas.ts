/** The `python` node's config (docs/contract.md §7 "Node kinds"); the interpreter validates definitions with it. */
import type { FromSchema } from 'json-schema-to-ts';

export const pythonConfigSchema = {
  type: 'object',
  required: ['code'],
  additionalProperties: false,
  properties: {
    code: {
      type: 'string', minLength: 1, maxLength: 256 * 1024,
      description: 'CPython 3 source run in the jail; `input` holds the node input, the JSON value left in `result` is the output (with captured stdout)',
    },
  },
} as const;
export type PythonConfig = FromSchema<typeof pythonConfigSchema>;
