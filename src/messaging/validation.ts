/**
 * Validation services: named sets of rules, each a JSON Schema for a publish's `data`, compiled
 * with ajv once per (service id, version) and cached. The stored document is read on each use
 * (cheap, and it is how a change made through another replica becomes visible); the compiled
 * validators are what is cached.
 */
import type { ValidateFunction } from 'ajv';
import { userSchemaAjv } from '../json-schema';
import { BadRequestError } from '../errors';
import type { ServiceRule } from './schemas';
import type { ActionResult, ServiceDefinitions, ServiceDoc, ValidationOutcome } from './records';

export interface CompiledService { version: number; rules: Array<{ name: string; validate: ValidateFunction }> }

/**
 * RE2 instructions all of a service's patterns may compile to together (json-schema.ts): every
 * message of an entity with the service runs all of them.
 */
export const SERVICE_PATTERN_BUDGET = 4_000;

/** Compiles every rule; a schema ajv cannot compile is a 400 naming the rule. */
export function compileRules(rules: ServiceRule[], version = 0): CompiledService {
  // One ajv per service version: ajv keeps every schema it compiled, so a shared instance
  // would grow with every edit of every service. Patterns run on RE2 (json-schema.ts).
  const ajv = userSchemaAjv({ allErrors: true }, { total: SERVICE_PATTERN_BUDGET });
  const names = new Set<string>();
  const compiled: CompiledService = { version, rules: [] };
  for (const rule of rules) {
    if (names.has(rule.name)) throw new BadRequestError(`rule name "${rule.name}" is used twice`);
    names.add(rule.name);
    let validate: ValidateFunction;
    try {
      validate = ajv.compile(rule.schema);
    } catch (err) {
      throw new BadRequestError(`rule "${rule.name}" is not a valid JSON Schema: ${err instanceof Error ? err.message : String(err)}`);
    }
    // An "$async" schema compiles to a function returning a Promise, which would count as a pass.
    if ((validate as { $async?: boolean }).$async) throw new BadRequestError(`rule "${rule.name}" uses "$async"; rules are checked synchronously, remove it`);
    compiled.rules.push({ name: rule.name, validate });
  }
  return compiled;
}

/** Runs compiled rules on `data`. */
export function runRules(compiled: CompiledService, data: Record<string, unknown>): ValidationOutcome {
  const actionResults: ActionResult[] = compiled.rules.map((r) => {
    const passed = r.validate(data) as boolean;
    const errors = passed ? [] : (r.validate.errors ?? []).map((e) => `data${e.instancePath.replace(/\//g, '.')} ${e.message ?? 'is invalid'}`);
    return { rule: r.name, passed, errors };
  });
  return { result: actionResults.every((a) => a.passed) ? 'passed' : 'failed', actionResults };
}

/** Where a service's rules run on a message: threads of their own (validation-pool.ts), or here in tests. */
export interface RuleRunner {
  check(accountId: string, service: ServiceDoc, data: Record<string, unknown>): Promise<ValidationOutcome>;
}

export class ServiceValidator {
  constructor(private readonly store: ServiceDefinitions, private readonly runner: RuleRunner) {}

  /** Compiles every rule (at a service's create or update); a schema ajv cannot compile is a 400 naming the rule. */
  compile(rules: ServiceRule[], version = 0): CompiledService {
    return compileRules(rules, version);
  }

  /** Runs the service's rules on `data`; `skipped` when the service no longer exists. */
  async validate(accountId: string, serviceId: string, data: Record<string, unknown>): Promise<ValidationOutcome> {
    const doc = await this.store.findService(accountId, serviceId);
    if (!doc) return { result: 'skipped' };
    return this.runner.check(accountId, doc, data);
  }
}

/** Compiled services kept per thread (or process), by id and version. */
export class CompiledCache {
  private readonly cache = new Map<string, CompiledService>();
  constructor(private readonly max = 1_000) {}

  of(doc: Pick<ServiceDoc, '_id' | 'version' | 'rules'>): CompiledService {
    const hit = this.cache.get(doc._id);
    if (hit && hit.version === doc.version) return hit;
    const compiled = compileRules(doc.rules, doc.version);
    if (this.cache.size >= this.max) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(doc._id, compiled);
    return compiled;
  }
}

/** Rules run on the calling thread: for tests and tools only, never where requests are served. */
export class InlineRuleRunner implements RuleRunner {
  private readonly compiled = new CompiledCache();
  async check(_accountId: string, service: ServiceDoc, data: Record<string, unknown>): Promise<ValidationOutcome> {
    return runRules(this.compiled.of(service), data);
  }
}
