/**
 * The streaming side of the multipart reader (src/http/multipart.ts `streamMultipartUpload`) as file
 * transfer uses it: a consumer that starts late loses no bytes, fields after the file part are
 * seen, and passing the limit destroys the consumer's stream so it can drop what it wrote.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { PassThrough, Readable } from 'node:stream';
import { streamMultipartUpload } from '../../../src/http/multipart';

const B = 'FILESBOUNDARYx81';
function body(parts: Array<{ name: string; filename?: string; data: Buffer | string }>): Buffer {
  const out: Buffer[] = [];
  for (const p of parts) {
    out.push(Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}\r\n${p.filename ? 'Content-Type: application/pdf\r\n' : ''}\r\n`));
    out.push(Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data));
    out.push(Buffer.from('\r\n'));
  }
  out.push(Buffer.from(`--${B}--\r\n`));
  return Buffer.concat(out);
}
const req = () => Object.assign(new PassThrough(), { headers: { 'content-type': `multipart/form-data; boundary=${B}` } });

/** Waits before reading, as the GridFS writer does while it clears an earlier attempt. */
async function lateReader(file: Readable): Promise<Buffer> {
  await new Promise((res) => setTimeout(res, 50));
  const chunks: Buffer[] = [];
  for await (const c of file) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('streamMultipartUpload', () => {
  it('hands every byte to a consumer that starts late, with the hash, size, type and later fields', async () => {
    const content = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < content.length; i++) content[i] = (i * 7) & 0xff;
    const r = req();
    const p = streamMultipartUpload(r as unknown as IncomingMessage, 10 * 1024 * 1024, 'too big', ['dest'], lateReader);
    // Written in small pieces so the body arrives over many reads.
    const whole = body([{ name: 'file', filename: 'r.pdf', data: content }, { name: 'dest', data: 'b' }]);
    for (let at = 0; at < whole.length; at += 64 * 1024) r.write(whole.subarray(at, at + 64 * 1024));
    r.end();
    const u = await p;
    expect(u.stored.equals(content)).toBe(true);
    expect(u.size).toBe(content.length);
    expect(u.hashes.sha256).toBe(createHash('sha256').update(content).digest('hex'));
    expect(u).toMatchObject({ filename: 'r.pdf', mimeType: 'application/pdf', fields: { dest: 'b' } });
  });

  it('answers 413 past the limit and the consumer sees its stream fail', async () => {
    const r = req();
    let consumerError: unknown;
    const p = streamMultipartUpload(r as unknown as IncomingMessage, 1024, 'File exceeds the limit', [], async (file) => {
      try {
        return await lateReader(file);
      } catch (err) {
        consumerError = err;
        throw err;
      }
    });
    r.end(body([{ name: 'file', filename: 'big.bin', data: Buffer.alloc(4096, 1) }]));
    await expect(p).rejects.toMatchObject({ status: 413, message: 'File exceeds the limit' });
    for (let i = 0; i < 50 && consumerError === undefined; i++) await new Promise((res) => setTimeout(res, 20));
    expect(consumerError).toBeDefined();
  });

  it('reports a consumer failure as the upload\'s failure', async () => {
    const r = req();
    const p = streamMultipartUpload(r as unknown as IncomingMessage, 1024, 'x', [], async (file) => {
      file.resume();
      throw new Error('GridFS unavailable');
    });
    r.end(body([{ name: 'file', filename: 'a.txt', data: 'abc' }]));
    await expect(p).rejects.toThrow('GridFS unavailable');
  });

  it.each([
    ['two file parts', [{ name: 'file', filename: 'a.pdf', data: 'first' }, { name: 'file', filename: 'b.pdf', data: 'second' }], 'Form field "file" given more than once'],
    ['a file part under another name', [{ name: 'file', filename: 'a.pdf', data: 'first' }, { name: 'attachment', filename: 'b.pdf', data: 'x' }], 'Unknown form field "attachment"; expected file, dest'],
    ['a text field given twice', [{ name: 'dest', data: 'b' }, { name: 'dest', data: 'c' }, { name: 'file', filename: 'a.pdf', data: 'x' }], 'Form field "dest" given more than once'],
  ])('refuses %s with 400 invalid_upload, and the consumer sees its stream fail', async (_label, parts, message) => {
    const r = req();
    let consumerError: unknown;
    const p = streamMultipartUpload(r as unknown as IncomingMessage, 1024 * 1024, 'x', ['dest'], async (file) => {
      try {
        return await lateReader(file);
      } catch (err) {
        consumerError = err;
        throw err;
      }
    });
    r.end(body(parts));
    await expect(p).rejects.toMatchObject({ status: 400, code: 'invalid_upload', message });
    if (parts[0].name === 'file') {
      for (let i = 0; i < 50 && consumerError === undefined; i++) await new Promise((res) => setTimeout(res, 20));
      expect(consumerError).toBeDefined();
    }
  });
});
