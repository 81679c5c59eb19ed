/** Workflow definition validation: every limit answers a detail naming the path; a definition at each limit passes. */
import { checkRunBody, validateDefinition } from '../../../src/flows/validate';
import { graphDepth } from '../../../src/flows/graph';

type Def = { name: string; nodes: Array<Record<string, unknown>>; edges: Array<Record<string, unknown>>; [k: string]: unknown };
const t = (id: string, expression = '1') => ({ id, type: 'transform', config: { expression } });
const chain = (n: number, prefix = 'n'): Def => ({
  name: 'chain',
  nodes: Array.from({ length: n }, (_, i) => t(`${prefix}${i}`)),
  edges: Array.from({ length: n - 1 }, (_, i) => ({ from: `${prefix}${i}`, to: `${prefix}${i + 1}` })),
});
const check = (def: unknown) => validateDefinition(JSON.parse(JSON.stringify(def)), Buffer.byteLength(JSON.stringify(def))).details;

it('accepts a definition with every node kind', () => {
  const def = {
    name: 'all kinds',
    nodes: [
      { id: 'h', type: 'http', config: { method: 'POST', url: 'https://example.com/{{ input.x }}', headers: { a: 'b' }, body: { k: 1 } }, timeout_ms: 600_000, retry: { max_attempts: 9 } },
      t('tr', 'nodes.h.body'),
      { id: 'c', type: 'condition', config: { expression: 'nodes.tr.ok = true' } },
      { id: 's', type: 'switch', config: { expression: 'input.kind' } },
      { id: 'f', type: 'forEach', config: { items: 'input.list', max_items: 50_000, do: { type: 'device.send', config: { entity: '{{ item }}', data: { x: 1 } } } } },
      { id: 'd', type: 'delay', config: { ms: 10 } },
      { id: 'fc', type: 'flow.call', config: { workflow_id: 'wf_x', input: { a: '{{ input }}' } } },
      { id: 'ds', type: 'device.send', config: { entity: 'dev', data: { on: true }, tags: ['t'] } },
      { id: 'sc', type: 'scan', config: { payload: 'hello', label: 'a.txt' }, on_error: 'continue' },
    ],
    edges: [
      { from: 'h', to: 'tr' }, { from: 'tr', to: 'c' }, { from: 'c', to: 's', when: 'true' }, { from: 'c', to: 'd', when: 'false' },
      { from: 's', to: 'f', when: 'a' }, { from: 's', to: 'fc', when: 'default' }, { from: 'h', to: 'ds', when: 'error' }, { from: 'd', to: 'sc' },
    ],
  };
  expect(check(def)).toEqual([]);
});

describe('limits, each at the limit (accepted) and one past it (422 detail with the path)', () => {
  it('nodes: 1,000', () => {
    const at = { name: 'n', nodes: Array.from({ length: 1000 }, (_, i) => t(`n${i}`)), edges: [] };
    expect(check(at)).toEqual([]);
    const over = { ...at, nodes: [...at.nodes, t('extra')] };
    expect(check(over)).toEqual([{ path: 'nodes', message: 'must NOT have more than 1000 items' }]);
  });

  it('edges: 2,000', () => {
    const nodes = Array.from({ length: 100 }, (_, i) => t(`n${i}`));
    const edges = [];
    // Forward edges only (i < j), each pair at most once: depth stays within 100.
    for (let i = 0; i < 100 && edges.length < 2000; i++) for (let j = i + 1; j < 100 && edges.length < 2000; j++) if (j - i <= 25) edges.push({ from: `n${i}`, to: `n${j}` });
    expect(edges).toHaveLength(2000);
    expect(check({ name: 'e', nodes, edges })).toEqual([]);
    expect(check({ name: 'e', nodes, edges: [...edges, { from: 'n0', to: 'n99' }] })).toEqual([{ path: 'edges', message: 'must NOT have more than 2000 items' }]);
  });

  it('graph depth: 100 nodes on the longest path', () => {
    expect(check(chain(100))).toEqual([]);
    expect(check(chain(101))).toEqual([{ path: 'edges', message: 'graph depth is 101 nodes on the longest path; at most 100' }]);
  });

  it('a back edge does not count toward depth', () => {
    const def = chain(100);
    // Into n1: n0 stays the start node.
    def.edges.push({ from: 'n99', to: 'n1' });
    expect(check(def)).toEqual([]);
    expect(graphDepth(def.nodes as Array<{ id: string }>, def.edges as Array<{ from: string; to: string }>)).toBe(100);
  });

  it('outgoing edges per node: 50', () => {
    const nodes = [t('hub'), ...Array.from({ length: 51 }, (_, i) => t(`leaf${i}`))];
    const edges = Array.from({ length: 50 }, (_, i) => ({ from: 'hub', to: `leaf${i}` }));
    expect(check({ name: 'o', nodes, edges })).toEqual([]);
    expect(check({ name: 'o', nodes, edges: [...edges, { from: 'hub', to: 'leaf50' }] })).toEqual([{ path: 'nodes[0]', message: 'node "hub" has 51 outgoing edges; at most 50' }]);
  });

  it('JSON nesting: 20 levels', () => {
    const nest = (levels: number): unknown => (levels === 0 ? 1 : { a: nest(levels - 1) });
    // definition(1) > nodes(2) > node(3) > config(4) > body(5): body holds the rest.
    const def = (bodyLevels: number) => ({ name: 'j', nodes: [{ id: 'h', type: 'http', config: { method: 'POST', url: 'https://x.test', body: nest(bodyLevels) } }], edges: [] });
    expect(check(def(16))).toEqual([]);
    const details = check(def(17));
    expect(details).toHaveLength(1);
    expect(details[0].message).toBe('JSON nesting exceeds 20 levels');
    expect(details[0].path).toMatch(/^nodes\[0\]\.config\.body(\.a)+$/);
  });

  it('definition size: 1 MB', () => {
    const padded = (bytes: number) => {
      const base = { name: 's', description: '', nodes: [t('a')], edges: [] };
      const room = bytes - Buffer.byteLength(JSON.stringify(base));
      return { ...base, nodes: [{ ...t('a'), config: { expression: `"${'x'.repeat(room - 2)}"` } }] };
    };
    const def = padded(1024 * 1024);
    expect(validateDefinition(def, 1024 * 1024).details.filter((d) => d.path === '')).toEqual([]);
    expect(validateDefinition(def, 1024 * 1024 + 1).details).toEqual([{ path: '', message: 'definition is 1048577 bytes; at most 1048576 bytes (1 MB)' }]);
  });
});

describe('structure', () => {
  // Found by an outside probe: accepted, and the next node read its output as null.
  it('the node id __proto__', () => {
    expect(check({ name: 'p', nodes: [t('__proto__')], edges: [] })).toEqual([{ path: 'nodes[0].id', message: 'node id "__proto__" is reserved' }]);
  });

  it('duplicate node ids', () => {
    expect(check({ name: 'd', nodes: [t('a'), t('a')], edges: [] })).toEqual([{ path: 'nodes[1].id', message: 'duplicate node id "a" (first at nodes[0])' }]);
  });

  it('edges between missing nodes name both ends', () => {
    expect(check({ name: 'e', nodes: [t('a')], edges: [{ from: 'a', to: 'zz' }, { from: 'yy', to: 'a' }] })).toEqual([
      { path: 'edges[0].to', message: 'no node with id "zz"' },
      { path: 'edges[1].from', message: 'no node with id "yy"' },
    ]);
  });

  it('unknown node kinds', () => {
    const d = check({ name: 'k', nodes: [{ id: 'a', type: 'teleport', config: {} }], edges: [] });
    expect(d[0].path).toBe('nodes[0].type');
    expect(d[0].message).toContain('unknown node kind "teleport"');
  });

  it('config checked against its kind schema, with the path into the config', () => {
    expect(check({ name: 'c', nodes: [t('ok'), { id: 'h', type: 'http', config: { method: 'FETCH', url: 'x' } }], edges: [] }))
      .toEqual([{ path: 'nodes[1].config.method', message: 'must be one of GET, POST, PUT, PATCH, DELETE, HEAD' }]);
    expect(check({ name: 'c', nodes: [{ id: 'd', type: 'delay', config: {} }], edges: [] })).toEqual([{ path: 'nodes[0].config', message: 'missing required field "ms"' }]);
    expect(check({ name: 'c', nodes: [{ id: 'x', type: 'transform', config: { expression: '1 +' } }], edges: [] })[0].path).toBe('nodes[0].config.expression');
  });

  it('the node of a forEach is checked as its own kind', () => {
    const d = check({ name: 'f', nodes: [{ id: 'f', type: 'forEach', config: { items: '[1]', do: { type: 'http', config: { url: 'x' } } } }], edges: [] });
    expect(d).toEqual([{ path: 'nodes[0].config.do.config', message: 'missing required field "method"' }]);
    const nested = check({ name: 'f', nodes: [{ id: 'f', type: 'forEach', config: { items: '[1]', do: { type: 'delay', config: { ms: 1 } } } }], edges: [] });
    expect(nested[0].path).toBe('nodes[0].config.do.type');
  });

  it('node ids are short words', () => {
    expect(check({ name: 'i', nodes: [t('has space')], edges: [] })[0].path).toBe('nodes[0].id');
  });

  it('an input_schema must compile', () => {
    expect(check({ name: 'i', nodes: [t('a')], edges: [], input_schema: { type: 'nonsense' } })[0].path).toBe('input_schema');
  });
});

describe('run body', () => {
  it('accepts {input} up to 1 MB and 20 levels; past either is a detail with the path', () => {
    expect(checkRunBody({ input: { a: [1, 2] } }, 20).details).toEqual([]);
    expect(checkRunBody({}, 2).details).toEqual([]);
    let deep: unknown = 1;
    for (let i = 0; i < 20; i++) deep = { d: deep };
    expect(checkRunBody({ input: deep }, 100).details[0]).toMatchObject({ message: 'JSON nesting exceeds 20 levels' });
    expect(checkRunBody({ input: 'x' }, 1024 * 1024 + 1).details[0]).toMatchObject({ path: '' });
    expect(checkRunBody({ inputs: 1 }, 12).details).toEqual([{ path: '', message: 'unknown field "inputs"' }]);
  });
});

it('a scan node takes exactly one of payload and file_id', () => {
  const def = (config: Record<string, unknown>) => ({ name: 's', nodes: [{ id: 'sc', type: 'scan', config }], edges: [] });
  expect(check(def({ file_id: 'f_1' }))).toEqual([]);
  expect(check(def({ payload: 'x' }))).toEqual([]);
  for (const bad of [{}, { payload: 'x', file_id: 'f_1' }]) {
    const details = check(def(bad));
    expect(details.length).toBeGreaterThan(0);
    expect(details[0].path).toMatch(/^nodes\[0\]\.config/);
  }
});

describe('every node must be reachable from a start node', () => {
  it('names a node that no path from a start node reaches (a cycle of its own)', () => {
    const def = { name: 'island', nodes: [t('a'), t('b'), t('c'), t('d')], edges: [{ from: 'a', to: 'b' }, { from: 'c', to: 'd' }, { from: 'd', to: 'c' }] };
    expect(check(def)).toEqual([
      { path: 'nodes[2]', message: 'node "c" can never run: no path leads to it from a start node (a node with no incoming edge)' },
      { path: 'nodes[3]', message: 'node "d" can never run: no path leads to it from a start node (a node with no incoming edge)' },
    ]);
  });

  it('refuses a definition without a start node: a single self-loop, or every node with an incoming edge', () => {
    const message = (id: string) => `node "${id}" can never run: the workflow has no start node (every node has an incoming edge)`;
    expect(check({ name: 'self', nodes: [t('only')], edges: [{ from: 'only', to: 'only' }] })).toEqual([{ path: 'nodes[0]', message: message('only') }]);
    expect(check({ name: 'ring', nodes: [t('a'), t('b')], edges: [{ from: 'a', to: 'b' }, { from: 'b', to: 'a' }] })).toEqual([
      { path: 'nodes[0]', message: message('a') }, { path: 'nodes[1]', message: message('b') },
    ]);
  });

  it('accepts a loop entered from a start node', () => {
    const def = { name: 'loop', nodes: [t('s'), t('a'), t('b')], edges: [{ from: 's', to: 'a' }, { from: 'a', to: 'b' }, { from: 'b', to: 'a' }] };
    expect(check(def)).toEqual([]);
  });
});

describe('numbers JSON cannot keep (1e309 parses as Infinity, stored as null)', () => {
  const text = (def: unknown) => JSON.stringify(def).replace(/"INF"/g, '1e309');
  const checkText = (body: string) => validateDefinition(JSON.parse(body), Buffer.byteLength(body)).details;

  it.each([
    ['timeout_ms', { ...t('a'), timeout_ms: 'INF' }, 'nodes[0].timeout_ms'],
    ['retry.max_attempts', { ...t('a'), retry: { max_attempts: 'INF' } }, 'nodes[0].retry.max_attempts'],
    ['forEach max_items', { id: 'a', type: 'forEach', config: { items: 'input', max_items: 'INF', do: { workflow_id: 'wf_x' } } }, 'nodes[0].config.max_items'],
    ['delay ms', { id: 'a', type: 'delay', config: { ms: 'INF' } }, 'nodes[0].config.ms'],
    ['a number inside an http body', { id: 'a', type: 'http', config: { method: 'POST', url: 'https://example.com', body: { n: 'INF' } } }, 'nodes[0].config.body.n'],
  ])('refuses %s of 1e309 with its path', (_label, node, path) => {
    const body = text({ name: 'n', nodes: [node], edges: [] });
    expect(checkText(body)).toEqual([{ path, message: 'must be a finite number' }]);
  });

  it('refuses a run input holding 1e309', () => {
    const body = '{"input": {"x": [1, 1e309]}}';
    expect(checkRunBody(JSON.parse(body), body.length).details).toEqual([{ path: 'input.x[1]', message: 'must be a finite number' }]);
  });
});
