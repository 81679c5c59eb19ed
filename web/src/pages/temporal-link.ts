/**
 * The link to a run in the Temporal Web UI, from the service's configuration
 * (/dashboard/config.json, src/config.ts `temporalUiOf`): a configured address, or the local dev
 * server's UI port on the host the dashboard was reached on; null when the service names no UI.
 */
export type TemporalUi = { url: string; namespace: string } | { port: number; namespace: string } | null;

export function temporalRunUrl(ui: TemporalUi, dashboard: { protocol: string; hostname: string }, workflowId: string): string | null {
  if (!ui) return null;
  const base = 'url' in ui ? ui.url : `${dashboard.protocol}//${dashboard.hostname.includes(':') ? `[${dashboard.hostname}]` : dashboard.hostname}:${ui.port}`;
  return `${base}/namespaces/${encodeURIComponent(ui.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

let settings: Promise<TemporalUi> | undefined;

/** The UI setting, fetched once per page load; no link when it cannot be read. */
export function temporalUi(): Promise<TemporalUi> {
  settings ??= fetch('/dashboard/config.json', { credentials: 'omit' })
    .then((res) => (res.ok ? res.json() as Promise<{ temporalUi: TemporalUi }> : { temporalUi: null }))
    .then((s) => s.temporalUi, () => null);
  return settings;
}
