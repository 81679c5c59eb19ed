/**
 * Streams a multipart upload (busboy): one `file` part plus small text fields. The size limit is
 * enforced while streaming: the request is refused with 413 the moment the file passes the
 * plan's limit, without buffering the rest.
 */
import type { IncomingMessage } from 'node:http';
import { createHash } from 'node:crypto';
import busboy from 'busboy';
import { BadRequestError, PayloadTooLargeError } from '../errors';

export interface ParsedUpload {
  content: Buffer;
  filename: string;
  fields: Record<string, string>;
  /** Digests computed while the bytes streamed in. */
  hashes: { sha256: string; md5: string; sha1: string };
}

export function readMultipartUpload(req: IncomingMessage, maxFileBytes: number, limitText: string): Promise<ParsedUpload> {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(type)) {
    return Promise.reject(new BadRequestError('Request must be multipart/form-data with a "file" part', undefined, 'invalid_upload'));
  }
  return new Promise<ParsedUpload>((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      // fileSize is one past the plan's limit: busboy reports 'limit' once a file *reaches*
      // fileSize, and a file of exactly the plan's maximum is allowed. `files` is not 1: a file
      // part under another name is skipped and must not use up the slot of the real `file` part.
      // defParamCharset: browsers and curl send a non-ASCII file name as raw UTF-8 in `filename=`;
      // busboy's default (latin1) would garble it.
      bb = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { files: 5, fileSize: maxFileBytes + 1, fields: 20, fieldSize: 4096, parts: 25 } });
    } catch (err) {
      reject(new BadRequestError(`Malformed multipart request: ${(err as Error).message}`, undefined, 'invalid_upload'));
      return;
    }
    const fields: Record<string, string> = {};
    const chunks: Buffer[] = [];
    const digests = { sha256: createHash('sha256'), md5: createHash('md5'), sha1: createHash('sha1') };
    let filename: string | undefined;
    let sawFile = false;
    let failed = false;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      req.unpipe(bb);
      // Stop reading the rest of the body: the client gets the answer now.
      req.resume();
      reject(err);
    };
    const malformed = (err: Error) => fail(new BadRequestError(`Malformed multipart request: ${err.message}`, undefined, 'invalid_upload'));
    bb.on('file', (name, stream, info) => {
      // A body that ends inside a file part ("Unexpected end of form") destroys the part's stream
      // with an error; without a listener that error would be an uncaught exception.
      stream.on('error', malformed);
      if (name !== 'file' || sawFile) {
        stream.resume();
        return;
      }
      sawFile = true;
      filename = info.filename ?? '';
      stream.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        digests.sha256.update(chunk);
        digests.md5.update(chunk);
        digests.sha1.update(chunk);
      });
      stream.on('limit', () => fail(new PayloadTooLargeError(limitText)));
    });
    bb.on('field', (name, value) => { fields[name] = value; });
    bb.on('error', malformed);
    bb.on('close', () => {
      if (failed) return;
      if (!sawFile) return reject(new BadRequestError('Missing "file" part in the multipart request', undefined, 'invalid_upload'));
      resolve({
        content: Buffer.concat(chunks),
        filename: filename ?? '',
        fields,
        hashes: { sha256: digests.sha256.digest('hex'), md5: digests.md5.digest('hex'), sha1: digests.sha1.digest('hex') },
      });
    });
    req.pipe(bb);
  });
}
