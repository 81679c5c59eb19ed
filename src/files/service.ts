/**
 * File transfer rules (docs/contract.md §8): an entity's upload is stored, scanned by the one
 * scan pipeline inside the workflow `file-<id>`, then delivered to its recipient or blocked; a
 * clip is made into a video and poster for the account's gallery. Downloads consume; everything
 * is deleted when it expires. HTTP (routes.ts) and Temporal activities both call this.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { AccountDoc } from '../accounts/records';
import { FIXED_LIMITS } from '../accounts/plans';
import { AppError, BadRequestError, NotFoundError, ServiceUnavailableError } from '../errors';
import { describeAjvError, parseClientJson, validatorFor } from '../json-schema';
import type { Logger } from '../log';
import { encodeUserJson, decodeUserJson } from '../storage/user-json';
import { clipFormatOf, MadeClip } from './clip';
import { ClipRejected } from './frames';
import { parseRange, RangeAnswer } from './range';
import {
  ClipFormat, FileStatusView, GalleryQuery, uploadFieldsSchema, UploadFields,
} from './schemas';
import type { BlobPart, FileRecord, FileRecords, Verdict } from './records';

export const BLOB_PARTS: readonly BlobPart[] = ['raw', 'video', 'poster'];


/** The scan pipeline as file transfer uses it (src/scan/service.ts). */
export interface TransferScanner {
  /** Takes one scan of the account's monthly quota; 402 when it is used up. */
  reserveScan(account: AccountDoc): Promise<void>;
  /** Gives back a scan taken by reserveScan for an upload that was not kept. */
  releaseScan(account: AccountDoc): Promise<void>;
  /** Scans bytes whose quota was taken at upload; recorded once in the account's history under scanId. */
  scanTransfer(input: { accountId: string; scanId: string; requestId: string; name: string; content: Buffer; at: Date }):
    Promise<{ safetyScore: Verdict; contentType: string }>;
}
export interface Recipients { entity(accountId: string, name: string): Promise<unknown> }
/** How file transfers start their durable work (Temporal, temporal/engines/files.ts). */
export interface FileWorkflows { startFileWorkflow(fileId: string): Promise<void> }
export interface ClipTranscoder { make(raw: Buffer, format: ClipFormat, fps: number): Promise<MadeClip> }

/** Who asks: the account key, or one of its entities. */
export interface FileCaller { accountId: string; entity?: string }

/** What the HTTP layer read from the multipart body after the `file` part was stored. */
export interface ReceivedUpload {
  filename: string;
  size: number;
  sha256: string;
  mimeType: string;
  /** The small text fields as sent: dest, tags (JSON), kind, meta (JSON). */
  fields: Record<string, string>;
}

export interface UploadRequest {
  account: AccountDoc;
  source: string;
  requestId: string;
  /** Streams the upload, handing the file part to `store`, which writes it to GridFS. */
  receive(store: (file: Readable) => Promise<number>): Promise<ReceivedUpload>;
}

export interface StoredPart { stream: Readable; size: number; contentType: string; filename: string; range: RangeAnswer }

/** What a download sends, without the bytes (HEAD). */
export type PartHeaders = Pick<StoredPart, 'size' | 'contentType' | 'filename'>;

/** A download holding the file's claim: `consume` once the whole body was sent, else `release`. */
export interface Download extends StoredPart {
  consume(): Promise<void>;
  release(): Promise<void>;
}

/** Threat levels a file may be delivered with (docs/contract.md §8 "Scanning and delivery"); anything else is blocked. */
const DELIVERABLE = new Set(['Clean', 'Informational']);
const DAY_MS = 24 * 60 * 60 * 1000;
const EXPIRY_BATCH = 200;
/** A download's claim lasts this long and is renewed while the body streams; a dead holder's lapses. */
const DOWNLOAD_CLAIM_MS = 10 * 60 * 1000;

const validateFields = validatorFor(uploadFieldsSchema);

/** Parses the multipart text fields (tags and meta are JSON) and checks them against the schema. */
export function parseUploadFields(raw: Record<string, string>): { fields: UploadFields; metaText: string } {
  const out: Record<string, unknown> = {};
  for (const key of ['dest', 'kind'] as const) if (raw[key] !== undefined && raw[key] !== '') out[key] = raw[key];
  for (const key of ['tags', 'meta'] as const) {
    if (raw[key] === undefined || raw[key] === '') continue;
    try {
      out[key] = parseClientJson(raw[key]);
    } catch (err) {
      const why = /prototype/.test((err as Error).message) ? `: ${(err as Error).message}` : '';
      throw new BadRequestError(`${key} must be JSON (${key === 'tags' ? 'an array of strings' : 'an object'})${why}`, undefined, 'invalid_field');
    }
  }
  const metaText = encodeUserJson(out.meta ?? {});
  if (!validateFields(out)) throw new BadRequestError(describeAjvError('field', validateFields.errors), undefined, 'invalid_field');
  const fields = out as UploadFields;
  if (fields.kind !== 'clip' && !fields.dest) throw new BadRequestError('dest (the recipient entity name) is required', undefined, 'invalid_field');
  return { fields, metaText };
}

const RECIPIENT_GONE = 'The recipient entity was deleted';

export class FileService {
  constructor(private readonly deps: {
    store: FileRecords;
    scanner: TransferScanner;
    recipients: Recipients;
    workflows: FileWorkflows;
    clips: ClipTranscoder;
    logger: Logger;
    now?: () => Date;
  }) {}

  private now(): Date { return this.deps.now?.() ?? new Date(); }

  /**
   * Past its expiry a file is gone for its users, although the hourly sweep may not have deleted
   * it yet (an outside probe downloaded a file an hour past its 7 days).
   */
  private expired(f: FileRecord): boolean {
    return f.expiresAt.getTime() <= this.now().getTime();
  }

  async upload(req: UploadRequest): Promise<{ id: string; status: 'scanning'; filename: string; size: number; sha256: string }> {
    const { store } = this.deps;
    const id = randomUUID();
    let received: ReceivedUpload;
    let parsed: ReturnType<typeof parseUploadFields>;
    try {
      received = await req.receive((file) => store.saveBlob(id, 'raw', file));
      parsed = parseUploadFields(received.fields);
      if (parsed.fields.dest) await this.requireRecipient(req.account._id, parsed.fields.dest);
      await this.deps.scanner.reserveScan(req.account);
    } catch (err) {
      await store.deleteBlob(id, 'raw');
      throw err;
    }
    const { fields, metaText } = parsed;
    const now = this.now();
    const kind = fields.kind ?? 'file';
    await store.insert({
      _id: id, accountId: req.account._id, source: req.source, ...(fields.dest ? { dest: fields.dest } : {}), kind,
      filename: received.filename || id, size: received.size, sha256: received.sha256, contentType: received.mimeType || 'application/octet-stream',
      tags: fields.tags ?? [], meta: metaText, status: 'scanning', scanId: randomUUID(), requestId: req.requestId,
      ...(kind === 'clip' ? { clip: { fps: fields.meta?.fps ?? FIXED_LIMITS.clipFpsDefault, ...(fields.meta?.format ? { format: fields.meta.format } : {}) } } : {}),
      createdAt: now, expiresAt: new Date(now.getTime() + FIXED_LIMITS.fileRetentionDays * DAY_MS),
    });
    try {
      await this.deps.workflows.startFileWorkflow(id);
    } catch (err) {
      // Nothing would ever scan it: end it now rather than leave it `scanning` until it expires,
      // and answer 503 (a part of the service is down), not a 500.
      // As a deferred scan in the same state: the request keeps nothing and charges nothing
      // (docs/contract.md §4; an outside probe saw each device retry burn a scan and leave a record).
      this.deps.logger.error({ err, fileId: id }, 'file transfer could not be started');
      await this.deleteAllBlobs(id);
      await store.remove(id);
      await this.deps.scanner.releaseScan(req.account);
      throw new ServiceUnavailableError('File transfer is unavailable right now (its workflow service cannot be reached); the upload was not kept or charged, retry later');
    }
    return { id, status: 'scanning', filename: received.filename || id, size: received.size, sha256: received.sha256 };
  }

  private async requireRecipient(accountId: string, name: string): Promise<void> {
    if (!(await this.recipientExists(accountId, name))) throw new BadRequestError(`No entity named "${name}" in this account`, undefined, 'unknown_dest');
  }

  /** The sender (or the account key) sees any of its files; everyone else gets 404. */
  async status(caller: FileCaller, id: string): Promise<FileStatusView> {
    const f = await this.deps.store.find(caller.accountId, id);
    if (!f || (caller.entity !== undefined && f.source !== caller.entity)) throw new NotFoundError('File');
    return statusView(f);
  }

  async inbox(accountId: string, entity: string, limit: number) {
    const files = (await this.deps.store.inbox(accountId, entity, limit)).filter((f) => !this.expired(f));
    return {
      files: files.map((f) => ({
        id: f._id, filename: f.filename, size: f.size, contentType: f.contentType, sha256: f.sha256, source: f.source,
        tags: f.tags, kind: f.kind, createdAt: f.createdAt.toISOString(),
      })),
    };
  }

  /** A delivered file of the recipient's: its record and size, or 404. */
  private async deliverable(accountId: string, entity: string, id: string): Promise<PartHeaders> {
    const f = await this.deps.store.find(accountId, id);
    if (!f || f.dest !== entity || f.status !== 'delivered' || this.expired(f)) throw new NotFoundError('File');
    const size = await this.deps.store.blobSize(id, 'raw');
    if (size === undefined) throw new NotFoundError('File');
    return { size, contentType: f.contentType, filename: f.filename };
  }

  /** HEAD of a download: what GET would send, consuming nothing. */
  downloadHeaders(accountId: string, entity: string, id: string): Promise<PartHeaders> {
    return this.deliverable(accountId, entity, id);
  }

  /**
   * A delivered file's bytes for its recipient, under the file's single download claim (in the
   * database, so it holds across processes): a second download while one is in progress is 404.
   * HTTP calls `consume` once the whole body has been sent (the file is marked downloaded and its
   * bytes deleted) or `release` when the download was cut short (the file stays).
   */
  async openDownload(accountId: string, entity: string, id: string): Promise<Download> {
    const { store } = this.deps;
    await this.deliverable(accountId, entity, id);
    const token = randomUUID();
    const until = () => new Date(this.now().getTime() + DOWNLOAD_CLAIM_MS);
    if (!(await store.claimDownload(id, token, until(), this.now()))) throw new NotFoundError('File');
    const release = () => store.releaseDownloadClaim(id, token);
    let stream: Readable | undefined;
    let headers: PartHeaders;
    try {
      // Again under the claim: a download that ended before it has consumed the file.
      headers = await this.deliverable(accountId, entity, id);
      stream = await store.openBlob(id, 'raw');
    } catch (err) {
      await release();
      throw err;
    }
    if (!stream) {
      await release();
      throw new NotFoundError('File');
    }
    const renew = setInterval(() => {
      store.renewDownloadClaim(id, token, until()).catch((err: unknown) => this.deps.logger.warn({ err, fileId: id }, 'could not renew a download claim'));
    }, DOWNLOAD_CLAIM_MS / 3);
    renew.unref();
    return {
      ...headers, stream, range: { kind: 'full' },
      consume: async () => {
        clearInterval(renew);
        try {
          if (await store.transition(id, 'delivered', { status: 'downloaded', downloadedAt: this.now() })) {
            // A clip's video and poster stay in the gallery until the file expires.
            await store.deleteBlob(id, 'raw');
          }
        } finally {
          await release();
        }
      },
      release: async () => {
        clearInterval(renew);
        await release();
      },
    };
  }

  /**
   * The bytes of a file of the account that passed its transfer scan and still holds them
   * (a workflow's `scan` node re-scans it). Never a blocked, failed or still-scanning file.
   */
  async contentForScan(accountId: string, id: string): Promise<{ content: Buffer; filename: string }> {
    const f = await this.deps.store.find(accountId, id);
    if (!f || (f.status !== 'delivered' && f.status !== 'downloaded')) throw new NotFoundError('File');
    const content = await this.deps.store.readBlob(id, 'raw');
    if (!content) throw new NotFoundError('File');
    return { content, filename: f.filename };
  }

  async gallery(accountId: string, q: GalleryQuery) {
    const limit = q.limit ?? FIXED_LIMITS.filesPageDefault;
    const offset = q.offset ?? 0;
    const page = await this.deps.store.clips(accountId, { source: q.entity_name, offset, limit: limit + 1 });
    return {
      files: page.slice(0, limit).filter((f) => !this.expired(f)).map((f) => ({
        id: f._id, source: f.source, createdAt: f.createdAt.toISOString(), status: f.status, size: f.size,
        ...(f.clip ? { fps: f.clip.fps, ...(f.clip.format ? { format: f.clip.format } : {}) } : {}),
        ...(f.clip?.frames !== undefined ? { frames: f.clip.frames, width: f.clip.width, height: f.clip.height, durationMs: f.clip.durationMs } : {}),
        ...(f.error ? { error: f.error } : {}),
      })),
      next_cursor: page.length > limit ? String(offset + limit) : null,
    };
  }

  /** A clip's video (with Range), poster or raw upload, for the account key. */
  async openClipPart(accountId: string, id: string, part: BlobPart, rangeHeader?: string): Promise<StoredPart> {
    const { store } = this.deps;
    const f = await store.find(accountId, id);
    // Only a scanned, accepted clip is served: not while scanning, never when blocked or failed.
    if (!f || f.kind !== 'clip' || (f.status !== 'delivered' && f.status !== 'downloaded') || this.expired(f)) throw new NotFoundError('File');
    const size = await store.blobSize(id, part);
    if (size === undefined) throw new NotFoundError(part === 'video' ? 'Video' : part === 'poster' ? 'Poster' : 'File');
    const range = part === 'video' ? parseRange(rangeHeader, size) : { kind: 'full' as const };
    const stream = range.kind === 'unsatisfiable' ? undefined : await store.openBlob(id, part, range.kind === 'partial' ? range : undefined);
    const contentType = part === 'video' ? 'video/mp4' : part === 'poster' ? 'image/jpeg' : f.clip?.format === 'gif' ? 'image/gif' : 'application/zip';
    const ext = part === 'video' ? 'mp4' : part === 'poster' ? 'jpg' : f.clip?.format === 'gif' ? 'gif' : 'zip';
    if (range.kind !== 'unsatisfiable' && !stream) throw new NotFoundError('File');
    return { stream: stream as Readable, size, contentType, filename: `${id}-${part}.${ext}`, range };
  }

  /**
   * Activity: scans the file once and delivers or blocks it. Idempotent: a retry after a worker
   * died finds the decision already made (or the scan already in history) and only finishes it.
   */
  async scanFile(id: string): Promise<{ next: 'clip' | 'done' }> {
    const { store, scanner } = this.deps;
    const f = await store.findById(id);
    if (!f) return { next: 'done' };
    if (f.status === 'blocked' || f.status === 'failed') {
      await this.deleteAllBlobs(id);
      return { next: 'done' };
    }
    if (f.status !== 'scanning') return { next: 'done' };
    if (f.verdict) return { next: f.kind === 'clip' ? 'clip' : 'done' };
    const content = await store.readBlob(id, 'raw');
    if (!content) {
      await this.fail(id, 'The uploaded bytes are gone');
      return { next: 'done' };
    }
    const scan = await scanner.scanTransfer({ accountId: f.accountId, scanId: f.scanId, requestId: f.requestId, name: f.filename, content, at: f.createdAt });
    const verdict: Verdict = { score: scan.safetyScore.score, threatLevel: scan.safetyScore.threatLevel, primaryThreat: scan.safetyScore.primaryThreat };
    if (!DELIVERABLE.has(verdict.threatLevel)) {
      await store.transition(id, 'scanning', { status: 'blocked', verdict });
      await this.deleteAllBlobs(id);
      this.deps.logger.info({ fileId: id, threatLevel: verdict.threatLevel }, 'file blocked');
      return { next: 'done' };
    }
    if (f.kind === 'clip') {
      await store.setVerdict(id, verdict, scan.contentType);
      return { next: 'clip' };
    }
    if (f.dest && !(await this.recipientExists(f.accountId, f.dest))) {
      await this.fail(id, RECIPIENT_GONE);
      return { next: 'done' };
    }
    await store.transition(id, 'scanning', { status: 'delivered', verdict, contentType: scan.contentType, deliveredAt: this.now() });
    return { next: 'done' };
  }

  private async recipientExists(accountId: string, name: string): Promise<boolean> {
    try {
      await this.deps.recipients.entity(accountId, name);
      return true;
    } catch (err) {
      if (err instanceof AppError && err.status === 404) return false;
      throw err;
    }
  }

  /**
   * The recipient entity was deleted: its files waiting for it end `failed`, bytes deleted. The
   * inbox is by name, and an outside probe's new entity of the same name listed and downloaded a
   * file sent to the deleted one. A clip stays in the account's gallery: it ends as a downloaded
   * one does (video and poster kept, the raw upload deleted), out of reach of any entity.
   */
  async dropForRecipient(accountId: string, name: string): Promise<number> {
    const { store } = this.deps;
    const seen = new Set<string>();
    let dropped = 0;
    for (;;) {
      const waiting = (await store.inbox(accountId, name, 100)).filter((f) => !seen.has(f._id));
      if (!waiting.length) return dropped;
      for (const f of waiting) {
        seen.add(f._id);
        if (f.kind === 'clip') {
          if (await store.transition(f._id, 'delivered', { status: 'downloaded', downloadedAt: this.now() })) {
            await store.deleteBlob(f._id, 'raw');
            dropped += 1;
          }
        } else if (await store.transition(f._id, 'delivered', { status: 'failed', error: RECIPIENT_GONE })) {
          await this.deleteAllBlobs(f._id);
          dropped += 1;
        }
      }
    }
  }

  /** Activity: video and poster of a scanned clip. A clip that breaks a rule ends `failed`. */
  async processClip(id: string): Promise<void> {
    const { store } = this.deps;
    const f = await store.findById(id);
    if (!f || f.status !== 'scanning' || !f.verdict || !f.clip) {
      if (f?.status === 'failed') await this.deleteAllBlobs(id);
      return;
    }
    const raw = await store.readBlob(id, 'raw');
    if (!raw) return this.fail(id, 'The uploaded bytes are gone');
    let made: MadeClip;
    try {
      made = await this.deps.clips.make(raw, clipFormatOf(f.clip.format, raw), f.clip.fps);
    } catch (err) {
      if (err instanceof ClipRejected) return this.fail(id, err.message);
      throw err;
    }
    try {
      if (made.videoPath) await store.saveBlob(id, 'video', createReadStream(made.videoPath));
      await store.saveBlob(id, 'poster', createReadStream(made.posterPath));
      await store.transition(id, 'scanning', {
        status: 'delivered', deliveredAt: this.now(),
        clip: { format: made.format, fps: made.fps, frames: made.frames, width: made.width, height: made.height, durationMs: made.durationMs, video: !!made.videoPath },
      });
    } finally {
      await made.dispose();
    }
  }

  /** Ends a file that could not be scanned or processed: `failed`, bytes deleted. */
  async fail(id: string, reason: string): Promise<void> {
    await this.deps.store.transition(id, 'scanning', { status: 'failed', error: reason });
    await this.deleteAllBlobs(id);
  }

  /** Activity of the expiry schedule: deletes files (record and bytes) past their expiry. */
  async expire(): Promise<{ deleted: number }> {
    const { store } = this.deps;
    let deleted = 0;
    for (;;) {
      const ids = await store.expiredIds(this.now(), EXPIRY_BATCH);
      for (const id of ids) {
        await this.deleteAllBlobs(id);
        await store.remove(id);
      }
      deleted += ids.length;
      if (ids.length < EXPIRY_BATCH) {
        // The same hourly run removes bytes that killed writes left behind (a day old: no write takes that long).
        const leftovers = await store.sweepLeftoverBytes(new Date(this.now().getTime() - DAY_MS));
        if (leftovers > 0) this.deps.logger.info({ leftovers }, 'removed bytes of interrupted uploads');
        return { deleted };
      }
    }
  }

  private async deleteAllBlobs(id: string): Promise<void> {
    for (const part of BLOB_PARTS) await this.deps.store.deleteBlob(id, part);
  }
}

function statusView(f: FileRecord): FileStatusView {
  return {
    id: f._id, status: f.status, filename: f.filename, size: f.size, sha256: f.sha256, contentType: f.contentType,
    kind: f.kind, source: f.source, ...(f.dest ? { dest: f.dest } : {}), tags: f.tags,
    meta: decodeUserJson<Record<string, unknown>>(f.meta) ?? {},
    ...(f.verdict ? { verdict: f.verdict } : {}), ...(f.error ? { error: f.error } : {}), ...(f.clip ? { clip: f.clip } : {}),
    createdAt: f.createdAt.toISOString(), expiresAt: f.expiresAt.toISOString(),
  };
}
