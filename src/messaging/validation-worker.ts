/**
 * One validation thread: runs a service's rules on a message (validation.ts) and answers with the
 * outcome. Compiled services are kept per thread by id and version. A thread that runs past the
 * message's budget or its heap is terminated by the pool; nothing here needs to clean up.
 */
import { CompiledCache, runRules } from './validation';
import type { ValidationReply, ValidationTask } from './validation-pool';
import { lowerThreadPriority } from '../thread-priority';
import { taskStarted } from '../fair-threads';

/** A long check yields a core to the main thread, which answers every other account. */
lowerThreadPriority(10);

const compiled = new CompiledCache(200);

export default function check(task: ValidationTask): ValidationReply {
  taskStarted(task);
  try {
    return { outcome: runRules(compiled.of({ _id: task.serviceId, version: task.version, rules: task.rules }), task.data) };
  } catch (err) {
    return { error: `validation thread failed: ${(err as Error).message}` };
  }
}
