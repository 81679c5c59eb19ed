/**
 * The node activity with the vault: `{{ vault.NAME }}` filled where the author wrote it (never
 * from data: a run input or message holding a reference stays text), the value redacted
 * from the stored output, the run-log lines the node writes and its error (which keeps its
 * NodeFailure class and retry flag); python's SnippetError kinds map to retry or not.
 */
import { randomBytes } from 'node:crypto';
import { NodeRunner } from '../../../src/flows/node-runner';
import { ExpressionPool } from '../../../src/flows/expression-pool';
import type { NodeDeps } from '../../../src/flows/nodes/types';
import { NodeFailure } from '../../../src/flows/nodes/types';
import { SnippetError } from '../../../src/errors';
import { VaultService } from '../../../src/vault/service';
import type { SealedVaultEntry } from '../../../src/vault/service';
import { createLogger } from '../../../src/log';

const SECRET = 'k3y-{{ input.x }}-value';

const entries = new Map<string, SealedVaultEntry>();
const vault = new VaultService({
  list: async () => [...entries.values()],
  find: async (_a, names) => names.map((n) => entries.get(n)).filter((e): e is SealedVaultEntry => !!e),
  put: async (_a, name, valueSealed, now) => {
    const entry = { name, valueSealed, createdAt: now, updatedAt: now };
    entries.set(name, entry);
    return { entry, created: true };
  },
  remove: async (_a, name) => entries.delete(name),
}, randomBytes(32));

const saved = new Map<string, string>();
const expressions = new ExpressionPool({ threads: 1 });
afterAll(() => expressions.close());
let runInput: unknown = { x: 5 };
let storage: NodeDeps['storage'];
let snippets: NodeDeps['snippets'];
let messenger: NodeDeps['messenger'] = { sendToEntity: async () => { throw new Error('unused'); } };
const runner = new NodeRunner({
  outputs: {
    save: async (runId, key, json) => { saved.set(`${runId}/${key}`, json); return json.length; },
    load: async () => undefined,
    read: async () => '',
    find: async () => [],
  },
  runs: { recordProgress: async () => undefined, input: async () => JSON.stringify(runInput), finish: async () => true, reserveChildRuns: async () => true },
  workflows: { get: async () => null },
  vault,
  nodes: {
    expressions, allowHosts: [], logger: createLogger('silent'),
    messenger: { sendToEntity: (req) => messenger.sendToEntity(req) },
    scanner: { scanPayload: async () => { throw new Error('unused'); }, scanStoredFile: async () => { throw new Error('unused'); } },
    snippets: { runSnippet: (req) => snippets.runSnippet(req) },
    storage: { runS3: (a, op, opts) => storage.runS3(a, op, opts) },
  },
});

const args = (nodeId: string, type: string, config: Record<string, unknown>) => ({
  runId: 'r1', accountId: 'acc', flowId: 'f', nodeId, execution: 1, record: true, contextKeys: [], timeoutMs: 5_000, type, config, attempt: 1,
});

beforeAll(async () => {
  await vault.put('acc', 'KEY', SECRET, 'pro');
});

it('fills the vault value where the author wrote it (never evaluated) and redacts it from the output and the log lines', async () => {
  let seenKey = '';
  storage = {
    runS3: async (_a, op, opts) => {
      seenKey = op.key as string;
      opts.onAttempt({ attempt: 1, durationMs: 3, ok: true, status: 200 });
      return { operation: 'put', bucket: op.bucket, key: op.key as string, etag: `"${SECRET}"`, size: 1 };
    },
  };
  const outcome = await runner.runNode(args('put', 'aws.s3', { connector_id: 'c', operation: 'put', bucket: 'bkt', key: '{{ input.x }}/{{ vault.KEY }}', body: 'b' }), new AbortController().signal);
  expect(seenKey).toBe(`5/${SECRET}`);
  const stored = saved.get('r1/put') as string;
  expect(stored).not.toContain(SECRET);
  expect(JSON.parse(stored)).toMatchObject({ key: '5/[vault:KEY]', etag: '"[vault:KEY]"' });
  expect(outcome.log?.map((l) => l.message)).toEqual([expect.stringMatching(/^aws\.s3 put attempt 1: ok \(HTTP 200\)/)]);
});

it('a failure keeps its class and retry flag, with the value and the attempt lines redacted', async () => {
  storage = {
    runS3: async (_a, op, opts) => {
      for (const attempt of [1, 2, 3]) opts.onAttempt({ attempt, durationMs: 1, ok: false, error: `TimeoutError at ${op.key}` });
      throw new Error(`s3 put ${op.bucket}/${op.key} failed after 3 attempts`);
    },
  };
  const err = await runner.runNode(args('put', 'aws.s3', { connector_id: 'c', operation: 'put', bucket: 'bkt', key: '{{ vault.KEY }}' }), new AbortController().signal).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(NodeFailure);
  expect((err as NodeFailure).retryable).toBe(true);
  expect((err as NodeFailure).message).toBe('aws.s3 put failed: s3 put bkt/[vault:KEY] failed after 3 attempts');
  expect((err as NodeFailure).log?.map((l) => l.message)).toEqual([1, 2, 3].map((n) => expect.stringContaining(`attempt ${n}: failed after 1 ms: TimeoutError at [vault:KEY]`)));
  expect(JSON.stringify((err as NodeFailure).log)).not.toContain(SECRET);
});

it('an unknown vault name fails the node without a retry', async () => {
  const err = await runner.runNode(args('put', 'aws.s3', { connector_id: 'c', operation: 'list', bucket: 'bkt', key: '{{ vault.NOPE }}' }), new AbortController().signal).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(NodeFailure);
  expect((err as NodeFailure).retryable).toBe(false);
  expect((err as NodeFailure).message).toBe('Vault entry "NOPE" not found');
});

it('a vault reference that arrives as data (run input, device message) reaches the device as text, never as the secret', async () => {
  const sent: unknown[] = [];
  messenger = { sendToEntity: async (req) => { sent.push(req.data); return { messageId: req.messageId, duplicate: false }; } };
  runInput = { x: '{{ vault.KEY }}', y: 'a {{vault.KEY}} b' };
  await runner.runNode({ ...args('echo', 'device.send', { entity: 'dev-1', data: { v: '{{ input.x }}', w: 'got {{ input.y }}', all: '{{ input }}' } }), runId: 'r-inject' }, new AbortController().signal);
  expect(sent).toEqual([{ v: '{{ vault.KEY }}', w: 'got a {{vault.KEY}} b', all: { x: '{{ vault.KEY }}', y: 'a {{vault.KEY}} b' } }]);
  expect(JSON.stringify(sent)).not.toContain(SECRET);
  expect(saved.get('r-inject/echo') ?? '').not.toContain(SECRET);
});

it('python: the run input goes in; snippet errors are final except a missing sandbox', async () => {
  let seenInput: unknown;
  snippets = { runSnippet: async (req) => { seenInput = req.input; return { result: { n: 1 }, stdout: 'hi\n' }; } };
  await runner.runNode(args('py', 'python', { code: 'result = {"n": 1}  # {{ not a template }}' }), new AbortController().signal);
  expect(seenInput).toEqual({ x: 5 });
  expect(JSON.parse(saved.get('r1/py') as string)).toEqual({ result: { n: 1 }, stdout: 'hi\n' });

  for (const [kind, retryable] of [['python', false], ['output_limit', false], ['timeout', false], ['unavailable', true]] as const) {
    snippets = { runSnippet: async () => { throw new SnippetError(kind, `${kind} happened`); } };
    const err = await runner.runNode(args('py', 'python', { code: 'x' }), new AbortController().signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NodeFailure);
    expect([(err as NodeFailure).message, (err as NodeFailure).retryable]).toEqual([`${kind} happened`, retryable]);
  }
});
