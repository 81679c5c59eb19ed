/** HTTP for the scanning API: translates requests to ScanService calls and back. */
import { FIXED_LIMITS } from '../accounts/plans';
import { BadRequestError, PayloadTooLargeError } from '../errors';
import { AppContext, bodyOf, principalOf, queryOf, RouteRegistry } from '../http/route';
import { publicProfile } from './profiles';
import {
  envelopeSchema, historyQuerySchema, historySchema, payloadBodySchema, pendingAcceptedSchema, profileCreateSchema,
  profilePatchSchema, profileSchema, scanQuerySchema, scanResultSchema, scanUploadBody,
  type HistoryQuery, type PayloadBody, type ProfileInput, type ScanQuery,
} from './schemas';
import type { ScanOutcome, ScanService } from './service';
import { readMultipartUpload, refuseDeclaredOverLimit, textFieldsOf } from '../http/multipart';

const UPLOAD_FIELDS = textFieldsOf(scanUploadBody);

const PAYLOAD_JSON_LIMIT = 24 * 1024 * 1024;

export function registerScanRoutes(r: RouteRegistry, s: { scans: ScanService }): void {
  const answer = (ctx: AppContext, outcome: ScanOutcome) => {
    if (outcome.kind === 'deferred') {
      ctx.status = 202;
      ctx.body = outcome.envelope;
    } else {
      ctx.body = outcome.result;
    }
  };

  r.add({
    method: 'POST', path: '/api/scan', dialect: 'scan', tags: ['scanning'], auth: 'account', rate: 'scan-write',
    summary: 'Scan an uploaded file',
    description: 'Synchronous by default. `defer=true` (Standard and Pro) or a file over 25 MB answers 202 and is polled at GET /api/scan/{scanId}. The upload is refused with 413 as soon as it passes the plan\'s size limit; a part other than `file` and `profile_id`, or either given twice, is 400 `invalid_upload`.',
    query: scanQuerySchema,
    rawBody: { contentType: 'multipart/form-data', schema: scanUploadBody },
    responses: {
      200: { description: 'Scan result', schema: scanResultSchema }, 202: { description: 'Deferred', schema: pendingAcceptedSchema },
      402: { description: 'Monthly quota used up (code quota_exceeded)' }, 404: { description: 'Unknown profile_id' },
    },
    handler: async (ctx) => {
      const { account } = principalOf(ctx);
      const q = queryOf<ScanQuery>(ctx);
      const { maxBytes, message: limitText } = s.scans.fileSizeLimit(account.plan);
      refuseDeclaredOverLimit(ctx.req, Number(ctx.get('content-length') || 0), maxBytes, limitText);
      // Answered at once; the body is drained unread, as for a declared size over the limit.
      await s.scans.refuseBeforeUpload(account, q.defer === true).catch((err: unknown) => { ctx.req.resume(); throw err; });
      const upload = await readMultipartUpload(ctx.req, maxBytes, limitText, UPLOAD_FIELDS);
      answer(ctx, await s.scans.scan({
        account, requestId: ctx.state.requestId, content: upload.content, name: upload.filename, scanType: 'file',
        profileId: upload.fields.profile_id || q.profile_id, defer: q.defer === true, hashes: upload.hashes,
      }));
    },
  });

  r.add({
    method: 'POST', path: '/api/scan/payload', dialect: 'scan', tags: ['scanning'], auth: 'account', rate: 'scan-write',
    summary: 'Scan a raw or base64 payload with the file engines plus the content-security engines',
    query: scanQuerySchema,
    body: { schema: payloadBodySchema, maxBytes: PAYLOAD_JSON_LIMIT },
    responses: {
      200: { description: 'Scan result with codeExtraction, promptInjection, sensitiveData and toolCallAnalysis', schema: scanResultSchema },
      202: { description: 'Deferred', schema: pendingAcceptedSchema }, 404: { description: 'Unknown profile_id' },
    },
    handler: async (ctx) => {
      const { account } = principalOf(ctx);
      const body = bodyOf<PayloadBody>(ctx);
      const q = queryOf<ScanQuery>(ctx);
      let content: Buffer;
      if (body.encoding === 'base64') {
        const text = body.payload.replace(/\s+/g, '');
        // Characters alone are not enough: Buffer.from silently drops a dangling character, so a
        // length of 1 mod 4 (or padding on a length not a multiple of 4) would scan other bytes.
        const dataChars = text.replace(/=+$/, '').length;
        if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text) || dataChars % 4 === 1 || (text.endsWith('=') && text.length % 4 !== 0)) {
          throw new BadRequestError('payload is not valid base64', undefined, 'invalid_base64');
        }
        content = Buffer.from(text, 'base64');
      } else {
        content = Buffer.from(body.payload, 'utf8');
      }
      if (content.length > FIXED_LIMITS.maxPayloadDecodedBytes) throw new PayloadTooLargeError('Decoded payload exceeds 10 MB');
      answer(ctx, await s.scans.scan({
        account, requestId: ctx.state.requestId, content, name: body.label ?? '', scanType: 'payload',
        profileId: body.profile_id ?? q.profile_id, defer: q.defer === true,
      }));
    },
  });

  r.add({
    method: 'GET', path: '/api/scan/:scanId', dialect: 'scan', tags: ['scanning'], auth: 'account', rate: 'scan-read',
    summary: 'Poll a scan: the pending envelope while it runs, the complete envelope with `result` when done',
    responses: { 200: { description: 'Envelope', schema: envelopeSchema }, 404: { description: 'Unknown scan (or another account\'s)' } },
    handler: async (ctx) => {
      ctx.body = await s.scans.envelope(principalOf(ctx).account._id, ctx.params.scanId);
    },
  });

  r.add({
    method: 'GET', path: '/api/account/history', dialect: 'scan', tags: ['account'], auth: 'account', rate: 'scan-read',
    summary: 'Completed scans, newest first', query: historyQuerySchema,
    responses: { 200: { description: 'A page of history', schema: historySchema } },
    handler: async (ctx) => {
      const q = queryOf<HistoryQuery>(ctx);
      ctx.body = await s.scans.history(principalOf(ctx).account._id, q.page, q.limit);
    },
  });

  r.add({
    method: 'GET', path: '/api/account/history/:scan_id', dialect: 'scan', tags: ['account'], auth: 'account', rate: 'scan-read',
    summary: 'One previous scan result',
    responses: { 200: { description: 'Stored scan result', schema: scanResultSchema }, 404: { description: 'Unknown scan' } },
    handler: async (ctx) => {
      ctx.body = await s.scans.historyItem(principalOf(ctx).account._id, ctx.params.scan_id);
    },
  });

  r.add({
    method: 'GET', path: '/api/account/profiles', dialect: 'scan', tags: ['profiles'], auth: 'account', rate: 'scan-read',
    summary: 'Scan profiles of the account',
    responses: { 200: { description: 'Profiles', schema: { type: 'object', properties: { profiles: { type: 'array', items: profileSchema } } } } },
    handler: async (ctx) => {
      ctx.body = { profiles: (await s.scans.profiles.list(principalOf(ctx).account._id)).map(publicProfile) };
    },
  });

  r.add({
    method: 'POST', path: '/api/account/profiles', dialect: 'scan', tags: ['profiles'], auth: 'account', rate: 'scan-write',
    summary: 'Create a scan profile (webhooks need Starter or above)',
    body: { schema: profileCreateSchema, maxBytes: 64 * 1024 },
    responses: { 201: { description: 'Created', schema: profileSchema }, 409: { description: 'A profile of that name exists' } },
    handler: async (ctx) => {
      ctx.status = 201;
      ctx.body = publicProfile(await s.scans.profiles.create(principalOf(ctx).account, bodyOf<ProfileInput>(ctx)));
    },
  });

  r.add({
    method: 'GET', path: '/api/account/profiles/:id', dialect: 'scan', tags: ['profiles'], auth: 'account', rate: 'scan-read',
    summary: 'One scan profile (credentials never shown)',
    responses: { 200: { description: 'Profile', schema: profileSchema } },
    handler: async (ctx) => {
      ctx.body = publicProfile(await s.scans.profiles.get(principalOf(ctx).account._id, ctx.params.id));
    },
  });

  r.add({
    method: 'PATCH', path: '/api/account/profiles/:id', dialect: 'scan', tags: ['profiles'], auth: 'account', rate: 'scan-write',
    summary: 'Change a scan profile; `webhook: null` removes the webhook',
    body: { schema: profilePatchSchema, maxBytes: 64 * 1024 },
    responses: { 200: { description: 'Profile', schema: profileSchema }, 409: { description: 'A profile of that name exists' } },
    handler: async (ctx) => {
      ctx.body = publicProfile(await s.scans.profiles.update(principalOf(ctx).account, ctx.params.id, bodyOf<ProfileInput>(ctx)));
    },
  });

  r.add({
    method: 'DELETE', path: '/api/account/profiles/:id', dialect: 'scan', tags: ['profiles'], auth: 'account', rate: 'scan-write',
    summary: 'Delete a scan profile',
    responses: { 204: { description: 'Deleted' } },
    handler: async (ctx) => {
      await s.scans.profiles.remove(principalOf(ctx).account._id, ctx.params.id);
      ctx.status = 204;
    },
  });
}
