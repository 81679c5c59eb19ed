/**
 * JSONata evaluation and `{{ }}` templating themselves: pure functions, run on an expression
 * thread (expression-pool.ts), never on the thread that serves requests. JSONata's own guards
 * (time, stack depth, sequence length) fail most hostile expressions early; the pool's hard
 * limits (thread terminated past the node's timeout or its heap) catch the rest, such as a
 * backtracking regular expression inside one `$match`.
 */
import jsonata from 'jsonata';
import { FIXED_LIMITS } from '../accounts/plans';
import { fillVaultRefs } from '../vault/template';

/** What an expression sees: the run input, earlier node outputs, run variables, the forEach item. */
export interface ExpressionContext {
  input: unknown;
  nodes: Record<string, unknown>;
  vars: Record<string, unknown>;
  item?: unknown;
  index?: number;
}

const EXPRESSION_GUARDS = { stack: 500, sequence: 100_000 } as const;

/** A failed expression or template: the node fails, and a retry would fail the same way. */
export class ExpressionError extends Error {
  readonly retryable = false;
}

export function describeJsonataError(err: unknown): string {
  const e = err as { message?: string; code?: string; position?: number; value?: unknown };
  if (e.code === 'D1012') return `expression ran longer than its ${String(e.value)} ms budget`;
  if (e.code === 'D1011') return `expression nested deeper than ${String(e.value)} levels`;
  if (e.code === 'D2015') return `expression built a sequence longer than ${String(e.value)} items`;
  const where = typeof e.position === 'number' ? ` at position ${e.position}` : '';
  return `${e.message ?? String(err)}${e.code ? ` (${e.code})` : ''}${where}`;
}

/** Syntax check for validation (parsing only, linear in the text); returns the error text or undefined. */
export function expressionSyntaxError(expression: string): string | undefined {
  try {
    jsonata(expression);
    return undefined;
  } catch (err) {
    return describeJsonataError(err);
  }
}

export async function evaluateExpression(expression: string, context: ExpressionContext, timeoutMs: number): Promise<unknown> {
  let expr: jsonata.Expression;
  try {
    expr = jsonata(expression, { timeout: Math.max(1, timeoutMs), ...EXPRESSION_GUARDS });
  } catch (err) {
    throw new ExpressionError(`invalid expression: ${describeJsonataError(err)}`);
  }
  let value: unknown;
  try {
    value = await expr.evaluate(context);
  } catch (err) {
    throw new ExpressionError(describeJsonataError(err));
  }
  return toJson(value);
}

/**
 * JSONata sequences are arrays with extra flags; undefined (no match) becomes null in JSON. A value
 * past twice a node output's limit does not leave the thread (the node's own 10 MB check, which
 * names the node, answers everything below that).
 */
const MAX_RESULT_CHARS = 2 * FIXED_LIMITS.workflowStepOutputBytes;

function toJson(value: unknown): unknown {
  if (value === undefined) return null;
  const json = JSON.stringify(value);
  if (json === undefined) return null;
  if (json.length > MAX_RESULT_CHARS) {
    throw new ExpressionError(`expression produced ${json.length} characters; a node output may be at most ${FIXED_LIMITS.workflowStepOutputBytes} bytes`);
  }
  return JSON.parse(json) as unknown;
}

const TEMPLATE = /\{\{([\s\S]+?)\}\}/g;
const VAULT_EXPRESSION = /^\s*vault\.([A-Za-z_][A-Za-z0-9_]{0,63})\s*$/;

const hasTemplate = (s: string): boolean => /\{\{[\s\S]+?\}\}/.test(s);

/** Whether `value` holds a `{{ expr }}` that needs JSONata (not only vault references), outside `skipKeys`. */
export function hasExpressionTemplate(value: unknown, skipKeys: readonly string[]): boolean {
  if (typeof value === 'string') return [...value.matchAll(TEMPLATE)].some((m) => !VAULT_EXPRESSION.test(m[1]));
  if (Array.isArray(value)) return value.some((v) => hasExpressionTemplate(v, skipKeys));
  if (value !== null && typeof value === 'object') return Object.entries(value).some(([k, v]) => !skipKeys.includes(k) && hasExpressionTemplate(v, skipKeys));
  return false;
}

export interface TemplateOptions {
  /** Keys whose values are not templates (a python snippet, a JSONata expression): only the vault references in them are filled. */
  skipKeys?: readonly string[];
  /** Revealed vault values, name → plaintext, for the `{{ vault.NAME }}` the author wrote. */
  secrets?: Readonly<Record<string, string>>;
}

/**
 * The one place a `{{ expr }}` is resolved, in a single pass over the text the workflow's author
 * wrote. A string that is exactly one template takes the expression's JSON value (so
 * `"{{ nodes.a.body }}"` can be an object); otherwise each template is replaced by its text.
 * `{{ vault.NAME }}` becomes the secret only where it stands in the author's text: what an
 * expression yields is inserted as data and never read again, so a run input or a device message
 * holding `{{ vault.NAME }}` stays that literal text (docs/contract.md §7 "Templating").
 */
export async function resolveTemplates(value: unknown, context: ExpressionContext, timeoutMs: number, options: TemplateOptions = {}): Promise<unknown> {
  const secrets = options.secrets ?? {};
  const walk = async (v: unknown): Promise<unknown> => {
    if (typeof v === 'string') return resolveString(v, context, timeoutMs, secrets);
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      for (const x of v) out.push(await walk(x));
      return out;
    }
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = options.skipKeys?.includes(k) ? fillVaultRefs(x, secrets) : await walk(x);
      return out;
    }
    return v;
  };
  return walk(value);
}

function secretOf(secrets: Readonly<Record<string, string>>, name: string): string {
  const value = secrets[name];
  // The activity reveals every name the author's config holds before templating; a miss is a bug, not user input.
  if (value === undefined) throw new ExpressionError(`vault entry "${name}" was not revealed for this node`);
  return value;
}

async function resolveString(s: string, context: ExpressionContext, timeoutMs: number, secrets: Readonly<Record<string, string>>): Promise<unknown> {
  if (!hasTemplate(s)) return s;
  const whole = /^\{\{([\s\S]+?)\}\}$/.exec(s);
  if (whole && !whole[1].includes('}}')) {
    const vault = VAULT_EXPRESSION.exec(whole[1]);
    return vault ? secretOf(secrets, vault[1]) : evaluateExpression(whole[1], context, timeoutMs);
  }
  const parts: string[] = [];
  let last = 0;
  for (const m of s.matchAll(TEMPLATE)) {
    parts.push(s.slice(last, m.index));
    const vault = VAULT_EXPRESSION.exec(m[1]);
    if (vault) {
      parts.push(secretOf(secrets, vault[1]));
    } else {
      const v = await evaluateExpression(m[1], context, timeoutMs);
      parts.push(typeof v === 'string' ? v : v === null ? '' : JSON.stringify(v));
    }
    last = (m.index ?? 0) + m[0].length;
  }
  parts.push(s.slice(last));
  return parts.join('');
}
