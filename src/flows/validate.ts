/**
 * Validation of a workflow definition (docs/contract.md §7 "Validation"): every problem found is one
 * `{path, message}` detail of the 422 answer, with paths like `nodes[3].config.url`.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { FIXED_LIMITS as L } from '../accounts/plans';
import { jsonShapeProblem, userSchemaAjv, validatorFor, type ValidationDetail } from '../json-schema';

export type { ValidationDetail };
import { analyzeGraph, graphDepth, GraphShape } from './graph';
import { nodeKind, NODE_TYPES } from './nodes';
import { definitionSchema, runBodySchema, RunBody, WorkflowDefinition } from './schemas';


const validateStructure = validatorFor(definitionSchema);
const validateRunBody = validatorFor(runBodySchema);

function pathOf(base: string, instancePath: string): string {
  const parts = instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let out = base;
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out ? `.${p}` : p;
  return out;
}

function ajvDetail(base: string, e: ErrorObject): ValidationDetail {
  if (e.keyword === 'additionalProperties') return { path: pathOf(base, e.instancePath), message: `unknown field "${String(e.params.additionalProperty)}"` };
  if (e.keyword === 'required') return { path: pathOf(base, e.instancePath), message: `missing required field "${String(e.params.missingProperty)}"` };
  if (e.keyword === 'enum') return { path: pathOf(base, e.instancePath), message: `must be one of ${(e.params.allowedValues as unknown[]).join(', ')}` };
  return { path: pathOf(base, e.instancePath), message: e.message ?? 'is invalid' };
}

/** Every node a run can reach from its start nodes (those with no incoming edge), loops included. */
function unreachableNodes(def: WorkflowDefinition, shape: GraphShape): ValidationDetail[] {
  const seen = new Set(shape.starts);
  const queue = [...shape.starts];
  for (let i = 0; i < queue.length; i++) {
    for (const ei of shape.outgoing.get(queue[i]) ?? []) {
      const to = def.edges[ei].to;
      if (!seen.has(to)) {
        seen.add(to);
        queue.push(to);
      }
    }
  }
  const why = shape.starts.length ? 'no path leads to it from a start node (a node with no incoming edge)' : 'the workflow has no start node (every node has an incoming edge)';
  return def.nodes.flatMap((n, i) => (seen.has(n.id) ? [] : [{ path: `nodes[${i}]`, message: `node "${n.id}" can never run: ${why}` }]));
}

/** Checks one node config against its kind's schema and extra rules. */
function checkConfig(type: string, config: unknown, base: string, details: ValidationDetail[], nested = false): void {
  const kind = nodeKind(type);
  if (!kind) {
    details.push({ path: `${base}.type`, message: `unknown node kind "${type}"; known kinds: ${NODE_TYPES.join(', ')}` });
    return;
  }
  if (nested && !kind.execute) {
    details.push({ path: `${base}.type`, message: `a forEach can apply a node kind that runs as an activity, not "${type}"` });
    return;
  }
  const validate = validatorFor(kind.configSchema);
  if (!validate(config)) {
    for (const e of validate.errors ?? []) details.push(ajvDetail(`${base}.config`, e));
    return;
  }
  for (const [rel, message] of kind.check?.(config) ?? []) details.push({ path: `${base}.config.${rel}`, message });
  if (type === 'forEach') {
    // `do: {workflow_id}` names another workflow: whether it exists is known when the run starts.
    const d = (config as { do: { type?: string; config?: unknown } }).do;
    if (d.type !== undefined) checkConfig(d.type, d.config, `${base}.config.do`, details, true);
  }
}

/** Returns the details of every problem; an empty list means the definition is valid. */
export function validateDefinition(raw: unknown, sizeBytes: number): { details: ValidationDetail[]; definition?: WorkflowDefinition } {
  const details: ValidationDetail[] = [];
  if (sizeBytes > L.workflowDefinitionBytes) {
    return { details: [{ path: '', message: `definition is ${sizeBytes} bytes; at most ${L.workflowDefinitionBytes} bytes (1 MB)` }] };
  }
  const shapeProblem = jsonShapeProblem(raw);
  if (shapeProblem) return { details: [{ path: shapeProblem.path, message: shapeProblem.message }] };
  if (!validateStructure(raw)) return { details: (validateStructure.errors ?? []).map((e) => ajvDetail('', e)) };
  const def = raw as WorkflowDefinition;

  const ids = new Map<string, number>();
  def.nodes.forEach((n, i) => {
    if (ids.has(n.id)) details.push({ path: `nodes[${i}].id`, message: `duplicate node id "${n.id}" (first at nodes[${ids.get(n.id)}])` });
    else ids.set(n.id, i);
    // Node outputs are read as `nodes.<id>`: this one id would name the object's prototype, not an output.
    if (n.id === '__proto__') details.push({ path: `nodes[${i}].id`, message: 'node id "__proto__" is reserved' });
    checkConfig(n.type, n.config, `nodes[${i}]`, details);
  });
  const outCount = new Map<string, number>();
  def.edges.forEach((e, j) => {
    if (!ids.has(e.from)) details.push({ path: `edges[${j}].from`, message: `no node with id "${e.from}"` });
    if (!ids.has(e.to)) details.push({ path: `edges[${j}].to`, message: `no node with id "${e.to}"` });
    outCount.set(e.from, (outCount.get(e.from) ?? 0) + 1);
  });
  for (const [id, count] of outCount) {
    if (count > L.workflowMaxOutEdges && ids.has(id)) {
      details.push({ path: `nodes[${ids.get(id)}]`, message: `node "${id}" has ${count} outgoing edges; at most ${L.workflowMaxOutEdges}` });
    }
  }
  if (def.input_schema !== undefined) {
    try {
      compileInputSchema(def.input_schema);
    } catch (err) {
      details.push({ path: 'input_schema', message: `not a valid JSON Schema: ${(err as Error).message}` });
    }
  }
  if (details.length === 0) {
    const shape = analyzeGraph(def.nodes, def.edges);
    details.push(...unreachableNodes(def, shape));
    const depth = graphDepth(def.nodes, def.edges, shape);
    if (depth > L.workflowMaxDepth) details.push({ path: 'edges', message: `graph depth is ${depth} nodes on the longest path; at most ${L.workflowMaxDepth}` });
  }
  return details.length ? { details } : { details, definition: def };
}

/** The body of POST .../run: size and nesting answer 422 like a definition's (docs/contract.md §7 "Validation"). */
export function checkRunBody(raw: unknown, sizeBytes: number): { details: ValidationDetail[]; body?: RunBody } {
  if (sizeBytes > L.workflowDefinitionBytes) {
    return { details: [{ path: '', message: `body is ${sizeBytes} bytes; at most ${L.workflowDefinitionBytes} bytes (1 MB)` }] };
  }
  const shapeProblem = jsonShapeProblem(raw);
  if (shapeProblem) return { details: [{ path: shapeProblem.path, message: shapeProblem.message }] };
  if (!validateRunBody(raw)) return { details: (validateRunBody.errors ?? []).map((e) => ajvDetail('', e)) };
  return { details: [], body: raw as RunBody };
}

/** A workflow's input_schema is the user's: its patterns run on RE2 (json-schema.ts); defaults fill the run input. */
const inputSchemas = userSchemaAjv({ useDefaults: true });

export function compileInputSchema(schema: Record<string, unknown>): ValidateFunction {
  const validate = inputSchemas.compile(schema);
  inputSchemas.removeSchema(schema);
  return validate;
}
