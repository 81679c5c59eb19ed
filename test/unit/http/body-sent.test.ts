import http from 'node:http';
import net from 'node:net';
import { Readable } from 'node:stream';
import { trackBodySent } from '../../../src/http/body-sent';

/**
 * A body whose bytes all go out at once but whose end comes later (a blob stream whose EOF is
 * read after the last chunk): the client has everything before `res.end()` runs.
 */
function lateEnding(body: Buffer, endAfter: Promise<void>): Readable {
  let pushed = false;
  return new Readable({
    read() {
      if (pushed) return;
      pushed = true;
      this.push(body);
      void endAfter.then(() => this.push(null));
    },
  });
}

/** A body read in 64 KB chunks with backpressure, as a blob or file stream is. */
function chunked(body: Buffer): Readable {
  const chunks: Buffer[] = [];
  for (let at = 0; at < body.length; at += 65536) chunks.push(body.subarray(at, at + 65536));
  return Readable.from(chunks, { objectMode: false });
}

/**
 * Serves one response of `body` and resolves with trackBodySent's answer when it closes; the
 * client reads `readBytes` of the body and then closes.
 */
async function closeAfter(body: Buffer, readBytes: number, source: 'late-ending' | 'chunked'): Promise<boolean> {
  let releaseEnd = (): void => undefined;
  const endAfter = new Promise<void>((resolve) => { releaseEnd = resolve; });
  let answer: (v: boolean) => void = () => undefined;
  const decided = new Promise<boolean>((resolve) => { answer = resolve; });
  const server = http.createServer((_req, res) => {
    const sent = trackBodySent(res, body.length);
    res.once('close', () => { answer(sent()); releaseEnd(); });
    res.writeHead(200, { 'content-length': body.length });
    (source === 'chunked' ? chunked(body) : lateEnding(body, endAfter)).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const socket = net.connect(port, '127.0.0.1');
  socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
  let received = Buffer.alloc(0);
  socket.on('data', (d: Buffer) => {
    received = Buffer.concat([received, d]);
    const head = received.indexOf('\r\n\r\n');
    if (head >= 0 && received.length - head - 4 >= readBytes) socket.destroy();
  });
  try {
    return await decided;
  } finally {
    server.close();
  }
}

describe('trackBodySent', () => {
  it('counts a body as sent when the client read every byte and closed before the body stream ended', async () => {
    expect(await closeAfter(Buffer.alloc(4096, 7), 4096, 'late-ending')).toBe(true);
  });

  it('does not when the client went away before the last byte reached the connection', async () => {
    // The client leaves after the first 64 KB of a 64 MB body (far beyond any socket buffers): backpressure has held the rest back.
    expect(await closeAfter(Buffer.alloc(64 * 1024 * 1024, 7), 65536, 'chunked')).toBe(false);
  });
});
