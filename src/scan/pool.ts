/**
 * Runs the CPU-bound engines (registry rows with `thread: 'pool'`) on worker threads.
 *
 * Why: those engines are synchronous JavaScript. On the main thread a 10 MB payload kept the event
 * loop busy for seconds, stalling every other HTTP request and MQTT client of the process, and a
 * budget could not be enforced because the timer only fired after the work was done. On a worker
 * the event loop stays free, and when the runner's budget runs out it aborts the task: piscina
 * terminates the thread mid-run and starts a fresh one.
 *
 * Small content stays on the main thread (below `minBytes`): posting it to a thread costs more
 * than analysing it, and its worst case is a few milliseconds.
 *
 * A PE or ELF is parsed once: before the first pooled engine that reads the parse (registry
 * `sharesParse`) runs on it, one 'prepare' task computes the file's FileAnalysis facts on a thread,
 * and every such engine's task carries them, so no thread parses the file again.
 */
import path from 'node:path';
import { Piscina } from 'piscina';
import { EngineTimeoutError, EngineUnavailableError } from './runner';
import type { EngineSlot, RegistryRow } from './registry';
import { SHARED_PARSE_TYPES, type FileAnalysis, type FileFacts } from './file-analysis';
import type { Engine, EngineOutput, ScanSubject } from './types';

/** What a pool thread needs to build its own copies of the engines; must survive structured clone. */
export interface PoolEngineDeps {
  cveDatasetPath?: string;
  yaraRuleDirs?: string[];
}

export type PoolTask =
  | {
    kind: 'engine';
    engine: string;
    subject: Omit<ScanSubject, 'content' | 'file'> & { content: SharedArrayBuffer };
    /** What is already known of the file: from identification, and its 'prepare' task for engines that read the parse. */
    facts: FileFacts;
    budgetMs: number;
  }
  | { kind: 'prepare'; content: SharedArrayBuffer }
  | { kind: 'ping' };

export type PoolReply = { output: EngineOutput } | { facts: FileFacts } | { error: { name: string; message: string } };

export interface EnginePoolOptions {
  /** Worker threads; 0 = run every engine on the main thread. */
  threads: number;
  /** Content smaller than this runs on the main thread. */
  minBytes: number;
  deps: PoolEngineDeps;
}

export class EnginePool {
  private readonly piscina: Piscina;
  /** One shared copy of each subject's content, however many pooled engines read it. */
  private readonly shared = new WeakMap<Buffer, SharedArrayBuffer>();
  /** One 'prepare' task per file, however many pooled engines read its facts. */
  private readonly prepared = new WeakMap<FileAnalysis, Promise<FileFacts | undefined>>();

  constructor(private readonly options: EnginePoolOptions) {
    this.piscina = new Piscina({
      // A plain-JS entry that registers tsx, so the thread can load the TypeScript engines.
      filename: path.join(__dirname, 'pool-entry.js'),
      workerData: options.deps,
      minThreads: options.threads,
      maxThreads: options.threads,
      // The threads stay up: a new one must load the engine modules again (about 150 ms here).
      idleTimeout: Number.POSITIVE_INFINITY,
      recordTiming: false,
    });
  }

  get threads(): number {
    return this.options.threads;
  }

  /** Ids of the live threads; a thread ended for overrunning its budget is replaced by a new id. */
  threadIds(): number[] {
    return this.piscina.threads.map((t) => t.threadId);
  }

  /** The slots with every pooled engine replaced by a proxy that runs it on a thread. */
  wrap(slots: EngineSlot[]): EngineSlot[] {
    return slots.map((slot) => (slot.row.thread === 'pool' ? { row: slot.row, engine: this.proxy(slot.engine, slot.row) } : slot));
  }

  private sharedContent(content: Buffer): SharedArrayBuffer {
    // Already in shared memory (a deferred scan's upload, see ScanStore.readUpload): no copy.
    if (content.buffer instanceof SharedArrayBuffer && content.byteOffset === 0 && content.length === content.buffer.byteLength) return content.buffer;
    let sab = this.shared.get(content);
    if (!sab) {
      sab = new SharedArrayBuffer(content.length);
      new Uint8Array(sab).set(content);
      this.shared.set(content, sab);
    }
    return sab;
  }

  /**
   * The file's facts, computed once on a thread. The work is bounded by the parsers' and the
   * string pass's own limits, so it is not cut by any one engine's budget; a failure leaves each
   * engine to compute what it reads itself.
   */
  private facts(file: FileAnalysis): Promise<FileFacts | undefined> {
    let facts = this.prepared.get(file);
    if (!facts) {
      const task: PoolTask = { kind: 'prepare', content: this.sharedContent(file.content) };
      facts = this.piscina.run(task).then((reply: PoolReply) => ('facts' in reply ? reply.facts : undefined), () => undefined);
      this.prepared.set(file, facts);
    }
    return facts;
  }

  private proxy(inline: Engine, row: RegistryRow): Engine {
    return {
      name: inline.name,
      scan: async (subject, ctx) => {
        if (subject.content.length < this.options.minBytes) return inline.scan(subject, ctx);
        const { file, ...rest } = subject;
        const prepared = row.sharesParse && SHARED_PARSE_TYPES.has(subject.fileType) ? await this.facts(file) : undefined;
        const task: PoolTask = {
          kind: 'engine',
          engine: inline.name,
          subject: { ...rest, content: this.sharedContent(subject.content) },
          facts: { ...file.known(), ...prepared },
          budgetMs: ctx.budgetMs,
        };
        // Aborting a running task terminates its thread; the runner has already recorded 'timeout'.
        const reply = (await this.piscina.run(task, { signal: ctx.signal })) as PoolReply;
        if ('facts' in reply) throw new Error(`engine "${inline.name}" answered with facts`);
        if ('error' in reply) {
          // Keep the error class across the thread boundary: the runner's status depends on it.
          const { name, message } = reply.error;
          throw name === 'EngineUnavailableError' ? new EngineUnavailableError(message) : name === 'EngineTimeoutError' ? new EngineTimeoutError(message) : new Error(message);
        }
        return reply.output;
      },
    };
  }

  /** Resolves once every thread has started and loaded the engines (start-up, health). */
  async warm(): Promise<void> {
    const probe: PoolTask = { kind: 'ping' };
    await Promise.all(Array.from({ length: this.options.threads }, () => this.piscina.run(probe)));
  }

  async close(): Promise<void> {
    await this.piscina.destroy();
  }
}
