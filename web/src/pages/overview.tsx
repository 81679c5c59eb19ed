/** Overview: this month's scan usage, the 30-day daily volume and in-app notifications. */
import { api } from '../api';
import { VolumeChart } from '../chart';
import { formatBytes, formatTime } from '../format';
import type { Notification, Usage } from '../types';
import { Show, useLoad } from '../ui';
import type { PageDef } from './page';

function Overview() {
  const usage = useLoad(() => api<Usage>('GET', '/api/account/usage'), []);
  const notes = useLoad(() => api<{ notifications: Notification[] }>('GET', '/api/account/notifications'), []);
  return (
    <>
      <h1 tabIndex={-1}>Overview</h1>
      <Show loaded={usage}>{(u) => (
        <>
          <dl class="cards">
            <div><dt>Plan</dt><dd class="cap">{u.plan_tier}</dd></div>
            <div><dt>Scans this month</dt><dd>{u.scans_used} / {u.max_scans}</dd></div>
            <div><dt>Scans remaining</dt><dd>{u.scans_remaining}</dd></div>
            <div><dt>Largest file</dt><dd>{u.max_file_size_mb} MB</dd></div>
            <div><dt>Counter resets</dt><dd><time dateTime={u.reset_at} title={formatTime(u.reset_at)}>{new Date(u.reset_at).toLocaleDateString()}</time></dd></div>
          </dl>
          <section aria-labelledby="volume-h">
            <h2 id="volume-h">Daily scan volume</h2>
            <VolumeChart dates={u.daily_volume.dates} counts={u.daily_volume.counts} />
          </section>
        </>
      )}</Show>
      <section aria-labelledby="notes-h">
        <h2 id="notes-h">Notifications</h2>
        <Show loaded={notes}>{(n) => n.notifications.length === 0
          ? <p class="muted">No notifications this month.</p>
          : (
            <ul class="notes">
              {n.notifications.map((x) => (
                <li key={x.id} class={x.kind === 'data_limit_100' ? 'note-alert' : 'note-warn'}>
                  <strong>{x.message}</strong>
                  <span class="muted"> — {formatBytes(x.usedBytes)} of {formatBytes(x.limitBytes)} ({x.period}), {formatTime(x.createdAt)}</span>
                </li>
              ))}
            </ul>
          )}</Show>
      </section>
    </>
  );
}

export const pages: PageDef[] = [
  { pattern: '/', title: 'Overview', nav: { label: 'Overview' }, render: () => <Overview /> },
];
