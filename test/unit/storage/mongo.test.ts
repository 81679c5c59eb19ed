import { MongoServerError } from 'mongodb';
import { isDuplicateKey } from '../../../src/storage/errors';

const serverError = (code: number, errmsg: string) => new MongoServerError({ ok: 0, code, errmsg });

describe('isDuplicateKey', () => {
  test('E11000 from MongoDB, and from FerretDB on insert', () => {
    expect(isDuplicateKey(serverError(11000, 'E11000 duplicate key error collection: sentinel.services index: account_name'))).toBe(true);
  });

  test('FerretDB v1 on an update that collides: InternalError quoting SQLite\'s UNIQUE constraint failure', () => {
    const msg = '[msg_findandmodify.go:196 handler.(*Handler).findAndModifyDocument] [collection.go:173 sqlite.(*collection).UpdateAll.func1] constraint failed: UNIQUE constraint failed: index \'services_1a2b_account_name\' (2067)';
    expect(isDuplicateKey(serverError(1, msg))).toBe(true);
  });

  test('other server errors and non-server errors are not', () => {
    expect(isDuplicateKey(serverError(1, 'some other internal error'))).toBe(false);
    expect(isDuplicateKey(serverError(2, 'UNIQUE constraint failed'))).toBe(false);
    expect(isDuplicateKey(new Error('UNIQUE constraint failed'))).toBe(false);
    expect(isDuplicateKey(undefined)).toBe(false);
  });
});

describe('isDuplicateKey on the embedded store', () => {
  test("better-sqlite3's primary-key and unique violations, and nothing else", () => {
    const sqliteError = (code: string) => Object.assign(new Error('constraint failed'), { name: 'SqliteError', code });
    expect(isDuplicateKey(sqliteError('SQLITE_CONSTRAINT_PRIMARYKEY'))).toBe(true);
    expect(isDuplicateKey(sqliteError('SQLITE_CONSTRAINT_UNIQUE'))).toBe(true);
    expect(isDuplicateKey(sqliteError('SQLITE_CONSTRAINT_NOTNULL'))).toBe(false);
    expect(isDuplicateKey(sqliteError('SQLITE_BUSY'))).toBe(false);
  });
});
