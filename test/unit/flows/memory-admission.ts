/** In-memory run queue and slot table behind RunAdmission, for unit tests of the admission rules. */
import { RunAdmission } from '../../../src/flows/admission';
import type { RunEngine } from '../../../src/flows/service';
import type { RunDoc, SlotDoc } from '../../../src/flows/store';
import { FINAL_STATUSES } from '../../../src/flows/schemas';
import { createLogger } from '../../../src/log';

export function memoryAdmission(runs: Map<string, RunDoc>, engine: RunEngine, now: () => Date) {
  const slots = new Map<string, SlotDoc>();
  const queued = (accountId?: string) => [...runs.values()].filter((r) => r.status === 'queued' && (!accountId || r.accountId === accountId));
  const admission = new RunAdmission({
    engine, now, logger: createLogger('silent'),
    queue: {
      countQueued: async (accountId) => queued(accountId).length,
      oldestQueued: async (accountId) => queued(accountId).sort((a, b) => a.queuedAt.getTime() - b.queuedAt.getTime())[0] ?? null,
      accountsWithQueued: async () => [...new Set(queued().map((r) => r.accountId))],
      claimQueued: async (runId, startedAt, deadline) => {
        const r = runs.get(runId);
        if (!r || r.status !== 'queued') return null;
        Object.assign(r, { status: 'running', startedAt, deadline });
        return r;
      },
      expireQueued: async (before, finishedAt, error, runId) => {
        const hit = queued().filter((r) => r.queuedAt <= before && (!runId || r._id === runId));
        for (const r of hit) Object.assign(r, { status: 'expired', finishedAt, error });
        return hit.length;
      },
      finish: async (runId, fields) => {
        const r = runs.get(runId);
        if (!r || FINAL_STATUSES.includes(r.status)) return false;
        Object.assign(r, fields);
        return true;
      },
      statuses: async (ids) => ids.flatMap((id) => (runs.has(id) ? [{ _id: id, status: runs.get(id)!.status }] : [])),
    },
    slots: {
      claim: async (accountId, runId, limit, at) => {
        if (slots.has(runId)) return false;
        const held = new Set([...slots.values()].filter((s) => s.accountId === accountId).map((s) => s.slot));
        for (let slot = 0; slot < limit; slot++) {
          if (!held.has(slot)) {
            slots.set(runId, { _id: runId, accountId, slot, claimedAt: at });
            return true;
          }
        }
        return false;
      },
      release: async (runId) => {
        const s = slots.get(runId);
        slots.delete(runId);
        return s?.accountId;
      },
      all: async () => [...slots.values()],
      count: async (accountId) => [...slots.values()].filter((s) => s.accountId === accountId).length,
    },
  });
  return { admission, slots };
}
