/**
 * Every workflow the worker runs, bundled for Temporal's deterministic sandbox: only workflow
 * code and `import type` of activities may be reached from here.
 */
export { deferredScan, scanWebhook } from './scan';
export { fileTransfer, expireFiles } from './files';
export { flowRun, forEachRuns } from './flow';
