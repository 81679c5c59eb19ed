/**
 * Requests Node's parser refuses get the error shape, not a bare status line (an outside probe's
 * stalled upload got `408` with no body after five minutes); a real server checks the 431 path.
 */
import http from 'node:http';
import net from 'node:net';
import { PassThrough } from 'node:stream';
import { answerClientError } from '../../../src/http/client-error';

function fakeSocket(bytesWritten = 0) {
  const s = Object.assign(new PassThrough(), { bytesWritten });
  let written = '';
  s.on('data', (c: Buffer) => { written += c.toString('utf8'); });
  return { s, written: () => written };
}

const err = (code: string) => Object.assign(new Error(code), { code });

it('answers a request timeout with 408 in the error shape, then closes', async () => {
  const { s, written } = fakeSocket();
  answerClientError(err('ERR_HTTP_REQUEST_TIMEOUT'), s);
  await new Promise((r) => setImmediate(r));
  const [head, body] = written().split('\r\n\r\n');
  expect(head).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
  expect(head).toContain('Connection: close');
  expect(JSON.parse(body)).toEqual({ error: expect.stringMatching(/not received in time/), requestId: expect.any(String), code: 'request_timeout' });
  expect(s.destroyed).toBe(true);
});

it('writes nothing once a response has started, and nothing on a reset; the socket is closed either way', async () => {
  for (const [e, sent] of [[err('ERR_HTTP_REQUEST_TIMEOUT'), 10], [err('ECONNRESET'), 0]] as const) {
    const { s, written } = fakeSocket(sent);
    answerClientError(e, s);
    await new Promise((r) => setImmediate(r));
    expect(written()).toBe('');
    expect(s.destroyed).toBe(true);
  }
});

it('a real server answers a 20 KB header block with 431 in the error shape', async () => {
  const server = http.createServer((_req, res) => res.end('ok'));
  server.on('clientError', answerClientError);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    const port = (server.address() as net.AddressInfo).port;
    const reply = await new Promise<string>((resolve, reject) => {
      const c = net.connect(port, '127.0.0.1', () => c.write(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`));
      let text = '';
      c.on('data', (d: Buffer) => { text += d.toString('utf8'); });
      c.on('close', () => resolve(text));
      c.on('error', reject);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(reply.split('\r\n\r\n')[1])).toMatchObject({ code: 'headers_too_large', requestId: expect.any(String) });
  } finally {
    server.close();
  }
});
