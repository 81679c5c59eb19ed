/**
 * Admission of workflow runs (docs/contract.md §7 "Limits and admission"): a run starts at once
 * while its account holds fewer slots than its plan's concurrent runs and nobody of the account
 * waits; otherwise it waits `queued` and is promoted in FIFO order. Slots and the waiting line
 * live in MongoDB, so API replicas and workers agree: a slot is a document per running run whose
 * number is unique per account; the waiting line is a small collection of one entry per queued
 * run (so the common case never scans the run records), and a queued run is moved to `running`
 * by a conditional update on its `_id`, so two promoters never start one run.
 * Slots free when a run's record turns final (the worker's last write, the sweeper's settling of
 * a run whose worker died, a cancel); each release promotes the account's next queued runs, and
 * the worker's promoter pass picks up whatever a crashed process left behind.
 */
import { FIXED_LIMITS } from '../accounts/plans';
import { QueueFullError } from '../errors';
import type { Logger } from '../log';
import { decodeUserJson } from '../storage/user-json';
import { RUN_TIMEOUT_MS } from './limits';
import type { EdgeDef, NodeDef, RunStatus } from './schemas';
import type { RunDoc, RunQueue, SlotTable } from './records';
import type { RunEngine } from './engine';

export const QUEUE_EXPIRED_ERROR = 'The run waited in the queue for over an hour and expired';
/** Retry-After of a full queue: about when a slot of a short run frees. */
const QUEUE_FULL_RETRY_SECONDS = 60;
/** A slot claimed this long ago whose run is still queued was left by a promoter that died. */
const ORPHAN_SLOT_MS = 60_000;
/** Counting every queued run scans on some servers; a second-old total bounds the queue well enough. */
const TOTAL_COUNT_TTL_MS = 1_000;
/** A `running` record this old whose execution never reported is looked up in the engine. */
const RELAUNCH_AFTER_MS = 60_000;


/** The month's run a manual start takes, given back when the run is refused before it is recorded. */
export interface RunReservation {
  /** Throws (403) when the month's runs are used up. */
  reserve(): Promise<void>;
  release(): Promise<void>;
}


export class RunAdmission {
  constructor(private readonly deps: {
    queue: RunQueue;
    slots: SlotTable;
    engine?: RunEngine;
    logger: Logger;
    now?: () => Date;
  }) {}

  private now(): Date {
    return this.deps.now ? this.deps.now() : new Date();
  }

  private total?: { at: number; queued: number };

  /** The whole queue's size, counted at most once per second per process (a bound, not an exact count). */
  private async totalQueued(): Promise<number> {
    const at = this.now().getTime();
    if (this.total && at - this.total.at < TOTAL_COUNT_TTL_MS) return this.total.queued;
    const queued = await this.deps.queue.countQueued();
    this.total = { at, queued };
    return queued;
  }

  /** Refuses a new run while the account's queue (500) or the whole queue (10,000) is full. */
  async checkRoom(accountId: string): Promise<void> {
    const [mine, total] = await Promise.all([this.deps.queue.countQueued(accountId), this.totalQueued()]);
    if (mine >= FIXED_LIMITS.workflowQueuedPerAccount || total >= FIXED_LIMITS.workflowQueuedTotal) throw new QueueFullError(QUEUE_FULL_RETRY_SECONDS);
  }

  /**
   * Admits a new run: when the account has a free slot and nobody waiting, the run is recorded
   * `running` and started at once, without touching the queue; otherwise it is recorded `queued`
   * (503 when the line is full) and the account's line promoted. The record is written before the
   * engine hears of the run, so a run it knows has a record. Building the record (the caller's
   * reads and checks), the look at the line, the slot and the month's run are independent: one
   * wait for all four. When any refuses, what the others took is given back; the record's refusal
   * (no such workflow, bad input, no compute left) is the one reported first.
   */
  async admit(ticket: { runId: string; accountId: string; slotLimit: number }, record: () => Promise<RunDoc>, monthRun?: RunReservation): Promise<RunStatus> {
    if (!this.deps.engine) throw new Error('starting workflow runs needs a Temporal client in this process');
    const now = this.now();
    const [built, reserved, waiting, slot] = await Promise.allSettled([
      record(),
      monthRun?.reserve(),
      this.deps.queue.hasQueued(ticket.accountId),
      this.deps.slots.claim(ticket.accountId, ticket.runId, ticket.slotLimit, now),
    ]);
    const failed = [built, reserved, waiting, slot].find((r) => r.status === 'rejected');
    if (failed) {
      if (monthRun && reserved.status === 'fulfilled') await monthRun.release();
      // A run of the account may have been queued for want of the slot held here meanwhile.
      if (slot.status === 'fulfilled' && slot.value) await this.ended(ticket.runId);
      throw failed.reason;
    }
    try {
      return await this.place((built as PromiseFulfilledResult<RunDoc>).value, now, (waiting as PromiseFulfilledResult<boolean>).value, (slot as PromiseFulfilledResult<boolean>).value);
    } catch (err) {
      // Refused before it was recorded (a full queue): the month's run was not used.
      if (monthRun && err instanceof QueueFullError) await monthRun.release();
      throw err;
    }
  }

  private async place(run: RunDoc, now: Date, waiting: boolean, slot: boolean): Promise<RunStatus> {
    if (slot && !waiting) {
      const running: RunDoc = { ...run, status: 'running', startedAt: now, deadline: new Date(now.getTime() + RUN_TIMEOUT_MS) };
      await this.deps.queue.insert(running);
      // The record (status `running`, slot held) is the durable promise: the caller is answered
      // now and the engine hears of the run in the background. A start that fails marks the run
      // failed; one lost with its process is started again by the worker's sweeper (`relaunch`).
      this.launchInBackground(running);
      return 'running';
    }
    // Somebody waits (first come, first started) or every slot is held.
    if (slot) await this.deps.slots.release(run._id);
    await this.checkRoom(run.accountId);
    await this.deps.queue.enqueue(run);
    if ((await this.promote(run.accountId)).includes(run._id)) return 'running';
    const [current] = await this.deps.queue.statuses([run._id]);
    if (current?.status === 'failed') throw new Error('The run could not be started');
    return current?.status ?? 'queued';
  }

  /** Launches of this process still talking to the engine, by run id. */
  private readonly launching = new Map<string, Promise<boolean>>();

  private launchInBackground(run: RunDoc): void {
    const p = this.launch(run).catch((err: unknown) => {
      this.deps.logger.error({ err, runId: run._id }, 'a run launch failed');
      return false;
    }).finally(() => this.launching.delete(run._id));
    this.launching.set(run._id, p);
  }

  /** Waits for this process's launch of the run, if one is under way (a cancel waits for it). */
  async launched(runId: string): Promise<void> {
    await this.launching.get(runId);
  }

  /**
   * Waits for the launches under way (before the process closes its engine client), for at most
   * `timeoutMs`: a Temporal that does not answer must not keep the process from stopping. A launch
   * cut short is started again by the worker's sweeper (`relaunch`), since its record stays `running`.
   */
  async drain(timeoutMs = 10_000): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs); });
    const all = (async () => {
      while (this.launching.size) await Promise.all([...this.launching.values()]);
      return true as const;
    })();
    try {
      const done = await Promise.race([all, expired]);
      if (!done) this.deps.logger.warn({ launches: this.launching.size }, 'stopping with run launches still waiting for Temporal; the sweeper starts them again');
      return done;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Hands a `running` run (slot held) to the engine; on failure the run fails and frees its slot.
   * A run cancelled while its start was on the way (by another process, which found no execution
   * to cancel yet) is cancelled in the engine as soon as the start returns.
   */
  private async launch(run: RunDoc): Promise<boolean> {
    const graph = decodeUserJson<{ nodes: NodeDef[]; edges: EdgeDef[] }>(run.graph ?? '{"nodes":[],"edges":[]}');
    const engine = this.deps.engine!;
    try {
      await engine.start({
        runId: run._id, accountId: run.accountId, flowId: run.workflowId, flowName: run.workflowName, trigger: run.trigger.type,
        nodes: graph.nodes, edges: graph.edges, deadline: (run.deadline as Date).getTime(),
      });
    } catch (err) {
      this.deps.logger.error({ err, runId: run._id }, 'a run could not be started');
      await this.deps.queue.finish(run._id, { status: 'failed', error: 'The run could not be started', finishedAt: this.now() });
      await this.deps.slots.release(run._id);
      return false;
    }
    // Started: whatever goes wrong from here, the record must not say otherwise.
    try {
      const [current] = await this.deps.queue.statuses([run._id]);
      if (current?.status === 'cancelled') await engine.cancel(run._id);
    } catch (err) {
      this.deps.logger.warn({ err, runId: run._id }, 'a started run could not be checked for a cancel made meanwhile');
    }
    return true;
  }

  /**
   * Starts the account's queued runs, oldest first, while it has free slots. Runs that waited
   * past an hour expire instead. Returns the ids started here.
   */
  async promote(accountId: string): Promise<string[]> {
    if (!this.deps.engine) return [];
    const started: string[] = [];
    for (;;) {
      const next = await this.deps.queue.oldestQueued(accountId);
      if (!next) return started;
      const now = this.now();
      if (next.queuedAt.getTime() <= now.getTime() - FIXED_LIMITS.workflowQueueWaitMs) {
        await this.deps.queue.expireQueued(next.queuedAt, now, QUEUE_EXPIRED_ERROR, next._id);
        continue;
      }
      if (!(await this.deps.slots.claim(accountId, next._id, next.slotLimit ?? 1, now))) return started;
      const run = await this.deps.queue.claimQueued(next._id, now, new Date(now.getTime() + RUN_TIMEOUT_MS));
      if (!run) {
        // Another promoter started (or a cancel ended) it between our read and claim.
        await this.deps.slots.release(next._id);
        continue;
      }
      if (await this.launch(run)) started.push(run._id);
    }
  }

  /** A run's record turned final: its slot frees and the account's next queued run starts. */
  async ended(runId: string): Promise<void> {
    const accountId = await this.deps.slots.release(runId);
    if (accountId) await this.promote(accountId);
  }

  /**
   * The worker's periodic pass: expires runs queued for over an hour, frees slots whose run is
   * over (its process died after the final write) or never started (its promoter died), and
   * promotes every account with queued runs, so the queue outlives a restart of every process.
   */
  async pass(): Promise<{ expired: number; freed: number; started: number }> {
    const now = this.now();
    const expired = await this.deps.queue.expireQueued(new Date(now.getTime() - FIXED_LIMITS.workflowQueueWaitMs), now, QUEUE_EXPIRED_ERROR);
    await this.deps.queue.restoreLine();
    const slots = await this.deps.slots.all(10_000);
    const status = new Map((await this.deps.queue.statuses(slots.map((s) => s._id))).map((r) => [r._id, r.status]));
    let freed = 0;
    for (const slot of slots) {
      const s = status.get(slot._id);
      // A slot is claimed a moment before its run's record is written, so a slot without a
      // record (or with a run still queued) is an orphan only once it is old.
      const orphan = (s === undefined || s === 'queued') && now.getTime() - slot.claimedAt.getTime() > ORPHAN_SLOT_MS;
      if (orphan || (s !== undefined && s !== 'running' && s !== 'queued')) {
        await this.deps.slots.release(slot._id);
        freed++;
      }
    }
    let started = 0;
    for (const accountId of await this.deps.queue.accountsWithQueued()) started += (await this.promote(accountId)).length;
    return { expired, freed, started };
  }

  /**
   * Starts again the runs whose launch was lost (its process died between writing the record and
   * the engine's answer): a `running` record older than a minute with no execution in the engine.
   * The workflow id is the run's, so an execution that does exist is never started twice.
   */
  async relaunch(limit = 100): Promise<number> {
    const engine = this.deps.engine;
    if (!engine) return 0;
    const now = this.now();
    let started = 0;
    for (const run of await this.deps.queue.unlaunched(new Date(now.getTime() - RELAUNCH_AFTER_MS), now, limit)) {
      if (this.launching.has(run._id) || (await engine.outcome(run._id)) !== 'missing') continue;
      this.deps.logger.warn({ runId: run._id }, 'a run whose launch was lost is started again');
      if (await this.launch(run)) started++;
    }
    return started;
  }

  /**
   * The queue and slot gauges of GET /metrics (read at each scrape): the whole queue, the longest
   * account queue (against the 500 per account, without naming the account) and held slots.
   */
  async gauges(): Promise<{ queued: number; deepestAccountQueue: number; slotsHeld: number }> {
    const [queued, accounts, slots] = await Promise.all([
      this.deps.queue.countQueued(), this.deps.queue.accountsWithQueued(), this.deps.slots.all(FIXED_LIMITS.workflowQueuedTotal),
    ]);
    const perAccount = await Promise.all(accounts.map((a) => this.deps.queue.countQueued(a)));
    return { queued, deepestAccountQueue: Math.max(0, ...perAccount), slotsHeld: slots.length };
  }

  /** Queued and running now, for the usage answer. */
  async occupancy(accountId: string): Promise<{ queued: number; running: number }> {
    const [queued, running] = await Promise.all([this.deps.queue.countQueued(accountId), this.deps.slots.count(accountId)]);
    return { queued, running };
  }
}
