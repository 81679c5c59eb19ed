/**
 * An upload whose client goes away mid-body, from outside: a raw connection declares a large
 * Content-Length, sends the form's text fields and the start of its `file` part, and is then closed
 * or reset by the test. fetch cannot send a body that stops short of its declared length.
 */
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

const BOUNDARY = 'CUTOFFBOUNDARYq93';

export interface CutOffUpload {
  /** Declared in Content-Length; far more than is sent. */
  declared?: number;
  /** How many bytes of the file part are sent. */
  fileBytes?: number;
  fields?: Record<string, string>;
  headers?: Record<string, string>;
}

/** Sends the request's head and the start of its body on a new connection, which stays open for the test to close. */
export function sendCutOffUpload(port: number, requestPath: string, o: CutOffUpload = {}): Promise<net.Socket> {
  const fields = Object.entries(o.fields ?? {}).map(([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('');
  const body = `${fields}--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const headers = Object.entries({
    Host: `127.0.0.1:${port}`, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`, 'Content-Length': String(o.declared ?? 5_000_000), ...o.headers,
  }).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  const bytes = Buffer.concat([Buffer.from(`POST ${requestPath} HTTP/1.1\r\n${headers}\r\n${body}`), Buffer.alloc(o.fileBytes ?? 1024 * 1024, 0x5a)]);
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('error', reject);
    socket.write(bytes, () => {
      // Whatever the server does after the test closes the connection is not this socket's error.
      socket.removeListener('error', reject);
      socket.on('error', () => undefined);
      resolve(socket);
    });
  });
}

/** The open descriptors of process `pid` that point into `dir` (also those of files deleted while open); [] without /proc. */
export function openFdsInto(pid: number | 'self', dir: string): string[] {
  const fds = `/proc/${pid}/fd`;
  if (!existsSync(fds)) return [];
  const links: string[] = [];
  for (const fd of readdirSync(fds)) {
    try {
      const target = readlinkSync(path.join(fds, fd));
      if (target.startsWith(dir + path.sep)) links.push(target);
    } catch { /* closed between listing and reading */ }
  }
  return links;
}

/** Polls `check` every 20 ms for up to `ms`; whether it came true. */
export async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) return false;
    await new Promise((res) => setTimeout(res, 20));
  }
  return true;
}

export type Settled = { settled: 'resolved' } | { settled: 'rejected'; err: { status?: number; code?: string; message: string } } | { settled: 'pending' };

/** How `p` stands after up to `ms`: a hung upload stays 'pending'. */
export async function settledWithin(p: Promise<unknown>, ms: number): Promise<Settled> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<Settled>((res) => { timer = setTimeout(() => res({ settled: 'pending' }), ms); });
  try {
    return await Promise.race([
      p.then(
        (): Settled => ({ settled: 'resolved' }),
        (err: Error & { status?: number; code?: string }): Settled => ({ settled: 'rejected', err: { status: err.status, code: err.code, message: err.message } }),
      ),
      pending,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
