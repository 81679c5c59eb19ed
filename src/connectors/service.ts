/**
 * Connectors: an account's credentials for an outside system (type `aws`: S3). The access key
 * id and secret are sealed together with AES-256-GCM and never returned; the endpoint is refused
 * when it points at an internal address (WEBHOOK_ALLOW_HOSTS excepted). `runS3` is what the
 * aws.s3 node's activity calls: credentials are opened there and kept out of its errors.
 */
import { randomUUID } from 'node:crypto';
import { decryptSecret, encryptSecret } from '../crypto';
import { BadRequestError, ConflictError, LimitReachedError, NotFoundError } from '../errors';
import { planOf, type PlanTier } from '../accounts/plans';
import { checkOutboundUrl } from '../net/safe-target';
import { isDuplicateKey } from '../storage/errors';
import { Redactor } from '../vault/redact';
import type { ConnectorCreate, ConnectorReplace, ConnectorView, S3OperationConfig } from './schemas';
import { runS3Operation, S3Attempt, S3ClientPolicy, S3Output, S3Settings } from './s3';
import type { ConnectorRecord, ConnectorRecords } from './records';

interface Credentials { accessKeyId: string; secretAccessKey: string }

export function publicConnector(c: ConnectorRecord): ConnectorView {
  return {
    id: c.id, name: c.name, type: c.type, region: c.region, endpoint: c.endpoint ?? null,
    credentials: { configured: true },
    createdAt: c.createdAt.toISOString(), updatedAt: c.updatedAt.toISOString(),
  };
}

export interface S3RunOptions {
  onAttempt?: (a: S3Attempt) => void;
  signal?: AbortSignal;
  /** Tests shorten the contract's timeouts (docs/contract.md §7 "Connectors and vault"); production uses S3_CLIENT_POLICY. */
  policy?: S3ClientPolicy;
}

export class ConnectorService {
  constructor(private readonly records: ConnectorRecords, private readonly key: Buffer, private readonly allowHosts: readonly string[]) {}

  private async checkEndpoint(endpoint: string | undefined): Promise<string | undefined> {
    if (endpoint === undefined) return undefined;
    const url = await checkOutboundUrl(endpoint, 'endpoint', this.allowHosts, 'connector_target_refused');
    return url.toString().replace(/\/$/, '');
  }

  private seal(c: Credentials): string {
    return encryptSecret(this.key, JSON.stringify(c));
  }

  private open(c: ConnectorRecord): Credentials {
    return JSON.parse(decryptSecret(this.key, c.credentialsSealed)) as Credentials;
  }

  /** Past the plan's connectors, 403 `limit_reached` (counted before the insert, like workflows). */
  async create(accountId: string, input: ConnectorCreate, plan: PlanTier): Promise<ConnectorRecord> {
    const { maxConnectors, tier } = planOf(plan);
    const count = (await this.records.list(accountId)).length;
    if (count >= maxConnectors) throw new LimitReachedError('connectors', 'connector', count, maxConnectors, tier);
    const now = new Date();
    const endpoint = await this.checkEndpoint(input.endpoint);
    const record: ConnectorRecord = {
      id: randomUUID(), accountId, name: input.name, type: input.type, region: input.region,
      ...(endpoint ? { endpoint } : {}),
      credentialsSealed: this.seal({ accessKeyId: input.access_key_id, secretAccessKey: input.secret_access_key }),
      createdAt: now, updatedAt: now,
    };
    try {
      await this.records.insert(record);
    } catch (err) {
      if (isDuplicateKey(err)) throw new ConflictError(`a connector named "${input.name}" already exists`);
      throw err;
    }
    return record;
  }

  async get(accountId: string, id: string): Promise<ConnectorRecord> {
    const c = await this.records.find(accountId, id);
    if (!c) throw new NotFoundError('Connector');
    return c;
  }

  list(accountId: string): Promise<ConnectorRecord[]> {
    return this.records.list(accountId);
  }

  /** Replaces the connector; credentials not given keep their stored values. */
  async replace(accountId: string, id: string, input: ConnectorReplace): Promise<ConnectorRecord> {
    const current = await this.get(accountId, id);
    const endpoint = await this.checkEndpoint(input.endpoint);
    const stored = input.access_key_id === undefined || input.secret_access_key === undefined ? this.open(current) : undefined;
    const record: ConnectorRecord = {
      id, accountId, name: input.name, type: input.type, region: input.region,
      ...(endpoint ? { endpoint } : {}),
      credentialsSealed: this.seal({
        accessKeyId: input.access_key_id ?? (stored as Credentials).accessKeyId,
        secretAccessKey: input.secret_access_key ?? (stored as Credentials).secretAccessKey,
      }),
      createdAt: current.createdAt, updatedAt: new Date(),
    };
    try {
      if (!(await this.records.replace(record))) throw new NotFoundError('Connector');
    } catch (err) {
      if (isDuplicateKey(err)) throw new ConflictError(`a connector named "${input.name}" already exists`);
      throw err;
    }
    return record;
  }

  async remove(accountId: string, id: string): Promise<void> {
    if (!(await this.records.remove(accountId, id))) throw new NotFoundError('Connector');
  }

  /**
   * Runs one aws.s3 operation through the account's connector. Its output, errors and attempt
   * records name the operation, never the credentials: a server echoing them (an object body
   * quoting the request's Authorization header, `Credential=AKIA...`) is redacted in all three.
   */
  async runS3(accountId: string, op: S3OperationConfig, opts: S3RunOptions = {}): Promise<S3Output> {
    const c = await this.get(accountId, op.connector_id);
    const creds = this.open(c);
    const redact = new Redactor({ access_key_id: creds.accessKeyId, secret_access_key: creds.secretAccessKey }, (n) => `[connector:${n}]`);
    const settings: S3Settings = { region: c.region, endpoint: c.endpoint, ...creds };
    const onAttempt = opts.onAttempt;
    try {
      return redact.json(await runS3Operation(settings, op, {
        allowHosts: this.allowHosts, policy: opts.policy, signal: opts.signal,
        onAttempt: onAttempt && ((a) => onAttempt(redact.json(a))),
      }));
    } catch (err) {
      throw redact.error(err);
    }
  }
}
