/**
 * Requests Node's HTTP parser refuses before any route sees them (a header block over the limit,
 * a body not received within `requestTimeout`, bytes that are not HTTP) are answered in the
 * scanning error shape, with a requestId, instead of Node's bare status line: an outside probe's
 * stalled upload got a `408` with no body after five minutes. As Node itself does, an answer is
 * written only while nothing of a response has gone out on the socket; the socket is then closed.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

const ANSWERS: Record<string, { status: number; code: string; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'request_timeout', message: 'The request was not received in time; the connection is closed' },
  HPE_HEADER_OVERFLOW: { status: 431, code: 'headers_too_large', message: 'The request headers are too large' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, code: 'payload_too_large', message: 'The chunk extensions are too large' },
};

export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex & { bytesWritten?: number }): void {
  if (err.code !== 'ECONNRESET' && socket.writable && !socket.bytesWritten) {
    const a = ANSWERS[err.code ?? ''] ?? { status: 400, code: 'bad_request', message: 'The request is not valid HTTP' };
    // The scanning shape (app.ts errorBody): no route, so no dialect of its own.
    const body = JSON.stringify({ error: a.message, requestId: randomUUID(), code: a.code });
    socket.write(`HTTP/1.1 ${a.status} ${STATUS_CODES[a.status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy();
}
