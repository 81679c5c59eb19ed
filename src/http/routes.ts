/** Registers every capability's routes on one registry. */
import type { Services } from '../services';
import type { RouteRegistry } from './route';
import { registerAccountRoutes } from '../accounts/routes';
import { registerEntityRoutes } from '../entities/routes';
import { registerFileRoutes } from '../files/routes';
import { registerMessagingRoutes } from '../messaging/routes';
import { registerMqttAuthRoutes } from '../mqtt/routes';
import { registerScanRoutes } from '../scan/routes';
import { registerVaultRoutes } from '../vault/routes';
import { registerConnectorRoutes } from '../connectors/routes';
import { registerFlowRoutes } from '../flows/routes';

export function registerAllRoutes(r: RouteRegistry, s: Services): void {
  registerAccountRoutes(r, s);
  // Before messaging: GET /api/entities/files must win over GET /api/entities/:name.
  registerFileRoutes(r, s);
  registerMessagingRoutes(r, s);
  // After messaging: its fixed /api/entities/... paths must match before /api/entities/:name.
  registerEntityRoutes(r, s);
  registerMqttAuthRoutes(r, s.mqtt);
  registerScanRoutes(r, s);
  registerVaultRoutes(r, s);
  registerConnectorRoutes(r, s);
  registerFlowRoutes(r, s);
}
