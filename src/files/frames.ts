/**
 * Checks on untrusted clip frames before any of them reaches ffmpeg: a frame must be a whole
 * JPEG (SOI at the start, EOI at the end, a start-of-frame segment giving its size), all frames
 * one size, within the frame-count, size and expanded-bytes limits. A GIF (the legacy clip form)
 * must carry the GIF signature and a screen size within the same limits.
 */
import { FIXED_LIMITS } from '../accounts/plans';

/** A clip that breaks a rule; its message is shown to the sender as the file's `error`. */
export class ClipRejected extends Error {}

export interface FrameSize { width: number; height: number }

/** SOF markers carrying frame dimensions: C0-CF except DHT (C4), JPG (C8) and DAC (CC). */
const isSof = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;

/**
 * Walks every JPEG segment of a frame, through its scans, and answers the size its one
 * start-of-frame segment declares; throws ClipRejected for anything else. Exactly one SOF: an
 * outside probe put a SOF saying 320x240 before an 8K frame's own, and ffmpeg, which uses the
 * last SOF, made an 8K video of a clip checked as 320x240.
 */
export function jpegFrameSize(frame: Buffer, label: string): FrameSize {
  if (frame.length < 4 || frame[0] !== 0xff || frame[1] !== 0xd8) throw new ClipRejected(`${label} is not a JPEG (no SOI marker)`);
  if (frame[frame.length - 2] !== 0xff || frame[frame.length - 1] !== 0xd9) throw new ClipRejected(`${label} is truncated (no EOI marker at its end)`);
  let size: FrameSize | undefined;
  let at = 2;
  while (at + 2 <= frame.length) {
    if (frame[at] !== 0xff) throw new ClipRejected(`${label} has a damaged segment at byte ${at}`);
    const marker = frame[at + 1];
    // Fill bytes and parameterless markers (TEM, RSTn) carry no length.
    if (marker === 0xff) { at += 1; continue; }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) { at += 2; continue; }
    if (marker === 0xd9) break;
    if (at + 4 > frame.length) throw new ClipRejected(`${label} has a segment running past its end`);
    const length = frame.readUInt16BE(at + 2);
    if (length < 2 || at + 2 + length > frame.length) throw new ClipRejected(`${label} has a segment running past its end`);
    if (isSof(marker)) {
      if (size) throw new ClipRejected(`${label} has more than one start-of-frame segment`);
      if (length < 7) throw new ClipRejected(`${label} has a short start-of-frame segment`);
      const height = frame.readUInt16BE(at + 5);
      const width = frame.readUInt16BE(at + 7);
      if (!width || !height) throw new ClipRejected(`${label} declares an empty frame`);
      size = { width, height };
    }
    at += 2 + length;
    if (marker === 0xda) {
      if (!size) throw new ClipRejected(`${label} has no start-of-frame segment before its scan`);
      // Entropy-coded data: a 0xFF in it is followed by 0x00 (a stuffed byte) or RSTn; any other
      // 0xFF xx is the next marker.
      while (at + 1 < frame.length && !(frame[at] === 0xff && frame[at + 1] !== 0x00 && !(frame[at + 1] >= 0xd0 && frame[at + 1] <= 0xd7))) at += 1;
    }
  }
  if (!size) throw new ClipRejected(`${label} has no start-of-frame segment`);
  return size;
}

export function checkFrameSize(size: FrameSize, label: string): void {
  if (size.width > FIXED_LIMITS.clipMaxWidth || size.height > FIXED_LIMITS.clipMaxHeight) {
    throw new ClipRejected(`${label} is ${size.width}x${size.height}; clips are at most ${FIXED_LIMITS.clipMaxWidth}x${FIXED_LIMITS.clipMaxHeight}`);
  }
}

/** Accumulates the frames of one burst, refusing the burst at the first broken rule. */
export class BurstChecker {
  private size?: FrameSize;
  private count = 0;
  private expanded = 0;

  /** Before a member is read: its declared size and the running count. */
  admit(declaredBytes: number): number {
    this.count += 1;
    if (this.count > FIXED_LIMITS.clipMaxFrames) throw new ClipRejected(`A clip has at most ${FIXED_LIMITS.clipMaxFrames} frames`);
    if (this.expanded + declaredBytes > FIXED_LIMITS.clipMaxExpandedBytes) throw new ClipRejected(this.tooBig());
    return FIXED_LIMITS.clipMaxExpandedBytes - this.expanded;
  }

  /** After a member was read (within the cap `admit` returned). */
  check(frame: Buffer): void {
    const label = `frame ${this.count}`;
    this.expanded += frame.length;
    const size = jpegFrameSize(frame, label);
    checkFrameSize(size, label);
    if (this.size && (this.size.width !== size.width || this.size.height !== size.height)) {
      throw new ClipRejected(`${label} is ${size.width}x${size.height} but frame 1 is ${this.size.width}x${this.size.height}; all frames must be one size`);
    }
    this.size ??= size;
  }

  tooBig(): string {
    return `A clip expands to at most ${FIXED_LIMITS.clipMaxExpandedBytes / (1024 * 1024)} MB of frames`;
  }

  result(): { frames: number } & FrameSize {
    if (!this.size) throw new ClipRejected('The clip has no frames');
    return { frames: this.count, ...this.size };
  }
}

export const isGif = (head: Buffer) => head.length >= 6 && /^GIF8[79]a$/.test(head.subarray(0, 6).toString('latin1'));

export function gifScreenSize(gif: Buffer): FrameSize {
  if (!isGif(gif) || gif.length < 13) throw new ClipRejected('The clip is not a GIF');
  const size = { width: gif.readUInt16LE(6), height: gif.readUInt16LE(8) };
  if (!size.width || !size.height) throw new ClipRejected('The GIF declares an empty screen');
  checkFrameSize(size, 'The GIF');
  return size;
}
