/**
 * Exports of message history and the audit log: newest first (the list order), read from MongoDB
 * through one cursor in batches of 1,000 documents (each getMore is one page), turned into CSV
 * (csv-stringify, header row) or a JSON array, and streamed: the source is pulled only as fast as
 * the client reads, so memory stays flat whatever the size.
 */
import { Readable, Transform, pipeline } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { AuditEntry, AuditFilter, AuditLog } from '../accounts/audit';
import { FIXED_LIMITS } from '../accounts/plans';
import type { Logger } from '../log';
import type { MessageDoc, MessageFilter } from './records';

export type ExportFormat = 'csv' | 'json';

export const MESSAGE_EXPORT_COLUMNS = ['id', 'source', 'destination', 'msgType', 'data', 'tags', 'timestamp'] as const;
export const AUDIT_EXPORT_COLUMNS = ['id', 'action', 'resourceType', 'resourceId', 'resourceName', 'userEmail', 'timestamp', 'details'] as const;

export interface ExportStream { body: Readable; contentType: string; filename: string }

/** JSON rows as objects; in CSV, object and array columns are JSON text and null is empty. */
export const messageRow = (m: MessageDoc) => ({
  id: m._id, source: m.source, destination: m.destination, msgType: m.msgType, data: m.data, tags: m.tags, timestamp: m.timestamp.toISOString(),
});
export const auditRow = (a: AuditEntry) => ({
  id: a._id, action: a.action, resourceType: a.resourceType, resourceId: a.resourceId, resourceName: a.resourceName,
  userEmail: a.userEmail, timestamp: a.timestamp.toISOString(), details: a.details,
});

/** What an export reads: documents pulled page by page, closed when the client goes away. */
export type ExportSource<D> = AsyncIterable<D> & { close(): Promise<void> };

/** Message history as an export reads it (messaging/records.ts). */
export interface MessageExport {
  /** The account's publish messages newest first, read `batchSize` at a time. */
  exportCursor(f: MessageFilter, batchSize: number): ExportSource<MessageDoc>;
}

async function* rowsOf<D, R>(cursor: ExportSource<D>, toRow: (d: D) => R): AsyncGenerator<R> {
  try {
    for await (const doc of cursor) yield toRow(doc);
  } finally {
    await cursor.close();
  }
}

/** `[` row `,` row ... `]`, one object per record. */
function jsonArray(): Transform {
  let first = true;
  return new Transform({
    writableObjectMode: true,
    transform(row: unknown, _enc, done) {
      const text = (first ? '[\n' : ',\n') + JSON.stringify(row);
      first = false;
      done(null, text);
    },
    flush(done) {
      done(null, first ? '[]\n' : '\n]\n');
    },
  });
}

function csv(columns: readonly string[]): Transform {
  return stringify({
    header: true,
    columns: [...columns],
    // A cell starting with = + - @ (a service or role name in the audit log, say) is prefixed
    // with ' so a spreadsheet shows it as text instead of running it as a formula.
    escape_formulas: true,
    cast: {
      object: (v) => JSON.stringify(v),
      date: (v) => v.toISOString(),
      boolean: (v) => String(v),
    },
  });
}

function build<D, R>(cursor: ExportSource<D>, toRow: (d: D) => R, columns: readonly string[], format: ExportFormat, name: string, logger: Logger): ExportStream {
  const source = Readable.from(rowsOf(cursor, toRow), { objectMode: true, highWaterMark: 64 });
  const encoder = format === 'json' ? jsonArray() : csv(columns);
  // pipeline() destroys every stage when the client goes away, which closes the cursor.
  pipeline(source, encoder, (err) => {
    if (err && (err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') logger.error({ err }, `${name} export failed`);
  });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return {
    body: encoder,
    contentType: format === 'json' ? 'application/json; charset=utf-8' : 'text/csv; charset=utf-8',
    filename: `${name}-${stamp}.${format}`,
  };
}

export function exportMessages(store: MessageExport, logger: Logger, accountId: string, q: { format: ExportFormat; from?: Date; to?: Date }): ExportStream {
  const cursor = store.exportCursor({ accountId, from: q.from, to: q.to }, FIXED_LIMITS.exportPageRows);
  return build(cursor, messageRow, MESSAGE_EXPORT_COLUMNS, q.format, 'messages', logger);
}

export function exportAuditLog(audit: AuditLog, logger: Logger, accountId: string, q: { format: ExportFormat } & AuditFilter): ExportStream {
  const cursor = audit.cursor(accountId, { resourceType: q.resourceType, action: q.action, from: q.from, to: q.to }, FIXED_LIMITS.exportPageRows);
  return build(cursor, auditRow, AUDIT_EXPORT_COLUMNS, q.format, 'audit-log', logger);
}
