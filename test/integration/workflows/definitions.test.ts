/** Workflow definitions over HTTP: 422 details naming the path, the scanning error shape, tenancy, OpenAPI. */
import { api, newAccount, stack } from '../../support/env';
import { createWorkflow, startRun, transform, waitForRun } from './helpers';

jest.setTimeout(120_000);

let key: string;
let otherKey: string;
beforeAll(async () => {
  ({ apiKey: key } = await newAccount('free', 'defs'));
  ({ apiKey: otherKey } = await newAccount('free', 'others'));
});

it('creates, reads, lists, replaces and deletes a workflow', async () => {
  const id = await createWorkflow(key, { name: 'one', nodes: [transform('a', '1')], edges: [] });
  const got = await api('GET', `/api/workflows/${id}`, { key });
  expect(got.body).toMatchObject({ id, name: 'one', enabled: true, exposed: false, nodes: [{ id: 'a', type: 'transform', on_error: 'fail' }] });
  const list = await api('GET', '/api/workflows?limit=100', { key });
  expect(list.body.workflows.map((w: { id: string }) => w.id)).toContain(id);
  const put = await api('PUT', `/api/workflows/${id}`, { key, body: { name: 'renamed', nodes: [transform('b', '2')], edges: [] } });
  expect(put.body).toMatchObject({ id, name: 'renamed' });
  expect((await api('DELETE', `/api/workflows/${id}`, { key })).status).toBe(204);
  expect((await api('GET', `/api/workflows/${id}`, { key })).status).toBe(404);
});

it('answers 422 Validation Error with details naming each path', async () => {
  const r = await api('POST', '/api/workflows', {
    key,
    body: { name: 'bad', nodes: [transform('a', '1'), { id: 'h', type: 'http', config: { method: 'GET' } }, transform('a', '2')], edges: [{ from: 'a', to: 'nope' }] },
  });
  expect(r.status).toBe(422);
  expect(r.body).toMatchObject({ error: 'Validation Error', requestId: expect.any(String) });
  expect(r.body.details).toEqual(expect.arrayContaining([
    { path: 'nodes[1].config', message: 'missing required field "url"' },
    { path: 'nodes[2].id', message: 'duplicate node id "a" (first at nodes[0])' },
    { path: 'edges[0].to', message: 'no node with id "nope"' },
  ]));
});

it('JSON nesting past 20 and a definition past 1 MB are 422, not 400 or 413', async () => {
  let deep: unknown = 1;
  for (let i = 0; i < 25; i++) deep = { d: deep };
  const nested = await api('POST', '/api/workflows', { key, body: { name: 'deep', nodes: [{ id: 'h', type: 'http', config: { method: 'POST', url: 'https://example.com', body: deep } }], edges: [] } });
  expect(nested.status).toBe(422);
  expect(nested.body.details[0].message).toBe('JSON nesting exceeds 20 levels');
  expect(nested.body.details[0].path).toMatch(/^nodes\[0\]\.config\.body\.d/);

  const big = await api('POST', '/api/workflows', { key, body: { name: 'big', description: 'x'.repeat(100), nodes: [transform('a', `"${'y'.repeat(1024 * 1024)}"`)], edges: [] } });
  expect(big.status).toBe(422);
  expect(big.body.details[0]).toMatchObject({ path: '' });
  expect(big.body.details[0].message).toContain('at most 1048576 bytes');
});

it('run input is checked against input_schema', async () => {
  const id = await createWorkflow(key, { name: 'typed', input_schema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } }, nodes: [transform('a', 'input.n')], edges: [] });
  const bad = await api('POST', `/api/workflows/${id}/run`, { key, body: { input: { n: 'x' } } });
  expect(bad.status).toBe(422);
  expect(bad.body.details[0].path).toBe('input.n');
  let deep: unknown = 1;
  for (let i = 0; i < 25; i++) deep = { d: deep };
  const tooDeep = await api('POST', `/api/workflows/${id}/run`, { key, body: { input: deep } });
  expect(tooDeep.status).toBe(422);
  expect(tooDeep.body.details[0].message).toBe('JSON nesting exceeds 20 levels');
  const run = await waitForRun(key, await startRun(key, id, { n: 3 }));
  expect(run.output).toEqual({ a: 3 });
});

it('another account\'s workflow and run answer 404, like missing ones', async () => {
  const id = await createWorkflow(key, { name: 'mine', nodes: [transform('a', '1')], edges: [] });
  const runId = await startRun(key, id);
  await waitForRun(key, runId);
  const def = { name: 'x', nodes: [transform('a', '1')], edges: [] };
  for (const [method, p, body] of [
    ['GET', `/api/workflows/${id}`], ['PUT', `/api/workflows/${id}`, def], ['DELETE', `/api/workflows/${id}`],
    ['POST', `/api/workflows/${id}/run`, {}], ['GET', `/api/workflows/${id}/runs`], ['GET', `/api/workflows/runs/${runId}`],
    ['POST', `/api/workflows/runs/${runId}/cancel`], ['GET', `/api/workflows/runs/${runId}/outputs/a`],
  ] as Array<[string, string, unknown?]>) {
    const r = await api(method, p, { key: otherKey, body });
    expect([method, p, r.status]).toEqual([method, p, 404]);
    expect(r.body).toMatchObject({ error: expect.any(String), requestId: expect.any(String), code: 'not_found' });
  }
  expect((await api('GET', `/api/workflows/runs/${runId}`, { key })).status).toBe(200);
  const runs = await api('GET', `/api/workflows/${id}/runs`, { key });
  expect(runs.body.runs.map((r: { runId: string }) => r.runId)).toContain(runId);
});

it('a running run can be cancelled', async () => {
  const id = await createWorkflow(key, { name: 'sleepy', nodes: [{ id: 'wait', type: 'delay', config: { ms: 120_000 } }], edges: [] });
  const runId = await startRun(key, id);
  const c = await api('POST', `/api/workflows/runs/${runId}/cancel`, { key });
  expect(c.status).toBe(200);
  const run = await waitForRun(key, runId, 60_000);
  expect(run.status).toBe('cancelled');
});

it('the OpenAPI document carries every node kind\'s config schema', async () => {
  const doc = await api('GET', '/openapi.json');
  const body = doc.body.paths['/api/workflows'].post.requestBody.content['application/json'].schema;
  const kinds = body.properties.nodes.items.oneOf.map((v: { properties: { type: { const: string } } }) => v.properties.type.const);
  expect(kinds).toEqual(['http', 'transform', 'condition', 'switch', 'forEach', 'delay', 'flow.call', 'device.send', 'scan', 'python', 'aws.s3']);
  const http = body.properties.nodes.items.oneOf[0];
  expect(http.properties.config.required).toEqual(['method', 'url']);
  expect(body.description).toMatch(/every node reachable from a start node/);
  expect(doc.body.paths['/api/workflows/runs/{runId}'].get).toBeDefined();
});

it('a run request without a body starts a run with no input, as the OpenAPI document says', async () => {
  const { apiKey } = await newAccount('pro');
  const id = await createWorkflow(apiKey, { name: 'no input', nodes: [transform('t', '1')], edges: [] });
  const doc = await api('GET', '/openapi.json');
  expect(doc.body.paths['/api/workflows/{id}/run'].post.requestBody.required).toBe(false);
  const res = await fetch(`${stack().baseUrl}/api/workflows/${id}/run`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` } });
  expect(res.status).toBe(202);
  const run = await waitForRun(apiKey, ((await res.json()) as { runId: string }).runId);
  expect(run).toMatchObject({ status: 'completed', input: null });
});

it('a JSON null as the run body is a 422, not a run', async () => {
  const { apiKey } = await newAccount('pro');
  const id = await createWorkflow(apiKey, { name: 'null body', nodes: [transform('t', '1')], edges: [] });
  const r = await api('POST', `/api/workflows/${id}/run`, { key: apiKey, rawBody: 'null', headers: { 'content-type': 'application/json' } });
  expect(r.status).toBe(422);
  expect(r.body.error).toBe('Validation Error');
});

it('a number field of 1e309 is 422 at POST and PUT, and nothing is stored as null', async () => {
  const id = await createWorkflow(key, { name: 'finite', nodes: [transform('a', '1')], edges: [] });
  const cases: Array<[string, string]> = [
    ['{"id": "a", "type": "transform", "config": {"expression": "1"}, "timeout_ms": 1e309}', 'nodes[0].timeout_ms'],
    ['{"id": "a", "type": "transform", "config": {"expression": "1"}, "retry": {"max_attempts": 1e309}}', 'nodes[0].retry.max_attempts'],
    ['{"id": "a", "type": "forEach", "config": {"items": "input", "max_items": 1e309, "do": {"workflow_id": "wf_x"}}}', 'nodes[0].config.max_items'],
  ];
  for (const [node, path] of cases) {
    const body = `{"name": "inf", "nodes": [${node}], "edges": []}`;
    for (const [method, p] of [['POST', '/api/workflows'], ['PUT', `/api/workflows/${id}`]]) {
      const r = await api(method, p, { key, rawBody: body, headers: { 'content-type': 'application/json' } });
      expect([method, r.status]).toEqual([method, 422]);
      expect(r.body.details).toEqual([{ path, message: 'must be a finite number' }]);
    }
  }
  expect((await api('GET', `/api/workflows/${id}`, { key })).body).toMatchObject({ name: 'finite', nodes: [{ id: 'a', type: 'transform' }] });
});

it('offset=1e400 (or any absurd offset) is a 400 in the error shape on every paged list', async () => {
  const id = await createWorkflow(key, { name: 'paged', nodes: [transform('a', '1')], edges: [] });
  for (const offset of ['1e400', '1e300', '-1e400', 'NaN']) {
    for (const p of ['/api/workflows', `/api/workflows/${id}/runs`]) {
      const r = await api('GET', `${p}?offset=${offset}`, { key });
      expect([p, offset, r.status]).toEqual([p, offset, 400]);
      expect(r.body).toMatchObject({ error: expect.stringMatching(/offset/), requestId: expect.any(String) });
    }
  }
  const gallery = await api('GET', '/api/files?kind=clip&offset=1e400', { key });
  expect(gallery.status).toBe(400);
  expect(gallery.body).toMatchObject({ reason: expect.stringMatching(/offset/), requestId: expect.any(String) });
  expect((await api('GET', '/api/workflows?offset=1000000', { key })).status).toBe(200);
});

it('a definition with a node no start node reaches is 422 naming the node; so is one with no start node (a ring, a single self-loop)', async () => {
  const island = await api('POST', '/api/workflows', {
    key, body: { name: 'island', nodes: [transform('a', '1'), transform('b', '2')], edges: [{ from: 'b', to: 'b' }] },
  });
  expect(island.status).toBe(422);
  expect(island.body.details).toEqual([{ path: 'nodes[1]', message: 'node "b" can never run: no path leads to it from a start node (a node with no incoming edge)' }]);
  const ring = await api('POST', '/api/workflows', {
    key, body: { name: 'ring', nodes: [transform('a', '1'), transform('b', '2')], edges: [{ from: 'a', to: 'b' }, { from: 'b', to: 'a' }] },
  });
  expect(ring.status).toBe(422);
  expect(ring.body.details.map((d: { path: string }) => d.path)).toEqual(['nodes[0]', 'nodes[1]']);
  expect(ring.body.details[0].message).toMatch(/no start node/);
  const self = await api('POST', '/api/workflows', { key, body: { name: 'self', nodes: [transform('only', '1')], edges: [{ from: 'only', to: 'only' }] } });
  expect(self.status).toBe(422);
  expect(self.body.details).toEqual([{ path: 'nodes[0]', message: 'node "only" can never run: the workflow has no start node (every node has an incoming edge)' }]);
});
