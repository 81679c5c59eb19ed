/** Registers every capability's routes on one registry. */
import type { Services } from '../services';
import type { RouteRegistry } from './route';
import { registerAccountRoutes } from '../accounts/routes';
import { registerFileRoutes } from '../files/routes';
import { registerMessagingRoutes } from '../messaging/routes';
import { registerMqttAuthRoutes } from '../mqtt/routes';
import { registerScanRoutes } from '../scan/routes';

export function registerAllRoutes(r: RouteRegistry, s: Services): void {
  registerAccountRoutes(r, s);
  // Before messaging: GET /api/entities/files must win over GET /api/entities/:name.
  registerFileRoutes(r, s);
  registerMessagingRoutes(r, s);
  registerMqttAuthRoutes(r, s);
  registerScanRoutes(r, s);
}
