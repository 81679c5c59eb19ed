/**
 * User-controlled JSON (a device's `data`, a workflow definition's config, a run's input and
 * output) is stored as its JSON text, not as a native document: any MongoDB-wire backend then
 * takes it exactly as sent (keys with `$` or `.`, nested arrays, leading spaces) and it reads back
 * byte-for-byte equal. Fields that queries need are kept native beside it.
 */
export type UserJsonText = string;

export function encodeUserJson(value: unknown): UserJsonText {
  return JSON.stringify(value ?? null);
}

export function decodeUserJson<T = unknown>(text: UserJsonText | undefined | null): T {
  return (text === undefined || text === null ? null : JSON.parse(text)) as T;
}
