/**
 * The signed-in account key. It lives in sessionStorage only (gone when the tab closes), is sent
 * only as the Bearer header, and never appears in a URL or a log line.
 */
const STORAGE_KEY = 'sentinel.apiKey';

type Listener = (reason: string | undefined) => void;
const listeners = new Set<Listener>();

export function currentKey(): string | undefined {
  return sessionStorage.getItem(STORAGE_KEY) ?? undefined;
}

export function signIn(key: string): void {
  sessionStorage.setItem(STORAGE_KEY, key);
  for (const l of listeners) l(undefined);
}

/** Forgets the key; `reason` is shown on the sign-in page (an expired or revoked key). */
export function signOut(reason?: string): void {
  sessionStorage.removeItem(STORAGE_KEY);
  for (const l of listeners) l(reason);
}

export function onSessionChange(l: Listener): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}
