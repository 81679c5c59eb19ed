/**
 * Exports (src/messaging/export.ts): row shapes and column order (docs/contract.md §5 "History, search and exports"),
 * CSV quoting (checked by parsing back with csv-parse, and byte-equal to csv-stringify with the
 * options the export used before it wrote its own cells), the JSON array framing (byte-equal to
 * JSON.stringify of the row objects), and the streaming contract (cursor order kept, cursor closed
 * on end, error and disconnect). The cursor is a fake async iterable of pages with close().
 */
import type { Readable } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import type { AuditEntry, AuditLog } from '../../../src/accounts/audit';
import type { Logger } from '../../../src/log';
import { AUDIT_EXPORT_COLUMNS, exportAuditLog, exportMessages, MESSAGE_EXPORT_COLUMNS } from '../../../src/messaging/export';
import type { ExportedMessage, ExportSource, MessageStore } from '../../../src/messaging/records';

/** Pages of `pageSize` records from `source`; `read` counts records handed out. */
function fakeCursor<T>(source: Iterable<T>, opts: { failAfter?: number; pageSize?: number } = {}) {
  const state = { read: 0, closed: 0 };
  const pageSize = opts.pageSize ?? 1000;
  const cursor: ExportSource<T> = {
    async *[Symbol.asyncIterator]() {
      let page: T[] = [];
      for (const d of source) {
        if (opts.failAfter !== undefined && state.read >= opts.failAfter) throw new Error('cursor killed');
        state.read++;
        page.push(d);
        if (page.length === pageSize) {
          yield page;
          page = [];
        }
      }
      if (page.length) yield page;
    },
    close: async () => { state.closed++; },
  };
  return { cursor, state };
}

/** Lets `n` turns of the event loop pass (no wall clock: the fakes here settle within turns). */
async function eventLoopTurns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

/** A message as the store hands it to an export: `data` as its stored JSON text. */
const msg = (i: number, extra: Partial<Omit<ExportedMessage, 'data'>> & { data?: unknown } = {}): ExportedMessage => {
  const { data, ...rest } = 'data' in extra ? extra : { ...extra, data: { n: i } };
  return {
    _id: `66a000000000000000000${String(i).padStart(3, '0')}`, msgType: 'publish', source: 'accounts/acc-1/entities/sensor-a', destination: null,
    tags: ['t'], timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, 0) - i * 1000), ...rest, data: data === undefined ? undefined : JSON.stringify(data),
  };
};

/** The row objects the export wrote before it formatted its own cells (data parsed back). */
const messageRow = (m: ExportedMessage) => ({
  id: m._id, source: m.source, destination: m.destination, msgType: m.msgType, data: m.data === undefined ? undefined : JSON.parse(m.data) as unknown,
  tags: m.tags, timestamp: m.timestamp.toISOString(),
});
const auditRow = (a: AuditEntry) => ({
  id: a._id, action: a.action, resourceType: a.resourceType, resourceId: a.resourceId, resourceName: a.resourceName,
  userEmail: a.userEmail, timestamp: a.timestamp.toISOString(), details: a.details,
});

const audit = (i: number, extra: Partial<AuditEntry> = {}): AuditEntry => ({
  _id: `aud-${i}`, accountId: 'acc-1', action: 'update', resourceType: 'service', resourceId: `svc-${i}`,
  resourceName: `svc ${i}`, userEmail: 'api_key:0123456789abcdef', timestamp: new Date(Date.UTC(2026, 1, 2, 3, 4, 5, 6)),
  details: { fields: ['name'] }, ...extra,
});

function logger() {
  return { error: jest.fn(), warn: jest.fn(), info: jest.fn() };
}

async function text(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
  return Buffer.concat(chunks).toString('utf8');
}

function messagesExport(docs: ExportedMessage[], format: 'csv' | 'json', q: { from?: Date; to?: Date } = {}) {
  const c = fakeCursor(docs);
  const calls: unknown[][] = [];
  const store = { exportCursor: (...a: unknown[]) => { calls.push(a); return c.cursor; } } as unknown as MessageStore;
  const log = logger();
  const out = exportMessages(store, log as unknown as Logger, 'acc-1', { format, ...q });
  return { out, calls, state: c.state, log };
}

function auditExport(docs: AuditEntry[], format: 'csv' | 'json', f: { resourceType?: string; action?: string; from?: Date; to?: Date } = {}) {
  const c = fakeCursor(docs);
  const calls: unknown[][] = [];
  const log = { cursor: (...a: unknown[]) => { calls.push(a); return c.cursor; } } as unknown as AuditLog;
  const out = exportAuditLog(log, logger() as unknown as Logger, 'acc-1', { format, ...f });
  return { out, calls, state: c.state };
}

const csvRecords = (s: string) => parse(s, { columns: false, relax_column_count: false }) as string[][];

describe('row shapes', () => {
  test('message columns are the spec\'s, in the spec\'s order', async () => {
    expect(MESSAGE_EXPORT_COLUMNS).toEqual(['id', 'source', 'destination', 'msgType', 'data', 'tags', 'timestamp']);
    const [row] = JSON.parse(await text(messagesExport([msg(1, { destination: 'sensor-b' })], 'json').out.body)) as Array<Record<string, unknown>>;
    expect(Object.keys(row)).toEqual([...MESSAGE_EXPORT_COLUMNS]);
    expect(row).toEqual({
      id: msg(1)._id, source: 'accounts/acc-1/entities/sensor-a', destination: 'sensor-b', msgType: 'publish',
      data: { n: 1 }, tags: ['t'], timestamp: '2025-12-31T23:59:59.000Z',
    });
  });

  test('internal fields never leave (accountId, sourceName, validation, bytes, receivedAt), whatever the store hands over', async () => {
    const whole = { ...msg(1), accountId: 'acc-1', sourceName: 'sensor-a', receivedAt: new Date(0), bytes: 7, validation: { result: 'failed', actionResults: [{ rule: 'secret-rule' }] } };
    for (const format of ['csv', 'json'] as const) {
      expect(await text(messagesExport([whole], format).out.body)).not.toMatch(/acc-1"|sourceName|validation|bytes|receivedAt|secret-rule|1970/);
    }
  });

  test('audit columns are the spec\'s, in the spec\'s order', async () => {
    expect(AUDIT_EXPORT_COLUMNS).toEqual(['id', 'action', 'resourceType', 'resourceId', 'resourceName', 'userEmail', 'timestamp', 'details']);
    const out = await text(auditExport([audit(1)], 'json').out.body);
    const [row] = JSON.parse(out) as Array<Record<string, unknown>>;
    expect(Object.keys(row)).toEqual([...AUDIT_EXPORT_COLUMNS]);
    expect(row.timestamp).toBe('2026-02-02T03:04:05.006Z');
    expect(out).not.toContain('accountId');
  });
});

/** Cells a spreadsheet, a CSV reader or a JSON reader could trip on, for every column. */
const HOSTILE = [
  '', ' ', 'plain', 'a,b', 'say "hi"', '"', 'line1\nline2', 'a\rb', 'a\r\nb', '\ttab', '\rcr', '=1+1', '+1', '-1', '@SUM(A1)', 'a=b',
  '\uFF1D1', '\uFF0B1', '\uFF0D1', '\uFF20x', 'Grüße 😀 \u2028\u2029', 'lone \ud800 x', 'x\u0000y', '\u001f', "'quoted'", '[1]', '{"a":1}',
];
const HOSTILE_DATA: unknown[] = [
  ...HOSTILE, null, 0, -5, 1.5e21, true, false, [], {}, [1, '-2', { k: '"' }], { '=a': '-b', nested: { deep: [null, '\n'] } }, { $set: 1, 'a.b': [] },
];

describe('formatting matches what the libraries wrote before, byte for byte', () => {
  // The options and casts the export gave csv-stringify before it wrote its own cells.
  const reference = (rows: object[], columns: readonly string[]) => stringify(rows, {
    header: true, columns: [...columns], escape_formulas: true,
    cast: { object: (v) => JSON.stringify(v), date: (v) => v.toISOString(), boolean: (v) => String(v) },
  });
  const jsonReference = (rows: object[]) => (rows.length ? `[\n${rows.map((r) => JSON.stringify(r)).join(',\n')}\n]\n` : '[]\n');
  // Compared as the bytes that go out: UTF-8 turns a lone surrogate into U+FFFD either way.
  const bytes = (s: string) => Buffer.from(s).toString('utf8');

  const messages = [
    ...HOSTILE_DATA.map((data, i) => msg(i, { data })),
    ...HOSTILE.map((h, i) => msg(100 + i, { source: h, destination: h, msgType: h as ExportedMessage['msgType'], tags: [h, 'x'] })),
    msg(200, { data: undefined }),
    msg(201, { timestamp: new Date(Date.UTC(-1, 0, 1)) }),
  ];
  const entries = HOSTILE.map((h, i) => audit(i, { action: h, resourceType: h, resourceId: h, resourceName: h, userEmail: h, details: { h, list: [h] } }));

  test('messages as CSV', async () => {
    expect(await text(messagesExport(messages, 'csv').out.body)).toBe(bytes(reference(messages.map(messageRow), MESSAGE_EXPORT_COLUMNS)));
  });
  test('messages as JSON', async () => {
    expect(await text(messagesExport(messages, 'json').out.body)).toBe(bytes(jsonReference(messages.map(messageRow))));
  });
  test('the audit log as CSV and as JSON', async () => {
    expect(await text(auditExport(entries, 'csv').out.body)).toBe(bytes(reference(entries.map(auditRow), AUDIT_EXPORT_COLUMNS)));
    expect(await text(auditExport(entries, 'json').out.body)).toBe(bytes(jsonReference(entries.map(auditRow))));
  });
  test('over several pages, and with none', async () => {
    const many = Array.from({ length: 2500 }, (_, i) => msg(i, { data: HOSTILE_DATA[i % HOSTILE_DATA.length] }));
    expect(await text(messagesExport(many, 'csv').out.body)).toBe(bytes(reference(many.map(messageRow), MESSAGE_EXPORT_COLUMNS)));
    expect(await text(messagesExport(many, 'json').out.body)).toBe(bytes(jsonReference(many.map(messageRow))));
    expect(await text(messagesExport([], 'csv').out.body)).toBe(bytes(reference([], MESSAGE_EXPORT_COLUMNS)));
  });
});

describe('CSV', () => {
  test('header row, then one record per message with JSON cells for data and tags and an empty cell for null', async () => {
    const { out } = messagesExport([msg(1), msg(2, { destination: 'sensor-b', tags: [] })], 'csv');
    const s = await text(out.body);
    expect(s.split('\n')[0]).toBe('id,source,destination,msgType,data,tags,timestamp');
    expect(csvRecords(s).slice(1)).toEqual([
      [msg(1)._id, 'accounts/acc-1/entities/sensor-a', '', 'publish', '{"n":1}', '["t"]', '2025-12-31T23:59:59.000Z'],
      [msg(2)._id, 'accounts/acc-1/entities/sensor-a', 'sensor-b', 'publish', '{"n":2}', '[]', '2025-12-31T23:59:58.000Z'],
    ]);
    expect(out.contentType).toBe('text/csv; charset=utf-8');
    expect(out.filename).toMatch(/^messages-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z\.csv$/);
  });

  test('no rows: the header alone', async () => {
    const { out, state } = messagesExport([], 'csv');
    expect(await text(out.body)).toBe('id,source,destination,msgType,data,tags,timestamp\n');
    expect(state.closed).toBe(1);
  });

  test('hostile data survives a CSV round trip: quotes, commas, newlines, CR, unicode, separators, NUL', async () => {
    const data = {
      q: 'say "hi"', c: 'a,b,,c', nl: 'line1\nline2', cr: 'a\rb', crlf: 'a\r\nb', u: 'Grüße 😀 \u2028\u2029', nul: 'x\u0000y',
      sql: "'; DROP TABLE messages; --", html: '<img src=x onerror=alert(1)>', nested: { deep: [1, { k: '"' }] },
    };
    const tags = ['a,b', 'c"d', 'e\nf'];
    const { out } = messagesExport([msg(1, { data, tags })], 'csv');
    const s = await text(out.body);
    const [header, row] = csvRecords(s);
    expect(header).toHaveLength(7);
    expect(row).toHaveLength(7);
    expect(JSON.parse(row[4])).toEqual(data);
    expect(JSON.parse(row[5])).toEqual(tags);
    // JSON text escapes newlines, so a data cell never spans lines: 2 physical lines + final newline.
    expect(s.split('\n')).toHaveLength(3);
  });

  test('audit text fields with separators are quoted and round-trip exactly', async () => {
    const names = ['a,b', 'say "x"', 'two\nlines', 'cr\ronly', ' padded ', '', 'ключ 😀', '"', 'a;b\tc'];
    const { out } = auditExport(names.map((n, i) => audit(i, { resourceName: n })), 'csv');
    const recs = csvRecords(await text(out.body));
    expect(recs).toHaveLength(names.length + 1);
    expect(recs.slice(1).map((r) => r[4])).toEqual(names);
    expect(recs.slice(1).every((r) => r.length === 8)).toBe(true);
    expect(JSON.parse(recs[1][7])).toEqual({ fields: ['name'] });
  });

  test('a text cell that a spreadsheet would run as a formula is prefixed with a quote; JSON keeps it as is', async () => {
    const names = ['=HYPERLINK("http://evil.example","x")', '+1+1', '-2+3', '@SUM(A1)', 'plain', 'a=b'];
    const csvOut = auditExport(names.map((n, i) => audit(i, { resourceName: n })), 'csv').out;
    const recs = csvRecords(await text(csvOut.body));
    expect(recs.slice(1).map((r) => r[4])).toEqual([`'=HYPERLINK("http://evil.example","x")`, "'+1+1", "'-2+3", "'@SUM(A1)", 'plain', 'a=b']);
    const jsonOut = auditExport(names.map((n, i) => audit(i, { resourceName: n })), 'json').out;
    expect((JSON.parse(await text(jsonOut.body)) as Array<{ resourceName: string }>).map((r) => r.resourceName)).toEqual(names);
  });

  test('rows keep the cursor\'s order (newest first) over many pages and the cursor is closed at the end', async () => {
    const docs = Array.from({ length: 2500 }, (_, i) => msg(i));
    const { out, calls, state } = messagesExport(docs, 'csv');
    const recs = csvRecords(await text(out.body));
    expect(recs).toHaveLength(2501);
    expect(recs.slice(1).map((r) => r[0])).toEqual(docs.map((d) => d._id));
    expect(calls).toEqual([[{ accountId: 'acc-1', from: undefined, to: undefined }, 1000]]);
    expect(state.closed).toBe(1);
  });
});

describe('JSON', () => {
  test('no rows: an empty array', async () => {
    const { out } = messagesExport([], 'json');
    const s = await text(out.body);
    expect(s).toBe('[]\n');
    expect(JSON.parse(s)).toEqual([]);
    expect(out.contentType).toBe('application/json; charset=utf-8');
    expect(out.filename).toMatch(/^messages-.*\.json$/);
  });

  test('an array with one object per line, fields in column order', async () => {
    const { out } = messagesExport([msg(1), msg(2, { destination: 'sensor-b' })], 'json');
    const s = await text(out.body);
    const lines = s.split('\n');
    expect(lines[0]).toBe('[');
    expect(lines.at(-2)).toBe(']');
    expect(lines.at(-1)).toBe('');
    expect(lines).toHaveLength(5);
    const parsed = JSON.parse(s) as Array<Record<string, unknown>>;
    expect(parsed).toEqual([messageRow(msg(1)), messageRow(msg(2, { destination: 'sensor-b' }))]);
    expect(parsed[0].destination).toBeNull();
    expect(Object.keys(parsed[1])).toEqual([...MESSAGE_EXPORT_COLUMNS]);
  });

  test('unicode, line separators and lone surrogates stay valid JSON and round-trip', async () => {
    const data = { s: 'a\u2028b\u2029c', lone: '\ud800x\udc00', emoji: '😀', ctrl: '\u0000\u001f', quote: '"]},{"id":"forged"' };
    const { out } = messagesExport([msg(1, { data })], 'json');
    const s = await text(out.body);
    const parsed = JSON.parse(s) as Array<{ data: unknown }>;
    expect(parsed).toHaveLength(1);
    expect(parsed[0].data).toEqual(data);
  });

  test('audit JSON keeps details as an object', async () => {
    const { out } = auditExport([audit(1, { details: { mode: 'count', requested: 3 } })], 'json');
    expect(JSON.parse(await text(out.body))).toEqual([{ ...auditRow(audit(1)), details: { mode: 'count', requested: 3 } }]);
  });
});

describe('queries and streaming', () => {
  test('the messages export passes the account and the [from, to) range, 1,000 rows per page', () => {
    const from = new Date('2026-01-01T00:00:00Z');
    const to = new Date('2026-02-01T00:00:00Z');
    const { calls } = messagesExport([], 'json', { from, to });
    expect(calls).toEqual([[{ accountId: 'acc-1', from, to }, 1000]]);
  });

  test('the audit export passes its filters and names its file audit-log-*', () => {
    const { calls, out } = auditExport([], 'csv', { resourceType: 'entity', action: 'bulk_create' });
    expect(calls).toEqual([['acc-1', { resourceType: 'entity', action: 'bulk_create', from: undefined, to: undefined }, 1000]]);
    expect(out.filename).toMatch(/^audit-log-.*\.csv$/);
  });

  test('the source is pulled only as fast as the client reads (backpressure), and a disconnect closes the cursor quietly', async () => {
    function* endless() {
      for (let i = 0; ; i++) yield msg(i % 1000);
    }
    const c = fakeCursor(endless(), { pageSize: 100 });
    const log = logger();
    const store = { exportCursor: () => c.cursor } as unknown as MessageStore;
    const out = exportMessages(store, log as unknown as Logger, 'acc-1', { format: 'csv' });
    // Paused mode: read a few bytes and then nothing more, like a client that stopped reading.
    await new Promise((resolve) => out.body.once('readable', resolve));
    const first = out.body.read(10) as Buffer;
    expect(first.toString()).toMatch(/^id,source/);
    // The fake cursor answers in the next turns of the event loop: let many pass, counting reads.
    await eventLoopTurns(20);
    const readWhilePaused = c.state.read;
    await eventLoopTurns(100);
    expect(c.state.read).toBe(readWhilePaused);
    expect(readWhilePaused).toBeLessThan(2000);
    out.body.destroy();
    for (let i = 0; i < 1000 && c.state.closed === 0; i++) await eventLoopTurns(1);
    expect(c.state.closed).toBe(1);
    expect(log.error).not.toHaveBeenCalled();
  });

  test('other work runs between pages even when every page and every write is ready at once', async () => {
    const pageSize = 10;
    const c = fakeCursor(Array.from({ length: 20 * pageSize }, (_, i) => msg(i)), { pageSize });
    const store = { exportCursor: () => c.cursor } as unknown as MessageStore;
    const out = exportMessages(store, logger() as unknown as Logger, 'acc-1', { format: 'json' });
    // A callback of the next turn of the event loop (where a request's I/O would be served).
    const seenAt: number[] = [];
    const tick = () => {
      seenAt.push(c.state.read);
      if (c.state.read < 200) setImmediate(tick);
    };
    setImmediate(tick);
    expect(JSON.parse(await text(out.body))).toHaveLength(200);
    // It ran while the export was under way, not only once it had read everything.
    expect(seenAt.filter((n) => n > 0 && n < 200).length).toBeGreaterThan(5);
  });

  test('a cursor failing mid-export is logged, ends the download with an error and closes the cursor', async () => {
    const c = fakeCursor([msg(1), msg(2), msg(3)], { failAfter: 2 });
    const log = logger();
    const store = { exportCursor: () => c.cursor } as unknown as MessageStore;
    const out = exportMessages(store, log as unknown as Logger, 'acc-1', { format: 'json' });
    await expect(text(out.body)).rejects.toThrow('cursor killed');
    await new Promise((r) => setImmediate(r));
    expect(log.error).toHaveBeenCalledWith(expect.objectContaining({ err: expect.any(Error) }), 'messages export failed');
    expect(c.state.closed).toBe(1);
  });
});
