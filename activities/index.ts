/**
 * Temporal activities: the side effects workflows ask for. Built from the process's services so
 * an activity calls the same rules as HTTP and MQTT.
 */
import type { Services } from '../src/services';
import { createScanActivities } from './scan';
import { createFileActivities } from './files';
import { createFlowActivities } from './flows';

export type ActivityDeps = Services;

export function createActivities(deps: ActivityDeps) {
  return {
    ...createScanActivities(deps.scans),
    ...createFileActivities(deps.files),
    ...createFlowActivities(deps.nodeRunner),
  };
}

export type Activities = ReturnType<typeof createActivities>;
