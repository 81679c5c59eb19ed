/** Clips from outside: jpeg_burst zips become MP4 + poster in the gallery; hostile clips fail cleanly. */
import { writeFile, mkdtemp, rm, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { api, stack } from '../../support/env';
import { fleet, Fleet } from '../messaging/helpers';
import { clipToolsRunning, ffprobe, gifClip, jpegFrames, sendFile, partsLeftAfterCleanup, settled, zipOf } from './helpers';

const BURST = JSON.stringify({ format: 'jpeg_burst', fps: 10 });
const named = (frames: Buffer[]) => frames.map((b, i): [string, Buffer] => [`frame${String(i).padStart(5, '0')}.jpg`, b]);

async function getBytes(key: string, p: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack().baseUrl}${p}`, { headers: { authorization: `Bearer ${key}`, ...headers } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** Sets the SOF dimensions of a baseline JPEG (what a hostile header would claim). */
function withDeclaredSize(jpeg: Buffer, width: number, height: number): Buffer {
  const out = Buffer.from(jpeg);
  let at = 2;
  while (at < out.length) {
    const marker = out[at + 1];
    const len = out.readUInt16BE(at + 2);
    if (marker === 0xc0 || marker === 0xc2) {
      out.writeUInt16BE(height, at + 5);
      out.writeUInt16BE(width, at + 7);
      return out;
    }
    at += 2 + len;
  }
  throw new Error('no SOF in test frame');
}

describe('clips', () => {
  let f: Fleet;
  let cam: string;
  let small: Buffer[];
  beforeAll(async () => {
    f = await fleet('pro', ['cam', 'viewer']);
    cam = f.devices.cam.apiKey;
    small = await jpegFrames(4, 64, 48);
  });

  it('makes a 60-frame 640x480 jpeg_burst into an H.264 MP4 with a poster, listed in the gallery', async () => {
    const frames = await jpegFrames(60, 640, 480);
    const zip = await zipOf(named(frames));
    const sent = await sendFile(cam, zip, 'burst.zip', { kind: 'clip', meta: BURST });
    expect(sent.status).toBe(202);
    const id = sent.body.id as string;
    const done = await settled(cam, id, 180_000);
    expect(done).toMatchObject({ status: 'delivered', kind: 'clip', clip: { format: 'jpeg_burst', frames: 60, fps: 10, width: 640, height: 480, durationMs: 6000, video: true } });

    const gallery = await api('GET', '/api/files?kind=clip&limit=10', { key: f.apiKey });
    expect(gallery.status).toBe(200);
    expect(gallery.body.files).toContainEqual(expect.objectContaining({ id, source: 'cam', size: zip.length, frames: 60, fps: 10, width: 640, height: 480, durationMs: 6000, status: 'delivered' }));
    expect((await api('GET', '/api/files?entity_name=viewer', { key: f.apiKey })).body.files).toEqual([]);

    const video = await getBytes(f.apiKey, `/api/files/${id}/video`);
    expect(video.status).toBe(200);
    expect(video.headers.get('content-type')).toBe('video/mp4');
    expect(video.headers.get('accept-ranges')).toBe('bytes');
    const dir = await mkdtemp(path.join(tmpdir(), 'files-test-video-'));
    try {
      await writeFile(path.join(dir, 'v.mp4'), video.bytes);
      const probe = await ffprobe(path.join(dir, 'v.mp4'));
      expect(probe.streams[0]).toMatchObject({ codec_name: 'h264', pix_fmt: 'yuv420p', nb_read_frames: '60', width: 640, height: 480 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }

    const part = await getBytes(f.apiKey, `/api/files/${id}/video`, { range: 'bytes=100-1099' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-1099/${video.bytes.length}`);
    expect(part.bytes.equals(video.bytes.subarray(100, 1100))).toBe(true);
    const tail = await getBytes(f.apiKey, `/api/files/${id}/video`, { range: 'bytes=-10' });
    expect(tail.status).toBe(206);
    expect(tail.bytes.equals(video.bytes.subarray(video.bytes.length - 10))).toBe(true);
    const beyond = await getBytes(f.apiKey, `/api/files/${id}/video`, { range: `bytes=${video.bytes.length}-` });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${video.bytes.length}`);

    const poster = await getBytes(f.apiKey, `/api/files/${id}/poster`);
    expect(poster.status).toBe(200);
    expect(poster.headers.get('content-type')).toBe('image/jpeg');
    expect(poster.bytes.subarray(0, 2).equals(Buffer.from([0xff, 0xd8]))).toBe(true);
    const raw = await getBytes(f.apiKey, `/api/files/${id}/raw`);
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe('application/zip');
    expect(raw.bytes.equals(zip)).toBe(true);
    // Gallery routes are for the account key.
    expect((await api('GET', `/api/files/${id}/poster`, { key: cam })).status).toBe(403);
  });

  it('keeps a legacy GIF clip raw and gives it a poster, no video', async () => {
    const gif = await gifClip(12);
    const sent = await sendFile(cam, gif, 'motion.gif', { kind: 'clip' });
    const id = sent.body.id as string;
    const done = await settled(cam, id, 120_000);
    expect(done).toMatchObject({ status: 'delivered', clip: { format: 'gif', frames: 12, width: 160, height: 120, video: false } });
    const poster = await getBytes(f.apiKey, `/api/files/${id}/poster`);
    expect(poster.status).toBe(200);
    expect(poster.bytes.subarray(0, 2).equals(Buffer.from([0xff, 0xd8]))).toBe(true);
    const raw = await getBytes(f.apiKey, `/api/files/${id}/raw`);
    expect(raw.headers.get('content-type')).toBe('image/gif');
    expect(raw.bytes.equals(gif)).toBe(true);
    expect((await getBytes(f.apiKey, `/api/files/${id}/video`)).status).toBe(404);
  });

  it('delivers a clip with a dest to that entity\'s inbox', async () => {
    const sent = await sendFile(cam, await zipOf(named(small)), 'b.zip', { kind: 'clip', meta: BURST, dest: 'viewer' });
    const id = sent.body.id as string;
    expect((await settled(cam, id, 120_000)).status).toBe('delivered');
    const inbox = await api('GET', '/api/entities/files', { key: f.devices.viewer.apiKey });
    expect(inbox.body.files).toContainEqual(expect.objectContaining({ id, kind: 'clip', source: 'cam' }));
  });

  describe('hostile clips end failed with a reason, leave no ffmpeg and no bytes, and the service stays healthy', () => {
    const cases: Array<[string, () => Promise<Buffer>, RegExp]> = [
      ['frames of different sizes', async () => zipOf([...named(small), ['zz.jpg', (await jpegFrames(1, 32, 32))[0]]]), /one size/],
      ['a truncated JPEG', async () => zipOf([...named(small), ['zz.jpg', small[0].subarray(0, small[0].length - 200)]]), /truncated/],
      ['5,000 frames', async () => zipOf(Array.from({ length: 5000 }, (_, i): [string, Buffer] => [`f${i}.jpg`, small[0]])), /at most 1800 frames/],
      ['a 20000x20000 JPEG header', async () => zipOf([['a.jpg', withDeclaredSize(small[0], 20000, 20000)]]), /20000x20000/],
      ['a name with ../', async () => {
        const zip = await zipOf([['zzzzzz_.jpg', small[0]]]);
        // yazl refuses such names, as a hostile device would not: patch both copies of the name.
        return Buffer.from(zip.toString('latin1').split('zzzzzz_.jpg').join('../../x.jpg'), 'latin1');
      }, /unsafe|invalid relative path|\.\./],
      ['not a zip at all', async () => Buffer.from('just text, not frames'), /not a readable zip/],
    ];

    it.each(cases)('%s', async (_label, make, reason) => {
      const sent = await sendFile(cam, await make(), 'hostile.zip', { kind: 'clip', meta: BURST });
      expect(sent.status).toBe(202);
      const id = sent.body.id as string;
      const done = await settled(cam, id, 120_000);
      expect(done.status).toBe('failed');
      expect(done.error).toMatch(reason);
      expect(await partsLeftAfterCleanup(id)).toEqual([]);
      expect((await getBytes(f.apiKey, `/api/files/${id}/video`)).status).toBe(404);
    });

    it('a zip bomb is stopped (blocked by the scan or failed by the frame rules)', async () => {
      const bomb = await zipOf([['a.jpg', Buffer.alloc(300 * 1024 * 1024)]]);
      const sent = await sendFile(cam, bomb, 'bomb.zip', { kind: 'clip', meta: BURST });
      const id = sent.body.id as string;
      const done = await settled(cam, id, 180_000);
      expect(['blocked', 'failed']).toContain(done.status);
      if (done.status === 'failed') expect(done.error).toMatch(/at most 100 MB|not a JPEG/);
      expect(await partsLeftAfterCleanup(id)).toEqual([]);
    });

    afterAll(async () => {
      expect(await clipToolsRunning()).toEqual([]);
      expect((await readdir(tmpdir())).filter((n) => n.startsWith('sentinel-clip-'))).toEqual([]);
      expect((await api('GET', '/healthz')).status).toBe(200);
    });
  });
});
