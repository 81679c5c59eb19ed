/**
 * /healthz and the start-up check: every part this process depends on (its database, blobs,
 * Temporal, its worker, MQTT) asked at once, each given a few seconds, the whole `ok` only when
 * every part answers.
 */
export interface HealthReport { status: 'ok' | 'degraded'; parts: Record<string, { ok: boolean; detail?: string }> }

/** How long /healthz waits for one part (MongoDB, Temporal, ...) before reporting it down. */
export const HEALTH_PART_TIMEOUT_MS = 5_000;

/** One part: its name in the report and a probe that throws, saying why, when the part is down. */
export interface HealthPart {
  name: string;
  probe(): Promise<void>;
  /**
   * Reported, but its failure leaves the status `ok`: the service works without it, less well
   * (clamd: scans go on with the other engines and say ClamAV is missing).
   */
  optional?: boolean;
}

export function healthCheck(parts: () => HealthPart[]): () => Promise<HealthReport> {
  return async () => {
    const report: HealthReport['parts'] = {};
    const list = parts();
    await Promise.all(list.map(async ({ name, probe }) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        // A part that does not answer (a Temporal server that is gone retries its connection
        // for about 20 s) is reported down in time for a load balancer's probe.
        await Promise.race([probe(), new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${HEALTH_PART_TIMEOUT_MS / 1000} s`)), HEALTH_PART_TIMEOUT_MS);
        })]);
        report[name] = { ok: true };
      } catch (err) {
        report[name] = { ok: false, detail: err instanceof Error ? err.message : String(err) };
      } finally {
        clearTimeout(timer);
      }
    }));
    const optional = new Set(list.filter((p) => p.optional).map((p) => p.name));
    const ok = Object.entries(report).every(([name, p]) => p.ok || optional.has(name));
    return { status: ok ? 'ok' : 'degraded', parts: report };
  };
}
