/**
 * One expression thread: evaluates a JSONata expression or resolves a node config's templates
 * (expression-core.ts) and answers with plain JSON, or with the error's text. A thread that runs
 * past its task's time or heap is terminated by the pool; nothing here needs to clean up.
 */
import { ExpressionError, evaluateExpression, resolveTemplates } from './expressions';
import type { ExpressionReply, ExpressionTask } from './expression-pool';
import { lowerThreadPriority } from '../thread-priority';
import { taskStarted } from '../fair-threads';

/** A spinning expression yields a core to the main thread, which answers every other account. */
lowerThreadPriority(10);

export default async function runTask(task: ExpressionTask): Promise<ExpressionReply> {
  taskStarted(task);
  try {
    const value = task.kind === 'evaluate'
      ? await evaluateExpression(task.expression, task.context, task.timeoutMs)
      : await resolveTemplates(task.value, task.context, task.timeoutMs, task.options);
    return { value };
  } catch (err) {
    // Only expression failures are the user's; anything else is a bug worth its real message.
    return err instanceof ExpressionError ? { error: err.message } : { error: `expression thread failed: ${(err as Error).message}` };
  }
}
