/**
 * The MQTT transport's records (the signal log between processes, external-broker presence) and
 * the store interface both engines implement (store/sqlite.ts, store/mongo.ts).
 */
import type { DeviceIdentity } from './acl';
import type { DevicePresence } from './service';
import type { SignalLog } from './signals';

export type MqttSignal =
  | { kind: 'revoked'; apiKeyId: string }
  | { kind: 'queued'; accountId: string; dest: string; messageId: string }
  | { kind: 'state'; accountId: string; entityName: string; apiKeyId: string }
  | { kind: 'subscribed'; device: DeviceIdentity; topic: 'messages' | 'state' };

export interface SignalDoc { _id: string; at: Date; origin: string; signal: MqttSignal }

/** External-broker mode: the device subscribed to its messages topic, as far as we know until expiresAt. */
export interface PresenceDoc { _id: string; device: DeviceIdentity; subscribedAt: Date; expiresAt: Date }

export interface MqttStore extends SignalLog, DevicePresence {}
