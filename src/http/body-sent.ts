import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Whether a response's whole body was handed to the connection, asked when the response closes.
 * `writableEnded` alone is not enough: a client that knows the length reads every byte and
 * closes at once, and the response can close before the body stream's end reached `res.end()`.
 * So the body bytes given to `res.write` are counted too (wrapping the response's own write,
 * which every pipe into it calls).
 */
export function trackBodySent(res: ServerResponse, length: number): () => boolean {
  let handed = 0;
  const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
  res.write = ((chunk: unknown, ...rest: unknown[]): boolean => {
    if (!res.destroyed && !res.writableEnded) handed += typeof chunk === 'string' ? Buffer.byteLength(chunk) : (chunk as Uint8Array).byteLength;
    return write(chunk, ...rest);
  }) as ServerResponse['write'];
  return () => res.writableFinished || res.writableEnded || handed >= length;
}

/**
 * Whether the client received a response whose body was all handed to the connection; watched
 * from the start of the response, asked when it closes. Handed is not received: the last
 * megabytes can sit in the kernel's socket buffers when the client goes away (an outside probe
 * read 2 MB of 4 MB, closed, and the file was consumed). What proves it: the client sends its
 * next request on the connection after this response ended, or closes the connection cleanly; a
 * client that closes with bytes unread resets it (an error). An idle keep-alive connection is
 * closed by the server's keep-alive timeout, which counts as clean.
 */
export function watchReceipt(socket: Socket, handedAll: () => boolean): () => Promise<boolean> {
  let nextRequest = false;
  let closed: boolean | undefined;
  let settle: ((received: boolean) => void) | undefined;
  const finish = (received: boolean) => {
    socket.off('data', onData);
    socket.off('close', onClose);
    settle?.(received);
  };
  // The next request can arrive before this response's 'close' event, and even before `end()`
  // (the last chunk was written and the client answered before the body stream's own end reached
  // the response: a loaded machine's CI run): listen from the start, and count data that came once
  // every byte of the body was handed over (trackBodySent), not data sent while it was streaming.
  const onData = () => {
    if (!handedAll()) return;
    nextRequest = true;
    finish(true);
  };
  const onClose = (hadError: boolean) => {
    closed = !hadError;
    finish(!hadError);
  };
  socket.on('data', onData);
  socket.once('close', onClose);
  return () => {
    if (nextRequest) return Promise.resolve(true);
    if (closed !== undefined) return Promise.resolve(closed);
    if (socket.destroyed) {
      finish(!socket.errored);
      return Promise.resolve(!socket.errored);
    }
    return new Promise((resolve) => { settle = resolve; });
  };
}
