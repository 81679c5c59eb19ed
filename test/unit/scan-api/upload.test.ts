/**
 * The streaming multipart reader of POST /api/scan (src/http/multipart.ts) with hostile bodies: the
 * plan limit while streaming, exactly-at-limit files, missing or several file parts, empty files,
 * wrong content types, path-traversal and control-character file names, and a form cut short.
 * The request is a PassThrough with headers, which is all busboy reads from an IncomingMessage.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { AppError } from '../../../src/errors';
import { readMultipartUpload, type ParsedUpload } from '../../../src/http/multipart';

const B = 'TESTBOUNDARY7MA4YWxkTrZu0gW';

interface Part { name: string; filename?: string; rawDisposition?: string; contentType?: string; data: Buffer | string }
function form(parts: Part[], close = true): Buffer {
  const out: Buffer[] = [];
  for (const p of parts) {
    const disp = p.rawDisposition ?? `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
    out.push(Buffer.from(`--${B}\r\nContent-Disposition: ${disp}\r\n${p.contentType ? `Content-Type: ${p.contentType}\r\n` : ''}\r\n`, 'latin1'));
    out.push(Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data));
    out.push(Buffer.from('\r\n'));
  }
  if (close) out.push(Buffer.from(`--${B}--\r\n`));
  return Buffer.concat(out);
}

function fakeReq(contentType = `multipart/form-data; boundary=${B}`) {
  return Object.assign(new PassThrough(), { headers: { 'content-type': contentType } as Record<string, string> });
}
const asReq = (r: PassThrough) => r as unknown as IncomingMessage;

async function upload(body: Buffer, max = 1024, contentType?: string): Promise<ParsedUpload> {
  const req = fakeReq(contentType);
  const p = readMultipartUpload(asReq(req), max, `File exceeds the limit`, ['profile_id']);
  req.end(body);
  return p;
}
async function uploadErr(body: Buffer, max = 1024, contentType?: string): Promise<AppError> {
  try {
    await upload(body, max, contentType);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected the upload to be refused');
}
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('a well-formed upload', () => {
  it('returns the bytes, the digests computed while streaming, the filename and the small fields', async () => {
    const data = Buffer.from([0, 1, 2, 255, 13, 10, 45, 45, 0x41]); // includes CRLF-- inside the data
    const r = await upload(form([{ name: 'profile_id', data: 'prof-1' }, { name: 'file', filename: 'x.bin', contentType: 'application/octet-stream', data }]));
    expect(r.content.equals(data)).toBe(true);
    expect(r.filename).toBe('x.bin');
    expect(r.fields).toEqual({ profile_id: 'prof-1' });
    expect(r.hashes).toEqual({
      sha256: sha256(data),
      md5: createHash('md5').update(data).digest('hex'),
      sha1: createHash('sha1').update(data).digest('hex'),
    });
  });

  it('a field after the file part is still read', async () => {
    const r = await upload(form([{ name: 'file', filename: 'a.txt', data: 'A' }, { name: 'profile_id', data: 'late' }]));
    expect(r.fields.profile_id).toBe('late');
  });

  it('an empty file is a file of 0 bytes with the empty-content digest', async () => {
    const r = await upload(form([{ name: 'file', filename: 'empty.bin', data: '' }]));
    expect(r.content.length).toBe(0);
    expect(r.hashes.sha256).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('several parts named file: 400 invalid_upload, nothing is scanned', async () => {
    const e = await uploadErr(form([{ name: 'file', filename: 'first.txt', data: 'FIRST' }, { name: 'file', filename: 'second.txt', data: 'SECOND' }]));
    expect(e).toMatchObject({ status: 400, code: 'invalid_upload', message: 'Form field "file" given more than once' });
  });

  // Regression (fixed): a file part under another name before the `file` part once used up
  // busboy's only file slot, and the real `file` part was dropped. Such a part is now refused.
  it('a file part with another name before the `file` part is refused, not skipped', async () => {
    const e = await uploadErr(form([{ name: 'attachment', filename: 'other.txt', data: 'OTHER' }, { name: 'file', filename: 'real.txt', data: 'REAL' }]));
    expect(e).toMatchObject({ status: 400, code: 'invalid_upload', message: 'Unknown form field "attachment"; expected file, profile_id' });
  });
});

describe('size limit', () => {
  it('one byte over the limit is 413', async () => {
    const e = await uploadErr(form([{ name: 'file', filename: 'big.bin', data: Buffer.alloc(1025, 0x61) }]), 1024);
    expect(e.status).toBe(413);
    expect(e.message).toBe('File exceeds the limit');
  });

  it('refuses as soon as the limit is passed, before the body ends, and drains the rest', async () => {
    const req = fakeReq();
    const p = readMultipartUpload(asReq(req), 1000, 'too big', []);
    const settled = p.then(() => 'resolved', (e: AppError) => e.status);
    req.write(Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n`));
    for (let i = 0; i < 3; i++) req.write(Buffer.alloc(400, 0x62)); // 1,200 bytes, body not ended
    // The body has not ended: a refusal that waited for the end would never settle here.
    await expect(settled).resolves.toBe(413);
    // The rest of the body is read and discarded, not buffered: the request stays in flowing mode.
    expect(req.readableFlowing).toBe(true);
    req.end(Buffer.alloc(100_000));
  });

  it('a file well under the limit passes', async () => {
    const r = await upload(form([{ name: 'file', filename: 'ok.bin', data: Buffer.alloc(1023) }]), 1024);
    expect(r.content.length).toBe(1023);
  });

  // Regression (fixed): busboy emits 'limit' when the file *reaches* limits.fileSize (fileSize === limit), so
  // a file of exactly the plan's maximum (e.g. exactly 10 MB on Free) is refused with 413,
  // while ScanService.scan itself allows `content.length <= maxFileSizeMb * 1 MB`.
  it('a file of exactly the limit is accepted', async () => {
    const r = await upload(form([{ name: 'file', filename: 'exact.bin', data: Buffer.alloc(1024, 0x63) }]), 1024);
    expect(r.content.length).toBe(1024);
  });
});

describe('refused uploads', () => {
  it.each([
    ['application/json', 'application/json'],
    ['text/plain', 'text/plain'],
    ['empty', ''],
    ['urlencoded', 'application/x-www-form-urlencoded'],
  ])('content type %s is 400 invalid_upload', async (_what, ct) => {
    const e = await uploadErr(form([{ name: 'file', filename: 'a', data: 'x' }]), 1024, ct);
    expect(e).toMatchObject({ status: 400, code: 'invalid_upload' });
  });

  it('multipart without a boundary is 400, not a crash', async () => {
    const e = await uploadErr(Buffer.from('whatever'), 1024, 'multipart/form-data');
    expect(e).toMatchObject({ status: 400, code: 'invalid_upload' });
  });

  it('no file part (only fields) is 400 Missing "file" part', async () => {
    const e = await uploadErr(form([{ name: 'profile_id', data: 'p' }]));
    expect(e).toMatchObject({ status: 400, code: 'invalid_upload' });
    expect(e.message).toMatch(/Missing "file" part/);
  });

  it('a text field the route does not document, or one given twice, is 400 naming it', async () => {
    const unknown = await uploadErr(form([{ name: 'dest', data: 'x' }, { name: 'file', filename: 'a.txt', data: 'A' }]));
    expect(unknown).toMatchObject({ status: 400, code: 'invalid_upload' });
    expect(unknown.message).toBe('Unknown form field "dest"; expected file, profile_id');
    // An unnamed part (what a generator sent for an array-valued field) is unknown too.
    expect((await uploadErr(form([{ name: '', data: '{}' }, { name: 'file', filename: 'a.txt', data: 'A' }]))).message).toMatch(/^Unknown form field ""/);
    const twice = await uploadErr(form([{ name: 'profile_id', data: 'a' }, { name: 'profile_id', data: 'b' }, { name: 'file', filename: 'a.txt', data: 'A' }]));
    expect(twice).toMatchObject({ status: 400, code: 'invalid_upload', message: 'Form field "profile_id" given more than once' });
  });

  // Found by an outside probe: answered 'Unknown form field "file"; expected file, ...'.
  it('a "file" part without a filename (or with an empty one) is 400 saying it must be a file part', async () => {
    for (const part of [{ name: 'file', data: 'x' }, { name: 'file', filename: '', data: 'x' }]) {
      const e = await uploadErr(form([part]));
      expect(e).toMatchObject({ status: 400, code: 'invalid_upload' });
      expect(e.message).toMatch(/^Form field "file" must be a file part with a filename/);
    }
  });

  it('a filename over 255 characters is 400; 255 pass', async () => {
    const e = await uploadErr(form([{ name: 'file', filename: `${'n'.repeat(252)}.txt`, data: 'x' }]));
    expect(e).toMatchObject({ status: 400, code: 'invalid_upload' });
    expect(e.message).toMatch(/filename is 256 characters; at most 255/);
    const ok = await upload(form([{ name: 'file', filename: `${'n'.repeat(251)}.txt`, data: 'x' }]));
    expect(ok.filename).toHaveLength(255);
  });

  it('a file part under another name (or another case) is not the file', async () => {
    expect((await uploadErr(form([{ name: 'File', filename: 'a.txt', data: 'x' }]))).message).toMatch(/^Unknown form field "File"/);
    expect((await uploadErr(form([{ name: 'upload', filename: 'a.txt', data: 'x' }]))).message).toMatch(/^Unknown form field "upload"/);
  });

  it('an empty body is 400', async () => {
    const e = await uploadErr(Buffer.alloc(0));
    expect(e.status).toBe(400);
  });

  it('a control character in the part header is 400 Malformed, not accepted into the name', async () => {
    const e = await uploadErr(form([{ name: 'file', rawDisposition: 'form-data; name="file"; filename="a\x01b.txt"', data: 'x' }]));
    expect(e).toMatchObject({ status: 400, code: 'invalid_upload' });
  });

  // Regression (fixed): upload.ts attaches 'data' and 'limit' listeners to the file stream but no 'error'
  // listener. When the request body ends inside the file part (no closing boundary; any
  // authenticated client can send this with a correct Content-Length), busboy destroys the file
  // stream with "Unexpected end of form"; the unhandled 'error' event is an uncaught exception
  // and ends the API process (main.ts handles unhandledRejection only).
  it('a form cut short inside the file part leaves the process running', async () => {
    const script = path.join(__dirname, 'support', 'truncated-upload.ts');
    const result = await new Promise<{ failed: boolean; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', script], { cwd: path.join(__dirname, '..', '..', '..'), timeout: 10_000 }, (err, out, errOut) => {
        resolve({ failed: !!err, stdout: out, stderr: errOut });
      });
    });
    expect(result.stderr).not.toMatch(/Unexpected end of form/);
    expect(result.failed).toBe(false);
    expect(result.stdout).toContain('SETTLED rejected 400');
    expect(result.stdout).toContain('EXIT normal');
  }, 15_000);
});

describe('file names', () => {
  it.each([
    ['../../etc/passwd', 'passwd'],
    ['..\\\\..\\\\windows\\\\evil.exe', 'evil.exe'],
    ['C:\\\\Users\\\\me\\\\doc.pdf', 'doc.pdf'],
    ['/abs/dir/', ''],
    ['..', ''],
  ])('path components are stripped: %j -> %j', async (sent, expected) => {
    const r = await upload(form([{ name: 'file', rawDisposition: `form-data; name="file"; filename="${sent}"`, data: 'x' }]));
    expect(r.filename).toBe(expected);
    expect(r.filename).not.toMatch(/[\\/]/);
  });

  it('an RFC 5987 filename* is decoded and stripped of its path too', async () => {
    const r = await upload(form([{ name: 'file', rawDisposition: "form-data; name=\"file\"; filename*=utf-8''..%2F..%2F%E2%82%AC.txt", data: 'x' }]));
    expect(r.filename).toBe('€.txt');
  });
});
