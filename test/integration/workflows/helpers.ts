/** Small clients for the workflow API of the test stack. */
import { api, Json } from '../../support/env';

export async function createWorkflow(key: string, def: unknown): Promise<string> {
  const r = await api('POST', '/api/workflows', { key, body: def });
  if (r.status !== 201) throw new Error(`create workflow answered ${r.status}: ${r.text}`);
  return r.body.id as string;
}

export async function startRun(key: string, workflowId: string, input?: unknown): Promise<string> {
  const r = await api('POST', `/api/workflows/${workflowId}/run`, { key, body: input === undefined ? {} : { input } });
  if (r.status !== 202) throw new Error(`run answered ${r.status}: ${r.text}`);
  expect(r.body.status).toBe('running');
  return r.body.runId as string;
}

/** Polls the run until it is no longer running (bounded). */
export async function waitForRun(key: string, runId: string, timeoutMs = 120_000): Promise<Json> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await api('GET', `/api/workflows/runs/${runId}`, { key });
    if (r.status !== 200) throw new Error(`run answered ${r.status}: ${r.text}`);
    if (r.body.status !== 'running' && r.body.status !== 'queued') return r.body;
    if (Date.now() > until) throw new Error(`run ${runId} still ${r.body.status} after ${timeoutMs} ms`);
    await new Promise((res) => setTimeout(res, 500));
  }
}

export const node = (run: Json, id: string): Json => (run.nodes as Json[]).find((n) => n.id === id);
export const transform = (id: string, expression: string, extra: Record<string, unknown> = {}) => ({ id, type: 'transform', config: { expression }, ...extra });
