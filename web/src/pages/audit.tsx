/**
 * Audit log (Standard and Pro). The public API offers the log as an export only, so this page
 * reads the JSON export for the chosen filters and pages through it here; every read is itself
 * recorded as an export. A plan without the audit log gets the service's plan_required answer,
 * explained.
 */
import { useState } from 'preact/hooks';
import { download } from '../api';
import { formatBytes, formatTime, isoOf } from '../format';
import type { AuditEntry } from '../types';
import { Field, Loading, Pager, Progress, Show, useLoad } from '../ui';
import { ExportButton } from './export';
import type { PageDef } from './page';

const PAGE_SIZE = 50;

interface Filter { resourceType: string; action: string; from: string; to: string }

/** datetime-local value of `days` ago, local time. */
function daysAgo(days: number): string {
  const d = new Date(Date.now() - days * 86_400_000);
  d.setMinutes(d.getMinutes() - d.getTimezoneOffset());
  return d.toISOString().slice(0, 16);
}

function queryOf(f: Filter) {
  return { resourceType: f.resourceType || undefined, action: f.action || undefined, from: isoOf(f.from), to: isoOf(f.to) };
}

function Audit() {
  const [draft, setDraft] = useState<Filter>({ resourceType: '', action: '', from: daysAgo(30), to: '' });
  const [filter, setFilter] = useState<Filter>(draft);
  const [page, setPage] = useState(0);
  const [received, setReceived] = useState(0);
  const log = useLoad(async () => {
    setReceived(0);
    const { blob } = await download('/api/audit-log/export', { format: 'json', ...queryOf(filter) }, setReceived);
    return JSON.parse(await blob.text()) as AuditEntry[];
  }, [filter]);
  const apply = (e: Event) => { e.preventDefault(); setPage(0); setFilter({ ...draft }); };
  return (
    <>
      <h1 tabIndex={-1}>Audit log</h1>
      <form class="panel filters" onSubmit={apply} aria-label="Filter the audit log">
        <Field label="Resource type"><input type="text" value={draft.resourceType} onInput={(e) => setDraft({ ...draft, resourceType: e.currentTarget.value })} /></Field>
        <Field label="Action"><input type="text" value={draft.action} onInput={(e) => setDraft({ ...draft, action: e.currentTarget.value })} /></Field>
        <Field label="From"><input type="datetime-local" value={draft.from} onInput={(e) => setDraft({ ...draft, from: e.currentTarget.value })} /></Field>
        <Field label="To"><input type="datetime-local" value={draft.to} onInput={(e) => setDraft({ ...draft, to: e.currentTarget.value })} /></Field>
        <button type="submit">Show</button>
      </form>
      <p class="muted">Reading the log is an export and is itself recorded (action export, resource type audit_log).</p>
      {log.loading && log.error === undefined ? (received ? <Progress label={`Loading… ${formatBytes(received)} received`} value={received} /> : <Loading />) : null}
      <Show loaded={log}>{(entries) => entries.length === 0 ? <p class="muted">No entries.</p> : (
        <>
          <div class="table-wrap">
            <table>
              <thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">Resource</th><th scope="col">By</th><th scope="col">Details</th></tr></thead>
              <tbody>
                {entries.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE).map((a) => (
                  <tr key={a.id}>
                    <td>{formatTime(a.timestamp)}</td>
                    <td>{a.action}</td>
                    <td>{a.resourceType}: {a.resourceName || a.resourceId}</td>
                    <td>{a.userEmail}</td>
                    <td class="mono wrap data">{JSON.stringify(a.details)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager label={`Entries ${page * PAGE_SIZE + 1}–${Math.min(entries.length, (page + 1) * PAGE_SIZE)} of ${entries.length}`}
            hasPrev={page > 0} hasNext={(page + 1) * PAGE_SIZE < entries.length} onPrev={() => setPage(page - 1)} onNext={() => setPage(page + 1)} />
          <ExportButton path="/api/audit-log/export" label="Download as CSV" query={{ format: 'csv', ...queryOf(filter) }} />
        </>
      )}</Show>
    </>
  );
}

export const pages: PageDef[] = [
  { pattern: '/audit', title: 'Audit log', nav: { label: 'Audit log' }, render: () => <Audit /> },
];
