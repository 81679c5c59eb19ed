/**
 * How both engines keep messaging's records: the user-controlled parts (message data, service
 * rule schemas) as JSON text (storage/user-json.ts); reads also accept MongoDB documents written
 * before, when these were native.
 */
import { decodeUserJson, encodeUserJson, UserJsonText } from '../../storage/user-json';
import { FIXED_LIMITS } from '../../accounts/plans';
import { jsonBytesWithin } from '../../json-schema';
import type { ServiceRule } from '../schemas';
import type { DeliveredMessage, ExportedMessage, InboxDoc, MessageDoc, ServiceDoc } from '../records';

/** As stored: the user-controlled parts are JSON text (older documents: native). */
export type Stored<T, K extends keyof T> = Omit<T, K> & { [P in K]: T[P] | UserJsonText };
export type StoredMessage = Stored<MessageDoc, 'data'>;
export type StoredInbox = Omit<InboxDoc, 'message'> & { message: Stored<DeliveredMessage, 'data'> };
export type StoredService = Omit<ServiceDoc, 'rules'> & { rules: Array<Stored<ServiceRule, 'schema'>> };

/**
 * A state table's stored text, refused (413, nothing written) when it would pass the fixed limit:
 * without one, PATCHes of new keys (or state_update messages) grew a table without bound.
 */
export function stateTableText(table: Record<string, unknown>): UserJsonText {
  const text = encodeUserJson(table);
  jsonBytesWithin(text, FIXED_LIMITS.stateTableBytes, (bytes) => `The state table would be ${bytes} bytes as JSON; the limit is ${FIXED_LIMITS.stateTableBytes} (remove keys with PUT, or keep less in it)`);
  return text;
}

export const decoded = <T>(v: T | UserJsonText): T => (typeof v === 'string' ? decodeUserJson<T>(v) : v);
export const messageOf = ({ data, ...m }: StoredMessage): MessageDoc => ({ ...m, data: decoded(data) });
/** The exported fields, `data` as its JSON text (an older native document's made into it). */
export const exportedOf = (m: Omit<StoredMessage, 'timestamp'>, timestamp: Date): ExportedMessage => ({
  _id: m._id, source: m.source, destination: m.destination, msgType: m.msgType, tags: m.tags, timestamp,
  data: typeof m.data === 'string' || m.data === undefined ? m.data : encodeUserJson(m.data),
});
export const inboxOf = ({ message: { data, ...message }, ...doc }: StoredInbox): InboxDoc => ({ ...doc, message: { ...message, data: decoded(data) } });
export const serviceOf = (s: StoredService | null): ServiceDoc | null => s && { ...s, rules: s.rules.map((r) => ({ name: r.name, schema: decoded(r.schema) })) };
export const encodedRules = (rules: ServiceRule[]) => rules.map((r) => ({ name: r.name, schema: encodeUserJson(r.schema) }));

