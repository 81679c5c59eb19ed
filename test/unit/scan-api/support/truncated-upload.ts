/**
 * Child-process probe for upload.test.ts: feeds readMultipartUpload a complete HTTP body whose
 * multipart form ends inside the file part (no closing boundary) and prints how the promise
 * settled. Run in its own process because the failure mode being checked is an uncaught
 * exception, which would take the Jest worker down with it.
 */
import { PassThrough } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { AppError } from '../../../../src/errors';
import { readMultipartUpload } from '../../../../src/http/multipart';

const boundary = 'PROBEBOUNDARY';
const req = Object.assign(new PassThrough(), { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
readMultipartUpload(req as unknown as IncomingMessage, 1024, 'too big', []).then(
  () => console.log('SETTLED resolved'),
  (err: unknown) => console.log(`SETTLED rejected ${err instanceof AppError ? err.status : 'non-AppError'}`),
);
req.end(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello, the form ends here`));
// Give the stream events time to run, then exit normally.
setTimeout(() => console.log('EXIT normal'), 200);
