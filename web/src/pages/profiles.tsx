/**
 * Scan profiles: allowed file types, suppressed engines and the webhook. Webhook credentials are
 * write-only: the service answers only whether one is configured, so changing the webhook of a
 * profile with a credential means entering it again.
 */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { formatTime, splitList } from '../format';
import type { Profile } from '../types';
import { ErrorBox, Field, Show, useLoad } from '../ui';
import type { PageDef } from './page';

/** The file types a profile may allow, as the API document lists them (no second copy here). */
async function fileTypes(): Promise<string[]> {
  const res = await fetch('/openapi.json', { cache: 'no-store', credentials: 'omit' });
  if (!res.ok) throw new Error(`The API document could not be read (HTTP ${res.status})`);
  const doc = (await res.json()) as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties: Record<string, { items?: { enum?: string[] } }> } }> } }>> };
  return doc.paths['/api/account/profiles']?.post?.requestBody?.content['application/json']?.schema.properties.allowedTypes?.items?.enum ?? [];
}

interface Draft {
  name: string; isDefault: boolean; allowedTypes: string[]; suppressed: string;
  webhookUrl: string; authType: string; value: string; headerName: string; headers: string; webhookTouched: boolean;
}

function draftOf(p?: Profile): Draft {
  return {
    name: p?.name ?? '', isDefault: p?.isDefault ?? false, allowedTypes: p?.allowedTypes ?? [], suppressed: (p?.suppressedEngines ?? []).join(', '),
    webhookUrl: p?.webhook?.url ?? '', authType: p?.webhook?.authType ?? 'none', value: '', headerName: p?.webhook?.headerName ?? '',
    headers: '', webhookTouched: false,
  };
}

/** "Name: value" lines into an object. */
function headersOf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const i = line.indexOf(':');
    if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

function bodyOf(d: Draft, editing: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: d.name, isDefault: d.isDefault, allowedTypes: d.allowedTypes, suppressedEngines: splitList(d.suppressed),
  };
  // On edit the webhook is sent only when changed: the stored credential cannot be sent back.
  if (!editing || d.webhookTouched) {
    body.webhook = d.webhookUrl === '' ? null : {
      url: d.webhookUrl, authType: d.authType,
      ...(d.authType !== 'none' && d.value ? { value: d.value } : {}),
      ...(d.authType === 'custom_header' ? { headerName: d.headerName } : {}),
      ...(d.headers.trim() ? { headers: headersOf(d.headers) } : {}),
    };
  }
  return body;
}

function ProfileForm({ profile, onDone }: { profile?: Profile; onDone: () => void }) {
  const [d, setD] = useState(draftOf(profile));
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const types = useLoad(fileTypes, []);
  const set = (patch: Partial<Draft>) => setD({ ...d, ...patch });
  const setHook = (patch: Partial<Draft>) => setD({ ...d, ...patch, webhookTouched: true });
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      if (profile) await api('PATCH', `/api/account/profiles/${encodeURIComponent(profile.id)}`, { json: bodyOf(d, true) });
      else await api('POST', '/api/account/profiles', { json: bodyOf(d, false) });
      onDone();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const credentialSet = profile?.webhook?.configured === true;
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="profile-form-h">
      <h2 id="profile-form-h">{profile ? `Edit ${profile.name}` : 'New profile'}</h2>
      <Field label="Name"><input type="text" required maxLength={100} value={d.name} onInput={(e) => set({ name: e.currentTarget.value })} /></Field>
      <label class="check"><input type="checkbox" checked={d.isDefault} onChange={(e) => set({ isDefault: e.currentTarget.checked })} /> Default profile of the account</label>
      <fieldset>
        <legend>Allowed file types <small>(none ticked = every type)</small></legend>
        {types.data ? (
          <div class="checks">
            {types.data.map((t) => (
              <label class="check" key={t}>
                <input type="checkbox" checked={d.allowedTypes.includes(t)}
                  onChange={(e) => set({ allowedTypes: e.currentTarget.checked ? [...d.allowedTypes, t] : d.allowedTypes.filter((x) => x !== t) })} /> {t}
              </label>
            ))}
          </div>
        ) : types.error ? <ErrorBox error={types.error} /> : null}
      </fieldset>
      <Field label="Suppressed engines" hint="Comma-separated engine names whose findings are hidden (the verdict still counts them)">
        <input type="text" value={d.suppressed} onInput={(e) => set({ suppressed: e.currentTarget.value })} />
      </Field>
      <fieldset>
        <legend>Webhook</legend>
        {credentialSet ? <p class="muted">A credential is set and is never shown. To change the webhook, enter its credential again.</p> : null}
        <Field label="URL" hint="Empty = no webhook"><input type="url" value={d.webhookUrl} onInput={(e) => setHook({ webhookUrl: e.currentTarget.value })} /></Field>
        <div class="row">
          <Field label="Authentication">
            <select value={d.authType} onChange={(e) => setHook({ authType: e.currentTarget.value })}>
              <option value="none">None</option>
              <option value="api_key">API key</option>
              <option value="bearer">Bearer token</option>
              <option value="custom_header">Custom header</option>
            </select>
          </Field>
          {d.authType === 'custom_header' ? (
            <Field label="Header name"><input type="text" maxLength={64} value={d.headerName} onInput={(e) => setHook({ headerName: e.currentTarget.value })} /></Field>
          ) : null}
        </div>
        {d.authType !== 'none' ? (
          <Field label="Credential" hint="Write-only: stored encrypted, signs each delivery, never displayed">
            <input type="password" autoComplete="off" value={d.value} onInput={(e) => setHook({ value: e.currentTarget.value })} />
          </Field>
        ) : null}
        <Field label="Additional headers" hint={`One "Name: value" per line${profile?.webhook?.headers?.length ? `; now set: ${profile.webhook.headers.join(', ')}` : ''}`}>
          <textarea rows={2} value={d.headers} onInput={(e) => setHook({ headers: e.currentTarget.value })} />
        </Field>
      </fieldset>
      {error !== undefined ? <ErrorBox error={error} /> : null}
      <div class="row">
        <button type="submit" disabled={busy}>{profile ? 'Save changes' : 'Create profile'}</button>
        <button type="button" class="secondary" onClick={onDone}>Cancel</button>
      </div>
    </form>
  );
}

function Profiles() {
  const list = useLoad(() => api<{ profiles: Profile[] }>('GET', '/api/account/profiles'), []);
  const [editing, setEditing] = useState<Profile | 'new' | undefined>();
  const [error, setError] = useState<unknown>();
  const remove = async (p: Profile) => {
    if (!confirm(`Delete the profile ${p.name}?`)) return;
    try { await api('DELETE', `/api/account/profiles/${encodeURIComponent(p.id)}`); list.reload(); } catch (err) { setError(err); }
  };
  const done = () => { setEditing(undefined); list.reload(); };
  return (
    <>
      <div class="title-row">
        <h1 tabIndex={-1}>Scan profiles</h1>
        <button type="button" onClick={() => setEditing('new')} disabled={editing !== undefined}>New profile</button>
      </div>
      {editing ? <ProfileForm key={editing === 'new' ? 'new' : editing.id} profile={editing === 'new' ? undefined : editing} onDone={done} /> : null}
      {error !== undefined ? <ErrorBox error={error} /> : null}
      <Show loaded={list}>{(l) => l.profiles.length === 0 ? <p class="muted">No profiles: scans use the built-in defaults.</p> : (
        <div class="table-wrap">
          <table>
            <thead><tr><th scope="col">Name</th><th scope="col">Allowed types</th><th scope="col">Suppressed</th><th scope="col">Webhook</th><th scope="col">Updated</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>
              {l.profiles.map((p) => (
                <tr key={p.id}>
                  <th scope="row">{p.name}{p.isDefault ? <span class="badge info">default</span> : null}</th>
                  <td>{p.allowedTypes.length ? p.allowedTypes.join(', ') : 'all'}</td>
                  <td>{p.suppressedEngines.length ? p.suppressedEngines.join(', ') : '—'}</td>
                  <td>{p.webhook ? <>{p.webhook.url} <span class="muted">({p.webhook.authType}{p.webhook.configured ? ', credential set' : ''})</span></> : '—'}</td>
                  <td>{formatTime(p.updatedAt)}</td>
                  <td class="actions">
                    <button type="button" class="secondary" onClick={() => setEditing(p)}>Edit</button>
                    <button type="button" class="danger" onClick={() => remove(p)}>Delete</button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}</Show>
    </>
  );
}

export const pages: PageDef[] = [
  { pattern: '/profiles', title: 'Scan profiles', nav: { label: 'Profiles' }, render: () => <Profiles /> },
];
