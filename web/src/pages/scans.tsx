/** Scans: history, one result, and new scans (upload a file with progress, or paste a payload). */
import { useEffect, useState } from 'preact/hooks';
import { api, upload } from '../api';
import { formatBytes, formatTime } from '../format';
import { href } from '../router';
import type { DeferredEnvelope, History, Profile, ScanResult } from '../types';
import { ErrorBox, Field, Loading, Pager, Progress, Show, useLoad } from '../ui';
import type { PageDef } from './page';
import { ScanResultView, Verdict } from './scan-result';

const PAGE_SIZE = 25;

function ScanHistory() {
  const [page, setPage] = useState(1);
  const history = useLoad(() => api<History>('GET', '/api/account/history', { query: { page, limit: PAGE_SIZE } }), [page]);
  return (
    <>
      <div class="title-row">
        <h1 tabIndex={-1}>Scans</h1>
        <a class="button" href={href('/scans/new')}>New scan</a>
      </div>
      <Show loaded={history}>{(h) => h.total === 0 ? <p class="muted">No scans yet. <a href={href('/scans/new')}>Scan a file or a payload</a>.</p> : (
        <>
          <div class="table-wrap">
            <table>
              <thead><tr><th scope="col">When</th><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Verdict</th><th scope="col">Action</th><th scope="col">Size</th></tr></thead>
              <tbody>
                {h.items.map((s) => (
                  <tr key={s.scanId}>
                    <td>{formatTime(s.timestamp)}</td>
                    <td><a href={href(`/scans/${encodeURIComponent(s.scanId)}`)}>{s.name || s.hash.slice(0, 12)}</a></td>
                    <td>{s.scanType}{s.fileType ? ` · ${s.fileType}` : ''}</td>
                    <td><Verdict level={s.safetyScore.threatLevel} score={s.safetyScore.score} /></td>
                    <td>{s.safetyScore.recommendedAction}</td>
                    <td class="num">{formatBytes(s.size)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager label={`Page ${h.page} of ${Math.max(1, Math.ceil(h.total / h.limit))} · ${h.total} scans`}
            hasPrev={page > 1} hasNext={page * h.limit < h.total} onPrev={() => setPage(page - 1)} onNext={() => setPage(page + 1)} />
        </>
      )}</Show>
    </>
  );
}

function ScanDetail({ id }: { id: string }) {
  const scan = useLoad(() => api<ScanResult>('GET', `/api/account/history/${encodeURIComponent(id)}`), [id]);
  return (
    <>
      <p><a href={href('/scans')}>← Scans</a></p>
      <h1 tabIndex={-1}>Scan result</h1>
      <Show loaded={scan}>{(r) => <ScanResultView r={r} />}</Show>
    </>
  );
}

type Outcome = { kind: 'result'; result: ScanResult } | { kind: 'pending'; scanId: string } | { kind: 'error'; error: unknown };

/** Polls a deferred scan until it completes; waits grow to 5 s between polls. */
async function waitForScan(scanId: string, alive: () => boolean): Promise<ScanResult | undefined> {
  let wait = 500;
  while (alive()) {
    const env = await api<DeferredEnvelope>('GET', `/api/scan/${encodeURIComponent(scanId)}`);
    if (env.status === 'complete' && env.result) return env.result;
    await new Promise((r) => setTimeout(r, wait));
    wait = Math.min(wait * 2, 5000);
  }
  return undefined;
}

function OutcomeView({ outcome, onResult }: { outcome: Outcome | undefined; onResult: (r: ScanResult) => void }) {
  useEffect(() => {
    if (outcome?.kind !== 'pending') return;
    let alive = true;
    waitForScan(outcome.scanId, () => alive).then((r) => { if (r && alive) onResult(r); }, () => undefined);
    return () => { alive = false; };
  }, [outcome]);
  if (!outcome) return null;
  if (outcome.kind === 'error') return <ErrorBox error={outcome.error} />;
  if (outcome.kind === 'pending') return <Loading what={`Deferred scan ${outcome.scanId} is running`} />;
  return (
    <>
      <p><a href={href(`/scans/${encodeURIComponent(outcome.result.scanId)}`)}>Open this result in the history</a></p>
      <ScanResultView r={outcome.result} />
    </>
  );
}

function ProfileSelect({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  const profiles = useLoad(() => api<{ profiles: Profile[] }>('GET', '/api/account/profiles'), []);
  return (
    <>
      <Field label="Scan profile">
        <select value={value} onChange={(e) => onChange(e.currentTarget.value)}>
          <option value="">The key's default profile</option>
          {(profiles.data?.profiles ?? []).map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
        </select>
      </Field>
      {profiles.error !== undefined ? <ErrorBox error={profiles.error} /> : null}
    </>
  );
}

/** Runs one scan request; its answer, or its error, becomes the outcome shown under the forms. */
async function scanInto(setOutcome: (o: Outcome | undefined) => void, request: () => Promise<Outcome>): Promise<void> {
  setOutcome(undefined);
  try {
    setOutcome(await request());
  } catch (error) {
    setOutcome({ kind: 'error', error });
  }
}

function asOutcome(status: number, body: unknown): Outcome {
  return status === 202 ? { kind: 'pending', scanId: (body as DeferredEnvelope).scanId } : { kind: 'result', result: body as ScanResult };
}

function FileScan({ setOutcome }: { setOutcome: (o: Outcome | undefined) => void }) {
  const [file, setFile] = useState<File | undefined>();
  const [profile, setProfile] = useState('');
  const [defer, setDefer] = useState(false);
  const [progress, setProgress] = useState<{ sent: number; total: number } | undefined>();
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!file) return;
    setProgress({ sent: 0, total: file.size });
    const form = new FormData();
    form.append('file', file, file.name);
    await scanInto(setOutcome, async () => {
      const res = await upload<unknown>('/api/scan', form, (sent, total) => setProgress({ sent, total }), { profile_id: profile || undefined, defer: defer || undefined });
      return asOutcome(res.status, res.body);
    });
    setProgress(undefined);
  };
  return (
    <section aria-labelledby="file-h" class="panel">
      <h2 id="file-h">Upload a file</h2>
      <form onSubmit={submit}>
        <Field label="File"><input type="file" name="file" required onChange={(e) => setFile(e.currentTarget.files?.[0])} /></Field>
        <ProfileSelect value={profile} onChange={setProfile} />
        <label class="check"><input type="checkbox" checked={defer} onChange={(e) => setDefer(e.currentTarget.checked)} /> Deferred (answer at once, result by polling)</label>
        <button type="submit" disabled={!file || progress !== undefined}>Scan file</button>
        {progress ? <Progress label={`Uploading ${formatBytes(progress.sent)} of ${formatBytes(progress.total)}`} value={progress.sent} max={progress.total} /> : null}
      </form>
    </section>
  );
}

function PayloadScan({ setOutcome }: { setOutcome: (o: Outcome | undefined) => void }) {
  const [payload, setPayload] = useState('');
  const [encoding, setEncoding] = useState('raw');
  const [label, setLabel] = useState('');
  const [profile, setProfile] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    await scanInto(setOutcome, async () => ({
      kind: 'result',
      result: await api<ScanResult>('POST', '/api/scan/payload', { json: { payload, encoding, ...(label ? { label } : {}) }, query: { profile_id: profile || undefined } }),
    }));
    setBusy(false);
  };
  return (
    <section aria-labelledby="payload-h" class="panel">
      <h2 id="payload-h">Paste a payload</h2>
      <form onSubmit={submit}>
        <Field label="Payload"><textarea rows={6} required value={payload} onInput={(e) => setPayload(e.currentTarget.value)} /></Field>
        <div class="row">
          <Field label="Encoding">
            <select value={encoding} onChange={(e) => setEncoding(e.currentTarget.value)}>
              <option value="raw">raw text</option>
              <option value="base64">base64</option>
            </select>
          </Field>
          <Field label="Label" hint="Shown in history; an extension is a format hint"><input type="text" value={label} maxLength={255} onInput={(e) => setLabel(e.currentTarget.value)} /></Field>
        </div>
        <ProfileSelect value={profile} onChange={setProfile} />
        <button type="submit" disabled={busy || payload === ''}>Scan payload</button>
        {busy ? <Loading what="Scanning" /> : null}
      </form>
    </section>
  );
}

function NewScan() {
  const [outcome, setOutcome] = useState<Outcome | undefined>();
  return (
    <>
      <p><a href={href('/scans')}>← Scans</a></p>
      <h1 tabIndex={-1}>New scan</h1>
      <div class="two-col">
        <FileScan setOutcome={setOutcome} />
        <PayloadScan setOutcome={setOutcome} />
      </div>
      <div aria-live="polite"><OutcomeView outcome={outcome} onResult={(result) => setOutcome({ kind: 'result', result })} /></div>
    </>
  );
}

export const pages: PageDef[] = [
  { pattern: '/scans', title: 'Scans', nav: { label: 'Scans' }, render: () => <ScanHistory /> },
  { pattern: '/scans/new', title: 'New scan', render: () => <NewScan /> },
  { pattern: '/scans/:id', title: 'Scan result', render: (p) => <ScanDetail id={p.id} /> },
];
