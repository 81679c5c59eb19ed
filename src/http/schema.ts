/**
 * The one ajv instance. Route schemas are plain JSON Schema objects, the single source for
 * validation and for the OpenAPI document.
 */
import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

export type JsonSchema = Record<string, unknown>;

export const ajv = new Ajv({ allErrors: false, strict: false, useDefaults: true });
addFormats(ajv);
/** Query strings arrive as text: this instance coerces "10" to 10 and "true" to true. */
export const ajvQuery = new Ajv({ allErrors: false, strict: false, useDefaults: true, coerceTypes: true });
addFormats(ajvQuery);

const cache = new WeakMap<JsonSchema, ValidateFunction>();
const queryCache = new WeakMap<JsonSchema, ValidateFunction>();

export function validatorFor(schema: JsonSchema, forQuery = false): ValidateFunction {
  const c = forQuery ? queryCache : cache;
  let v = c.get(schema);
  if (!v) {
    v = (forQuery ? ajvQuery : ajv).compile(schema);
    c.set(schema, v);
  }
  return v;
}

/** One readable sentence from ajv's first error, e.g. "body.limit must be <= 100". */
export function describeAjvError(where: string, errors: ErrorObject[] | null | undefined): string {
  const e = errors?.[0];
  if (!e) return `${where} is invalid`;
  const at = `${where}${e.instancePath.replace(/\//g, '.')}`;
  if (e.keyword === 'additionalProperties') return `${at} has unknown field "${String(e.params.additionalProperty)}"`;
  if (e.keyword === 'required') return `${at} is missing required field "${String(e.params.missingProperty)}"`;
  if (e.keyword === 'enum') return `${at} must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`;
  return `${at} ${e.message ?? 'is invalid'}`;
}

/** Depth of nested objects/arrays, computed without recursion so hostile input cannot blow the stack. */
export function jsonDepth(value: unknown, stopAfter: number): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== 'object') continue;
    if (d > max) max = d;
    if (max > stopAfter) return max;
    for (const child of Array.isArray(v) ? v : Object.values(v as Record<string, unknown>)) {
      if (child !== null && typeof child === 'object') stack.push([child, d + 1]);
    }
  }
  return max;
}
