/** Messages: the account's publish messages, newest first; search by sender, tags and time; export. */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { formatTime, isoOf, splitList } from '../format';
import type { MessageList } from '../types';
import { Field, Pager, Show, useLoad } from '../ui';
import { ExportButton } from './export';
import type { PageDef } from './page';

const PAGE_SIZE = 25;

interface Filter { entity: string; tags: string; from: string; to: string }
const EMPTY: Filter = { entity: '', tags: '', from: '', to: '' };

/** The plain list when only the sender is given; the search endpoint for tags and times. */
function load(f: Filter, offset: number): Promise<MessageList> {
  const tags = splitList(f.tags);
  if (tags.length === 0 && !f.from && !f.to) {
    return api<MessageList>('GET', '/api/entities/messages', { query: { entity_name: f.entity || undefined, limit: PAGE_SIZE, offset } });
  }
  return api<MessageList>('POST', '/api/entities/messages/search', {
    json: {
      ...(f.entity ? { entity_name: f.entity } : {}), ...(tags.length ? { tags } : {}),
      ...(f.from ? { from: isoOf(f.from) } : {}), ...(f.to ? { to: isoOf(f.to) } : {}), limit: PAGE_SIZE, offset,
    },
  });
}

function Messages() {
  const [draft, setDraft] = useState<Filter>(EMPTY);
  const [filter, setFilter] = useState<Filter>(EMPTY);
  const [offset, setOffset] = useState(0);
  const list = useLoad(() => load(filter, offset), [filter, offset]);
  const [exportFormat, setExportFormat] = useState('csv');
  const search = (e: Event) => { e.preventDefault(); setOffset(0); setFilter(draft); };
  return (
    <>
      <h1 tabIndex={-1}>Messages</h1>
      <form class="panel filters" onSubmit={search} aria-label="Search messages">
        <Field label="Sender"><input type="text" value={draft.entity} pattern="[A-Za-z0-9_.\-]{1,64}" onInput={(e) => setDraft({ ...draft, entity: e.currentTarget.value })} /></Field>
        <Field label="Tags (any of)"><input type="text" value={draft.tags} onInput={(e) => setDraft({ ...draft, tags: e.currentTarget.value })} /></Field>
        <Field label="From"><input type="datetime-local" value={draft.from} onInput={(e) => setDraft({ ...draft, from: e.currentTarget.value })} /></Field>
        <Field label="To"><input type="datetime-local" value={draft.to} onInput={(e) => setDraft({ ...draft, to: e.currentTarget.value })} /></Field>
        <div class="row">
          <button type="submit">Search</button>
          <button type="button" class="secondary" onClick={() => { setDraft(EMPTY); setFilter(EMPTY); setOffset(0); }}>Clear</button>
        </div>
      </form>
      <Show loaded={list}>{(l) => l.messages.length === 0 && offset === 0 ? <p class="muted">No messages.</p> : (
        <>
          <div class="table-wrap">
            <table>
              <thead><tr><th scope="col">When</th><th scope="col">From</th><th scope="col">To</th><th scope="col">Tags</th><th scope="col">Data</th></tr></thead>
              <tbody>
                {l.messages.map((m) => (
                  <tr key={m.id}>
                    <td>{formatTime(m.timestamp)}</td>
                    <td class="mono">{m.source.split('/').pop()}</td>
                    <td>{m.destination ?? '—'}</td>
                    <td>{m.tags.map((t) => <span class="tag" key={t}>{t}</span>)}</td>
                    <td class="mono wrap data">{JSON.stringify(m.data)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager label={`Messages ${offset + 1}–${offset + l.messages.length}`} hasPrev={offset > 0} hasNext={l.next_cursor !== null}
            onPrev={() => setOffset(Math.max(0, offset - PAGE_SIZE))} onNext={() => setOffset(l.next_cursor ?? offset)} />
        </>
      )}</Show>
      <section class="panel" aria-labelledby="export-h">
        <h2 id="export-h">Export</h2>
        <p class="muted">Every publish message of the account, newest first{filter.from || filter.to ? ', within the From/To of the search' : ''}.</p>
        <div class="row">
          <Field label="Format">
            <select value={exportFormat} onChange={(e) => setExportFormat(e.currentTarget.value)}>
              <option value="csv">CSV</option>
              <option value="json">JSON</option>
            </select>
          </Field>
          <ExportButton path="/api/messages/export" label="Download export"
            query={{ format: exportFormat, from: isoOf(filter.from), to: isoOf(filter.to) }} />
        </div>
      </section>
    </>
  );
}

export const pages: PageDef[] = [
  { pattern: '/messages', title: 'Messages', nav: { label: 'Messages' }, render: () => <Messages /> },
];
