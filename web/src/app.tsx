/** The shell: sign-in, navigation, and the page for the current route. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, checkKey } from './api';
import { PAGES } from './pages';
import { href, match, useRoute } from './router';
import { currentKey, onSessionChange, signIn, signOut } from './session';
import type { Usage } from './types';

function SignIn({ reason }: { reason?: string }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    const candidate = key.trim();
    try {
      await checkKey<Usage>(candidate);
      signIn(candidate);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) setError('This key was not accepted: it is wrong, revoked or deleted. Check it and try again.');
      else if (err instanceof ApiError && err.status === 403) setError('This is a device (entity) key. Sign in with an account API key.');
      else if (err instanceof ApiError && err.status === 429) setError('Too many requests right now; wait a moment and try again.');
      else setError(`The service could not be reached or failed: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="signin">
      <h1>Sentinel dashboard</h1>
      {reason ? <p class="notice" role="status">{reason}</p> : null}
      <form onSubmit={submit} class="panel">
        <label class="field">
          <span class="field-label">Account API key</span>
          <input type="password" name="apiKey" autoComplete="off" required autoFocus value={key} onInput={(e) => setKey(e.currentTarget.value)} />
          <small>Kept in this tab's session storage only and sent only as the Authorization header.</small>
        </label>
        {error ? <p class="error" role="alert">{error}</p> : null}
        <button type="submit" disabled={busy || key.trim() === ''}>{busy ? 'Checking…' : 'Sign in'}</button>
      </form>
    </main>
  );
}

function NotFound() {
  return (
    <>
      <h1 tabIndex={-1}>Not found</h1>
      <p>There is no page here. <a href={href('/')}>Back to the overview</a>.</p>
    </>
  );
}

function Shell() {
  const path = useRoute();
  const [menuOpen, setMenuOpen] = useState(false);
  const mainRef = useRef<HTMLElement>(null);
  let params: Record<string, string> | undefined;
  const page = PAGES.find((p) => (params = match(p.pattern, path)) !== undefined);
  useEffect(() => {
    document.title = `${page?.title ?? 'Not found'} · Sentinel`;
    setMenuOpen(false);
    // Move focus to the new page's heading so keyboard and screen-reader users land on it.
    const h1 = mainRef.current?.querySelector<HTMLElement>('h1');
    if (h1 && document.activeElement !== document.body) h1.focus();
  }, [path]);
  const active = (pattern: string) => (pattern === '/' ? path === '/' : path === pattern || path.startsWith(`${pattern}/`) || path.startsWith(`${pattern}-`));
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); mainRef.current?.querySelector<HTMLElement>('h1')?.focus(); }}>Skip to content</a>
      <header class="topbar">
        <a class="brand" href={href('/')}>Sentinel</a>
        <button type="button" class="menu-toggle secondary" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>Menu</button>
        <nav id="nav" class={menuOpen ? 'open' : ''} aria-label="Sections">
          <ul>
            {PAGES.filter((p) => p.nav).map((p) => (
              <li key={p.pattern}><a href={href(p.pattern)} aria-current={active(p.pattern) ? 'page' : undefined}>{p.nav?.label}</a></li>
            ))}
          </ul>
        </nav>
        <button type="button" class="secondary signout" onClick={() => signOut()}>Sign out</button>
      </header>
      <main id="main" ref={mainRef}>
        {page && params ? page.render(params) : <NotFound />}
      </main>
    </>
  );
}

export function App() {
  const [signedIn, setSignedIn] = useState(currentKey() !== undefined);
  const [reason, setReason] = useState<string | undefined>();
  useEffect(() => onSessionChange((why) => {
    setSignedIn(currentKey() !== undefined);
    setReason(why);
  }), []);
  return signedIn ? <Shell /> : <SignIn reason={reason} />;
}
