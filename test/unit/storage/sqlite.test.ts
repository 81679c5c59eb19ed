/** The embedded engine's database and stored bytes, below the stores: schema versions, the record codec, blob files. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { BlobFiles } from '../../../src/storage/blob-files';
import { SqliteMessageStore } from '../../../src/messaging/store/sqlite';
import { decodeDoc, encodeDoc, openSqlite, SCHEMA_VERSION, TABLES } from '../../../src/storage/sqlite';

let dir: string;
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-unit-')); });
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('schema', () => {
  test('a new database is migrated to the current version in WAL mode, with every table and index', () => {
    const db = openSqlite(path.join(dir, 'r.sqlite'));
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    const names = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')").all() as Array<{ name: string }>).map((r) => r.name));
    for (const [table, def] of Object.entries(TABLES)) {
      expect(names).toContain(table);
      for (const ix of Object.keys(def.indexes)) expect(names).toContain(ix);
    }
    db.close();
  });

  test('reopening keeps the data; a database from a newer version is refused', () => {
    const file = path.join(dir, 'r.sqlite');
    const db = openSqlite(file);
    db.prepare('INSERT INTO accounts (id, doc) VALUES (?, ?)').run('a', '{}');
    db.close();
    const again = openSqlite(file);
    expect(again.prepare('SELECT count(*) AS n FROM accounts').get()).toEqual({ n: 1 });
    again.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    again.close();
    expect(() => openSqlite(file)).toThrow(/newer than this version/);
  });

  test('a database that cannot be opened is named, with what the service needs', () => {
    const file = path.join(dir, 'r.sqlite');
    fs.mkdirSync(file); // a directory where the file should be: SQLite cannot open it
    expect(() => openSqlite(file)).toThrow(`cannot open the records database ${file}: unable to open database file: the service needs read and write access to ${dir}`);
  });

  test('the list and search shapes use their index, not a scan', () => {
    const db = openSqlite(path.join(dir, 'r.sqlite'));
    const plan = (sql: string) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join('; ');
    expect(plan("SELECT doc FROM messages WHERE account_id = 'a' AND msg_type = 'publish' ORDER BY ts DESC, id DESC LIMIT 50"))
      .toMatch(/USING INDEX messages_account_type_time/);
    expect(plan("SELECT doc FROM messages WHERE account_id = 'a' AND msg_type = 'publish' AND source_name = 'd' AND ts >= 1 AND ts < 2 ORDER BY ts DESC, id DESC LIMIT 50"))
      .toMatch(/USING INDEX messages_account_type_source_time/);
    expect(plan("SELECT id FROM message_inbox WHERE account_id = 'a' AND dest = 'd' ORDER BY queued_at, id LIMIT 1")).toMatch(/USING (COVERING )?INDEX inbox_dest_fifo/);
    expect(plan("SELECT doc FROM audit_log WHERE account_id = 'a' ORDER BY ts DESC, id DESC LIMIT 10")).toMatch(/USING INDEX audit_account_time/);
    db.close();
  });

  test('a tag search reads message_tags per tag, never the account\'s whole history; the migration fills it from stored messages', async () => {
    const file = path.join(dir, 'r.sqlite');
    let db = openSqlite(file);
    let store = new SqliteMessageStore(db);
    const msg = (n: number, tags: string[]) => ({
      _id: `m${n}`, accountId: 'a', msgType: 'publish' as const, source: 's', sourceName: 'd', destination: null, data: { n }, tags,
      timestamp: new Date(n * 1000), receivedAt: new Date(), validation: { result: 'skipped' as const }, bytes: 1,
    });
    for (let n = 0; n < 6; n++) await store.insertMessage(msg(n, n % 2 ? ['odd', 'all'] : ['all']));
    // A database written before the tag table existed: the migration must fill it.
    db.exec('DROP TRIGGER message_tags_insert; DROP TRIGGER message_tags_delete; DROP TRIGGER message_tags_update; DROP TABLE message_tags');
    db.pragma(`user_version = ${SCHEMA_VERSION - 1}`);
    db.close();
    db = openSqlite(file);
    store = new SqliteMessageStore(db);
    expect(db.prepare('SELECT count(*) AS n FROM message_tags').get()).toEqual({ n: 9 });
    expect((await store.listPublished({ accountId: 'a', tags: ['odd'] }, 0, 10)).map((m) => m._id)).toEqual(['m5', 'm3', 'm1']);
    // The triggers keep it: a deleted message leaves no tag rows behind.
    db.prepare("DELETE FROM messages WHERE id = 'm5'").run();
    expect((await store.listPublished({ accountId: 'a', tags: ['odd'] }, 0, 10)).map((m) => m._id)).toEqual(['m3', 'm1']);
    expect(db.prepare("SELECT count(*) AS n FROM message_tags WHERE message_id = 'm5'").get()).toEqual({ n: 0 });

    const prepared: string[] = [];
    const prepare = db.prepare.bind(db);
    jest.spyOn(db, 'prepare').mockImplementation((sql: string) => { prepared.push(sql); return prepare(sql); });
    await store.listPublished({ accountId: 'a', tags: ['nobody', 'odd'], sourceName: 'd' }, 0, 10);
    const search = prepared.find((sql) => sql.includes('message_tags'));
    expect(search).toBeDefined();
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${search}`).all('a', 'nobody', 'd', 10, 'a', 'odd', 'd', 10, 10, 0) as Array<{ detail: string }>).map((r) => r.detail).join('; ');
    expect(plan).toMatch(/SEARCH message_tags USING (COVERING )?INDEX message_tags_source \(account_id=\? AND tag=\? AND source_name=\?\)/);
    expect(plan).not.toMatch(/messages_account_type|SCAN messages|SCAN r\b/);
    db.close();
  });

  test('an export page after the first seeks the index to the last row sent instead of walking from the newest', async () => {
    const db = openSqlite(path.join(dir, 'r.sqlite'));
    const store = new SqliteMessageStore(db);
    for (let n = 0; n < 5; n++) {
      await store.insertMessage({
        _id: `m${n}`, accountId: 'a', msgType: 'publish', source: 's', sourceName: 'd', destination: null, data: { n }, tags: [],
        timestamp: new Date(Math.floor(n / 2) * 1000), receivedAt: new Date(), validation: { result: 'skipped' }, bytes: 1,
      });
    }
    const prepared: string[] = [];
    const prepare = db.prepare.bind(db);
    jest.spyOn(db, 'prepare').mockImplementation((sql: string) => { prepared.push(sql); return prepare(sql); });
    const pages: string[][] = [];
    for await (const page of store.exportCursor({ accountId: 'a' }, 2)) pages.push(page.map((m) => m._id));
    expect(pages).toEqual([['m4', 'm3'], ['m2', 'm1'], ['m0']]);
    const next = prepared.filter((sql) => sql.includes('<'));
    expect(next).toHaveLength(1);
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${next[0]}`).all('a', 0, '', 2) as Array<{ detail: string }>).map((r) => r.detail).join('; ');
    expect(plan).toMatch(/USING INDEX messages_account_type_time \(account_id=\? AND msg_type=\? AND \(ts,id\)<\(\?,\?\)\)/);
    db.close();
  });
});

describe('record codec', () => {
  test('dates survive, nested too; undefined fields are left out; user JSON text stays a string', () => {
    const value = { at: new Date(5), nested: { list: [new Date(6)] }, gone: undefined, data: '{"$date":7}' };
    const back = decodeDoc<typeof value>(encodeDoc(value));
    expect(back).toEqual({ at: new Date(5), nested: { list: [new Date(6)] }, data: '{"$date":7}' });
    expect('gone' in back).toBe(false);
  });
});

describe('blob files', () => {
  test('written whole from a stream, read by range, replaced, erased from disk', async () => {
    const blobs = new BlobFiles(dir);
    expect(await blobs.write('k', Readable.from([Buffer.from('hello '), Buffer.from('world')]))).toBe(11);
    const chunks: Buffer[] = [];
    for await (const c of (await blobs.open('k', { start: 6, end: 10 })) as Readable) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('world');
    await blobs.write('k', Buffer.from('MARKER-123'));
    expect((await blobs.read('k'))?.toString()).toBe('MARKER-123');
    await blobs.delete('k');
    expect(await blobs.read('k')).toBeUndefined();
    const files = (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(dir, f)).isFile());
    expect(files.filter((f) => fs.readFileSync(path.join(dir, f)).includes('MARKER'))).toEqual([]);
  });

  test('a failed write leaves no file; only stale temporary files are swept', async () => {
    const blobs = new BlobFiles(dir);
    const failing = new Readable({ read() { this.destroy(new Error('cut')); } });
    await expect(blobs.write('k', failing)).rejects.toThrow('cut');
    expect(await blobs.size('k')).toBeUndefined();
    expect(fs.readdirSync(path.join(dir, 'tmp'))).toEqual([]);
    fs.writeFileSync(path.join(dir, 'tmp', 'old'), 'x');
    fs.writeFileSync(path.join(dir, 'tmp', 'young'), 'x');
    const old = new Date(Date.now() - 2 * 3600_000);
    fs.utimesSync(path.join(dir, 'tmp', 'old'), old, old);
    await blobs.sweepTemporary(3600_000);
    expect(fs.readdirSync(path.join(dir, 'tmp'))).toEqual(['young']);
  });
});
