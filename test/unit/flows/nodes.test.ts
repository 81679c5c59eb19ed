/** Node kinds and templating: the SSRF guard on http, `{{ }}` resolution, JSONata guards. */
import http from 'node:http';
import { httpNode } from '../../../src/flows/nodes/http';
import { NodeFailure, NodeDeps, NodeRun } from '../../../src/flows/nodes/types';
import { evaluateExpression as evaluate, resolveTemplates, ExpressionError } from '../../../src/flows/expressions';
import { ExpressionPool } from '../../../src/flows/expression-pool';
import { createLogger } from '../../../src/log';

const expressions = new ExpressionPool({ threads: 1 });
afterAll(() => expressions.close());
const deps = (allowHosts: string[]): NodeDeps => ({
  expressions, allowHosts, logger: createLogger('silent'),
  messenger: { sendToEntity: async () => { throw new Error('unused'); } },
  scanner: { scanPayload: async () => { throw new Error('unused'); }, scanStoredFile: async () => { throw new Error('unused'); } },
  snippets: { runSnippet: async () => { throw new Error('unused'); } },
  storage: { runS3: async () => { throw new Error('unused'); } },
});
const run = (): NodeRun => ({ accountId: 'a', flowId: 'f', runId: 'r', nodeId: 'n', execution: 1, timeoutMs: 5_000, signal: new AbortController().signal, log: () => undefined });
const ctx = { input: { id: 7, name: 'x' }, nodes: { fetch: { body: { list: [1, 2, 3] } } }, vars: {} };

describe('http node', () => {
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/fail') { res.statusCode = 404; res.end('no'); return; }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ method: req.method, url: req.url }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('refuses loopback and metadata addresses unless the host is allowed', async () => {
    await expect(httpNode.execute?.({ method: 'GET', url }, ctx, run(), deps([]))).rejects.toThrow(/refused target/);
    await expect(httpNode.execute?.({ method: 'GET', url: 'http://169.254.169.254/latest/meta-data' }, ctx, run(), deps([]))).rejects.toThrow(/internal address/);
    const ok = await httpNode.execute?.({ method: 'POST', url: `${url}/x`, body: { a: 1 } }, ctx, run(), deps([new URL(url).host]));
    expect(ok?.output).toMatchObject({ status: 200, body: { method: 'POST', url: '/x' } });
  });

  it('allows a host only on the port its allow-list entry names: a bare host is not every port', async () => {
    await expect(httpNode.execute?.({ method: 'GET', url }, ctx, run(), deps(['127.0.0.1']))).rejects.toThrow(/refused target/);
    await expect(httpNode.execute?.({ method: 'GET', url }, ctx, run(), deps(['127.0.0.1:1']))).rejects.toThrow(/refused target/);
    const any = await httpNode.execute?.({ method: 'GET', url: `${url}/y` }, ctx, run(), deps(['127.0.0.1:*']));
    expect(any?.output).toMatchObject({ status: 200 });
  });

  it('fails the node on a status of 400 or more, without retry for a 404', async () => {
    const err = await httpNode.execute?.({ method: 'GET', url: `${url}/fail` }, ctx, run(), deps(['127.0.0.1:*'])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NodeFailure);
    expect((err as NodeFailure).message).toContain('HTTP 404');
    expect((err as NodeFailure).retryable).toBe(false);
  });
});

describe('templates', () => {
  it('a whole-string template keeps the JSON value; mixed text is interpolated', async () => {
    expect(await resolveTemplates({ a: '{{ nodes.fetch.body.list }}', b: 'id={{ input.id }}&n={{ input.name }}', c: 3 }, ctx, 1_000))
      .toEqual({ a: [1, 2, 3], b: 'id=7&n=x', c: 3 });
  });

  it('leaves the keys that are JSONata themselves alone, filling only the vault references the author wrote there', async () => {
    expect(await resolveTemplates({ expression: '{{ x }} & "{{ vault.T }}"', url: '{{ input.id }}' }, ctx, 1_000, { skipKeys: ['expression'], secrets: { T: 's' } }))
      .toEqual({ expression: '{{ x }} & "s"', url: 7 });
  });

  it('fills {{ vault.NAME }} where the author wrote it, in the same pass as JSONata', async () => {
    expect(await resolveTemplates({ a: '{{ vault.TOKEN }}', b: 'Bearer {{vault.TOKEN}} for {{ input.id }}' }, ctx, 1_000, { secrets: { TOKEN: 't0k' } }))
      .toEqual({ a: 't0k', b: 'Bearer t0k for 7' });
  });

  it('never reads a value that came from data as a template: a vault reference in the input stays text', async () => {
    const hostile = { ...ctx, input: { x: '{{ vault.TOKEN }}', y: 'a {{ vault.TOKEN }} b', z: '{{ 1 + 1 }}' } };
    expect(await resolveTemplates({ v: '{{ input.x }}', w: 'see {{ input.y }}', z: '{{ input.z }}', o: '{{ input }}' }, hostile, 1_000, { secrets: { TOKEN: 't0k' } }))
      .toEqual({ v: '{{ vault.TOKEN }}', w: 'see a {{ vault.TOKEN }} b', z: '{{ 1 + 1 }}', o: hostile.input });
  });

  it('a vault reference the activity did not reveal fails instead of staying as text', async () => {
    await expect(resolveTemplates({ a: '{{ vault.OTHER }}' }, ctx, 1_000, { secrets: {} })).rejects.toThrow('vault entry "OTHER" was not revealed');
  });
});

describe('JSONata guards', () => {
  it('a runaway expression stops at its time budget', async () => {
    await expect(evaluate('($f := function($n){ $n = 0 ? 0 : $f($n - 1) }; $sum([1..20000].($f(400))))', ctx, 200)).rejects.toThrow('expression ran longer than its 200 ms budget');
  });

  it('a huge sequence stops at the sequence guard', async () => {
    await expect(evaluate('[1..200000]', ctx, 5_000)).rejects.toBeInstanceOf(ExpressionError);
  });

  it('deep recursion stops at the stack guard', async () => {
    await expect(evaluate('($f := function($n){ $n = 0 ? 0 : 1 + $f($n - 1) }; $f(100000))', ctx, 10_000)).rejects.toThrow(/nested deeper|stack/i);
  });

  it('undefined becomes null', async () => {
    expect(await evaluate('input.missing', ctx, 1_000)).toBeNull();
  });
});

describe('scan node', () => {
  it('sends a file_id to the stored-file scan and a payload to the payload scan', async () => {
    const calls: Array<[string, Record<string, unknown>]> = [];
    const d: NodeDeps = {
      ...deps([]),
      scanner: {
        scanPayload: async (req) => { calls.push(['payload', { label: req.label, text: req.content.toString() }]); return { threatLevel: 'Clean' }; },
        scanStoredFile: async (req) => { calls.push(['file', { fileId: req.fileId, label: req.label }]); return { threatLevel: 'Malicious' }; },
      },
    };
    const { scanNode } = await import('../../../src/flows/nodes/scan');
    expect((await scanNode.execute?.({ file_id: 'f_42' }, ctx, run(), d))?.output).toEqual({ threatLevel: 'Malicious' });
    expect((await scanNode.execute?.({ payload: 'hello', label: 'a.txt' }, ctx, run(), d))?.output).toEqual({ threatLevel: 'Clean' });
    expect(calls).toEqual([['file', { fileId: 'f_42', label: undefined }], ['payload', { label: 'a.txt', text: 'hello' }]]);
  });
});
