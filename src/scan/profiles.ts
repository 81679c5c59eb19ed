/**
 * Scan profiles: allowed file types, suppressed engines and the webhook. Credentials are sealed
 * with AES-256-GCM and never returned; a webhook URL is refused on Free (plan_required) and when
 * it targets an internal address (unless its host is in WEBHOOK_ALLOW_HOSTS).
 */
import { randomUUID } from 'node:crypto';
import { validateHeaderValue } from 'node:http';
import type { AccountDoc } from '../accounts/records';
import { hasEntitlement } from '../accounts/plans';
import { isDuplicateKey } from '../storage/errors';
import { decryptSecret, encryptSecret } from '../crypto';
import { BadRequestError, ConflictError, NotFoundError, PlanRequiredError } from '../errors';
import { checkOutboundUrl } from '../net/safe-target';
import { FILE_TYPES } from './types';
import { REGISTRY } from './registry';
import type { ProfileDoc, ScanProfiles, WebhookConfigDoc } from './records';
import type { ProfileInput, WebhookInput } from './schemas';

export type { ProfileInput, WebhookInput };

/** A profile as the API shows it: credentials replaced by `configured`. */
export function publicProfile(p: ProfileDoc) {
  return {
    id: p._id,
    name: p.name,
    isDefault: p.isDefault,
    allowedTypes: p.allowedTypes,
    suppressedEngines: p.suppressedEngines,
    webhook: p.webhook
      ? { url: p.webhook.url, authType: p.webhook.authType, headerName: p.webhook.headerName, configured: p.webhook.valueSealed !== undefined, headers: p.webhook.headerNames }
      : null,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}

/** The decrypted webhook settings a delivery needs. */
export interface WebhookTarget {
  url: string;
  authType: WebhookConfigDoc['authType'];
  value?: string;
  headerName?: string;
  headers: Record<string, string>;
}

const ENGINE_NAMES: readonly string[] = REGISTRY.map((r) => r.engine);
const FORBIDDEN_HEADERS = new Set(['host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'x-scanner-signature', 'x-scanner-request-id']);

/** Whether Node can send the string as a header value; otherwise every delivery would fail. */
/**
 * What a header can carry and a receiver can verify: printable ASCII, space and tab. Node sends
 * characters up to U+00FF as Latin-1 bytes, while the signature is keyed with the value's UTF-8:
 * an outside probe's `s3cr3t-ké` could not be verified by a receiver holding what it received.
 */
function isHeaderValue(value: string): boolean {
  if (!/^[\t\x20-\x7e]*$/.test(value)) return false;
  try {
    validateHeaderValue('x-check', value);
    return true;
  } catch {
    return false;
  }
}


export class ProfileService {
  constructor(private readonly store: ScanProfiles, private readonly key: Buffer, private readonly allowHosts: readonly string[]) {}

  private checkLists(input: ProfileInput): void {
    const badType = input.allowedTypes?.find((t) => !(FILE_TYPES as readonly string[]).includes(t));
    if (badType) throw new BadRequestError(`allowedTypes: unknown file type "${badType}"; known: ${FILE_TYPES.join(', ')}`);
    const badEngine = input.suppressedEngines?.find((e) => !ENGINE_NAMES.includes(e));
    if (badEngine) throw new BadRequestError(`suppressedEngines: unknown engine "${badEngine}"; known: ${ENGINE_NAMES.join(', ')}`);
  }

  private async sealWebhook(account: AccountDoc, w: WebhookInput): Promise<WebhookConfigDoc> {
    if (!hasEntitlement(account.plan, 'webhooks')) throw new PlanRequiredError('webhooks', account.plan, 'Webhooks are available on the Starter plan and above');
    const url = await checkOutboundUrl(w.url, 'webhook.url', this.allowHosts, 'webhook_target_refused', '; use authType');
    const authType = w.authType ?? 'none';
    if (authType !== 'none' && !w.value) throw new BadRequestError(`webhook.value is required for authType ${authType}`);
    if (authType === 'custom_header' && !w.headerName) throw new BadRequestError('webhook.headerName is required for authType custom_header');
    if (w.headerName && (!/^[A-Za-z0-9-]{1,64}$/.test(w.headerName) || FORBIDDEN_HEADERS.has(w.headerName.toLowerCase()))) {
      throw new BadRequestError(`webhook.headerName "${w.headerName}" is not allowed`);
    }
    const headers = w.headers ?? {};
    for (const name of Object.keys(headers)) {
      if (!/^[A-Za-z0-9-]{1,64}$/.test(name) || FORBIDDEN_HEADERS.has(name.toLowerCase())) throw new BadRequestError(`webhook.headers: "${name}" is not allowed`);
      if (!isHeaderValue(headers[name])) throw new BadRequestError(`webhook.headers: the value of "${name}" must be printable ASCII (no CR, LF or other control characters, no letters beyond ASCII such as é)`);
    }
    // Every auth type sends the credential in a header (Authorization or headerName).
    if (authType !== 'none' && w.value && !isHeaderValue(w.value)) {
      throw new BadRequestError('webhook.value must be printable ASCII (no CR, LF or other control characters, no letters beyond ASCII such as é)');
    }
    return {
      url: url.toString(),
      authType,
      ...(authType !== 'none' && w.value ? { valueSealed: encryptSecret(this.key, w.value) } : {}),
      ...(authType === 'custom_header' ? { headerName: w.headerName } : {}),
      ...(Object.keys(headers).length ? { headersSealed: encryptSecret(this.key, JSON.stringify(headers)) } : {}),
      headerNames: Object.keys(headers),
    };
  }

  async create(account: AccountDoc, input: ProfileInput): Promise<ProfileDoc> {
    this.checkLists(input);
    if (!input.name) throw new BadRequestError('name is required');
    const now = new Date();
    const doc: ProfileDoc = {
      _id: randomUUID(), accountId: account._id, name: input.name, isDefault: input.isDefault ?? false,
      allowedTypes: input.allowedTypes ?? [], suppressedEngines: input.suppressedEngines ?? [],
      ...(input.webhook ? { webhook: await this.sealWebhook(account, input.webhook) } : {}),
      createdAt: now, updatedAt: now,
    };
    try {
      await this.store.insertProfile(doc);
    } catch (err) {
      if (isDuplicateKey(err)) throw new ConflictError(`a profile named "${input.name}" already exists`);
      throw err;
    }
    if (doc.isDefault) await this.store.clearDefault(account._id, doc._id);
    return doc;
  }

  async get(accountId: string, id: string): Promise<ProfileDoc> {
    const p = await this.store.findProfile(accountId, id);
    if (!p) throw new NotFoundError('Scan profile');
    return p;
  }

  list(accountId: string) { return this.store.listProfiles(accountId); }

  async update(account: AccountDoc, id: string, input: ProfileInput): Promise<ProfileDoc> {
    await this.get(account._id, id);
    this.checkLists(input);
    const set: Partial<ProfileDoc> = {};
    const unset: string[] = [];
    if (input.name !== undefined) set.name = input.name;
    if (input.isDefault !== undefined) set.isDefault = input.isDefault;
    if (input.allowedTypes !== undefined) set.allowedTypes = input.allowedTypes;
    if (input.suppressedEngines !== undefined) set.suppressedEngines = input.suppressedEngines;
    if (input.webhook === null) unset.push('webhook');
    else if (input.webhook !== undefined) set.webhook = await this.sealWebhook(account, input.webhook);
    let updated: ProfileDoc | null;
    try {
      updated = await this.store.updateProfile(account._id, id, set, unset);
    } catch (err) {
      if (isDuplicateKey(err)) throw new ConflictError(`a profile named "${input.name}" already exists`);
      throw err;
    }
    if (!updated) throw new NotFoundError('Scan profile');
    if (input.isDefault) await this.store.clearDefault(account._id, id);
    return updated;
  }

  async remove(accountId: string, id: string): Promise<void> {
    if (!(await this.store.deleteProfile(accountId, id))) throw new NotFoundError('Scan profile');
  }

  /** The profile a scan uses: the one named, else the account's default, else none. */
  async resolve(accountId: string, profileId: string | undefined): Promise<ProfileDoc | null> {
    if (profileId) return this.get(accountId, profileId);
    return this.store.findDefaultProfile(accountId);
  }

  webhookTarget(p: ProfileDoc): WebhookTarget | undefined {
    const w = p.webhook;
    if (!w) return undefined;
    return {
      url: w.url,
      authType: w.authType,
      value: w.valueSealed ? decryptSecret(this.key, w.valueSealed) : undefined,
      headerName: w.headerName,
      headers: w.headersSealed ? (JSON.parse(decryptSecret(this.key, w.headersSealed)) as Record<string, string>) : {},
    };
  }
}
