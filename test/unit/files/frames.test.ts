/** Frame checks run before ffmpeg (src/files/frames.ts) and the hardened tool arguments (tools.ts). */
import { BurstChecker, ClipRejected, gifScreenSize, jpegFrameSize } from '../../../src/files/frames';
import { toolArgs } from '../../../src/files/tools';
import { clipFormatOf } from '../../../src/files/clip';

/** A minimal JPEG: SOI, APP0, SOF0 with the given size, SOS, a few data bytes, EOI. */
function jpeg(width: number, height: number, opts: { eoi?: boolean; sof?: number } = {}): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]);
  const sof = Buffer.from([0xff, opts.sof ?? 0xc0, 0x00, 0x0b, 0x08, height >> 8, height & 0xff, width >> 8, width & 0xff, 0x01, 0x01, 0x11, 0x00]);
  const sos = Buffer.from([0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3f, 0x00, 0x12, 0x34]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof, sos, opts.eoi === false ? Buffer.alloc(0) : Buffer.from([0xff, 0xd9])]);
}

describe('jpegFrameSize', () => {
  it('reads the size from the start-of-frame segment (baseline and progressive)', () => {
    expect(jpegFrameSize(jpeg(640, 480), 'f')).toEqual({ width: 640, height: 480 });
    expect(jpegFrameSize(jpeg(33, 17, { sof: 0xc2 }), 'f')).toEqual({ width: 33, height: 17 });
  });
  it.each([
    ['no SOI', Buffer.concat([Buffer.from([0x00, 0x00]), jpeg(8, 8).subarray(2)]), /no SOI/],
    ['no EOI (truncated)', jpeg(8, 8, { eoi: false }), /truncated/],
    ['an empty frame', jpeg(0, 8), /empty frame/],
    ['no SOF before the scan', Buffer.from([0xff, 0xd8, 0xff, 0xda, 0x00, 0x02, 0xff, 0xd9]), /no start-of-frame/],
    ['a segment running past the end', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x7f, 0xff, 0x00, 0xff, 0xd9]), /past its end/],
    ['garbage between segments', Buffer.from([0xff, 0xd8, 0x12, 0x34, 0x00, 0x00, 0xff, 0xd9]), /damaged segment/],
  ])('refuses %s', (_label, frame, message) => {
    expect(() => jpegFrameSize(frame, 'frame 1')).toThrow(message);
  });
  // Found by an outside probe: a second SOF (ffmpeg uses the last) made an 8K video of a clip checked as 320x240.
  it('refuses a frame with a second start-of-frame segment, before or after its scan', () => {
    const f = jpeg(320, 240);
    const sofAt = f.indexOf(Buffer.from([0xff, 0xc0]));
    const eightK = Buffer.from([0xff, 0xc0, 0x00, 0x0b, 0x08, 0x10, 0xe0, 0x1e, 0x00, 0x01, 0x01, 0x11, 0x00]);
    const before = Buffer.concat([f.subarray(0, sofAt), f.subarray(sofAt, sofAt + 13), eightK, f.subarray(sofAt + 13)]);
    expect(() => jpegFrameSize(before, 'frame 1')).toThrow('frame 1 has more than one start-of-frame segment');
    const sos2 = Buffer.from([0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3f, 0x00, 0x56, 0x78]);
    const after = Buffer.concat([f.subarray(0, f.length - 2), eightK, sos2, Buffer.from([0xff, 0xd9])]);
    expect(() => jpegFrameSize(after, 'frame 1')).toThrow('more than one start-of-frame segment');
  });
  it('reads through scan data: stuffed 0xFF bytes, restart markers and a progressive frame\'s second scan', () => {
    const f = jpeg(64, 48, { sof: 0xc2 });
    const data = Buffer.from([0x12, 0xff, 0x00, 0x34, 0xff, 0xd0, 0x56]);
    const sos2 = Buffer.from([0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3f, 0x00, 0x9a, 0xbc]);
    const progressive = Buffer.concat([f.subarray(0, f.length - 2), data, sos2, data, Buffer.from([0xff, 0xd9])]);
    expect(jpegFrameSize(progressive, 'f')).toEqual({ width: 64, height: 48 });
  });
  it('does not take DHT (C4) for a start-of-frame', () => {
    const dht = Buffer.from([0xff, 0xc4, 0x00, 0x04, 0x00, 0x00]);
    const f = jpeg(10, 20);
    const withDht = Buffer.concat([f.subarray(0, 2), dht, f.subarray(2)]);
    expect(jpegFrameSize(withDht, 'f')).toEqual({ width: 10, height: 20 });
  });
});

describe('BurstChecker', () => {
  it('accepts frames of one size and reports count and size', () => {
    const c = new BurstChecker();
    for (let i = 0; i < 3; i++) {
      c.admit(100);
      c.check(jpeg(64, 48));
    }
    expect(c.result()).toEqual({ frames: 3, width: 64, height: 48 });
  });
  it('refuses a frame of another size', () => {
    const c = new BurstChecker();
    c.admit(10);
    c.check(jpeg(64, 48));
    c.admit(10);
    expect(() => c.check(jpeg(64, 50))).toThrow(/one size/);
  });
  it('refuses frames over 1920x1080', () => {
    const c = new BurstChecker();
    c.admit(10);
    expect(() => c.check(jpeg(20000, 20000))).toThrow(/20000x20000/);
    const d = new BurstChecker();
    d.admit(10);
    expect(() => d.check(jpeg(1921, 1080))).toThrow(ClipRejected);
    const e = new BurstChecker();
    e.admit(10);
    expect(() => e.check(jpeg(1920, 1080))).not.toThrow();
  });
  it('refuses the 1,801st frame before reading it', () => {
    const c = new BurstChecker();
    for (let i = 0; i < 1800; i++) c.admit(1);
    expect(() => c.admit(1)).toThrow(/at most 1800 frames/);
  });
  it('refuses members whose declared sizes pass 100 MB, and caps the next read at what is left', () => {
    const c = new BurstChecker();
    expect(c.admit(60 * 1024 * 1024)).toBe(100 * 1024 * 1024);
    const f = jpeg(8, 8);
    c.check(f);
    expect(c.admit(1)).toBe(100 * 1024 * 1024 - f.length);
    expect(() => c.admit(100 * 1024 * 1024)).toThrow(/at most 100 MB/);
  });
  it('refuses a burst without frames', () => {
    expect(() => new BurstChecker().result()).toThrow(/no frames/);
  });
});

describe('GIF clips', () => {
  const gif = (w: number, h: number) => Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.from([w & 0xff, w >> 8, h & 0xff, h >> 8]), Buffer.alloc(10)]);
  it('reads the logical screen size and applies the size limit', () => {
    expect(gifScreenSize(gif(160, 120))).toEqual({ width: 160, height: 120 });
    expect(() => gifScreenSize(gif(4000, 100))).toThrow(/at most 1920x1080/);
    expect(() => gifScreenSize(Buffer.from('PNG....stuff!'))).toThrow(/not a GIF/);
  });
  it('finds the clip format from meta, else from the first bytes', () => {
    expect(clipFormatOf('jpeg_burst', gif(1, 1))).toBe('jpeg_burst');
    expect(clipFormatOf(undefined, gif(1, 1))).toBe('gif');
    expect(clipFormatOf(undefined, Buffer.from([0x50, 0x4b, 0x03, 0x04]))).toBe('jpeg_burst');
    expect(() => clipFormatOf(undefined, Buffer.from('hello'))).toThrow(ClipRejected);
  });
});

describe('toolArgs', () => {
  it('limits memory, CPU and open files, then runs the tool without stdin and with only the file protocol', () => {
    const args = toolArgs('ffmpeg', ['-i', 'in.jpg', 'out.mp4']);
    expect(args.slice(0, 4)).toEqual([`--as=${2 * 1024 * 1024 * 1024}`, '--cpu=180', '--nofile=64', '--']);
    expect(args[4]).toBe('ffmpeg');
    expect(args).toContain('-nostdin');
    expect(args[args.indexOf('-protocol_whitelist') + 1]).toBe('file');
    expect(args.indexOf('-protocol_whitelist')).toBeLessThan(args.indexOf('-i'));
    const probe = toolArgs('ffprobe', ['x.mp4']);
    expect(probe[4]).toBe('ffprobe');
    expect(probe[probe.indexOf('-protocol_whitelist') + 1]).toBe('file');
  });
});
