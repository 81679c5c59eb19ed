/** Small shared pieces: data loading, loading/error states, pagination, dialogs, key reveal. */
import { cloneElement, ComponentChildren, VNode } from 'preact';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';

export interface Loaded<T> { data?: T; error?: unknown; loading: boolean; reload: () => void }

/** Runs `load` when `deps` change; a late answer for old deps is dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ data: s.data, loading: true }));
    load().then(
      (data) => { if (live) setState({ data, loading: false }); },
      (error: unknown) => { if (live) setState({ error, loading: false }); },
    );
    return () => { live = false; };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return <p class="loading" role="status">{what}…</p>;
}

/** Subject and verb of the heading for each plan entitlement the service names. */
const FEATURE_PHRASES: Record<string, string> = {
  webhooks: 'Scan webhooks are',
  async_scanning: 'Deferred (asynchronous) scans are',
  audit_log: 'The audit log is',
  analytics: 'Analytics is',
  custom_roles: 'Custom roles are',
  blocked_ips: 'Blocked IPs are',
};

/** The service's 403 plan_required, explained rather than shown as a failure. */
export function PlanRequired({ error }: { error: ApiError }) {
  const feature = String(error.body.feature ?? '');
  const plan = String(error.body.current_plan ?? '');
  return (
    <section class="notice plan" aria-label="Plan required">
      <h2>{FEATURE_PHRASES[feature] ?? 'This feature is'} not part of your plan</h2>
      <p>{error.message}. Your account is on the <strong>{plan}</strong> plan; a higher plan includes it.</p>
      <p>Plans are changed by the service operator; nothing else on this page is affected.</p>
    </section>
  );
}

export function ErrorBox({ error }: { error: unknown }) {
  if (error instanceof ApiError && error.code === 'plan_required') return <PlanRequired error={error} />;
  const message = error instanceof Error ? error.message : String(error);
  const status = error instanceof ApiError && error.status ? ` (HTTP ${error.status}${error.code ? `, ${error.code}` : ''})` : '';
  return <div class="error" role="alert">{message}{status}</div>;
}

/** Loading and error states around a loaded value. */
export function Show<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (loaded.error !== undefined) return <ErrorBox error={loaded.error} />;
  if (loaded.data === undefined) return <Loading />;
  return <>{children(loaded.data)}</>;
}

export function Pager({ label, hasPrev, hasNext, onPrev, onNext }: { label: string; hasPrev: boolean; hasNext: boolean; onPrev: () => void; onNext: () => void }) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={!hasPrev} onClick={onPrev}>← Previous</button>
      <span aria-live="polite">{label}</span>
      <button type="button" disabled={!hasNext} onClick={onNext}>Next →</button>
    </nav>
  );
}

/** A modal <dialog>: the browser traps focus and closes it on Escape. */
export function Dialog({ title, open, onClose, children }: { title: string; open: boolean; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} onClose={onClose} aria-labelledby="dialog-title">
      <h2 id="dialog-title">{title}</h2>
      {children}
    </dialog>
  );
}

/** A secret the service shows once: visible until dismissed, with a copy button. */
export function KeyReveal({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="key-reveal">
      <label>{label}<input type="text" readOnly value={value} class="mono" onFocus={(e) => e.currentTarget.select()} /></label>
      <button type="button" onClick={() => navigator.clipboard.writeText(value).then(() => setCopied(true), () => setCopied(false))}>
        {copied ? 'Copied' : 'Copy'}
      </button>
      <p class="warn">Shown once: the service keeps only a hash and cannot show this key again.</p>
    </div>
  );
}

export function Progress({ label, value, max }: { label: string; value: number; max?: number }) {
  return (
    <div class="progress">
      <progress value={max ? value : undefined} max={max || undefined} aria-label={label} />
      <span>{label}</span>
    </div>
  );
}

/** A labelled control; the hint is its description, not part of its name. */
export function Field({ label, hint, children }: { label: string; hint?: string; children: VNode }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id} class="field-label">{label}</label>
      {cloneElement(children, { id, ...(hint ? { 'aria-describedby': `${id}-hint` } : {}) })}
      {hint ? <small id={`${id}-hint`}>{hint}</small> : null}
    </div>
  );
}
