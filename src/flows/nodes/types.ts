/**
 * One node kind = one file in this folder: its config schema (ajv, `as const`, also in the
 * OpenAPI document), an example for the docs, and, for kinds whose work is I/O, the executor the
 * node activity calls. Kinds the interpreter itself runs (delay, forEach, flow.call) have no
 * executor; forEach and flow.call keep their data steps (activities) in their files instead.
 * Adding a kind is one file plus one line in ./index.ts.
 */
import type { Logger } from '../../log';
import type { ExpressionContext, TemplateOptions } from '../expressions';
import type { S3OperationConfig } from '../../connectors/schemas';
import type { S3Attempt, S3Output } from '../../connectors/s3';

/** What one node execution knows about itself. */
export interface NodeRun {
  accountId: string;
  flowId: string;
  runId: string;
  nodeId: string;
  /** 1-based execution number of this node in the run (loops run a node again). */
  execution: number;
  /** forEach: index of the item this execution handles. */
  index?: number;
  /** Time budget of this execution; expressions and requests stop when it runs out. */
  timeoutMs: number;
  signal: AbortSignal;
  /** Adds a line to the run log (e.g. each attempt of an outside call); redacted like the output. */
  log(message: string, level?: 'info' | 'warn' | 'error'): void;
}

/** Sends a message to an entity of the account through the message pipeline. */
export interface EntityMessenger {
  sendToEntity(req: { accountId: string; entity: string; data: Record<string, unknown>; tags: string[]; messageId: string; source: string }): Promise<{ messageId: string; duplicate: boolean }>;
}

/** Scans a payload through the scan pipeline; the verdict is returned. */
export interface PayloadScanner {
  scanPayload(req: { accountId: string; requestId: string; content: Buffer; label: string; profileId?: string }): Promise<Record<string, unknown>>;
  /** A file stored by file transfer (delivered, bytes still held) of the same account, scanned as `POST /api/scan` would. */
  scanStoredFile(req: { accountId: string; requestId: string; fileId: string; label?: string; profileId?: string }): Promise<Record<string, unknown>>;
}

/** Runs a Python snippet in the jail with the account's plan cap (src/sandbox/python.ts). */
export interface SnippetRunner {
  runSnippet(req: { accountId: string; code: string; input: unknown; timeoutMs: number; signal: AbortSignal }): Promise<{ result: unknown; stdout: string }>;
}

/** One aws.s3 operation through an account's connector; `onAttempt` sees every HTTP attempt. */
export interface ObjectStorage {
  runS3(accountId: string, op: S3OperationConfig, opts: { onAttempt: (a: S3Attempt) => void; signal: AbortSignal }): Promise<S3Output>;
}

/**
 * Evaluates JSONata and templates for one account, off the thread that serves requests, with a
 * hard time and memory limit (ExpressionPool). Failures are ExpressionError.
 */
export interface Expressions {
  evaluate(accountId: string, expression: string, context: ExpressionContext, timeoutMs: number, signal?: AbortSignal): Promise<unknown>;
  resolveTemplates(accountId: string, value: unknown, context: ExpressionContext, timeoutMs: number, options?: TemplateOptions, signal?: AbortSignal): Promise<unknown>;
}

export interface NodeDeps {
  expressions: Expressions;
  /** Hosts exempt from the SSRF guard (WEBHOOK_ALLOW_HOSTS). */
  allowHosts: readonly string[];
  messenger: EntityMessenger;
  scanner: PayloadScanner;
  snippets: SnippetRunner;
  storage: ObjectStorage;
  logger: Logger;
}

/** One item of a forEach's stored items. */
export interface ItemRef { runId: string; key: string; index: number }

/** Identifies one node execution of one run. */
export interface NodeRef {
  runId: string;
  accountId: string;
  flowId: string;
  nodeId: string;
  execution: number;
  /** Top-level runs have a run record to keep current; child runs (flow.call, forEach) do not. */
  record: boolean;
  /** Node ids whose outputs the node's config may read (`nodes.<id>`). */
  contextKeys: string[];
  timeoutMs: number;
  /** A forEach child run reads its input from the parent's items instead of its own `#input`. */
  inputFrom?: ItemRef;
}

/** What a forEach or flow.call step that ends the node hands back (the node-runner's NodeOutcome). */
export interface StepOutcome { bytes: number; durationMs: number; attempt: number }

/**
 * What the forEach and flow.call steps (in their kinds' files) use of the node runner
 * (node-runner.ts): a node's context, a kind's executor and stored outputs.
 */
export interface StepRunner {
  readonly deps: {
    outputs: { save(runId: string, key: string, json: string): Promise<number>; load(runId: string, key: string): Promise<string | undefined> };
    nodes: Pick<NodeDeps, 'expressions'>;
  };
  context(ref: NodeRef): Promise<ExpressionContext>;
  execute(type: string, config: Record<string, unknown>, ctx: ExpressionContext, ref: NodeRef, signal: AbortSignal, index?: number): Promise<NodeResult>;
  /** Stores a node's output; fails the node above 10 MB. */
  store(ref: NodeRef, key: string, value: unknown): Promise<number>;
  storedItems(runId: string, key: string): Promise<unknown[]>;
}

/** `branch` picks the outgoing edges of condition (`true`/`false`) and switch (a case label). */
export interface NodeResult { output: unknown; branch?: string }

export class NodeFailure extends Error {
  /** Run-log lines the attempt wrote before it failed (e.g. the S3 attempts). */
  log?: Array<{ level: 'info' | 'warn' | 'error'; node?: string; message: string; at: string }>;

  /** A failure that a retry cannot fix (bad config, 4xx answer, refused target). */
  constructor(message: string, readonly retryable = true) {
    super(message);
  }
}

export interface NodeKind<Config = Record<string, unknown>> {
  type: string;
  summary: string;
  configSchema: Record<string, unknown>;
  example: Record<string, unknown>;
  /** Top-level config keys that are JSONata themselves and are not `{{ }}`-templated. */
  rawKeys?: readonly string[];
  /** Extra checks beyond the schema (e.g. JSONata syntax); each returns [relative path, message]. */
  check?(config: Config): Array<[string, string]>;
  execute?(config: Config, ctx: ExpressionContext, run: NodeRun, deps: NodeDeps): Promise<NodeResult>;
}

export const defineKind = <C>(kind: NodeKind<C>): NodeKind<C> => kind;
