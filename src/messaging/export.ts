/**
 * Exports of message history and the audit log: newest first (the list order), read from the
 * store a page at a time (one SQLite read of an index range, 250 messages; or one MongoDB getMore
 * of 1,000), each page written as one chunk of CSV (header row) or of a JSON array, and streamed:
 * the next page is read only when the client has taken the last, so memory stays flat whatever
 * the size, and each step holds the event loop for one page only.
 */
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { AuditEntry, AuditFilter, AuditLog } from '../accounts/audit';
import { FIXED_LIMITS } from '../accounts/plans';
import type { Logger } from '../log';
import type { ExportedMessage, ExportSource, MessageExport } from './records';

export type ExportFormat = 'csv' | 'json';

export const MESSAGE_EXPORT_COLUMNS = ['id', 'source', 'destination', 'msgType', 'data', 'tags', 'timestamp'] as const;
export const AUDIT_EXPORT_COLUMNS = ['id', 'action', 'resourceType', 'resourceId', 'resourceName', 'userEmail', 'timestamp', 'details'] as const;

export interface ExportStream { body: Readable; contentType: string; filename: string }




/** Marks the cell that holds JSON text: written unquoted into a JSON row, as a JSON cell in CSV. */
class JsonText {
  constructor(readonly text: string) {}
}

/**
 * One record's cells in column order. In JSON rows an object or array is itself and null is null;
 * in CSV it is JSON text and null is empty; an undefined cell is left out of a JSON row.
 */
type Cells = unknown[];

const messageCells = (m: ExportedMessage): Cells => [
  m._id, m.source, m.destination, m.msgType, m.data === undefined ? undefined : new JsonText(m.data), m.tags, m.timestamp.toISOString(),
];
const auditCells = (a: AuditEntry): Cells => [
  a._id, a.action, a.resourceType, a.resourceId, a.resourceName, a.userEmail, a.timestamp.toISOString(), a.details,
];

/** `{"column":value,...}`: what JSON.stringify writes for the row object, JSON text included as it is. */
function jsonRow(keys: readonly string[], cells: Cells): string {
  let out = '{';
  for (let i = 0; i < cells.length; i++) {
    const v = cells[i];
    if (v === undefined) continue;
    out += (out.length > 1 ? ',' : '') + keys[i] + (v instanceof JsonText ? v.text : JSON.stringify(v));
  }
  return `${out}}`;
}

/** A cell that a spreadsheet would run as a formula starts with one of these (OWASP CSV injection). */
const FORMULA_START = new Set(['=', '+', '-', '@', '\t', '\r', '\uFF1D', '\uFF0B', '\uFF0D', '\uFF20']);
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One CSV cell exactly as csv-stringify writes it with `escape_formulas` and the casts this export
 * used to hand it (objects as JSON text, dates as ISO text), written here because its generic
 * per-cell path cost about seven times this one per row; test/unit/messaging/export.test.ts holds
 * the two equal on hostile cells. A text cell starting like a formula gets a leading ', so a
 * spreadsheet shows it as text instead of running it; a cell with a quote, comma or line break is
 * quoted, quotes doubled.
 */
function csvCell(v: unknown): string {
  let s: string;
  if (v === null || v === undefined || v === '') return '';
  if (typeof v === 'string') s = FORMULA_START.has(v[0]) ? `'${v}` : v;
  else if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') s = String(v);
  else {
    if (v instanceof JsonText) {
      // Scalars go out as csv-stringify wrote the parsed value: a string bare, null empty.
      if (v.text[0] !== '{' && v.text[0] !== '[') return csvCell(JSON.parse(v.text));
      s = v.text;
    } else s = v instanceof Date ? v.toISOString() : JSON.stringify(v);
    if (FORMULA_START.has(s[0])) s = `'${s}`;
  }
  return NEEDS_QUOTES.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** Page by page: the CSV header first, or the JSON array's brackets around one object per line. */
async function* chunks<D>(source: ExportSource<D>, cellsOf: (d: D) => Cells, columns: readonly string[], format: ExportFormat, name: string, logger: Logger): AsyncGenerator<string> {
  const keys = columns.map((c) => `${JSON.stringify(c)}:`);
  let first = true;
  try {
    if (format === 'csv') yield `${columns.map(csvCell).join(',')}\n`;
    for await (const page of source) {
      if (page.length === 0) continue;
      let out = '';
      for (const d of page) {
        const cells = cellsOf(d);
        if (format === 'csv') out += `${cells.map(csvCell).join(',')}\n`;
        else {
          out += (first ? '[\n' : ',\n') + jsonRow(keys, cells);
          first = false;
        }
      }
      yield out;
      // The next page waits for the next turn of the event loop: with a client that reads as fast
      // as pages come, every write completes at once and the whole export would otherwise run
      // in one turn, answering no other request until it ends.
      await nextTurn();
    }
    if (format === 'json') yield first ? '[]\n' : '\n]\n';
  } catch (err) {
    logger.error({ err }, `${name} export failed`);
    throw err;
  } finally {
    await source.close();
  }
}

function build<D>(source: ExportSource<D>, cellsOf: (d: D) => Cells, columns: readonly string[], format: ExportFormat, name: string, logger: Logger): ExportStream {
  // Bytes, not objects: one page (over the 16 KiB mark) waits at most while the client reads the last.
  const body = Readable.from(chunks(source, cellsOf, columns, format, name, logger), { objectMode: false });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return {
    body,
    contentType: format === 'json' ? 'application/json; charset=utf-8' : 'text/csv; charset=utf-8',
    filename: `${name}-${stamp}.${format}`,
  };
}

export function exportMessages(store: MessageExport, logger: Logger, accountId: string, q: { format: ExportFormat; from?: Date; to?: Date }): ExportStream {
  const cursor = store.exportCursor({ accountId, from: q.from, to: q.to }, FIXED_LIMITS.exportPageRows);
  return build(cursor, messageCells, MESSAGE_EXPORT_COLUMNS, q.format, 'messages', logger);
}

export function exportAuditLog(audit: AuditLog, logger: Logger, accountId: string, q: { format: ExportFormat } & AuditFilter): ExportStream {
  const cursor = audit.cursor(accountId, { resourceType: q.resourceType, action: q.action, from: q.from, to: q.to }, FIXED_LIMITS.exportPageRows);
  return build(cursor, auditCells, AUDIT_EXPORT_COLUMNS, q.format, 'audit-log', logger);
}
