/**
 * Workflows: the list; a JSON editor with the service's validation errors listed and placed on
 * the drawing of the graph; runs with JSON input; each run's per-node status, executions,
 * durations and log, and a link to it in the Temporal Web UI.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { formatTime } from '../format';
import { href, navigate } from '../router';
import type { FlowEdge, FlowNode, Run, RunList, ValidationDetail, Workflow, WorkflowList } from '../types';
import { ErrorBox, Field, Loading, Pager, Show, useLoad } from '../ui';
import { Graph } from './graph';
import { temporalRunUrl, temporalUi } from './temporal-link';
import type { PageDef } from './page';

const PAGE_SIZE = 25;
const RUNS_PAGE = 10;
const POLL_MS = 1000;

/** The run in the Temporal Web UI, where the service's configuration names one. */
function TemporalLink({ workflowId }: { workflowId: string }) {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    void temporalUi().then((ui) => { if (live) setUrl(temporalRunUrl(ui, location, workflowId)); });
    return () => { live = false; };
  }, [workflowId]);
  return url ? <a href={url} target="_blank" rel="noopener noreferrer">Open in the Temporal Web UI</a> : null;
}

const STARTER = {
  name: 'my workflow',
  nodes: [
    { id: 'double', type: 'transform', config: { expression: '{ "n": input.n * 2 }' } },
    { id: 'big', type: 'condition', config: { expression: 'nodes.double.n > 10' } },
  ],
  edges: [{ from: 'double', to: 'big' }],
};

function statusBadge(status: string) {
  const tone = status === 'completed' ? 'ok' : status === 'failed' || status === 'expired' ? 'bad' : status === 'cancelled' || status === 'skipped' ? 'warn' : 'info';
  return <span class={`badge ${tone}`}>{status}</span>;
}

function WorkflowListPage() {
  const [offset, setOffset] = useState(0);
  const list = useLoad(() => api<WorkflowList>('GET', '/api/workflows', { query: { limit: PAGE_SIZE, offset } }), [offset]);
  return (
    <>
      <div class="title-row">
        <h1 tabIndex={-1}>Workflows</h1>
        <a class="button" href={href('/workflows/new')}>New workflow</a>
      </div>
      <Show loaded={list}>{(l) => l.workflows.length === 0 && offset === 0 ? <p class="muted">No workflows yet.</p> : (
        <>
          <div class="table-wrap">
            <table>
              <thead><tr><th scope="col">Name</th><th scope="col">Nodes</th><th scope="col">Enabled</th><th scope="col">Updated</th></tr></thead>
              <tbody>
                {l.workflows.map((w) => (
                  <tr key={w.id}>
                    <th scope="row"><a href={href(`/workflows/${encodeURIComponent(w.id)}`)}>{w.name}</a> <span class="muted mono">{w.id}</span></th>
                    <td class="num">{w.nodes.length}</td>
                    <td>{w.enabled === false ? 'no' : 'yes'}</td>
                    <td>{formatTime(w.updatedAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager label={`Workflows ${offset + 1}–${offset + l.workflows.length}`} hasPrev={offset > 0} hasNext={l.next_cursor !== null}
            onPrev={() => setOffset(Math.max(0, offset - PAGE_SIZE))} onNext={() => setOffset(Number(l.next_cursor ?? offset))} />
        </>
      )}</Show>
    </>
  );
}

/** The definition as edited: the stored workflow without the fields the service adds. */
function editable(w: Workflow): string {
  const { id: _id, createdAt: _c, updatedAt: _u, ...def } = w;
  return JSON.stringify(def, null, 2);
}

interface Parsed { nodes: FlowNode[]; edges: FlowEdge[] }

/** What of the text can be drawn: nodes with an id, edges with both ends. */
function parse(text: string): { graph?: Parsed; error?: string } {
  let v: unknown;
  try { v = JSON.parse(text); } catch (err) { return { error: (err as Error).message }; }
  const o = (typeof v === 'object' && v !== null ? v : {}) as Record<string, unknown>;
  const nodes = (Array.isArray(o.nodes) ? o.nodes : []).filter((n): n is FlowNode => typeof n === 'object' && n !== null && typeof (n as FlowNode).id === 'string');
  const edges = (Array.isArray(o.edges) ? o.edges : []).filter((e): e is FlowEdge => typeof e === 'object' && e !== null && typeof (e as FlowEdge).from === 'string' && typeof (e as FlowEdge).to === 'string');
  return { graph: { nodes, edges } };
}

/** A validation error placed on the definition it was about: `nodes[3]…` names a node, `edges[0]…` an edge. */
interface Placed extends ValidationDetail { node?: string; edge?: number }

function place(details: ValidationDetail[], submitted: unknown): Placed[] {
  const o = (typeof submitted === 'object' && submitted !== null ? submitted : {}) as { nodes?: unknown[] };
  return details.map((d) => {
    const n = /^nodes\[(\d+)\]/.exec(d.path);
    if (n) {
      const node = o.nodes?.[Number(n[1])] as { id?: unknown } | undefined;
      return { ...d, node: typeof node?.id === 'string' ? node.id : undefined };
    }
    const e = /^edges\[(\d+)\]/.exec(d.path);
    return e ? { ...d, edge: Number(e[1]) } : d;
  });
}

function detailsOf(err: unknown): ValidationDetail[] | undefined {
  if (!(err instanceof ApiError) || err.status !== 422 || !Array.isArray(err.body.details)) return undefined;
  return err.body.details as ValidationDetail[];
}

function Errors({ id, errors }: { id: string; errors: Placed[] }) {
  return (
    <div class="error" role="alert" id={id}>
      <strong>The service did not accept this ({errors.length} {errors.length === 1 ? 'problem' : 'problems'}):</strong>
      <ul class="validation">
        {errors.map((e, i) => (
          <li key={i}><code>{e.path || '(definition)'}</code>{e.node ? <> (node <strong>{e.node}</strong>)</> : null}: {e.message}</li>
        ))}
      </ul>
    </div>
  );
}

function Editor({ id, initial, status }: { id?: string; initial: string; status?: Map<string, string> }) {
  const [text, setText] = useState(initial);
  const [saving, setSaving] = useState(false);
  const [errors, setErrors] = useState<Placed[]>([]);
  const [failure, setFailure] = useState<unknown>();
  const [saved, setSaved] = useState<string | undefined>();
  const parsed = useMemo(() => parse(text), [text]);
  const [drawn, setDrawn] = useState<Parsed>(parsed.graph ?? { nodes: [], edges: [] });
  useEffect(() => { if (parsed.graph) setDrawn(parsed.graph); }, [parsed]);

  const save = async () => {
    setErrors([]); setFailure(undefined); setSaved(undefined);
    let body: unknown;
    try { body = JSON.parse(text); } catch (err) { setFailure(new Error(`Not JSON: ${(err as Error).message}`)); return; }
    setSaving(true);
    try {
      const w = await api<Workflow>(id ? 'PUT' : 'POST', id ? `/api/workflows/${encodeURIComponent(id)}` : '/api/workflows', { json: body });
      setSaved(`Saved at ${new Date().toLocaleTimeString()}`);
      if (!id) navigate(`/workflows/${encodeURIComponent(w.id)}`);
    } catch (err) {
      const details = detailsOf(err);
      if (details) setErrors(place(details, body)); else setFailure(err);
    } finally {
      setSaving(false);
    }
  };
  const badNodes = new Set(errors.flatMap((e) => (e.node ? [e.node] : [])));
  const badEdges = new Set(errors.flatMap((e) => (e.edge !== undefined ? [e.edge] : [])));
  return (
    <section class="panel" aria-labelledby="def-h">
      <h2 id="def-h">Definition</h2>
      <div class="editor">
        <div>
          <Field label="Definition (JSON)" hint="Ctrl+Enter saves. Tab moves on to the next control. Node kinds and fields: docs/workflows.md.">
            <textarea rows={22} spellcheck={false} value={text} class="mono" aria-invalid={errors.length > 0 || parsed.error !== undefined}
              onInput={(e) => setText(e.currentTarget.value)}
              onKeyDown={(e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); void save(); } }} />
          </Field>
          {parsed.error ? <p class="warn" role="status">Not valid JSON yet: {parsed.error}</p> : null}
          <div class="row">
            <button type="button" onClick={save} disabled={saving}>{saving ? 'Saving…' : id ? 'Save' : 'Create workflow'}</button>
            {saved ? <span role="status" class="muted">{saved}</span> : null}
          </div>
          {errors.length ? <Errors id="def-errors" errors={errors} /> : null}
          {failure !== undefined ? <ErrorBox error={failure} /> : null}
        </div>
        <figure class="graph-fig">
          <Graph nodes={drawn.nodes} edges={drawn.edges} badNodes={badNodes} badEdges={badEdges} status={status} />
          <figcaption class="muted">The graph as drawn from the editor{status ? ', coloured by the selected run' : ''}. Nodes with errors are outlined in red.</figcaption>
        </figure>
      </div>
    </section>
  );
}

function RunForm({ id, onStarted }: { id: string; onStarted: (runId: string) => void }) {
  const [input, setInput] = useState('{\n  "n": 7\n}');
  const [errors, setErrors] = useState<Placed[]>([]);
  const [failure, setFailure] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const run = async (e: Event) => {
    e.preventDefault();
    setErrors([]); setFailure(undefined);
    let value: unknown;
    try { value = input.trim() ? JSON.parse(input) : {}; } catch (err) { setFailure(new Error(`The input is not JSON: ${(err as Error).message}`)); return; }
    setBusy(true);
    try {
      const started = await api<{ runId: string }>('POST', `/api/workflows/${encodeURIComponent(id)}/run`, { json: { input: value } });
      onStarted(started.runId);
    } catch (err) {
      const details = detailsOf(err);
      if (details) setErrors(details); else setFailure(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel" onSubmit={run} aria-labelledby="run-h">
      <h2 id="run-h">Run</h2>
      <Field label="Run input (JSON)"><textarea rows={5} class="mono" spellcheck={false} value={input} onInput={(e) => setInput(e.currentTarget.value)} /></Field>
      <button type="submit" disabled={busy}>{busy ? 'Starting…' : 'Run workflow'}</button>
      {errors.length ? <Errors id="run-errors" errors={errors} /> : null}
      {failure !== undefined ? <ErrorBox error={failure} /> : null}
    </form>
  );
}

const ms = (n: number | undefined) => (n === undefined ? '—' : n < 1000 ? `${n} ms` : `${(n / 1000).toFixed(1)} s`);
const live = (r: Run) => r.status === 'running' || r.status === 'queued';

/** One run, polled while it is in progress. */
function useRun(runId: string | undefined): { run?: Run; error?: unknown } {
  const [state, setState] = useState<{ run?: Run; error?: unknown }>({});
  useEffect(() => {
    if (!runId) { setState({}); return undefined; }
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    setState({});
    const poll = () => {
      api<Run>('GET', `/api/workflows/runs/${encodeURIComponent(runId)}`).then((run) => {
        if (stopped) return;
        setState({ run });
        if (live(run)) timer = setTimeout(poll, POLL_MS);
      }, (error: unknown) => { if (!stopped) setState({ error }); });
    };
    poll();
    return () => { stopped = true; if (timer) clearTimeout(timer); };
  }, [runId]);
  return state;
}

/** Asks the service to cancel; the poll of the run shows the status turning `cancelled`. */
function CancelRun({ runId }: { runId: string }) {
  const [state, setState] = useState<{ busy?: boolean; asked?: boolean; error?: unknown }>({});
  const cancel = () => {
    setState({ busy: true });
    api('POST', `/api/workflows/runs/${encodeURIComponent(runId)}/cancel`).then(() => setState({ asked: true }), (error: unknown) => setState({ error }));
  };
  return (
    <>
      <button type="button" class="danger" onClick={cancel} disabled={state.busy || state.asked}>{state.asked ? 'Cancelling…' : 'Cancel run'}</button>
      {state.error !== undefined ? <ErrorBox error={state.error} /> : null}
    </>
  );
}

function RunDetail({ run }: { run: Run }) {
  return (
    <article class="panel" aria-label="Run">
      <div class="title-row">
        <h2 class="wrap">Run <span class="mono">{run.runId}</span> {statusBadge(run.status)}</h2>
        <div class="row">
          {live(run) ? <CancelRun key={run.runId} runId={run.runId} /> : null}
          {run.temporal.workflowId ? <TemporalLink workflowId={run.temporal.workflowId} /> : null}
        </div>
      </div>
      {run.error ? <div class="error" role="alert">{run.error}</div> : null}
      <p class="muted">Queued {formatTime(run.queuedAt)} · started {formatTime(run.startedAt)} · finished {formatTime(run.finishedAt)}</p>
      <h3>Nodes</h3>
      <div class="table-wrap">
        <table class="compact">
          <thead><tr><th scope="col">Node</th><th scope="col">Status</th><th scope="col">Executions</th><th scope="col">Attempts</th><th scope="col">Duration</th><th scope="col">Output / error</th></tr></thead>
          <tbody>
            {run.nodes.map((n) => (
              <tr key={n.id} data-node={n.id}>
                <th scope="row" class="mono">{n.id}</th>
                <td>{statusBadge(n.status)}</td>
                <td class="num">{n.executions}</td>
                <td class="num">{n.attempts}</td>
                <td class="num">{ms(n.durationMs)}</td>
                <td class="mono wrap data">{n.error ?? (n.output === undefined ? '—' : JSON.stringify(n.output))}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {run.output ? <><h3>Output</h3><pre class="mono wrap out">{JSON.stringify(run.output, null, 2)}</pre></> : null}
      <h3>Log</h3>
      {run.log.length === 0 ? <p class="muted">No log entries.</p> : (
        <ol class="runlog">
          {run.log.map((e, i) => (
            <li key={i} class={`lvl-${e.level}`}><span class="muted">{formatTime(e.at)}</span> <strong>{e.level}</strong>{e.node ? <> <code>{e.node}</code></> : null} {e.message}</li>
          ))}
        </ol>
      )}
    </article>
  );
}

function Runs({ id, runId, selected }: { id: string; runId?: string; selected: { run?: Run; error?: unknown } }) {
  const [offset, setOffset] = useState(0);
  const finished = selected.run && !live(selected.run) ? selected.run.status : '';
  const list = useLoad(() => api<RunList>('GET', `/api/workflows/${encodeURIComponent(id)}/runs`, { query: { limit: RUNS_PAGE, offset } }), [id, offset, runId, finished]);
  return (
    <section aria-labelledby="runs-h">
      <h2 id="runs-h">Runs</h2>
      <Show loaded={list}>{(l) => l.runs.length === 0 && offset === 0 ? <p class="muted">No runs yet.</p> : (
        <>
          <div class="table-wrap">
            <table class="compact">
              <thead><tr><th scope="col">Run</th><th scope="col">Status</th><th scope="col">Started</th><th scope="col">Finished</th><th scope="col">Error</th></tr></thead>
              <tbody>
                {l.runs.map((r) => (
                  <tr key={r.runId} aria-current={r.runId === runId ? 'true' : undefined}>
                    <th scope="row"><a class="mono" href={href(`/workflows/${encodeURIComponent(id)}/runs/${encodeURIComponent(r.runId)}`)}>{r.runId}</a></th>
                    <td>{statusBadge(r.status)}</td>
                    <td>{formatTime(r.startedAt ?? r.queuedAt)}</td>
                    <td>{formatTime(r.finishedAt)}</td>
                    <td class="wrap">{r.error ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager label={`Runs ${offset + 1}–${offset + l.runs.length}`} hasPrev={offset > 0} hasNext={l.next_cursor !== null}
            onPrev={() => setOffset(Math.max(0, offset - RUNS_PAGE))} onNext={() => setOffset(Number(l.next_cursor ?? offset))} />
        </>
      )}</Show>
      {selected.error !== undefined ? <ErrorBox error={selected.error} /> : runId && !selected.run ? <Loading what="Loading the run" /> : null}
      {selected.run ? <RunDetail run={selected.run} /> : null}
    </section>
  );
}

function WorkflowPage({ id, runId }: { id: string; runId?: string }) {
  const wf = useLoad(() => api<Workflow>('GET', `/api/workflows/${encodeURIComponent(id)}`), [id]);
  const run = useRun(runId);
  const status = run.run ? new Map(run.run.nodes.map((n) => [n.id, n.status])) : undefined;
  return (
    <>
      <p><a href={href('/workflows')}>← Workflows</a></p>
      <Show loaded={wf}>{(w) => (
        <>
          <h1 tabIndex={-1}>{w.name}</h1>
          <p class="muted mono wrap">{w.id}</p>
          <Editor key={w.id} id={w.id} initial={editable(w)} status={status} />
          <RunForm id={w.id} onStarted={(r) => navigate(`/workflows/${encodeURIComponent(w.id)}/runs/${encodeURIComponent(r)}`)} />
          <Runs id={w.id} runId={runId} selected={run} />
        </>
      )}</Show>
    </>
  );
}

function NewWorkflow() {
  return (
    <>
      <p><a href={href('/workflows')}>← Workflows</a></p>
      <h1 tabIndex={-1}>New workflow</h1>
      <Editor initial={JSON.stringify(STARTER, null, 2)} />
    </>
  );
}

export const pages: PageDef[] = [
  { pattern: '/workflows', title: 'Workflows', nav: { label: 'Workflows' }, render: () => <WorkflowListPage /> },
  { pattern: '/workflows/new', title: 'New workflow', render: () => <NewWorkflow /> },
  { pattern: '/workflows/:id', title: 'Workflow', render: (p) => <WorkflowPage id={p.id} /> },
  { pattern: '/workflows/:id/runs/:runId', title: 'Workflow run', render: (p) => <WorkflowPage id={p.id} runId={p.runId} /> },
];
