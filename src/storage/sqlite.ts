/**
 * The embedded engine's database: SQLite in the service process (better-sqlite3), in WAL mode, in
 * DATA_DIR/db/. Its schema (tables, the columns queries use, every index) and the migrations that
 * build it, run in code at start; and DocTable, the small record-table helper the embedded stores
 * (`<capability>/store/sqlite.ts`) are written with. Nothing capability-specific happens here.
 *
 * Each table keeps a record as one JSON document (`doc`: dates as `{"$date": ms}`, user JSON as
 * the text it arrived as, see user-json.ts) and exposes what lists, searches, claims and exports
 * filter and sort by as generated columns, each with its index. Several processes may open the
 * same files: a write that reads first runs in an immediate transaction (the database's write lock
 * is taken before the read), so claims and counters are exact across connections and processes.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { BlobFiles } from './blob-files';
import { metricsEnabled, observeDbOperation } from '../telemetry/metrics';
import type { DB_COMMANDS } from '../telemetry/labels';

export type SqliteDatabase = Database.Database;

/** How long a statement waits for another connection's write lock before failing (ms). */
const BUSY_TIMEOUT_MS = 10_000;

/** `doc`'s field as a column value; `date` reads a `{"$date": ms}` field as its milliseconds. */
const field = (p: string): string => `json_extract(doc, '$.${p}')`;
const date = (p: string): string => `json_extract(doc, '$.${p}."$date"')`;

interface TableDef {
  /** Generated (virtual) columns: name → SQL expression over `doc`. */
  columns: Record<string, string>;
  /** Index name → columns (with ASC/DESC); `unique: true` makes it a constraint. */
  indexes: Record<string, { on: string; unique?: boolean }>;
}

/** Every table of the embedded store, with the columns and indexes its queries use. */
export const TABLES: Record<string, TableDef> = {
  accounts: { columns: {}, indexes: {} },
  api_keys: { columns: { account_id: field('accountId') }, indexes: { api_keys_account: { on: 'account_id' } } },
  entities: {
    columns: { account_id: field('accountId'), name: field('name'), role: field('role'), service_id: field('serviceId') },
    indexes: {
      entities_account_name: { on: 'account_id, name', unique: true },
      entities_account_role: { on: 'account_id, role' },
      entities_account_service: { on: 'account_id, service_id' },
    },
  },
  entity_keys: {
    columns: { account_id: field('accountId'), entity_name: field('entityName'), revoked: `${field('revokedAt')} IS NOT NULL` },
    indexes: { entity_keys_account_entity: { on: 'account_id, entity_name, revoked' } },
  },
  roles: { columns: { account_id: field('accountId'), name: field('name') }, indexes: { roles_account_name: { on: 'account_id, name', unique: true } } },
  rate_counters: { columns: { expires_at: date('expiresAt') }, indexes: { rate_counters_expiry: { on: 'expires_at' } } },
  usage: {
    columns: { account_id: field('accountId'), kind: field('kind'), day: field('date') },
    indexes: { usage_account_day: { on: 'account_id, kind, day' } },
  },
  audit_log: {
    columns: { account_id: field('accountId'), ts: date('timestamp'), resource_type: field('resourceType'), action: field('action') },
    indexes: { audit_account_time: { on: 'account_id, ts DESC, id DESC' } },
  },
  scans: {
    columns: { account_id: field('accountId'), status: field('status'), created_at: date('createdAt') },
    indexes: { scans_account_status_time: { on: 'account_id, status, created_at DESC, id DESC' } },
  },
  scan_profiles: {
    columns: { account_id: field('accountId'), name: field('name'), is_default: field('isDefault'), created_at: date('createdAt') },
    indexes: { scan_profiles_account_name: { on: 'account_id, name', unique: true }, scan_profiles_account_time: { on: 'account_id, created_at' } },
  },
  threat_feed_hashes: { columns: {}, indexes: {} },
  // History: list, search and export walk (account, type) newest first, or one sender's.
  messages: {
    columns: { account_id: field('accountId'), msg_type: field('msgType'), source_name: field('sourceName'), ts: date('timestamp') },
    indexes: {
      messages_account_type_time: { on: 'account_id, msg_type, ts DESC, id DESC' },
      messages_account_type_source_time: { on: 'account_id, msg_type, source_name, ts DESC, id DESC' },
    },
  },
  // Pending directed messages: a claim takes the oldest of one destination.
  message_inbox: {
    columns: { account_id: field('accountId'), dest: field('dest'), queued_at: date('queuedAt') },
    indexes: { inbox_dest_fifo: { on: 'account_id, dest, queued_at, id' } },
  },
  services: { columns: { account_id: field('accountId'), name: field('name') }, indexes: { services_account_name: { on: 'account_id, name', unique: true } } },
  notifications: {
    columns: { account_id: field('accountId'), created_at: date('createdAt') },
    indexes: { notifications_account_time: { on: 'account_id, created_at DESC, id DESC' } },
  },
  // File transfer: a recipient's inbox, the clip gallery newest first, the expiry sweep.
  files: {
    columns: {
      account_id: field('accountId'), dest: field('dest'), status: field('status'), kind: field('kind'), source: field('source'),
      created_at: date('createdAt'), expires_at: date('expiresAt'),
    },
    indexes: {
      files_account_dest_status: { on: 'account_id, dest, status, created_at, id' },
      files_account_kind_time: { on: 'account_id, kind, created_at DESC, id DESC' },
      files_expiry: { on: 'expires_at' },
    },
  },
  // One row per download in progress (`id` = file id): the claim that makes a download single.
  file_download_claims: { columns: {}, indexes: {} },
  workflows: {
    columns: { account_id: field('accountId'), created_at: date('createdAt') },
    indexes: { workflows_account_time: { on: 'account_id, created_at, id' } },
  },
  // Runs newest first per workflow; sweeps by status and deadline; the repair of the waiting line.
  workflow_runs: {
    columns: {
      account_id: field('accountId'), workflow_id: field('workflowId'), status: field('status'),
      queued_at: date('queuedAt'), deadline: date('deadline'),
    },
    indexes: {
      runs_account_workflow_time: { on: 'account_id, workflow_id, queued_at DESC, id DESC' },
      runs_status_deadline: { on: 'status, deadline' },
      runs_status_account_fifo: { on: 'status, account_id, queued_at, id' },
    },
  },
  workflow_run_queue: {
    columns: { account_id: field('accountId'), queued_at: date('queuedAt') },
    indexes: { run_queue_account_fifo: { on: 'account_id, queued_at, id' } },
  },
  // One row per running run; the unique index makes a slot number one run's.
  workflow_run_slots: {
    columns: { account_id: field('accountId'), slot: field('slot') },
    indexes: { run_slots_account_slot: { on: 'account_id, slot', unique: true } },
  },
  workflow_run_outputs: { columns: {}, indexes: {} },
  connectors: {
    columns: { account_id: field('accountId'), name: field('name'), created_at: date('createdAt') },
    indexes: { connectors_account_name: { on: 'account_id, name', unique: true }, connectors_account_time: { on: 'account_id, created_at, id' } },
  },
  vault: { columns: { account_id: field('accountId'), name: field('name') }, indexes: { vault_account_name: { on: 'account_id, name' } } },
  mqtt_signals: { columns: { at: date('at') }, indexes: { mqtt_signals_time: { on: 'at, id' } } },
  mqtt_presence: { columns: { api_key_id: field('device.apiKeyId') }, indexes: { mqtt_presence_key: { on: 'api_key_id' } } },
};

function createTable(name: string, def: TableDef): string {
  const cols = Object.entries(def.columns).map(([c, expr]) => `, ${c} GENERATED ALWAYS AS (${expr}) VIRTUAL`).join('');
  const indexes = Object.entries(def.indexes)
    .map(([ix, { on, unique }]) => `CREATE ${unique ? 'UNIQUE ' : ''}INDEX ${ix} ON ${name} (${on});`).join('\n');
  return `CREATE TABLE ${name} (id TEXT PRIMARY KEY, doc TEXT NOT NULL${cols});\n${indexes}`;
}

/**
 * A search of the history by tag walks one index range per tag, newest first, instead of reading
 * every message of the account for its tags (a tag nobody used read them all, on the event loop:
 * seconds at a million messages). One row per (publish message, tag), kept by triggers on
 * `messages`, so every writer (the pipeline, imports, deletions) keeps it true; filled from the
 * messages already stored when the migration runs.
 */
const TAG_ROWS = (m: string) => `SELECT ${m}.account_id, j.value, ${m}.ts, ${m}.id, ${m}.source_name FROM json_each(${m}.doc, '$.tags') j WHERE j.type = 'text'`;
const MESSAGE_TAGS = `
CREATE TABLE message_tags (
  account_id TEXT NOT NULL, tag TEXT NOT NULL, ts INTEGER NOT NULL, message_id TEXT NOT NULL, source_name TEXT,
  PRIMARY KEY (account_id, tag, ts, message_id)
) WITHOUT ROWID;
CREATE INDEX message_tags_source ON message_tags (account_id, tag, source_name, ts, message_id);
CREATE TRIGGER message_tags_insert AFTER INSERT ON messages WHEN NEW.msg_type = 'publish' BEGIN
  INSERT OR IGNORE INTO message_tags (account_id, tag, ts, message_id, source_name) ${TAG_ROWS('NEW')};
END;
CREATE TRIGGER message_tags_delete AFTER DELETE ON messages WHEN OLD.msg_type = 'publish' BEGIN
  DELETE FROM message_tags WHERE account_id = OLD.account_id AND ts = OLD.ts AND message_id = OLD.id
    AND tag IN (SELECT value FROM json_each(OLD.doc, '$.tags'));
END;
CREATE TRIGGER message_tags_update AFTER UPDATE OF doc ON messages BEGIN
  DELETE FROM message_tags WHERE account_id = OLD.account_id AND ts = OLD.ts AND message_id = OLD.id
    AND tag IN (SELECT value FROM json_each(OLD.doc, '$.tags'));
  INSERT OR IGNORE INTO message_tags (account_id, tag, ts, message_id, source_name) ${TAG_ROWS('NEW')} AND NEW.msg_type = 'publish';
END;
INSERT OR IGNORE INTO message_tags (account_id, tag, ts, message_id, source_name)
  SELECT m.account_id, j.value, m.ts, m.id, m.source_name FROM messages m, json_each(m.doc, '$.tags') j WHERE m.msg_type = 'publish' AND j.type = 'text';
`;

/**
 * The schema's versions: migration N brings a database from version N to N+1 (PRAGMA
 * user_version). Append, never edit: a database in the field is at some earlier version.
 */
const MIGRATIONS: Array<(db: SqliteDatabase) => void> = [
  (db) => { for (const [name, def] of Object.entries(TABLES)) db.exec(createTable(name, def)); },
  // Facts about the database itself (getMeta/putMeta), such as how far the import of a FerretDB-era DATA_DIR got.
  (db) => { db.exec('CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)'); },
  (db) => { db.exec(MESSAGE_TAGS); },
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the schema to SCHEMA_VERSION; safe when several processes start at once (one migrates). */
export function migrate(db: SqliteDatabase): void {
  immediate(db, () => {
    const at = db.pragma('user_version', { simple: true }) as number;
    if (at > SCHEMA_VERSION) throw new Error(`the embedded database is at schema version ${at}, newer than this version's ${SCHEMA_VERSION}`);
    for (let v = at; v < SCHEMA_VERSION; v++) MIGRATIONS[v](db);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  });
}

/** Opens (creating) the records database at `file`, in WAL mode, migrated. */
export function openSqlite(file: string): SqliteDatabase {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let db: SqliteDatabase | undefined;
  try {
    db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
    prepare(db);
    return db;
  } catch (err) {
    db?.close();
    // SQLite's own words ("attempt to write a readonly database") name no file: say which, and what it needs.
    const code = (err as { code?: string }).code ?? '';
    const hint = /READONLY|PERM|CANTOPEN|AUTH/.test(code)
      ? `: the service needs read and write access to ${path.dirname(file)} and the files in it`
      : '';
    throw new Error(`cannot open the records database ${file}: ${typeof (err as { message?: unknown }).message === 'string' ? (err as Error).message : String(err)}${hint}`, { cause: err });
  }
}

function prepare(db: SqliteDatabase): void {
  db.pragma('journal_mode = WAL');
  // With WAL, NORMAL keeps every committed transaction through a crash of the process; an OS
  // crash may lose the last ones, never consistency (docs/contract.md §11).
  db.pragma('synchronous = NORMAL');
  // Deleted records (a vault entry, an erased account's messages) are overwritten, not left in free pages.
  db.pragma('secure_delete = ON');
  migrate(db);
}

/** The embedded engine of a process: the records' database and the stored bytes, both under DATA_DIR/db/. */
export interface EmbeddedStorage {
  db: SqliteDatabase;
  blobs: BlobFiles;
  close(): void;
}

/** A temporary blob file this old belongs to a write that a crash cut short. */
const STALE_BLOB_WRITE_MS = 24 * 3600_000;

export async function openEmbedded(dataDir: string): Promise<EmbeddedStorage> {
  const dir = path.join(dataDir, 'db');
  const db = openSqlite(path.join(dir, 'records.sqlite'));
  const blobs = new BlobFiles(path.join(dir, 'blobs'));
  await blobs.sweepTemporary(STALE_BLOB_WRITE_MS);
  return { db, blobs, close: () => db.close() };
}

/** A value kept in the `meta` table (JSON), or undefined. */
export function getMeta<T>(db: SqliteDatabase, key: string): T | undefined {
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
  return row ? (JSON.parse(row.value) as T) : undefined;
}

/** Sets (undefined: removes) a value of the `meta` table. */
export function putMeta(db: SqliteDatabase, key: string, value: unknown): void {
  if (value === undefined) db.prepare('DELETE FROM meta WHERE key = ?').run(key);
  else db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run(key, JSON.stringify(value));
}

/** Runs `fn` in a transaction that takes the write lock first (BEGIN IMMEDIATE); a savepoint when nested. */
export function immediate<T>(db: SqliteDatabase, fn: () => T): T {
  return db.transaction(fn).immediate();
}

// --- records as JSON documents ------------------------------------------------------------------

/** A record as its `doc` text: Dates become `{"$date": ms}`, undefined fields are left out. */
export function encodeDoc(value: object): string {
  return JSON.stringify(value, function replace(this: Record<string, unknown>, key, v: unknown) {
    const raw = this[key];
    return raw instanceof Date ? { $date: raw.getTime() } : v;
  });
}

export function decodeDoc<T>(text: string): T {
  return JSON.parse(text, (_key, v: unknown) => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      if (typeof o.$date === 'number' && Object.keys(o).length === 1) return new Date(o.$date);
    }
    return v;
  }) as T;
}

/** Read in pages as consumed; closed when the reader stops early. */
export type PagedCursor<T> = AsyncIterable<T> & { close(): Promise<void> };

/** A row as `newestFirst` reads it: the id, the time column's value and the record's text. */
export interface PageRow { id: string; t: number; doc: string }

export interface PageOptions { order?: string; limit?: number; offset?: number }

/**
 * One table of records keyed by `_id` (the `id` column). `where` and `order` arguments are SQL
 * over the table's generated columns, with `?` parameters. Statements are prepared once.
 */
export class DocTable<T extends { _id: string }> {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(readonly db: SqliteDatabase, readonly name: string) {}

  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) this.statements.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  /** Runs one statement, timed for db_operation_duration_seconds when metrics are on. */
  private timed<R>(command: (typeof DB_COMMANDS)[number], run: () => R): R {
    if (!metricsEnabled()) return run();
    const started = performance.now();
    try {
      const r = run();
      observeDbOperation(command, 'ok', (performance.now() - started) / 1000);
      return r;
    } catch (err) {
      observeDbOperation(command, 'error', (performance.now() - started) / 1000);
      throw err;
    }
  }

  /** Throws the engine's duplicate-key error (storage/errors.ts) when the id or a unique index is taken. */
  insert(doc: T): void {
    this.timed('insert', () => this.stmt(`INSERT INTO ${this.name} (id, doc) VALUES (?, ?)`).run(doc._id, encodeDoc(doc)));
  }

  /** Inserts or replaces the record with this id. */
  put(doc: T): void {
    this.timed('update', () => this.stmt(`INSERT INTO ${this.name} (id, doc) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET doc = excluded.doc`).run(doc._id, encodeDoc(doc)));
  }

  get(id: string): T | null {
    const row = this.timed('find', () => this.stmt(`SELECT doc FROM ${this.name} WHERE id = ?`).get(id)) as { doc: string } | undefined;
    return row ? decodeDoc<T>(row.doc) : null;
  }

  find(where: string, params: unknown[], opts: PageOptions = {}): T[] {
    const sql = `SELECT doc FROM ${this.name} WHERE ${where}${opts.order ? ` ORDER BY ${opts.order}` : ''}`
      + `${opts.limit !== undefined || opts.offset ? ' LIMIT ? OFFSET ?' : ''}`;
    const args = opts.limit !== undefined || opts.offset ? [...params, opts.limit ?? -1, opts.offset ?? 0] : params;
    return (this.timed('find', () => this.stmt(sql).all(...args)) as Array<{ doc: string }>).map((r) => decodeDoc<T>(r.doc));
  }

  /**
   * The records whose ids a query over another table selects (`keys`: SQL yielding an `id`
   * column, with whatever `order` sorts by), in `order` (SQL over `k.`).
   */
  findByKeys(keys: string, params: unknown[], order: string): T[] {
    const sql = `SELECT r.doc FROM (${keys}) k JOIN ${this.name} r ON r.id = k.id ORDER BY ${order}`;
    return (this.timed('find', () => this.stmt(sql).all(...params)) as Array<{ doc: string }>).map((r) => decodeDoc<T>(r.doc));
  }

  findOne(where: string, params: unknown[], order?: string): T | null {
    return this.find(where, params, { order, limit: 1 })[0] ?? null;
  }

  ids(where: string, params: unknown[], limit?: number): string[] {
    const sql = `SELECT id FROM ${this.name} WHERE ${where}${limit !== undefined ? ' LIMIT ?' : ''}`;
    return (this.timed('find', () => this.stmt(sql).all(...(limit !== undefined ? [...params, limit] : params))) as Array<{ id: string }>).map((r) => r.id);
  }

  count(where: string, params: unknown[]): number {
    return (this.timed('count', () => this.stmt(`SELECT count(*) AS n FROM ${this.name} WHERE ${where}`).get(...params)) as { n: number }).n;
  }

  /** Distinct values of a generated column. */
  distinct(column: string): unknown[] {
    return (this.timed('distinct', () => this.stmt(`SELECT DISTINCT ${column} AS v FROM ${this.name}`).all()) as Array<{ v: unknown }>).map((r) => r.v);
  }

  /**
   * Records matching `where`, newest first by (`timeColumn`, id), in pages of `size`, each row
   * turned into what `read` makes of it. Each page is its own short read of the index range after
   * the last row seen (a row-value bound, so the index seeks to it instead of scanning from the
   * newest), so a slow reader holds no read open between pages and never holds up writers.
   */
  newestFirst<R>(where: string, params: unknown[], timeColumn: string, size: number, read: (row: PageRow) => R): PagedCursor<R[]> {
    const select = `SELECT id, ${timeColumn} AS t, doc FROM ${this.name} WHERE ${where}`;
    const order = ` ORDER BY ${timeColumn} DESC, id DESC LIMIT ?`;
    const first = this.stmt(select + order);
    const after = this.stmt(`${select} AND (${timeColumn}, id) < (?, ?)${order}`);
    let closed = false;
    async function* pages(): AsyncGenerator<R[]> {
      let last: PageRow | undefined;
      while (!closed) {
        const rows = (last ? after.all(...params, last.t, last.id, size) : first.all(...params, size)) as PageRow[];
        if (rows.length > 0) yield rows.map(read);
        if (rows.length < size) return;
        last = rows[rows.length - 1];
      }
    }
    return { close: async () => { closed = true; }, [Symbol.asyncIterator]: pages };
  }

  /** Deletes the record and returns it, in one statement: of several takers exactly one gets it. */
  take(id: string): T | null {
    const row = this.timed('findAndModify', () => this.stmt(`DELETE FROM ${this.name} WHERE id = ? RETURNING doc`).get(id)) as { doc: string } | undefined;
    return row ? decodeDoc<T>(row.doc) : null;
  }

  /** Takes (deletes and returns) the first record matching `where` in `order`, under the write lock. */
  takeFirst(where: string, params: unknown[], order: string): T | null {
    return immediate(this.db, () => {
      const row = this.timed('find', () => this.stmt(`SELECT id FROM ${this.name} WHERE ${where} ORDER BY ${order} LIMIT 1`).get(...params)) as { id: string } | undefined;
      return row ? this.take(row.id) : null;
    });
  }

  /** True when the record existed. */
  delete(id: string): boolean {
    return this.timed('delete', () => this.stmt(`DELETE FROM ${this.name} WHERE id = ?`).run(id)).changes === 1;
  }

  deleteWhere(where: string, params: unknown[]): number {
    return this.timed('delete', () => this.stmt(`DELETE FROM ${this.name} WHERE ${where}`).run(...params)).changes;
  }

  /**
   * Reads the record and writes back what `change` makes of it, under the write lock: no other
   * connection or process writes between. `change` returning undefined leaves the record as it
   * is. Returns the record after (undefined unchanged: the one read), or null when there is none.
   */
  update(id: string, change: (doc: T) => T | undefined): T | null {
    return immediate(this.db, () => {
      const doc = this.get(id);
      if (!doc) return null;
      const next = change(doc);
      if (next === undefined) return doc;
      this.timed('update', () => this.stmt(`UPDATE ${this.name} SET doc = ? WHERE id = ?`).run(encodeDoc(next), id));
      return next;
    });
  }

  /** `update` for every record matching `where`; returns how many changed. */
  updateWhere(where: string, params: unknown[], change: (doc: T) => T | undefined): number {
    return immediate(this.db, () => {
      let changed = 0;
      for (const doc of this.find(where, params)) {
        const next = change(doc);
        if (next === undefined) continue;
        this.timed('update', () => this.stmt(`UPDATE ${this.name} SET doc = ? WHERE id = ?`).run(encodeDoc(next), doc._id));
        changed++;
      }
      return changed;
    });
  }
}

/** `?, ?, ?` for an IN list of n values (n ≥ 1). */
export const placeholders = (n: number): string => Array.from({ length: n }, () => '?').join(', ');
