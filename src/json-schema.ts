/**
 * The one ajv instance, shared by HTTP routes and the message pipeline (HTTP and MQTT). Schemas
 * are plain JSON Schema objects, the single source for validation and for the OpenAPI document.
 */
import Ajv, { ErrorObject, Options, ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types';
import { RE2JS } from 're2js';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats';
import { FIXED_LIMITS } from './accounts/plans';
import { BadRequestError } from './errors';

export type JsonSchema = Record<string, unknown>;

/**
 * RFC 3339 date-time that JavaScript can also represent. ajv-formats accepts a leap second
 * (23:59:60) and an hour-only offset (+01), which `new Date()` turns into Invalid Date: stored as
 * 1970 or thrown later as a RangeError. Such a timestamp is refused up front instead.
 */
const rfc3339 = fullFormats['date-time'] as { validate: (s: string) => boolean; compare: (a: string, b: string) => number | undefined };
const dateTime = { type: 'string' as const, validate: (s: string) => rfc3339.validate(s) && !Number.isNaN(Date.parse(s)), compare: rfc3339.compare };

// strictNumbers: `1e309` in a JSON body parses as Infinity, which no number field may hold (it
// would be stored as null).
export const ajv = new Ajv({ allErrors: false, strict: false, useDefaults: true, strictNumbers: true });
addFormats(ajv);
ajv.addFormat('date-time', dateTime);
/** Query strings arrive as text: this instance coerces "10" to 10 and "true" to true. */
export const ajvQuery = new Ajv({ allErrors: false, strict: false, useDefaults: true, coerceTypes: true });
addFormats(ajvQuery);
ajvQuery.addFormat('date-time', dateTime);

/**
 * `pattern` and `patternProperties` of schemas that users write (workflow input schemas, message
 * validation rules) run on RE2 (re2js: linear time, no backtracking). With JavaScript's engine,
 * `"pattern": "^(a+)+$"` against 30 characters held the event loop of the process that serves
 * every account for seconds to hours. RE2 refuses what it cannot run in linear time
 * (backreferences, lookaround): such a schema is refused when it is saved, with RE2's reason.
 */
const re2: RegExpEngine = Object.assign(
  // ajv keys compiled patterns by their toString(): RE2JS answers its pattern, so two patterns never share one.
  (pattern: string) => RE2JS.compile(pattern),
  { code: 'require("re2js").RE2JS.compile' },
);

/** An ajv for schemas that users supply: their patterns on RE2 (see above), formats as ours. */
export function userSchemaAjv(options: Options = {}): Ajv {
  const a = new Ajv({ strict: false, ...options, code: { ...options.code, regExp: re2 } });
  addFormats(a);
  a.addFormat('date-time', dateTime);
  return a;
}

/**
 * The `offset` of every paged list: a query value like `1e400` coerces to Infinity and `1e300` is
 * finite but absurd; both are 400 here rather than a database error later.
 */
export const pageOffsetProperty = { type: 'integer', minimum: 0, maximum: FIXED_LIMITS.listOffsetMax, default: 0 } as const;

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

/**
 * The structural checks every JSON request body and every MQTT message passes before its schema:
 * nesting depth (one walk without recursion, so hostile input cannot blow the stack), and no NUL character in an object
 * key. BSON cannot encode such a key, so storing it would fail late, after the message had been
 * charged, as an internal error.
 */
export function checkJsonShape(value: unknown): void {
  const limit = FIXED_LIMITS.jsonNestingDepth;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== 'object') continue;
    if (d > limit) throw new BadRequestError(`JSON nesting exceeds ${limit} levels`, undefined, 'json_too_deep');
    if (Array.isArray(v)) {
      for (const child of v) if (child !== null && typeof child === 'object') stack.push([child, d + 1]);
      continue;
    }
    for (const child of Object.values(v as Record<string, unknown>)) {
      if (child !== null && typeof child === 'object') stack.push([child, d + 1]);
    }
  }
}

/** One problem in a request, as the 422 answers list them (`nodes[3].config.url`, `data.reading`). */
export interface ValidationDetail { path: string; message: string }

/**
 * The first place nested deeper than the JSON nesting limit, or holding a number JSON cannot keep
 * (`1e309` parses as Infinity and would be stored as null), walked without recursion.
 */
export function jsonShapeProblem(value: unknown, limit = FIXED_LIMITS.jsonNestingDepth): ValidationDetail | undefined {
  const stack: Array<[unknown, number, string]> = [[value, 1, '']];
  while (stack.length) {
    const [v, d, p] = stack.pop() as [unknown, number, string];
    if (typeof v === 'number' && !Number.isFinite(v)) return { path: p, message: 'must be a finite number' };
    if (v === null || typeof v !== 'object') continue;
    if (d > limit) return { path: p, message: `JSON nesting exceeds ${limit} levels` };
    if (Array.isArray(v)) v.forEach((c, i) => stack.push([c, d + 1, `${p}[${i}]`]));
    else for (const [k, c] of Object.entries(v as Record<string, unknown>)) stack.push([c, d + 1, p ? `${p}.${k}` : k]);
  }
  return undefined;
}
