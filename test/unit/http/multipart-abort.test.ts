/**
 * A multipart upload whose client goes away before the body ends (src/http/multipart.ts), over a
 * real local HTTP server: a PassThrough never aborts the way a socket does. The upload must fail
 * at once, so that its consumer drops what it wrote (BlobFiles: the temporary file and its open
 * descriptor), instead of waiting for the rest of a body that never comes.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { readMultipartUpload, streamMultipartUpload } from '../../../src/http/multipart';
import { BlobFiles } from '../../../src/storage/blob-files';
import { openFdsInto, sendCutOffUpload, settledWithin, until } from '../../support/cut-off-upload';

const LIMIT = 50 * 1024 * 1024;
const refused = { settled: 'rejected', err: expect.objectContaining({ status: 400, code: 'invalid_upload' }) };

describe('a multipart upload whose client goes away mid-body', () => {
  let server: http.Server;
  let port: number;
  let handle: (req: IncomingMessage) => void = () => undefined;
  let dir: string;
  let blobs: BlobFiles;

  beforeAll(async () => {
    server = http.createServer((req) => handle(req));
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((res) => server.close(res));
  });
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'multipart-abort-'));
    blobs = new BlobFiles(dir);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Sends the cut-off request; `start` is what the server does with it. */
  async function send<T>(start: (req: IncomingMessage) => Promise<T>, fileBytes?: number): Promise<{ socket: Socket; upload: Promise<T> }> {
    // Wrapped: a promise resolved with a promise would wait for it.
    const started = new Promise<{ upload: Promise<T> }>((resolve) => {
      handle = (req) => {
        const upload = start(req);
        upload.catch(() => undefined);
        resolve({ upload });
      };
    });
    const socket = await sendCutOffUpload(port, '/upload', { fields: { dest: 'b' }, fileBytes });
    return { socket, upload: (await started).upload };
  }

  const tmp = () => path.join(dir, 'tmp');

  it.each([
    ['closes the connection', (s: Socket) => s.end()],
    ['resets the connection', (s: Socket) => s.resetAndDestroy()],
  ])('file transfer: the client %s; the write fails at once, leaving no temporary file and no open descriptor', async (_label, close) => {
    const { socket, upload } = await send((req) => streamMultipartUpload(req, LIMIT, 'too big', ['dest'], (file) => blobs.write('file/x/raw', file)));
    // The bytes sent so far reached the temporary file: the situation of the report.
    expect(await until(() => readdirSync(tmp()).length > 0 && openFdsInto('self', tmp()).length > 0, 5000)).toBe(true);
    close(socket);
    expect(await settledWithin(upload, 3000)).toEqual(refused);
    expect(await until(() => readdirSync(tmp()).length === 0 && openFdsInto('self', tmp()).length === 0, 3000)).toBe(true);
    expect(await blobs.size('file/x/raw')).toBeUndefined();
  });

  it('scan upload: the in-memory read fails at once instead of holding its buffer for good', async () => {
    const { socket, upload } = await send((req) => readMultipartUpload(req, LIMIT, 'too big', ['dest']));
    await new Promise((res) => setTimeout(res, 200));
    socket.end();
    expect(await settledWithin(upload, 3000)).toEqual(refused);
  });

  it('a client gone before the route reads the body (it was still authenticating): refused at once', async () => {
    // A small start of the body: the server reads it off the socket unasked and so sees the close
    // (behind a full socket buffer it would not, until the upload reads on).
    const { socket, upload } = await send(async (req) => {
      // As a route that awaits its checks first: the request is over when the body is read.
      await new Promise((res) => req.once('close', res));
      return streamMultipartUpload(req, LIMIT, 'too big', ['dest'], (file) => blobs.write('file/y/raw', file));
    }, 1000);
    socket.end();
    expect(await settledWithin(upload, 3000)).toEqual(refused);
    expect(readdirSync(tmp())).toEqual([]);
  });
});
