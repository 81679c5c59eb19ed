/** Connectors (sealed cloud credentials of an account) and the store interface both engines implement (store/sqlite.ts, store/mongo.ts). */

export interface ConnectorRecord {
  id: string;
  accountId: string;
  name: string;
  type: 'aws';
  region: string;
  endpoint?: string;
  /** `{accessKeyId, secretAccessKey}` as sealed JSON. */
  credentialsSealed: string;
  createdAt: Date;
  updatedAt: Date;
}

/** Where connectors are kept (records.ts). */
export interface ConnectorRecords {
  insert(c: ConnectorRecord): Promise<void>;
  find(accountId: string, id: string): Promise<ConnectorRecord | null>;
  list(accountId: string): Promise<ConnectorRecord[]>;
  replace(c: ConnectorRecord): Promise<boolean>;
  remove(accountId: string, id: string): Promise<boolean>;
}

export type ConnectorStore = ConnectorRecords;
