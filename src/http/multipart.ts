/**
 * Streams a multipart upload (busboy): one `file` part plus small text fields. The size limit is
 * enforced while streaming: the request is refused with 413 the moment the file passes the
 * plan's limit, without buffering the rest.
 */
import { FIXED_LIMITS } from '../accounts/plans';
import type { IncomingMessage } from 'node:http';
import { Readable, Transform } from 'node:stream';
import { createHash } from 'node:crypto';
import busboy from 'busboy';
import { BadRequestError, PayloadTooLargeError } from '../errors';

/** Multipart framing around the file: boundaries, part headers and the small fields. */
const MULTIPART_OVERHEAD = 64 * 1024;

/** The plan's file-size limit and the text of its 413. */
/**
 * A declared Content-Length over the limit is answered 413 now; the rest of the body is read and
 * discarded (never buffered) so the client sees the 413 instead of a reset connection.
 */
export function refuseDeclaredOverLimit(req: IncomingMessage, declaredLength: number, maxFileBytes: number, limitText: string): void {
  if (declaredLength > maxFileBytes + MULTIPART_OVERHEAD) {
    req.resume();
    throw new PayloadTooLargeError(limitText);
  }
}

export interface ParsedUpload {
  content: Buffer;
  filename: string;
  fields: Record<string, string>;
  /** Digests computed while the bytes streamed in. */
  hashes: { sha256: string; md5: string; sha1: string };
}

export interface StreamedUpload<T> extends Omit<ParsedUpload, 'content'> {
  /** What `consume` made of the file part (e.g. where it was stored). */
  stored: T;
  size: number;
  /** The part's declared media type. */
  mimeType: string;
}

/**
 * Buffers the `file` part in memory (scans need the bytes whole), copying each piece into one buffer
 * sized from Content-Length as it arrives: joining a large file's pieces at the end (Buffer.concat
 * of 60 MB) held the event loop for a few hundred milliseconds, and every other request with it.
 */
export async function readMultipartUpload(req: IncomingMessage, maxFileBytes: number, limitText: string, fieldNames: readonly string[]): Promise<ParsedUpload> {
  const declared = Number(req.headers['content-length']);
  // The body is the file plus the multipart framing; the file is never larger than the plan allows.
  const capacity = Number.isSafeInteger(declared) && declared > 0 ? Math.min(declared, maxFileBytes + 1) : 0;
  const { stored, ...rest } = await streamMultipartUpload(req, maxFileBytes, limitText, fieldNames, async (file) => {
    const whole = capacity > 0 ? Buffer.allocUnsafeSlow(capacity) : undefined;
    let used = 0;
    const overflow: Buffer[] = [];
    for await (const chunk of file) {
      const piece = chunk as Buffer;
      if (whole && overflow.length === 0 && used + piece.length <= whole.length) {
        piece.copy(whole, used);
        used += piece.length;
      } else {
        overflow.push(piece);
      }
    }
    if (!whole) return Buffer.concat(overflow);
    // Only when Content-Length understated the body (the parser stops at the real end).
    return overflow.length ? Buffer.concat([whole.subarray(0, used), ...overflow]) : whole.subarray(0, used);
  });
  return { content: stored, filename: rest.filename, fields: rest.fields, hashes: rest.hashes };
}

/** The text fields a multipart body schema documents (every property but `file`). */
export const textFieldsOf = (schema: { properties: Record<string, unknown> }): string[] => Object.keys(schema.properties).filter((k) => k !== 'file');

/**
 * Hands the `file` part as a stream to `consume` (which must read it to its end) and resolves once
 * both the body and `consume` are done. On a failure the part's stream is destroyed, so `consume`
 * sees the error and can drop what it wrote. `fieldNames`: the text fields the route documents.
 */
export function streamMultipartUpload<T>(
  req: IncomingMessage, maxFileBytes: number, limitText: string, fieldNames: readonly string[], consume: (file: Readable) => Promise<T>,
): Promise<StreamedUpload<T>> {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(type)) {
    return Promise.reject(new BadRequestError('Request must be multipart/form-data with a "file" part', undefined, 'invalid_upload'));
  }
  return new Promise<StreamedUpload<T>>((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      // fileSize is one past the plan's limit: busboy reports 'limit' once a file *reaches*
      // fileSize, and a file of exactly the plan's maximum is allowed. `files` is not 1: busboy
      // would drop a second file part silently, and it must be seen to be refused.
      // defParamCharset: browsers and curl send a non-ASCII file name as raw UTF-8 in `filename=`;
      // busboy's default (latin1) would garble it.
      bb = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { files: 5, fileSize: maxFileBytes + 1, fields: 20, fieldSize: 4096, parts: 25 } });
    } catch (err) {
      reject(new BadRequestError(`Malformed multipart request: ${(err as Error).message}`, undefined, 'invalid_upload'));
      return;
    }
    const fields: Record<string, string> = {};
    const digests = { sha256: createHash('sha256'), md5: createHash('md5'), sha1: createHash('sha1') };
    let filename: string | undefined;
    let mimeType = '';
    let size = 0;
    let fileStream: Readable | undefined;
    let consumed: Promise<T> | undefined;
    let failed = false;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      req.unpipe(bb);
      fileStream?.destroy(err);
      // Stop reading the rest of the body: the client gets the answer now.
      req.resume();
      reject(err);
    };
    const unknownField = (name: string) => new BadRequestError(`Unknown form field "${name}"; expected ${['file', ...fieldNames].join(', ')}`, undefined, 'invalid_upload');
    const malformed = (err: Error) => fail(new BadRequestError(`Malformed multipart request: ${err.message}`, undefined, 'invalid_upload'));
    bb.on('file', (name, stream, info) => {
      // A body that ends inside a file part ("Unexpected end of form") destroys the part's stream
      // with an error; without a listener that error would be an uncaught exception.
      stream.on('error', (err: Error) => { if (!failed) malformed(err); });
      if (name !== 'file' || fileStream) {
        stream.resume();
        fail(name !== 'file' ? unknownField(name ?? '') : new BadRequestError('Form field "file" given more than once', undefined, 'invalid_upload'));
        return;
      }
      filename = info.filename ?? '';
      if (filename.length > FIXED_LIMITS.scanNameChars) {
        stream.resume();
        fail(new BadRequestError(`The file part's filename is ${filename.length} characters; at most ${FIXED_LIMITS.scanNameChars} (as a payload's label)`, undefined, 'invalid_upload'));
        return;
      }
      mimeType = info.mimeType ?? '';
      // Hashed on the way through; the transform holds the bytes (and pauses the body) until
      // `consume` reads them, so none are lost while it gets ready. It takes the next piece only
      // on the event loop's next turn: a socket delivers up to 2 MB per turn otherwise, and three
      // large uploads then held every other request for hundreds of milliseconds per step.
      const hashing = new Transform({
        transform(chunk: Buffer, _enc, done) {
          size += chunk.length;
          digests.sha256.update(chunk);
          digests.md5.update(chunk);
          digests.sha1.update(chunk);
          setImmediate(done, null, chunk);
        },
      });
      fileStream = hashing;
      // `fail` may destroy it before the consumer has attached its own listener: that error must
      // not be an unhandled 'error' event (the consumer still sees it when it reads).
      hashing.on('error', () => undefined);
      stream.on('error', (err: Error) => hashing.destroy(err));
      stream.on('limit', () => fail(new PayloadTooLargeError(limitText)));
      stream.pipe(hashing);
      consumed = consume(hashing);
      // Its failure is reported through `fail` or awaited below; never an unhandled rejection.
      consumed.catch(() => undefined);
    });
    // Only the documented fields, each once (the `file` part too): a part the route does not know
    // (or a second value, the multipart spelling of an array) would otherwise be dropped silently.
    bb.on('field', (rawName, value) => {
      // busboy reports an empty name (`name=""`) as undefined.
      const name = rawName ?? '';
      if (name === 'file') {
        // busboy reads a part without a filename (or with an empty one) as a text field.
        fail(new BadRequestError('Form field "file" must be a file part with a filename (Content-Disposition: form-data; name="file"; filename="...")', undefined, 'invalid_upload'));
      } else if (!fieldNames.includes(name)) {
        fail(unknownField(name));
      } else if (name in fields) {
        fail(new BadRequestError(`Form field "${name}" given more than once`, undefined, 'invalid_upload'));
      } else {
        fields[name] = value;
      }
    });
    bb.on('error', malformed);
    // A client that goes away mid-body ends the request without 'end': `req.pipe(bb)` then just
    // stops feeding the parser, which never emits 'close' or 'error', and the consumer waited for
    // the rest of the file for good, holding what it had written (a temporary blob file and its
    // descriptor, GridFS chunks, the scan's buffer). Failing destroys the part's stream, so the
    // consumer drops its bytes and the request ends (400, as for a body cut short in the form; the
    // answer has nobody to read it). The client may have gone while the route was still checking
    // the caller: the request is then over before this reads it, and 'close' has been emitted.
    const clientGone = () => {
      fail(new BadRequestError('The upload was cut off: the client closed the connection before the body ended', undefined, 'invalid_upload'));
      // The parser waits for the rest of the body too. Not destroyed in `fail` itself: that runs
      // inside busboy's own callbacks ('limit'), where destroying it breaks the parse under way.
      bb.destroy();
    };
    if (req.readableAborted) {
      clientGone();
      return;
    }
    req.once('close', () => { if (req.readableAborted) clientGone(); });
    bb.on('close', () => {
      if (failed) return;
      if (!consumed) return fail(new BadRequestError('Missing "file" part in the multipart request', undefined, 'invalid_upload'));
      consumed.then((stored) => {
        if (failed) return;
        resolve({
          stored, size, mimeType, filename: filename ?? '', fields,
          hashes: { sha256: digests.sha256.digest('hex'), md5: digests.md5.digest('hex'), sha1: digests.sha1.digest('hex') },
        });
      }, (err: Error) => fail(err));
    });
    req.pipe(bb);
  });
}
