/** Uploads a file as multipart/form-data with fetch's FormData. */
import { stack } from './env';

export async function upload(key: string, content: Buffer, filename: string, opts: { query?: string; headers?: Record<string, string>; fields?: Record<string, string> } = {}) {
  const form = new FormData();
  form.append('file', new Blob([content]), filename);
  for (const [k, v] of Object.entries(opts.fields ?? {})) form.append(k, v);
  const res = await fetch(`${stack().baseUrl}/api/scan${opts.query ?? ''}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...opts.headers }, body: form });
  const text = await res.text();
  let body: Record<string, any> = {};
  try { body = JSON.parse(text); } catch { body = { raw: text }; }
  return { status: res.status, body, headers: res.headers };
}
