/** In-memory run queue and slot table behind RunAdmission, for unit tests of the admission rules. */
import { RunAdmission } from '../../../src/flows/admission';
import type { RunEngine } from '../../../src/flows/service';
import type { LineEntry, RunDoc, SlotDoc } from '../../../src/flows/records';
import { FINAL_STATUSES } from '../../../src/flows/schemas';
import { createLogger } from '../../../src/log';

export function memoryAdmission(runs: Map<string, RunDoc>, engine: RunEngine, now: () => Date) {
  const slots = new Map<string, SlotDoc>();
  /** The waiting line: run ids in arrival order, like the line collection. */
  const line = new Map<string, LineEntry>();
  const inLine = (accountId?: string) => [...line.values()].filter((e) => !accountId || e.accountId === accountId);
  const admission = new RunAdmission({
    engine, now, logger: createLogger('silent'),
    queue: {
      insert: async (run) => { runs.set(run._id, run); },
      enqueue: async (run) => {
        runs.set(run._id, run);
        line.set(run._id, { _id: run._id, accountId: run.accountId, queuedAt: run.queuedAt });
      },
      hasQueued: async (accountId) => inLine(accountId).length > 0,
      restoreLine: async () => {
        const lost = [...runs.values()].filter((r) => r.status === 'queued' && !line.has(r._id));
        for (const r of lost) line.set(r._id, { _id: r._id, accountId: r.accountId, queuedAt: r.queuedAt });
        return lost.length;
      },
      countQueued: async (accountId) => inLine(accountId).length,
      oldestQueued: async (accountId) => {
        for (const e of inLine(accountId).sort((a, b) => a.queuedAt.getTime() - b.queuedAt.getTime())) {
          if (runs.get(e._id)?.status === 'queued') return runs.get(e._id)!;
          line.delete(e._id);
        }
        return null;
      },
      accountsWithQueued: async () => [...new Set(inLine().map((e) => e.accountId))],
      claimQueued: async (runId, startedAt, deadline) => {
        line.delete(runId);
        const r = runs.get(runId);
        if (!r || r.status !== 'queued') return null;
        Object.assign(r, { status: 'running', startedAt, deadline });
        return r;
      },
      expireQueued: async (before, finishedAt, error, runId) => {
        const hit = [...runs.values()].filter((r) => r.status === 'queued' && r.queuedAt <= before && (!runId || r._id === runId));
        for (const r of hit) {
          Object.assign(r, { status: 'expired', finishedAt, error });
          line.delete(r._id);
        }
        return hit.length;
      },
      finish: async (runId, fields) => {
        const r = runs.get(runId);
        if (!r || FINAL_STATUSES.includes(r.status)) return false;
        Object.assign(r, fields);
        return true;
      },
      statuses: async (ids) => ids.flatMap((id) => (runs.has(id) ? [{ _id: id, status: runs.get(id)!.status }] : [])),
      unlaunched: async (before, at, limit) => [...runs.values()]
        .filter((r) => r.status === 'running' && r.temporal.runId === null && r.startedAt !== null && r.startedAt < before && r.deadline !== null && r.deadline > at)
        .slice(0, limit),
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
  return { admission, slots, line };
}
