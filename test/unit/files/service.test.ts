/**
 * File-transfer rules (src/files/service.ts) over an in-memory store and fake scanner: field
 * parsing, deliver/block by threat level, idempotent scanning, clip failures, consume on
 * download, expiry.
 */
import { Readable } from 'node:stream';
import type { AccountDoc } from '../../../src/accounts/records';
import { NotFoundError, QuotaExceededError } from '../../../src/errors';
import { ClipRejected } from '../../../src/files/frames';
import { FileService, parseUploadFields } from '../../../src/files/service';
import type { BlobPart, FileRecord, FileRecords } from '../../../src/files/records';
import type { Logger } from '../../../src/log';

const account: AccountDoc = { _id: 'acc', name: 'acme', plan: 'pro', region: 'local', entityCount: 0, createdAt: new Date(0) };
const logger = { info() {}, warn() {}, error() {}, child() { return logger; } } as unknown as Logger;

class MemoryFiles implements FileRecords {
  docs = new Map<string, FileRecord>();
  blobs = new Map<string, Buffer>();
  claims = new Map<string, { token: string; until: Date }>();
  async insert(doc: FileRecord) { this.docs.set(doc._id, structuredClone(doc)); }
  async find(accountId: string, id: string) { const d = this.docs.get(id); return d && d.accountId === accountId ? structuredClone(d) : null; }
  async findById(id: string) { const d = this.docs.get(id); return d ? structuredClone(d) : null; }
  async transition(id: string, from: FileRecord['status'], set: Partial<FileRecord>) {
    const d = this.docs.get(id);
    if (!d || d.status !== from) return false;
    Object.assign(d, set);
    return true;
  }
  async setVerdict(id: string, verdict: FileRecord['verdict'], contentType: string) { Object.assign(this.docs.get(id)!, { verdict, contentType }); }
  async inbox(accountId: string, dest: string) { return [...this.docs.values()].filter((d) => d.accountId === accountId && d.dest === dest && d.status === 'delivered'); }
  async clips() { return [...this.docs.values()].filter((d) => d.kind === 'clip'); }
  async sweepLeftoverBytes() { return 0; }
  async expiredIds(now: Date, limit: number) { return [...this.docs.values()].filter((d) => d.expiresAt <= now).slice(0, limit).map((d) => d._id); }
  async remove(id: string) { this.docs.delete(id); this.claims.delete(id); }
  async claimDownload(id: string, token: string, until: Date, now: Date) {
    const held = this.claims.get(id);
    if (held && held.until > now) return false;
    this.claims.set(id, { token, until });
    return true;
  }
  async renewDownloadClaim(id: string, token: string, until: Date) { if (this.claims.get(id)?.token === token) this.claims.set(id, { token, until }); }
  async releaseDownloadClaim(id: string, token: string) { if (this.claims.get(id)?.token === token) this.claims.delete(id); }
  async saveBlob(id: string, part: BlobPart, source: Readable) {
    const chunks: Buffer[] = [];
    for await (const c of source) chunks.push(Buffer.from(c as Buffer));
    this.blobs.set(`${id}/${part}`, Buffer.concat(chunks));
    return Buffer.concat(chunks).length;
  }
  async blobSize(id: string, part: BlobPart) { return this.blobs.get(`${id}/${part}`)?.length; }
  async openBlob(id: string, part: BlobPart) { const b = this.blobs.get(`${id}/${part}`); return b ? Readable.from([b]) : undefined; }
  async readBlob(id: string, part: BlobPart) { return this.blobs.get(`${id}/${part}`); }
  async deleteBlob(id: string, part: BlobPart) { this.blobs.delete(`${id}/${part}`); }
}

function setup(opts: { threatLevel?: string; quotaLeft?: number; clipError?: Error; startFails?: boolean } = {}) {
  const store = new MemoryFiles();
  const scans: string[] = [];
  const started: string[] = [];
  let quota = opts.quotaLeft ?? 100;
  const gone = new Set<string>();
  let now = new Date('2026-01-01T00:00:00Z');
  const service = new FileService({
    store,
    scanner: {
      reserveScan: async () => { if (quota-- <= 0) throw new QuotaExceededError('used up'); },
      releaseScan: async () => { quota++; },
      scanTransfer: async (input) => {
        scans.push(input.scanId);
        return { safetyScore: { score: opts.threatLevel === 'Malicious' ? 0 : 100, threatLevel: opts.threatLevel ?? 'Clean', primaryThreat: 'x' }, contentType: 'application/pdf' };
      },
    },
    recipients: { entity: async (_acc, name) => { if (name !== 'b' || gone.has(name)) throw new NotFoundError('Entity'); return {}; } },
    workflows: {
      startFileWorkflow: async (id) => {
        if (opts.startFails) throw new Error('Temporal unreachable');
        started.push(id);
      },
    },
    clips: {
      make: async () => {
        if (opts.clipError) throw opts.clipError;
        throw new Error('not used');
      },
    },
    logger,
    now: () => now,
  });
  const upload = (content: Buffer, fields: Record<string, string>) => service.upload({
    account, source: 'a', requestId: 'req',
    receive: async (write) => {
      await write(Readable.from([content]));
      return { filename: 'f.pdf', size: content.length, sha256: 'h', mimeType: 'application/pdf', fields };
    },
  });
  return { store, service, scans, started, upload, setNow: (d: Date) => { now = d; }, quotaLeft: () => quota, deleteRecipient: (name: string) => gone.add(name) };
}

describe('parseUploadFields', () => {
  it('parses tags and meta from JSON and keeps meta exactly as sent', () => {
    const { fields, metaText } = parseUploadFields({ dest: 'b', tags: '["x","y"]', meta: '{"format":"jpeg_burst","fps":12,"$k":{"a.b":1}}', kind: 'clip' });
    expect(fields).toMatchObject({ dest: 'b', tags: ['x', 'y'], kind: 'clip', meta: { format: 'jpeg_burst', fps: 12 } });
    expect(JSON.parse(metaText)).toEqual({ format: 'jpeg_burst', fps: 12, $k: { 'a.b': 1 } });
  });
  it.each([
    [{ tags: '["x"]' }, /dest/],
    [{ dest: 'b', tags: 'x' }, /tags must be JSON/],
    [{ dest: 'b', meta: '[1' }, /meta must be JSON/],
    [{ dest: 'b', kind: 'video' }, /field/],
    [{ dest: 'b', tags: JSON.stringify(Array(11).fill('t')) }, /field/],
    [{ dest: '../b' }, /field/],
    [{ kind: 'clip', meta: '{"fps":0}' }, /field/],
    [{ kind: 'clip', meta: '{"format":"mjpeg"}' }, /field/],
    // As the HTTP JSON bodies and MQTT publishes refuse them.
    [{ dest: 'b', meta: '{"__proto__":{"polluted":1}}' }, /meta must be JSON \(an object\): Object contains forbidden prototype property/],
  ])('refuses %j', (raw, message) => {
    expect(() => parseUploadFields(raw as Record<string, string>)).toThrow(message);
  });
  it('needs no dest for a clip', () => {
    expect(parseUploadFields({ kind: 'clip' }).fields.kind).toBe('clip');
  });
});

describe('FileService', () => {
  it('stores the upload, records it scanning with a 7-day expiry and starts its workflow', async () => {
    const t = setup();
    const r = await t.upload(Buffer.from('%PDF'), { dest: 'b' });
    expect(r).toMatchObject({ status: 'scanning', filename: 'f.pdf', size: 4 });
    expect(t.started).toEqual([r.id]);
    const doc = t.store.docs.get(r.id)!;
    expect(doc.expiresAt.getTime() - doc.createdAt.getTime()).toBe(7 * 24 * 3600 * 1000);
    expect(t.store.blobs.get(`${r.id}/raw`)?.toString()).toBe('%PDF');
  });

  it.each([
    ['an unknown recipient', { dest: 'nobody' }, {}, 400],
    ['a used-up quota', { dest: 'b' }, { quotaLeft: 0 }, 402],
  ])('drops the stored bytes when refusing %s', async (_l, fields, opts, status) => {
    const t = setup(opts);
    await expect(t.upload(Buffer.from('x'), fields)).rejects.toMatchObject({ status });
    expect(t.store.blobs.size).toBe(0);
    expect(t.store.docs.size).toBe(0);
    expect(t.started).toEqual([]);
  });

  it('keeps nothing and charges nothing when its workflow cannot be started', async () => {
    const t = setup({ startFails: true, quotaLeft: 1 });
    // 503 (a part of the service is down), not the raw error as a 500 (an outside probe got 500s);
    // and, as a deferred scan, no record, no bytes and the scan given back (a probe saw each retry burn one).
    for (let i = 0; i < 3; i++) {
      await expect(t.upload(Buffer.from('%PDF'), { dest: 'b' })).rejects.toMatchObject({ status: 503, code: 'unavailable' });
    }
    expect(t.store.docs.size).toBe(0);
    expect(t.store.blobs.size).toBe(0);
    expect(t.quotaLeft()).toBe(1);
  });

  it('delivers a Clean file once; a repeated activity does not scan again', async () => {
    const t = setup();
    const { id } = await t.upload(Buffer.from('%PDF'), { dest: 'b' });
    expect(await t.service.scanFile(id)).toEqual({ next: 'done' });
    expect(await t.service.scanFile(id)).toEqual({ next: 'done' });
    expect(t.scans).toHaveLength(1);
    expect(t.store.docs.get(id)).toMatchObject({ status: 'delivered', contentType: 'application/pdf', verdict: { threatLevel: 'Clean' } });
    expect((await t.service.inbox('acc', 'b', 50)).files.map((f) => f.id)).toEqual([id]);
  });

  it.each(['Malicious', 'Suspicious', 'Error', 'Rejected', 'SomethingNew'])('blocks a %s file and deletes its bytes', async (threatLevel) => {
    const t = setup({ threatLevel });
    const { id } = await t.upload(Buffer.from('bad'), { dest: 'b' });
    await t.service.scanFile(id);
    expect(t.store.docs.get(id)).toMatchObject({ status: 'blocked', verdict: { threatLevel } });
    expect(t.store.blobs.size).toBe(0);
    expect((await t.service.inbox('acc', 'b', 50)).files).toEqual([]);
    await expect(t.service.openDownload('acc', 'b', id)).rejects.toMatchObject({ status: 404 });
  });

  it('finishes the clean-up of a file blocked by an attempt that died before deleting', async () => {
    const t = setup();
    const { id } = await t.upload(Buffer.from('bad'), { dest: 'b' });
    t.store.docs.get(id)!.status = 'blocked';
    await t.service.scanFile(id);
    expect(t.store.blobs.size).toBe(0);
  });

  it('hands a clean clip on to clip making; a clip that breaks a rule fails with the reason and loses its bytes', async () => {
    const t = setup({ clipError: new ClipRejected('frame 3 is truncated') });
    const { id } = await t.upload(Buffer.from('PK\u0003\u0004'), { kind: 'clip', meta: '{"format":"jpeg_burst"}' });
    expect(await t.service.scanFile(id)).toEqual({ next: 'clip' });
    expect(t.store.docs.get(id)?.status).toBe('scanning');
    expect(await t.service.scanFile(id)).toEqual({ next: 'clip' });
    expect(t.scans).toHaveLength(1);
    await t.service.processClip(id);
    expect(t.store.docs.get(id)).toMatchObject({ status: 'failed', error: 'frame 3 is truncated' });
    expect(t.store.blobs.size).toBe(0);
  });

  it('lets an operator problem (not the clip\'s fault) propagate so the activity retries', async () => {
    const t = setup({ clipError: new Error('ffmpeg could not start: ENOENT') });
    const { id } = await t.upload(Buffer.from('PK\u0003\u0004'), { kind: 'clip' });
    await t.service.scanFile(id);
    await expect(t.service.processClip(id)).rejects.toThrow(/ENOENT/);
    expect(t.store.docs.get(id)?.status).toBe('scanning');
    expect(t.store.blobs.size).toBe(1);
  });

  it('consumes a download only when told the body was sent, once', async () => {
    const t = setup();
    const { id } = await t.upload(Buffer.from('%PDF'), { dest: 'b' });
    await t.service.scanFile(id);
    await expect(t.service.openDownload('acc', 'a', id)).rejects.toMatchObject({ status: 404 });
    await expect(t.service.openDownload('other', 'b', id)).rejects.toMatchObject({ status: 404 });
    // HEAD takes nothing.
    expect(await t.service.downloadHeaders('acc', 'b', id)).toEqual({ size: 4, contentType: 'application/pdf', filename: 'f.pdf' });
    const first = await t.service.openDownload('acc', 'b', id);
    // A second request while the first is in progress finds the file claimed.
    await expect(t.service.openDownload('acc', 'b', id)).rejects.toMatchObject({ status: 404 });
    await first.consume();
    expect(t.store.docs.get(id)).toMatchObject({ status: 'downloaded' });
    expect(t.store.blobs.size).toBe(0);
    expect(t.store.claims.size).toBe(0);
    await expect(t.service.openDownload('acc', 'b', id)).rejects.toMatchObject({ status: 404 });
    await expect(t.service.downloadHeaders('acc', 'b', id)).rejects.toMatchObject({ status: 404 });
  });

  it('lets a download cut short, or one whose holder died, leave the file to the next', async () => {
    const t = setup();
    const { id } = await t.upload(Buffer.from('%PDF'), { dest: 'b' });
    await t.service.scanFile(id);
    const cut = await t.service.openDownload('acc', 'b', id);
    await cut.release();
    const dead = await t.service.openDownload('acc', 'b', id);
    expect(dead.size).toBe(4);
    await expect(t.service.openDownload('acc', 'b', id)).rejects.toMatchObject({ status: 404 });
    // The holder never comes back: its claim lapses after 10 minutes.
    t.setNow(new Date(Date.parse('2026-01-01T00:10:00Z')));
    const next = await t.service.openDownload('acc', 'b', id);
    await next.consume();
    // The dead holder's late consume finds the file already consumed and changes nothing.
    await dead.consume();
    expect(t.store.docs.get(id)).toMatchObject({ status: 'downloaded' });
    expect(t.store.claims.size).toBe(0);
  });

  it('shows a file to its sender and the account key only', async () => {
    const t = setup();
    const { id } = await t.upload(Buffer.from('%PDF'), { dest: 'b' });
    expect((await t.service.status({ accountId: 'acc', entity: 'a' }, id)).status).toBe('scanning');
    expect((await t.service.status({ accountId: 'acc' }, id)).id).toBe(id);
    await expect(t.service.status({ accountId: 'acc', entity: 'b' }, id)).rejects.toMatchObject({ status: 404 });
    await expect(t.service.status({ accountId: 'other' }, id)).rejects.toMatchObject({ status: 404 });
  });

  it('serves clip parts only once the clip is delivered, the video by byte range', async () => {
    const t = setup();
    const { id } = await t.upload(Buffer.from('PK\u0003\u0004'), { kind: 'clip' });
    await expect(t.service.openClipPart('acc', id, 'raw')).rejects.toMatchObject({ status: 404 });
    await t.service.scanFile(id);
    await expect(t.service.openClipPart('acc', id, 'raw')).rejects.toMatchObject({ status: 404 });
    Object.assign(t.store.docs.get(id)!, { status: 'delivered' });
    t.store.blobs.set(`${id}/video`, Buffer.from('0123456789'));
    const part = await t.service.openClipPart('acc', id, 'video', 'bytes=2-4');
    expect(part).toMatchObject({ size: 10, contentType: 'video/mp4', range: { kind: 'partial', start: 2, end: 4 } });
    expect((await t.service.openClipPart('acc', id, 'video', 'bytes=10-')).range).toEqual({ kind: 'unsatisfiable' });
    expect((await t.service.openClipPart('acc', id, 'raw')).contentType).toBe('application/zip');
    await expect(t.service.openClipPart('acc', id, 'poster')).rejects.toMatchObject({ status: 404 });
    await expect(t.service.openClipPart('other', id, 'raw')).rejects.toMatchObject({ status: 404 });
  });

  // Found by an outside probe: a file past its expiry was listed and downloaded until the hourly sweep ran.
  it('a file past its expiry is neither listed nor downloadable, before the sweep deletes it', async () => {
    const t = setup();
    const { id } = await t.upload(Buffer.from('%PDF'), { dest: 'b' });
    await t.service.scanFile(id);
    t.setNow(new Date('2026-01-07T23:59:59Z'));
    expect((await t.service.inbox('acc', 'b', 50)).files.map((f) => f.id)).toEqual([id]);
    await expect(t.service.downloadHeaders('acc', 'b', id)).resolves.toMatchObject({ size: 4 });
    t.setNow(new Date('2026-01-08T00:00:00Z'));
    expect((await t.service.inbox('acc', 'b', 50)).files).toEqual([]);
    await expect(t.service.downloadHeaders('acc', 'b', id)).rejects.toMatchObject({ status: 404 });
    await expect(t.service.openDownload('acc', 'b', id)).rejects.toMatchObject({ status: 404 });
    expect(t.store.docs.size).toBe(1); // the sweep has not run: only the answers changed
  });

  // Found by an outside probe: a new entity with a deleted one's name listed and downloaded its file.
  it('the files waiting for a deleted recipient end failed with their bytes deleted; one scanned after it is not delivered', async () => {
    const t = setup();
    const { id } = await t.upload(Buffer.from('%PDF'), { dest: 'b' });
    await t.service.scanFile(id);
    expect(await t.service.dropForRecipient('acc', 'b')).toBe(1);
    expect(t.store.docs.get(id)).toMatchObject({ status: 'failed', error: 'The recipient entity was deleted' });
    expect(t.store.blobs.size).toBe(0);
    expect((await t.service.inbox('acc', 'b', 50)).files).toEqual([]);
    expect(await t.service.dropForRecipient('acc', 'b')).toBe(0);

    const late = await t.upload(Buffer.from('%PDF'), { dest: 'b' });
    t.deleteRecipient('b');
    expect(await t.service.scanFile(late.id)).toEqual({ next: 'done' });
    expect(t.store.docs.get(late.id)).toMatchObject({ status: 'failed', error: 'The recipient entity was deleted' });
  });

  it('expires files (record and every part) once their expiry has passed', async () => {
    const t = setup();
    const { id } = await t.upload(Buffer.from('%PDF'), { dest: 'b' });
    await t.service.scanFile(id);
    t.store.blobs.set(`${id}/poster`, Buffer.from('p'));
    t.setNow(new Date('2026-01-07T23:59:59Z'));
    expect(await t.service.expire()).toEqual({ deleted: 0 });
    t.setNow(new Date('2026-01-08T00:00:00Z'));
    expect(await t.service.expire()).toEqual({ deleted: 1 });
    expect(t.store.docs.size).toBe(0);
    expect(t.store.blobs.size).toBe(0);
  });
});
