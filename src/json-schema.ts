/**
 * The one ajv instance, shared by HTTP routes and the message pipeline (HTTP and MQTT). Schemas
 * are plain JSON Schema objects, the single source for validation and for the OpenAPI document.
 */
import Bourne from '@hapi/bourne';
import Ajv, { ErrorObject, Options, ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types';
import { RE2JS } from 're2js';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats';
import { FIXED_LIMITS } from './accounts/plans';
import { BadRequestError, PayloadTooLargeError } from './errors';

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
/**
 * RE2 runs in time linear in the input but also in the size of the compiled program, and that work
 * is synchronous: an outside probe's validation rule with one pattern of twenty `(?:[ab]{0,1000})`
 * (40,000 instructions) held the event loop 2.3 s per 4 KB message. A pattern compiles to at most
 * this many RE2 instructions (an e-mail pattern is 13, a semver one 65); `patternBudget` bounds
 * the sum over one ajv instance's patterns (a validation service's rules together).
 */
export const MAX_PATTERN_INSTRUCTIONS = 1_000;

/** RE2 instructions of a compiled pattern (re2js's program; undefined if its shape ever changes). */
const instructionsOf = (r: RE2JS): number | undefined =>
  (r as unknown as { re2Input?: { prog?: { inst?: unknown[] } } }).re2Input?.prog?.inst?.length;

function re2Engine(budget?: { total: number }): RegExpEngine {
  let spent = 0;
  return Object.assign(
    // ajv keys compiled patterns by their toString(): RE2JS answers its pattern, so two patterns never share one.
    (pattern: string) => {
      const r = RE2JS.compile(pattern);
      const n = instructionsOf(r) ?? 0;
      if (n > MAX_PATTERN_INSTRUCTIONS) {
        throw new Error(`pattern ${JSON.stringify(pattern.length > 80 ? `${pattern.slice(0, 80)}…` : pattern)} compiles to ${n} RE2 instructions; at most ${MAX_PATTERN_INSTRUCTIONS} (large counted repetitions such as {0,1000} cost the most)`);
      }
      spent += n;
      if (budget && spent > budget.total) {
        throw new Error(`the patterns together compile to more than ${budget.total} RE2 instructions (each message is checked against all of them)`);
      }
      return r;
    },
    { code: 'require("re2js").RE2JS.compile' },
  );
}

/**
 * An ajv for schemas that users supply: their patterns on RE2 (see above), formats as ours.
 * `patternBudget`: the most RE2 instructions all patterns compiled by this instance may take.
 */
export function userSchemaAjv(options: Options = {}, patternBudget?: { total: number }): Ajv {
  const a = new Ajv({ strict: false, ...options, code: { ...options.code, regExp: re2Engine(patternBudget) } });
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

/** One problem in a request, as the 422 answers list them (`nodes[3].config.url`, `data.reading`). */
export interface ValidationDetail { path: string; message: string }

/** A place in the walked value; the path is built from the chain only when a problem is found. */
interface Frame { v: unknown; d: number; up?: Frame; key?: string | number }
const pathOf = (f: Frame): string => {
  let p = '';
  for (let at: Frame | undefined = f; at?.up; at = at.up) p = typeof at.key === 'number' ? `[${at.key}]${p}` : `${at.up.up ? '.' : ''}${at.key}${p}`;
  return p;
};

/**
 * The first place nested deeper than the JSON nesting limit or, with `numbers` (the default),
 * holding a number JSON cannot keep (`1e309` parses as Infinity, which would be stored and
 * delivered as null). One walk without recursion, so hostile input cannot blow the stack.
 */
export function jsonShapeProblem(value: unknown, opts: { numbers?: boolean } = {}): (ValidationDetail & { code: 'json_too_deep' | 'number_out_of_range' }) | undefined {
  const limit = FIXED_LIMITS.jsonNestingDepth;
  const numbers = opts.numbers ?? true;
  const stack: Frame[] = [{ v: value, d: 1 }];
  while (stack.length) {
    const f = stack.pop() as Frame;
    const v = f.v;
    if (typeof v === 'number') {
      if (numbers && !Number.isFinite(v)) return { path: pathOf(f), message: 'must be a finite number', code: 'number_out_of_range' };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (f.d > limit) return { path: pathOf(f), message: `JSON nesting exceeds ${limit} levels`, code: 'json_too_deep' };
    if (Array.isArray(v)) v.forEach((c, i) => { if (typeof c === 'object' || (numbers && typeof c === 'number')) stack.push({ v: c, d: f.d + 1, up: f, key: i }); });
    else for (const [k, c] of Object.entries(v as Record<string, unknown>)) if (typeof c === 'object' || (numbers && typeof c === 'number')) stack.push({ v: c, d: f.d + 1, up: f, key: k });
  }
  return undefined;
}

/**
 * JSON a client sent outside an HTTP JSON body (an MQTT publish, a multipart field, a flow
 * trigger), parsed as the HTTP bodies are (co-body through @hapi/bourne): a `__proto__` key at
 * any depth is refused, not kept, so one input is judged the same on every transport. Throws
 * SyntaxError (message "Object contains forbidden prototype property" for that key).
 */
export function parseClientJson(text: string): unknown {
  return Bourne.parse(text, { protoAction: 'error' }) as unknown;
}

/**
 * The structural checks every JSON request body and every MQTT message passes before its schema,
 * as a 400: nesting depth (`json_too_deep`) and, with `numbers`, numbers JSON cannot keep
 * (`number_out_of_range`, naming the path). Routes leave numbers to their schemas (ajv's
 * strictNumbers); the message pipeline asks for them, since `data` is free-form.
 */
export function checkJsonShape(value: unknown, opts: { numbers?: boolean } = {}): void {
  const problem = jsonShapeProblem(value, { numbers: opts.numbers ?? false });
  if (!problem) return;
  if (problem.code === 'json_too_deep') throw new BadRequestError(problem.message, undefined, 'json_too_deep');
  throw new BadRequestError(`${problem.path || 'value'} ${problem.message}: a number such as 1e309 cannot be stored`, { path: problem.path }, 'number_out_of_range');
}

/**
 * The UTF-8 size of a JSON text (as a client sent it or as it is stored): 413 `payload_too_large`
 * with `refusal(bytes)` as the reason past `limit`, else the size. One rule for every JSON size
 * limit: message data (5 KB), a state table (64 KB), entity metadata (16 KB).
 */
export function jsonBytesWithin(text: string, limit: number, refusal: (bytes: number) => string): number {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limit) throw new PayloadTooLargeError(refusal(bytes), { limit });
  return bytes;
}
