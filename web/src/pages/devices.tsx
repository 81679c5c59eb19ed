/**
 * Devices (entities): the list with online status, one device (last heartbeat metrics, state
 * table, tags, key rotation and deletion) and bulk registration. New keys are shown once: they
 * live only in this page's state and are gone when it is left.
 */
import { useState } from 'preact/hooks';
import { api, saveFile } from '../api';
import { formatBytes, formatTime, splitList, toCsv } from '../format';
import { href, navigate } from '../router';
import type { BulkResult, Entity, EntityList, NewKey } from '../types';
import { Dialog, ErrorBox, Field, KeyReveal, Pager, Show, useLoad } from '../ui';
import type { PageDef } from './page';

const PAGE_SIZE = 25;
const enc = encodeURIComponent;

function Online({ e }: { e: Entity }) {
  return <span class={`online ${e.online ? 'on' : 'off'}`}>{e.online ? 'online' : 'offline'}</span>;
}

function memory(m: Record<string, number> | undefined): string {
  if (!m || (m.mem_free === undefined && m.mem_total === undefined)) return '—';
  return `${formatBytes(m.mem_free)} free of ${formatBytes(m.mem_total)}`;
}

function DeviceList() {
  const [offset, setOffset] = useState(0);
  const list = useLoad(() => api<EntityList>('GET', '/api/entities', { query: { limit: PAGE_SIZE, offset } }), [offset]);
  return (
    <>
      <div class="title-row">
        <h1 tabIndex={-1}>Devices</h1>
        <div class="row">
          <button type="button" class="secondary" onClick={list.reload}>Refresh</button>
          <a class="button" href={href('/devices-bulk')}>Register devices</a>
        </div>
      </div>
      <Show loaded={list}>{(l) => l.entities.length === 0 && offset === 0
        ? <p class="muted">No devices yet. <a href={href('/devices-bulk')}>Register devices</a>.</p>
        : (
          <>
            <div class="table-wrap">
              <table>
                <thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Last seen</th><th scope="col">Memory</th><th scope="col">Tags</th><th scope="col">Role</th></tr></thead>
                <tbody>
                  {l.entities.map((e) => (
                    <tr key={e.name}>
                      <th scope="row"><a href={href(`/devices/${enc(e.name)}`)}>{e.name}</a></th>
                      <td><Online e={e} /></td>
                      <td>{formatTime(e.lastSeenAt)}</td>
                      <td>{memory(e.metrics)}</td>
                      <td>{e.tags.map((t) => <span class="tag" key={t}>{t}</span>)}</td>
                      <td>{e.role}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager label={`Devices ${offset + 1}–${offset + l.entities.length}`} hasPrev={offset > 0} hasNext={l.next_cursor !== null}
              onPrev={() => setOffset(Math.max(0, offset - PAGE_SIZE))} onNext={() => setOffset(l.next_cursor ?? offset)} />
          </>
        )}</Show>
    </>
  );
}

function StateTable({ name }: { name: string }) {
  const table = useLoad(() => api<{ statusTable: Record<string, unknown> }>('GET', `/api/entities/${enc(name)}/status-table`), [name]);
  return (
    <section aria-labelledby="state-h">
      <div class="title-row"><h2 id="state-h">State table</h2><button type="button" class="secondary" onClick={table.reload}>Refresh</button></div>
      <Show loaded={table}>{(t) => Object.keys(t.statusTable).length === 0 ? <p class="muted">Empty.</p> : (
        <div class="table-wrap">
          <table class="compact">
            <thead><tr><th scope="col">Key</th><th scope="col">Value</th></tr></thead>
            <tbody>{Object.entries(t.statusTable).map(([k, v]) => <tr key={k}><th scope="row" class="mono">{k}</th><td class="mono wrap">{JSON.stringify(v)}</td></tr>)}</tbody>
          </table>
        </div>
      )}</Show>
    </section>
  );
}

function TagsEditor({ e, onSaved }: { e: Entity; onSaved: (e: Entity) => void }) {
  const [text, setText] = useState(e.tags.join(', '));
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const save = async (ev: Event) => {
    ev.preventDefault();
    setError(undefined);
    setSaved(false);
    try {
      onSaved(await api<Entity>('PATCH', `/api/entities/${enc(e.name)}`, { json: { tags: splitList(text) } }));
      setSaved(true);
    } catch (err) { setError(err); }
  };
  return (
    <form onSubmit={save} class="inline-form">
      <Field label="Tags" hint="Comma-separated, at most 10"><input type="text" value={text} onInput={(ev) => setText(ev.currentTarget.value)} /></Field>
      <button type="submit">Save tags</button>
      {saved ? <span role="status" class="muted">Saved.</span> : null}
      {error !== undefined ? <ErrorBox error={error} /> : null}
    </form>
  );
}

function DeviceDetail({ name }: { name: string }) {
  const device = useLoad(() => api<Entity>('GET', `/api/entities/${enc(name)}`), [name]);
  const [entity, setEntity] = useState<Entity | undefined>();
  const [newKey, setNewKey] = useState<NewKey | undefined>();
  const [error, setError] = useState<unknown>();
  const rotate = async () => {
    if (!confirm(`Rotate the key of ${name}? The current key stops working at once.`)) return;
    try { setNewKey(await api<NewKey>('POST', `/api/entities/${enc(name)}/keys/rotate`)); device.reload(); } catch (err) { setError(err); }
  };
  const remove = async () => {
    if (!confirm(`Delete ${name}? Its key stops working at once and its pending messages are dropped.`)) return;
    try { await api('DELETE', `/api/entities/${enc(name)}`); navigate('/devices'); } catch (err) { setError(err); }
  };
  return (
    <>
      <p><a href={href('/devices')}>← Devices</a></p>
      <h1 tabIndex={-1}>{name}</h1>
      {error !== undefined ? <ErrorBox error={error} /> : null}
      <Show loaded={device}>{(loaded) => {
        const e = entity?.name === loaded.name ? entity : loaded;
        const m = e.metrics ?? {};
        return (
          <>
            <div class="row"><Online e={e} /><button type="button" class="secondary" onClick={device.reload}>Refresh</button></div>
            <dl class="facts">
              <dt>Last seen</dt><dd>{formatTime(e.lastSeenAt)}</dd>
              <dt>Resource path</dt><dd class="mono wrap">{e.resourcePath}</dd>
              <dt>Key id</dt><dd class="mono wrap">{e.apiKeyId}</dd>
              <dt>Role</dt><dd>{e.role}</dd>
              <dt>Validation service</dt><dd>{e.service ?? '—'}</dd>
              <dt>Created</dt><dd>{formatTime(e.createdAt)}</dd>
            </dl>
            <section aria-labelledby="metrics-h">
              <h2 id="metrics-h">Last heartbeat</h2>
              {Object.keys(m).length === 0 ? <p class="muted">No heartbeat metrics yet.</p> : (
                <dl class="cards">
                  <div><dt>Memory free</dt><dd>{formatBytes(m.mem_free)}</dd></div>
                  <div><dt>Memory total</dt><dd>{formatBytes(m.mem_total)}</dd></div>
                  <div><dt>Disk free</dt><dd>{formatBytes(m.disk_free)}</dd></div>
                  <div><dt>Disk size</dt><dd>{formatBytes(m.disk_size)}</dd></div>
                </dl>
              )}
            </section>
            <section aria-labelledby="tags-h">
              <h2 id="tags-h">Tags</h2>
              <TagsEditor e={e} onSaved={setEntity} />
            </section>
          </>
        );
      }}</Show>
      <StateTable name={name} />
      <section aria-labelledby="key-h">
        <h2 id="key-h">API key</h2>
        <div class="row">
          <button type="button" onClick={rotate}>Rotate key</button>
          <button type="button" class="danger" onClick={remove}>Delete device</button>
        </div>
      </section>
      <Dialog title={`New key for ${name}`} open={newKey !== undefined} onClose={() => setNewKey(undefined)}>
        {newKey?.apiKey ? <KeyReveal label="API key" value={newKey.apiKey} /> : null}
        <form method="dialog"><button type="submit">I have stored the key</button></form>
      </Dialog>
    </>
  );
}

function keysCsv(results: NewKey[]): Blob {
  const csv = toCsv(['name', 'status', 'apiKeyId', 'apiKey', 'resourcePath', 'detail'],
    results.map((r) => [r.name, r.status, r.apiKeyId, r.apiKey, r.resourcePath, r.detail]));
  return new Blob([csv], { type: 'text/csv' });
}

function BulkRegister() {
  const [mode, setMode] = useState<'count' | 'list'>('count');
  const [count, setCount] = useState(5);
  const [prefix, setPrefix] = useState('device');
  const [names, setNames] = useState('');
  const [tags, setTags] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [result, setResult] = useState<BulkResult | undefined>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    const tagList = splitList(tags);
    const body = mode === 'count'
      ? { count, prefix, ...(tagList.length ? { tags: tagList } : {}) }
      : { entities: splitList(names).map((name) => ({ name, ...(tagList.length ? { tags: tagList } : {}) })) };
    try { setResult(await api<BulkResult>('POST', '/api/entities/bulk', { json: body })); } catch (err) { setError(err); } finally { setBusy(false); }
  };
  return (
    <>
      <p><a href={href('/devices')}>← Devices</a></p>
      <h1 tabIndex={-1}>Register devices</h1>
      {result ? (
        <section class="panel" aria-labelledby="bulk-result-h">
          <h2 id="bulk-result-h">{result.created} created, {result.failed} failed</h2>
          <p class="warn">These keys are shown once. Download them now: leaving this page discards them.</p>
          <div class="row">
            <button type="button" onClick={() => saveFile(keysCsv(result.results), `device-keys-${new Date().toISOString().slice(0, 19).replace(/:/g, '')}.csv`)}>Download keys (CSV)</button>
            <button type="button" class="secondary" onClick={() => setResult(undefined)}>Register more</button>
          </div>
          <div class="table-wrap">
            <table class="compact">
              <thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">API key</th><th scope="col">Detail</th></tr></thead>
              <tbody>{result.results.map((r) => (
                <tr key={r.name}>
                  <th scope="row">{r.status === 'created' ? <a href={href(`/devices/${enc(r.name)}`)}>{r.name}</a> : r.name}</th>
                  <td>{r.status}</td>
                  <td class="mono wrap">{r.apiKey ?? ''}</td>
                  <td>{r.detail ?? ''}</td>
                </tr>
              ))}</tbody>
            </table>
          </div>
        </section>
      ) : (
        <form class="panel" onSubmit={submit}>
          <fieldset>
            <legend>How to name them</legend>
            <label class="check"><input type="radio" name="mode" checked={mode === 'count'} onChange={() => setMode('count')} /> A count and a prefix (prefix-1 … prefix-N)</label>
            <label class="check"><input type="radio" name="mode" checked={mode === 'list'} onChange={() => setMode('list')} /> A list of names</label>
          </fieldset>
          {mode === 'count' ? (
            <div class="row">
              <Field label="Count"><input type="number" min={1} max={1000} required value={count} onInput={(e) => setCount(Number(e.currentTarget.value))} /></Field>
              <Field label="Prefix"><input type="text" required maxLength={58} value={prefix} onInput={(e) => setPrefix(e.currentTarget.value)} /></Field>
            </div>
          ) : (
            <Field label="Names" hint="One per line or comma-separated"><textarea rows={5} required value={names} onInput={(e) => setNames(e.currentTarget.value)} /></Field>
          )}
          <Field label="Tags" hint="Comma-separated, applied to every device"><input type="text" value={tags} onInput={(e) => setTags(e.currentTarget.value)} /></Field>
          {error !== undefined ? <ErrorBox error={error} /> : null}
          <button type="submit" disabled={busy}>{busy ? 'Registering…' : 'Register'}</button>
        </form>
      )}
    </>
  );
}

export const pages: PageDef[] = [
  { pattern: '/devices', title: 'Devices', nav: { label: 'Devices' }, render: () => <DeviceList /> },
  { pattern: '/devices-bulk', title: 'Register devices', render: () => <BulkRegister /> },
  { pattern: '/devices/:name', title: 'Device', render: (p) => <DeviceDetail name={p.name} /> },
];
