/**
 * JSONata expressions and `{{ expr }}` templating for workflow nodes. Runs inside activities only
 * (where JSONata's own guards work): every evaluation has a time limit, a stack-depth limit and a
 * sequence-length limit, so a hostile expression fails its node instead of hanging a worker.
 */
import jsonata from 'jsonata';

/** What an expression sees: the run input, earlier node outputs, run variables, the forEach item. */
export interface ExpressionContext {
  input: unknown;
  nodes: Record<string, unknown>;
  vars: Record<string, unknown>;
  item?: unknown;
  index?: number;
}

export const EXPRESSION_GUARDS = { stack: 500, sequence: 100_000 } as const;

export class ExpressionError extends Error {}

/** Syntax check for validation; returns the error text or undefined. */
export function expressionSyntaxError(expression: string): string | undefined {
  try {
    jsonata(expression);
    return undefined;
  } catch (err) {
    return describe(err);
  }
}

function describe(err: unknown): string {
  const e = err as { message?: string; code?: string; position?: number; value?: unknown };
  if (e.code === 'D1012') return `expression ran longer than its ${String(e.value)} ms budget`;
  if (e.code === 'D1011') return `expression nested deeper than ${String(e.value)} levels`;
  if (e.code === 'D2015') return `expression built a sequence longer than ${String(e.value)} items`;
  const where = typeof e.position === 'number' ? ` at position ${e.position}` : '';
  return `${e.message ?? String(err)}${e.code ? ` (${e.code})` : ''}${where}`;
}

export async function evaluate(expression: string, context: ExpressionContext, timeoutMs: number): Promise<unknown> {
  let expr: jsonata.Expression;
  try {
    expr = jsonata(expression, { timeout: Math.max(1, timeoutMs), ...EXPRESSION_GUARDS });
  } catch (err) {
    throw new ExpressionError(`invalid expression: ${describe(err)}`);
  }
  try {
    const value: unknown = await expr.evaluate(context);
    return normalize(value);
  } catch (err) {
    throw new ExpressionError(describe(err));
  }
}

/** JSONata sequences are arrays with extra flags; undefined (no match) becomes null in JSON. */
function normalize(value: unknown): unknown {
  if (value === undefined) return null;
  return JSON.parse(JSON.stringify(value)) as unknown;
}

const TEMPLATE = /\{\{([\s\S]+?)\}\}/g;

export const hasTemplate = (s: string): boolean => /\{\{[\s\S]+?\}\}/.test(s);

/**
 * The one place a `{{ expr }}` is resolved. A string that is exactly one template takes the
 * expression's JSON value (so `"{{ nodes.a.body }}"` can be an object); otherwise each template is
 * replaced by its text. `{{ vault.NAME }}` is left as written: the activity fills it in after
 * this (src/vault/template.ts), so a secret is never evaluated as an expression.
 */
export async function resolveTemplates(value: unknown, context: ExpressionContext, timeoutMs: number, skipKeys: readonly string[] = []): Promise<unknown> {
  if (typeof value === 'string') return resolveString(value, context, timeoutMs);
  if (Array.isArray(value)) return Promise.all(value.map((v) => resolveTemplates(v, context, timeoutMs)));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      out[k] = skipKeys.includes(k) ? v : await resolveTemplates(v, context, timeoutMs);
    }
    return out;
  }
  return value;
}

const VAULT_EXPRESSION = /^\s*vault\.[A-Za-z_][A-Za-z0-9_]{0,63}\s*$/;

async function resolveString(s: string, context: ExpressionContext, timeoutMs: number): Promise<unknown> {
  if (!hasTemplate(s)) return s;
  const whole = /^\{\{([\s\S]+?)\}\}$/.exec(s);
  if (whole && !whole[1].includes('}}') && !VAULT_EXPRESSION.test(whole[1])) return evaluate(whole[1], context, timeoutMs);
  const parts: string[] = [];
  let last = 0;
  for (const m of s.matchAll(TEMPLATE)) {
    parts.push(s.slice(last, m.index));
    if (VAULT_EXPRESSION.test(m[1])) {
      parts.push(m[0]);
      last = (m.index ?? 0) + m[0].length;
      continue;
    }
    const v = await evaluate(m[1], context, timeoutMs);
    parts.push(typeof v === 'string' ? v : v === null ? '' : JSON.stringify(v));
    last = (m.index ?? 0) + m[0].length;
  }
  parts.push(s.slice(last));
  return parts.join('');
}
