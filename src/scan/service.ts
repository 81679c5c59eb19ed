/**
 * The scanning rules: one scan pipeline for synchronous file scans, payload scans and deferred
 * scans (and file-transfer scanning, which calls scanContent). Quota, plan entitlements,
 * profiles, automatic deferral, history and webhooks live here; engines and the verdict live in
 * analyze.ts and verdict.ts.
 */
import { randomUUID } from 'node:crypto';
import type { AccountDoc } from '../accounts/records';
import { FIXED_LIMITS, hasEntitlement, planOf, type PlanTier } from '../accounts/plans';
import { BadRequestError, NotFoundError, PayloadTooLargeError, PlanRequiredError, QuotaExceededError, ServiceUnavailableError } from '../errors';
import type { LimitService } from '../limits/service';
import { isDuplicateKey } from '../storage/errors';
import type { Logger } from '../log';
import { analyze, AnalysisResult, AnalyzeDeps, notScannedResult, prepareEngines } from './analyze';
import { identify, type FileTypeInfo } from './filetype';
import type { ProfileDoc, ScanRecords, StoredScan } from './records';
import type { ProfileService } from './profiles';
import { deliverWebhook, webhookPayload } from './webhook';
import type { ScanResult } from './schemas';
import { round2Deep } from './rounding';
import { observeScan } from '../telemetry/scan';
import type { Finding, ScanType } from './types';

/** Fields of the payload-scan report that docs/contract.md §5 "Payload scans" names at the top level of a payload result. */
const PAYLOAD_FIELDS = ['codeExtraction', 'promptInjection', 'sensitiveData', 'toolCallAnalysis'] as const;

export type { ScanResult };

export interface ScanRequest {
  account: AccountDoc;
  requestId: string;
  content: Buffer;
  name: string;
  scanType: ScanType;
  profileId?: string;
  /** Explicit `defer=true`. */
  defer?: boolean;
  /** Digests computed while an upload streamed in. */
  hashes?: { sha256: string; md5: string; sha1: string };
}

export type ScanOutcome =
  | { kind: 'complete'; result: ScanResult }
  | { kind: 'deferred'; envelope: { scanId: string; requestId: string; status: 'pending'; message: string } };

/** Every string under this value cut to `max` characters (content-derived text in stored history). */
function capStrings(value: unknown, max: number): unknown {
  if (typeof value === 'string') return value.length > max ? value.slice(0, max) : value;
  if (Array.isArray(value)) return value.map((v) => capStrings(v, max));
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, capStrings(v, max)]));
  }
  return value;
}

const storedFinding = (f: Finding) => ({
  engine: f.engine, id: f.id, name: f.name, severity: f.severity, confidence: f.confidence,
  ...(f.category ? { category: f.category } : {}), ...(f.member ? { member: f.member } : {}),
  ...(f.excerpt ? { excerpt: f.excerpt } : {}), ...(f.cve ? { cve: f.cve } : {}),
});

/**
 * The history copy of a result: no payload text. Engine findings keep their identifiers and
 * excerpt; every content-derived string (reports, excerpts, evidence, redacted examples) is cut
 * to 200 characters.
 */
export function resultForStorage(result: ScanResult): Record<string, unknown> {
  const max = FIXED_LIMITS.persistedExcerptChars;
  const out: Record<string, unknown> = { ...result };
  const engines = result.engines as Record<string, { findings: Finding[] }> | undefined;
  if (engines) {
    out.engines = capStrings(Object.fromEntries(Object.entries(engines).map(([k, e]) => [k, { ...e, findings: e.findings.map(storedFinding) }])), max);
  }
  for (const key of [...PAYLOAD_FIELDS, 'details']) if (result[key] !== undefined) out[key] = capStrings(result[key], max);
  return out;
}

/** The answered shape of a scan; the one place its numbers are rounded (two decimals). */
export function publicResult(analysis: AnalysisResult, meta: { scanId: string; requestId: string; name: string; scanType: ScanType; at: Date }): ScanResult {
  const { reports } = analysis;
  const payloadFields: Record<string, unknown> = {};
  const details: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(reports)) {
    if ((PAYLOAD_FIELDS as readonly string[]).includes(k)) payloadFields[k] = v;
    else details[k] = v;
  }
  const engines = Object.fromEntries(Object.entries(analysis.engines).map(([name, r]) => [name, {
    status: r.status, durationMs: r.durationMs, findings: r.findings, ...(r.note ? { note: r.note } : {}),
  }]));
  return round2Deep({
    scanId: meta.scanId,
    requestId: meta.requestId,
    name: meta.name,
    hash: analysis.sha256,
    size: analysis.size,
    contentType: analysis.contentType,
    fileType: analysis.fileType,
    safetyScore: analysis.safetyScore,
    scanTimeMs: analysis.scanTimeMs,
    scanType: meta.scanType,
    timestamp: Math.floor(meta.at.getTime() / 1000),
    ...(meta.scanType === 'payload' ? payloadFields : {}),
    engines,
    ...(Object.keys(details).length ? { details } : {}),
  });
}


/** scheme://host[:port] of a URL, for logs; '(invalid URL)' when it does not parse. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}

const quotaUsedUp = (tier: PlanTier): QuotaExceededError => {
  const plan = planOf(tier);
  return new QuotaExceededError(`Monthly scan quota of ${plan.scansPerMonth} scans on the ${plan.tier} plan is used up; it resets at the start of next month`, { current_plan: plan.tier });
};

/** defer=true needs the plan's async_scanning (403 plan_required), before an upload is read and in scan(). */
function refuseDeferWithoutPlan(account: AccountDoc, defer: boolean): void {
  if (defer && !hasEntitlement(account.plan, 'async_scanning')) {
    throw new PlanRequiredError('async_scanning', account.plan, 'Deferred scanning (defer=true) requires the Standard or Pro plan');
  }
}

/** How scans start their durable work (Temporal, temporal/engines/scans.ts). */
export interface ScanWorkflows {
  startDeferredScan(scanId: string): Promise<void>;
  startWebhook(scanId: string): Promise<void>;
}

export class ScanService {
  constructor(
    private readonly store: ScanRecords,
    readonly profiles: ProfileService,
    private readonly limits: LimitService,
    private readonly analyzeDeps: AnalyzeDeps,
    private readonly workflows: ScanWorkflows | undefined,
    /**
     * `planOf`: the account's plan now (the accounts store): a webhook is sent only while the plan
     * includes webhooks, so a profile kept from a Starter plan stops firing after a move to Free.
     */
    private readonly opts: { allowHosts: readonly string[]; webhookTimeoutMs: number; planOf?: (accountId: string) => Promise<PlanTier | undefined> },
    private readonly logger: Logger,
  ) {}

  /** The plan's file size limit: HTTP stops reading an upload past it, scan() refuses content over it. */
  fileSizeLimit(tier: PlanTier): { maxBytes: number; message: string } {
    const plan = planOf(tier);
    return { maxBytes: plan.maxFileSizeMb * 1024 * 1024, message: `File exceeds the ${plan.maxFileSizeMb} MB limit of the ${plan.tier} plan` };
  }

  /** The one entry point for file and payload scans. */
  async scan(req: ScanRequest): Promise<ScanOutcome> {
    const { account } = req;
    const limit = this.fileSizeLimit(account.plan);
    if (req.scanType === 'file' && req.content.length > limit.maxBytes) throw new PayloadTooLargeError(limit.message);
    refuseDeferWithoutPlan(account, req.defer === true);
    const profile = await this.profiles.resolve(account._id, req.profileId);
    const scanId = randomUUID();
    const now = new Date();

    // Identified once here when the profile restricts types; analyze() then takes this answer.
    const type = profile && profile.allowedTypes.length > 0 ? await identify(req.content, req.name) : undefined;
    if (profile && type && !profile.allowedTypes.includes(type.fileType)) {
      const message = `File type "${type.fileType}" is not allowed by scan profile "${profile.name}"`;
      const rejected = publicResult(await notScannedResult('Rejected', message, req.content, req.name, type), { scanId, requestId: req.requestId, name: req.name, scanType: req.scanType, at: now });
      await this.store.insertScan({ ...this.baseRecord(req, scanId, profile, now), status: 'complete', completedAt: now, creditsUsed: 0, result: resultForStorage(rejected) });
      // A Rejected result is a completed scan too: its profile's webhook hears of it.
      if (profile.webhook) await this.startWebhook(account.plan, scanId);
      throw new BadRequestError(message, { fileType: type.fileType, profile: profile.name, allowedTypes: profile.allowedTypes, scanId, safetyScore: rejected.safetyScore }, 'file_type_not_allowed');
    }

    await this.reserveScan(account);

    const autoDefer = req.content.length > FIXED_LIMITS.autoDeferBytes;
    if (req.defer || autoDefer) return this.defer(req, scanId, profile, now, autoDefer);

    const result = await this.analyzeToResult(req.content, { scanId, requestId: req.requestId, name: req.name, scanType: req.scanType, profile, at: now, hashes: req.hashes, type });
    await this.store.insertScan({ ...this.baseRecord(req, scanId, profile, now), status: 'complete', completedAt: new Date(), result: resultForStorage(result) });
    if (profile?.webhook) await this.startWebhook(account.plan, scanId);
    return { kind: 'complete', result };
  }

  /** Takes one scan of the account's monthly quota (402 `quota_exceeded` when it is used up). */
  async reserveScan(account: AccountDoc): Promise<void> {
    const plan = planOf(account.plan);
    if (!(await this.limits.reserveScan(account._id, plan.scansPerMonth))) throw quotaUsedUp(plan.tier);
  }

  /** Gives back one scan taken by reserveScan (an upload that was not kept). */
  async releaseScan(account: AccountDoc): Promise<void> {
    await this.limits.releaseScan(account._id, new Date());
  }

  /**
   * The refusals that depend only on the account and the query, answered before an upload is read
   * (an outside probe's 9 MB upload was read, buffered and hashed before its 402 or 403): deferral
   * without the plan's entitlement, and a quota already used up. scan() still reserves the quota
   * (this read does not), so two uploads racing for the last scan are settled there.
   */
  async refuseBeforeUpload(account: AccountDoc, defer: boolean): Promise<void> {
    refuseDeferWithoutPlan(account, defer);
    const plan = planOf(account.plan);
    if ((await this.limits.scansUsedThisMonth(account._id)) >= plan.scansPerMonth) throw quotaUsedUp(plan.tier);
  }

  /**
   * File transfer's scan: the same analysis as POST /api/scan for bytes whose quota was reserved
   * at upload (no scan profile: a transfer is not an API scan). Recorded once in the account's
   * history under `scanId`; a retry after a worker died returns the recorded result.
   */
  async scanTransfer(input: { accountId: string; scanId: string; requestId: string; name: string; content: Buffer; at: Date }): Promise<ScanResult> {
    const recorded = await this.store.findScanById(input.scanId);
    if (recorded?.result) return recorded.result as unknown as ScanResult;
    const result = await this.analyzeToResult(input.content, { ...input, scanType: 'file', profile: null });
    try {
      await this.store.insertScan({
        _id: input.scanId, accountId: input.accountId, requestId: input.requestId, scanType: 'file', filename: input.name,
        createdAt: input.at, size: input.content.length, creditsUsed: 1, status: 'complete', completedAt: new Date(), result: resultForStorage(result),
      });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    return result;
  }

  private baseRecord(req: ScanRequest, scanId: string, profile: ProfileDoc | null, at: Date): Omit<StoredScan, 'status'> {
    return {
      _id: scanId, accountId: req.account._id, requestId: req.requestId, scanType: req.scanType, filename: req.name,
      ...(profile ? { profileId: profile._id } : {}), createdAt: at, size: req.content.length, creditsUsed: 1,
    };
  }

  /** Builds the engines before the first scan needs them (analyze.ts prepareEngines). */
  prepareEngines(): void {
    prepareEngines(this.analyzeDeps);
  }

  private async analyzeToResult(content: Buffer, meta: { scanId: string; requestId: string; name: string; scanType: ScanType; profile: ProfileDoc | null; at: Date; hashes?: ScanRequest['hashes']; type?: FileTypeInfo }): Promise<ScanResult> {
    let analysis: AnalysisResult;
    try {
      analysis = await analyze({ content, name: meta.name, scanType: meta.scanType, suppressedEngines: meta.profile?.suppressedEngines ?? [], hashes: meta.hashes, type: meta.type }, this.analyzeDeps);
    } catch (err) {
      this.logger.error({ err, scanId: meta.scanId }, 'scan could not run');
      analysis = await notScannedResult('Error', 'The scan could not run; nothing was scanned', content, meta.name, meta.type);
    }
    observeScan(meta.scanType, analysis);
    return publicResult(analysis, meta);
  }

  private async defer(req: ScanRequest, scanId: string, profile: ProfileDoc | null, now: Date, automatic: boolean): Promise<ScanOutcome> {
    if (!this.workflows) throw new Error('deferred scans need a Temporal client in this process');
    const uploadId = await this.store.saveUpload(req.name || scanId, req.content);
    await this.store.insertScan({ ...this.baseRecord(req, scanId, profile, now), status: 'pending', uploadId, ...(req.hashes ? { uploadHashes: req.hashes } : {}) });
    try {
      await this.workflows.startDeferredScan(scanId);
    } catch (err) {
      // Temporal unreachable: nothing will ever complete this scan. An outside probe got a 500
      // while the quota was charged and the record and the uploaded bytes stayed for good.
      this.logger.error({ err, scanId }, 'deferred scan could not be started');
      await this.store.deletePendingScan(scanId);
      await this.store.deleteUpload(uploadId);
      await this.limits.releaseScan(req.account._id, now);
      throw new ServiceUnavailableError('Deferred scanning is unavailable right now (its workflow service cannot be reached); nothing was kept or charged, retry later');
    }
    return {
      kind: 'deferred',
      envelope: {
        scanId, requestId: req.requestId, status: 'pending',
        message: automatic
          ? `Files over ${FIXED_LIMITS.autoDeferBytes / (1024 * 1024)} MB are scanned asynchronously; poll GET /api/scan/${scanId}`
          : `Scan accepted; poll GET /api/scan/${scanId}`,
      },
    };
  }

  /**
   * Fire-and-forget: a failure to even start the delivery is logged and never affects the scan.
   * Only while the plan includes webhooks (sendWebhook checks the plan again at delivery).
   */
  private async startWebhook(plan: PlanTier, scanId: string): Promise<void> {
    if (!this.workflows || !hasEntitlement(plan, 'webhooks')) return;
    try {
      await this.workflows.startWebhook(scanId);
    } catch (err) {
      this.logger.warn({ err, scanId }, 'webhook delivery could not be started');
    }
  }

  /**
   * Runs a deferred scan to completion. Idempotent: a retry after a worker died finds the scan
   * complete and only finishes the clean-up. Returns whether a webhook is configured.
   */
  async completeDeferred(scanId: string): Promise<{ webhook: boolean }> {
    const scan = await this.store.findScanById(scanId);
    if (!scan) throw new NotFoundError('Scan');
    const profile = scan.profileId ? await this.store.findProfile(scan.accountId, scan.profileId) : null;
    if (scan.status === 'pending') {
      if (!scan.uploadId) throw new Error(`deferred scan ${scanId} has no stored upload`);
      const content = await this.store.readUpload(scan.uploadId);
      const result = await this.analyzeToResult(content, { scanId, requestId: scan.requestId, name: scan.filename, scanType: scan.scanType, profile, at: scan.createdAt, hashes: scan.uploadHashes });
      await this.store.completeScan(scanId, resultForStorage(result), new Date());
    }
    if (scan.uploadId) {
      await this.store.deleteUpload(scan.uploadId);
      await this.store.clearUpload(scanId);
    }
    return { webhook: !!profile?.webhook };
  }

  /** Sends the scan's webhook at most once (claimed in the scan record); failures are logged, not retried. */
  async sendWebhook(scanId: string): Promise<{ sent: boolean; status?: number; error?: string }> {
    const scan = await this.store.findScanById(scanId);
    if (!scan?.result || !scan.profileId) return { sent: false, error: 'no completed scan with a profile' };
    const profile = await this.store.findProfile(scan.accountId, scan.profileId);
    const target = profile ? this.profiles.webhookTarget(profile) : undefined;
    if (!target) return { sent: false, error: 'profile has no webhook' };
    const plan = this.opts.planOf ? await this.opts.planOf(scan.accountId) : undefined;
    if (this.opts.planOf && (!plan || !hasEntitlement(plan, 'webhooks'))) {
      this.logger.info({ scanId, plan }, 'webhook not sent: the account\'s plan does not include webhooks');
      return { sent: false, error: 'the account\'s plan does not include webhooks' };
    }
    if (!(await this.store.claimWebhook(scanId, new Date()))) return { sent: false, error: 'already sent' };
    const body = Buffer.from(JSON.stringify(webhookPayload(scan.result as unknown as ScanResult, scan.completedAt ?? new Date())));
    const outcome = await deliverWebhook(target, body, scan.requestId, { timeoutMs: this.opts.webhookTimeoutMs, allowHosts: this.opts.allowHosts });
    // The target's origin only: receivers keep credentials in the path or query (?token=, Slack-style
    // /services/T/B/SECRET), and those do not belong in operators' logs (the span leaves the URL out too).
    const log = { scanId, target: originOf(target.url), status: outcome.status, ms: outcome.ms, error: outcome.error };
    if (outcome.ok) this.logger.info(log, 'webhook delivered');
    else this.logger.warn(log, 'webhook delivery failed (not retried)');
    return { sent: outcome.ok, status: outcome.status, error: outcome.error };
  }

  /** The envelope of GET /api/scan/{scanId}. */
  async envelope(accountId: string, scanId: string): Promise<Record<string, unknown>> {
    const scan = await this.store.findScan(accountId, scanId);
    if (!scan) throw new NotFoundError('Scan');
    const base = { scanId: scan._id, requestId: scan.requestId, status: scan.status, filename: scan.filename, createdAt: scan.createdAt.toISOString() };
    if (scan.status === 'pending' || !scan.result) return { ...base, status: 'pending' };
    const r = scan.result as unknown as ScanResult;
    return {
      ...base,
      fileHash: r.hash,
      fileSize: r.size,
      contentType: r.contentType,
      safetyScore: r.safetyScore.score,
      threatLevel: r.safetyScore.threatLevel,
      primaryThreat: r.safetyScore.primaryThreat,
      scanTimeMs: r.scanTimeMs,
      creditsUsed: scan.creditsUsed,
      result: r,
    };
  }

  async historyItem(accountId: string, scanId: string): Promise<Record<string, unknown>> {
    const scan = await this.store.findScan(accountId, scanId);
    if (!scan || scan.status !== 'complete' || !scan.result) throw new NotFoundError('Scan');
    return scan.result;
  }

  async history(accountId: string, page: number, limit: number) {
    const { items, total } = await this.store.history(accountId, page, limit);
    return { items: items.map((s) => s.result), page, limit, total };
  }
}
