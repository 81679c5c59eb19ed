/** Registers every capability's routes on one registry. */
import type { Services } from '../services';
import type { RouteRegistry } from './route';
import { registerAccountRoutes } from '../accounts/routes';
import { registerMessagingRoutes } from '../messaging/routes';
import { registerMqttAuthRoutes } from '../mqtt/routes';
import { registerScanRoutes } from '../scan/routes';
import { registerFlowRoutes } from '../flows/routes';

export function registerAllRoutes(r: RouteRegistry, s: Services): void {
  registerAccountRoutes(r, s);
  registerMessagingRoutes(r, s);
  registerMqttAuthRoutes(r, s);
  registerScanRoutes(r, s);
  registerFlowRoutes(r, s);
}
