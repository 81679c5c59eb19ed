/** HTTP for file transfer (entity keys) and the clip gallery (account key): FileService calls only. */
import { ForbiddenError, RangeNotSatisfiableError } from '../errors';
import { AppContext, principalOf, queryOf, ResponseDef, RouteRegistry } from '../http/route';
import { refuseDeclaredOverLimit, streamMultipartUpload, textFieldsOf } from '../http/multipart';
import { trackBodySent, watchReceipt } from '../http/body-sent';
import type { Logger } from '../log';
import type { ScanService } from '../scan/service';
import {
  acceptedSchema, fileStatusSchema, galleryQuerySchema, GalleryQuery, gallerySchema, inboxQuerySchema, inboxSchema, uploadBodySchema,
} from './schemas';
import type { FileCaller, FileService, PartHeaders, StoredPart } from './service';
import type { BlobPart } from './records';

const UPLOAD_FIELDS = textFieldsOf(uploadBodySchema);

/** `attachment` with an ASCII fallback name and the exact name in RFC 5987 form. */
function contentDisposition(kind: 'attachment' | 'inline', filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

function setPartHeaders(ctx: AppContext, part: PartHeaders, disposition: 'attachment' | 'inline'): void {
  ctx.set('Content-Disposition', contentDisposition(disposition, part.filename));
  // The type comes from the content (or the device): a browser must not guess another one.
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.type = part.contentType;
}

function sendPart(ctx: AppContext, part: StoredPart, disposition: 'attachment' | 'inline'): void {
  setPartHeaders(ctx, part, disposition);
  if (part.range.kind === 'unsatisfiable') throw new RangeNotSatisfiableError(part.size);
  if (part.range.kind === 'partial') {
    ctx.status = 206;
    ctx.set('Content-Range', `bytes ${part.range.start}-${part.range.end}/${part.size}`);
    ctx.length = part.range.end - part.range.start + 1;
  } else {
    ctx.status = 200;
    ctx.length = part.size;
  }
  ctx.body = part.stream;
}

const callerOf = (ctx: AppContext): FileCaller => {
  const p = principalOf(ctx);
  return p.kind === 'entity' ? { accountId: p.account._id, entity: p.entity.name } : { accountId: p.account._id };
};

const binary = (contentType: string, description: string) => ({ description, contentType, schema: { type: 'string', format: 'binary' } });

export function registerFileRoutes(r: RouteRegistry, s: { files: FileService; scans: Pick<ScanService, 'fileSizeLimit'>; logger: Logger }): void {
  r.add({
    method: 'POST', path: '/api/entities/files', dialect: 'messaging', tags: ['files'], auth: 'entity', permission: 'entity:Files', rate: 'entity',
    summary: 'Send a file (or a clip) to another entity; it is malware-scanned before delivery',
    description: 'Multipart. The file is stored and scanned by the scan pipeline of POST /api/scan (one scan of the account\'s monthly quota, 402 when used up), then `delivered` to `dest` (Clean or Informational) or `blocked` (its bytes deleted). `kind=clip` with `meta.format` `jpeg_burst` (a zip of JPEG frames) becomes an MP4 and poster in the account\'s gallery; a GIF clip gets a poster. Poll GET /api/entities/files/{id}. Refused with 413 as soon as the upload passes the plan\'s maximum file size.',
    rawBody: { contentType: 'multipart/form-data', schema: uploadBodySchema },
    responses: {
      202: { description: 'Accepted; scanning', schema: acceptedSchema },
      402: { description: 'Monthly scan quota used up (code quota_exceeded)' },
    },
    handler: async (ctx) => {
      const p = principalOf(ctx);
      // auth 'entity' already refused other keys; this narrows the type.
      if (p.kind !== 'entity') throw new ForbiddenError('This endpoint requires an entity API key');
      const { maxBytes, message: limitText } = s.scans.fileSizeLimit(p.account.plan);
      refuseDeclaredOverLimit(ctx.req, Number(ctx.get('content-length') || 0), maxBytes, limitText);
      ctx.status = 202;
      ctx.body = await s.files.upload({
        account: p.account, source: p.entity.name, requestId: ctx.state.requestId,
        receive: async (store) => {
          const u = await streamMultipartUpload(ctx.req, maxBytes, limitText, UPLOAD_FIELDS, store);
          return { filename: u.filename, size: u.size, sha256: u.hashes.sha256, mimeType: u.mimeType, fields: u.fields };
        },
      });
    },
  });

  r.add({
    method: 'GET', path: '/api/entities/files', dialect: 'messaging', tags: ['files'], auth: 'entity', permission: 'entity:Files', rate: 'entity',
    summary: 'Inbox: delivered (clean) files addressed to the calling entity, oldest first',
    query: inboxQuerySchema,
    responses: { 200: { description: 'Files waiting for download', schema: inboxSchema } },
    handler: async (ctx) => {
      const c = callerOf(ctx);
      ctx.body = await s.files.inbox(c.accountId, c.entity ?? '', queryOf<{ limit: number }>(ctx).limit);
    },
  });

  r.add({
    method: 'GET', path: '/api/entities/files/download/:id', dialect: 'messaging', tags: ['files'], auth: 'entity', permission: 'entity:Files', rate: 'entity',
    summary: 'Download a delivered file (the recipient only); consumes it',
    description: 'Once the whole body has been sent the file is marked `downloaded` and its bytes are deleted: a second download is 404. One download at a time: a download while another of the same file is in progress is 404. A download cut short leaves the file in place. HEAD answers the headers and consumes nothing.',
    responses: { 200: binary('application/octet-stream', 'The file\'s bytes, with Content-Disposition'), 404: { description: 'Unknown, not addressed to the caller, not delivered, or already downloaded' } },
    handler: async (ctx) => {
      const c = callerOf(ctx);
      // The router answers HEAD with this GET route: headers only, and nothing claimed or consumed.
      if (ctx.method === 'HEAD') {
        const h = await s.files.downloadHeaders(c.accountId, c.entity ?? '', ctx.params.id);
        setPartHeaders(ctx, h, 'attachment');
        ctx.status = 200;
        ctx.length = h.size;
        return;
      }
      const download = await s.files.openDownload(c.accountId, c.entity ?? '', ctx.params.id);
      // Consumed once the whole body was handed to the connection (trackBodySent: also when the
      // client read every byte and closed before the body stream ended) and the client showed it
      // got it (watchReceipt: its next request, or a clean close). A client that went away
      // mid-body, or reset the connection with bytes unread, leaves the file in place: the claim
      // is released. Until then the claim holds: a second download is 404.
      const sent = trackBodySent(ctx.res, download.size);
      const received = watchReceipt(ctx.req.socket, sent);
      ctx.res.once('close', () => {
        const done = (sent() ? received() : Promise.resolve(false))
          .then((ok) => (ok ? download.consume() : download.release()));
        done.catch((err: unknown) => s.logger.error({ err, fileId: ctx.params.id }, 'could not end a file download'));
      });
      sendPart(ctx, download, 'attachment');
    },
  });

  r.add({
    method: 'GET', path: '/api/entities/files/:id', dialect: 'messaging', tags: ['files'], auth: 'any', permission: 'entity:Files', rate: 'entity',
    summary: 'Status of a sent file (the sender, or the account key)',
    description: 'Statuses: `scanning` (also while a clip is being made), `delivered`, `blocked` (with the verdict; never downloadable), `downloaded`, `failed` (with `error`).',
    responses: { 200: { description: 'The file', schema: fileStatusSchema }, 404: { description: 'Unknown file, or not sent by the caller' } },
    handler: async (ctx) => {
      ctx.body = await s.files.status(callerOf(ctx), ctx.params.id);
    },
  });

  r.add({
    method: 'GET', path: '/api/files', dialect: 'messaging', tags: ['clips'], auth: 'account', rate: 'account-messaging',
    summary: 'The account\'s clip gallery, newest first',
    query: galleryQuerySchema,
    responses: { 200: { description: 'A page of clips', schema: gallerySchema } },
    handler: async (ctx) => {
      ctx.body = await s.files.gallery(principalOf(ctx).account._id, queryOf<GalleryQuery>(ctx));
    },
  });

  const parts: Array<{ part: BlobPart; summary: string; response: ResponseDef; description?: string }> = [
    {
      part: 'video', summary: 'A jpeg_burst clip as MP4 (H.264, yuv420p, faststart)', response: binary('video/mp4', 'The video (206 with Content-Range for a Range request)'),
      description: 'Supports a single HTTP byte range (206); an unsatisfiable or malformed `bytes=` range is 416 with `Content-Range: bytes */size`.',
    },
    { part: 'poster', summary: 'The clip\'s poster (first frame, at most 320 pixels wide)', response: binary('image/jpeg', 'The poster') },
    {
      part: 'raw', summary: 'The clip as uploaded: the zip of frames or the legacy GIF',
      response: { ...binary('application/zip', 'The zip of a jpeg_burst clip, or the GIF of a GIF clip'), otherContent: { 'image/gif': { type: 'string', format: 'binary' } } },
    },
  ];
  for (const { part, summary, response, description } of parts) {
    r.add({
      method: 'GET', path: `/api/files/:id/${part}`, dialect: 'messaging', tags: ['clips'], auth: 'account', rate: 'account-messaging',
      summary, ...(description ? { description } : {}),
      responses: part === 'video'
        ? { 200: binary('video/mp4', 'The whole video'), 206: response, 416: { description: 'Range not satisfiable' }, 404: { description: 'Unknown clip, or no video (yet)' } }
        : { 200: response, 404: { description: 'Unknown clip, or not (yet) available' } },
      handler: async (ctx) => {
        if (part === 'video') ctx.set('Accept-Ranges', 'bytes');
        sendPart(ctx, await s.files.openClipPart(principalOf(ctx).account._id, ctx.params.id, part, ctx.get('range') || undefined), 'inline');
      },
    });
  }
}
