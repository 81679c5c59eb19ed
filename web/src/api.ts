/**
 * The one way the dashboard talks to the service: the public API, with the session key as the
 * Bearer header. A 401 on a signed-in session ends it (back to sign-in).
 */
import { currentKey, signOut } from './session';

export class ApiError extends Error {
  constructor(readonly status: number, message: string, readonly code?: string, readonly body: Record<string, unknown> = {}) {
    super(message);
  }
}

export type Query = Record<string, string | number | boolean | undefined>;

export function withQuery(path: string, query?: Query): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** Both error shapes of the service: scanning `{error}` and messaging `{reason}`. */
function errorFrom(status: number, body: unknown): ApiError {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const message = typeof b.error === 'string' ? b.error : typeof b.reason === 'string' ? b.reason : `The service answered HTTP ${status}`;
  return new ApiError(status, message, typeof b.code === 'string' ? b.code : undefined, b);
}

async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return undefined;
  try { return JSON.parse(text); } catch { return undefined; }
}

function sessionEnded(): void {
  signOut('Your session has ended: the service no longer accepts this key. Sign in again.');
}

function authHeaders(key: string | undefined): Record<string, string> {
  if (!key) {
    sessionEnded();
    throw new ApiError(401, 'Not signed in');
  }
  return { authorization: `Bearer ${key}` };
}

export async function api<T>(method: string, path: string, opts: { json?: unknown; query?: Query } = {}): Promise<T> {
  const headers = authHeaders(currentKey());
  if (opts.json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(withQuery(path, opts.query), {
    method, headers, body: opts.json === undefined ? undefined : JSON.stringify(opts.json), credentials: 'omit', cache: 'no-store',
  });
  const body = await readJson(res);
  if (res.status === 401) sessionEnded();
  if (!res.ok) throw errorFrom(res.status, body);
  return body as T;
}

/** Checks a candidate key before it is kept; answers the usage (plan) of its account. */
export async function checkKey<T>(key: string): Promise<T> {
  const res = await fetch('/api/account/usage', { headers: { authorization: `Bearer ${key}` }, credentials: 'omit', cache: 'no-store' });
  const body = await readJson(res);
  if (!res.ok) throw errorFrom(res.status, body);
  return body as T;
}

/** multipart upload through XMLHttpRequest, the one browser API that reports upload progress. */
export function upload<T>(path: string, form: FormData, onProgress: (sent: number, total: number) => void, query?: Query): Promise<{ status: number; body: T }> {
  const key = currentKey();
  const headers = authHeaders(key);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', withQuery(path, query));
    xhr.setRequestHeader('authorization', headers.authorization);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : 0);
    xhr.onerror = () => reject(new ApiError(0, 'The upload failed: the service could not be reached'));
    xhr.onload = () => {
      let body: unknown;
      try { body = JSON.parse(xhr.responseText); } catch { body = undefined; }
      if (xhr.status === 401) sessionEnded();
      if (xhr.status >= 400) reject(errorFrom(xhr.status, body));
      else resolve({ status: xhr.status, body: body as T });
    };
    xhr.send(form);
  });
}

/** Downloads an export as it streams, reporting bytes received; answers the file and its name. */
export async function download(path: string, query: Query, onProgress: (received: number) => void): Promise<{ blob: Blob; filename: string }> {
  const res = await fetch(withQuery(path, query), { headers: authHeaders(currentKey()), credentials: 'omit', cache: 'no-store' });
  if (res.status === 401) sessionEnded();
  if (!res.ok) throw errorFrom(res.status, await readJson(res));
  const chunks: BlobPart[] = [];
  let received = 0;
  const reader = res.body?.getReader();
  if (reader) {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      received += value.byteLength;
      onProgress(received);
    }
  }
  const disposition = res.headers.get('content-disposition') ?? '';
  const filename = /filename="([^"]+)"/.exec(disposition)?.[1] ?? 'export';
  return { blob: new Blob(chunks, { type: res.headers.get('content-type') ?? 'application/octet-stream' }), filename };
}

/**
 * Bytes the browser must show (a clip's poster or video) fetched with the Bearer header, as a
 * blob: URL. <img> and <video> cannot send the header, and the key never goes into a URL. The
 * caller revokes the URL when done.
 */
export async function blobUrl(path: string, signal?: AbortSignal): Promise<string> {
  const res = await fetch(path, { headers: authHeaders(currentKey()), credentials: 'omit', cache: 'no-store', signal });
  if (res.status === 401) sessionEnded();
  if (!res.ok) throw errorFrom(res.status, await readJson(res));
  return URL.createObjectURL(await res.blob());
}

/** Hands a file to the browser's download manager. */
export function saveFile(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
