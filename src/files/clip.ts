/**
 * Clips: a jpeg_burst zip becomes an H.264 MP4 (yuv420p, faststart) and a JPEG poster; a legacy
 * GIF gets a poster only. Frames are checked (frames.ts) and written under names of our own
 * before Debian's ffmpeg sees them; the tools run hardened (tools.ts) and the MP4's frame count
 * is checked after, because ffmpeg drops frames it cannot use without failing.
 */
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FIXED_LIMITS } from '../accounts/plans';
import { ByteCapExceeded, forEachZipEntry, openEntryStream, openZip, readCapped } from '../scan/zip';
import { BurstChecker, ClipRejected, FrameSize, gifScreenSize, isGif } from './frames';
import type { ClipFormat } from './schemas';
import { runTool } from './tools';

export interface MadeClip {
  format: ClipFormat;
  frames: number;
  fps: number;
  width: number;
  height: number;
  durationMs: number;
  /** Paths inside a private temporary directory, removed by dispose(). */
  videoPath?: string;
  posterPath: string;
  dispose(): Promise<void>;
}

const POSTER_FILTER = "scale='min(320,iw)':-2";

/** The format a clip is in: what meta says, else what its first bytes say. */
export function clipFormatOf(declared: ClipFormat | undefined, head: Buffer): ClipFormat {
  if (declared) return declared;
  if (isGif(head)) return 'gif';
  if (head.length >= 4 && head.readUInt32LE(0) === 0x04034b50) return 'jpeg_burst';
  throw new ClipRejected('A clip is a zip of JPEG frames (meta.format "jpeg_burst") or a GIF');
}

/** Bounds how many clips one process transcodes at once: each ffmpeg already uses two threads. */
class Slots {
  private waiting: Array<() => void> = [];
  private busy = 0;
  constructor(private readonly max: number) {}
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.busy >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.busy += 1;
    try {
      return await fn();
    } finally {
      this.busy -= 1;
      this.waiting.shift()?.();
    }
  }
}

export class ClipMaker {
  private readonly slots: Slots;
  constructor(opts: { concurrency: number }) {
    this.slots = new Slots(opts.concurrency);
  }

  make(raw: Buffer, format: ClipFormat, fps: number): Promise<MadeClip> {
    return this.slots.run(async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'sentinel-clip-'));
      const dispose = () => rm(dir, { recursive: true, force: true });
      try {
        const made = format === 'gif' ? await gifPoster(dir, raw) : await transcodeBurst(dir, raw, fps);
        return { ...made, dispose };
      } catch (err) {
        await dispose();
        throw err;
      }
    });
  }
}

/** Unpacks the frames, checking each, into frame-000001.jpg... in the order of their names. */
async function unpackFrames(dir: string, raw: Buffer): Promise<{ frames: number } & FrameSize> {
  let zip;
  try {
    zip = await openZip(raw);
  } catch (err) {
    throw new ClipRejected(`The clip is not a readable zip: ${(err as Error).message}`);
  }
  const checker = new BurstChecker();
  const members: Array<{ name: string; temp: string }> = [];
  try {
    await forEachZipEntry(zip, async (entry) => {
      if (entry.fileName.endsWith('/')) return true;
      if (entry.isEncrypted()) throw new ClipRejected('The clip has an encrypted member');
      const cap = checker.admit(entry.uncompressedSize);
      let frame: Buffer;
      try {
        frame = await readCapped(await openEntryStream(zip, entry), cap);
      } catch (err) {
        if (err instanceof ByteCapExceeded) throw new ClipRejected(checker.tooBig());
        throw err;
      }
      checker.check(frame);
      const temp = path.join(dir, `member-${members.length}.jpg`);
      await writeFile(temp, frame);
      members.push({ name: entry.fileName, temp });
      return true;
    });
  } catch (err) {
    if (err instanceof ClipRejected) throw err;
    // yauzl refuses absolute and `..` member names, bad sizes and broken structure here.
    throw new ClipRejected(`The clip's zip is damaged or unsafe: ${(err as Error).message}`);
  }
  const result = checker.result();
  members.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (let i = 0; i < members.length; i++) await rename(members[i].temp, path.join(dir, frameName(i + 1)));
  return result;
}

const frameName = (n: number) => `frame-${String(n).padStart(6, '0')}.jpg`;

async function transcodeBurst(dir: string, raw: Buffer, fps: number): Promise<Omit<MadeClip, 'dispose'>> {
  const { frames, width, height } = await unpackFrames(dir, raw);
  const videoPath = path.join(dir, 'clip.mp4');
  const posterPath = path.join(dir, 'poster.jpg');
  await runTool('ffmpeg', [
    '-f', 'image2', '-framerate', String(fps), '-start_number', '1', '-i', path.join(dir, 'frame-%06d.jpg'),
    '-frames:v', String(frames), '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-threads', '2',
    // yuv420p needs even dimensions.
    '-vf', 'scale=trunc(iw/2)*2:trunc(ih/2)*2', '-movflags', '+faststart', '-f', 'mp4', videoPath,
  ], dir);
  const probe = JSON.parse(await runTool('ffprobe', [
    '-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=codec_name,nb_read_frames,width,height', '-of', 'json', videoPath,
  ], dir)) as { streams?: Array<{ codec_name?: string; nb_read_frames?: string; width?: number; height?: number }> };
  const stream = probe.streams?.[0];
  if (stream?.codec_name !== 'h264' || Number(stream.nb_read_frames) !== frames) {
    throw new ClipRejected(`The video has ${stream?.nb_read_frames ?? 'no'} frames of the ${frames} sent; ffmpeg dropped frames it could not decode`);
  }
  // What ffmpeg decoded, not only what the frames' headers said (frames.ts reads one SOF per frame).
  const even = (n: number) => Math.floor(n / 2) * 2;
  if (stream.width !== even(width) || stream.height !== even(height)) {
    throw new ClipRejected(`The video is ${stream.width}x${stream.height}, not the ${width}x${height} its frames declare`);
  }
  await runTool('ffmpeg', ['-f', 'image2', '-i', path.join(dir, frameName(1)), '-vf', POSTER_FILTER, '-frames:v', '1', '-q:v', '4', '-f', 'image2', posterPath], dir);
  return { format: 'jpeg_burst', frames, fps, width, height, durationMs: Math.round((frames * 1000) / fps), videoPath, posterPath };
}

async function gifPoster(dir: string, raw: Buffer): Promise<Omit<MadeClip, 'dispose'>> {
  const { width, height } = gifScreenSize(raw);
  const gifPath = path.join(dir, 'clip.gif');
  const posterPath = path.join(dir, 'poster.jpg');
  await writeFile(gifPath, raw);
  const probe = JSON.parse(await runTool('ffprobe', [
    '-f', 'gif', '-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=nb_read_frames:format=duration', '-of', 'json', gifPath,
  ], dir)) as { streams?: Array<{ nb_read_frames?: string }>; format?: { duration?: string } };
  const frames = Number(probe.streams?.[0]?.nb_read_frames);
  if (!Number.isInteger(frames) || frames < 1) throw new ClipRejected('The GIF has no readable frames');
  if (frames > FIXED_LIMITS.clipMaxFrames) throw new ClipRejected(`A clip has at most ${FIXED_LIMITS.clipMaxFrames} frames`);
  const durationMs = Math.round(Number(probe.format?.duration ?? 0) * 1000);
  await runTool('ffmpeg', ['-f', 'gif', '-i', gifPath, '-vf', POSTER_FILTER, '-frames:v', '1', '-q:v', '4', '-f', 'image2', posterPath], dir);
  const fps = durationMs > 0 ? Math.round((frames * 1000 * 100) / durationMs) / 100 : FIXED_LIMITS.clipFpsDefault;
  return { format: 'gif', frames, fps, width, height, durationMs, posterPath };
}
