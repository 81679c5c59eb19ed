/**
 * How long a deferred scan's or a file transfer's activity may go without a heartbeat before
 * Temporal retries it on another worker, when the workflow's input does not say
 * (ACTIVITY_HEARTBEAT_TIMEOUT_S, src/config.ts, defaults to the same; a workflow started before
 * the setting existed carries none). The activities beat every 5 s.
 */
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 60_000;
