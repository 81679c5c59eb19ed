import type { ServerResponse } from 'node:http';

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
