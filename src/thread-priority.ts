import os from 'node:os';

/**
 * Makes the calling worker thread nicer than its process by `step` (on Linux, setPriority(0, n)
 * applies to the calling thread only). Bulk work on threads (scan engines, workflow expressions)
 * then yields a core to the main thread, which answers every other request, when both want one.
 */
export function lowerThreadPriority(step: number): void {
  try {
    os.setPriority(0, Math.min(19, os.getPriority(0) + step));
  } catch {
    // Not permitted here: the thread runs at the process's priority.
  }
}
