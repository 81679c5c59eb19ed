/**
 * The MQTT transport's records (the signal log between processes, external-broker presence) and
 * the store interface both engines implement (store/sqlite.ts, store/mongo.ts).
 */
import type { DeviceIdentity } from './acl';

export type MqttSignal =
  | { kind: 'revoked'; apiKeyId: string }
  | { kind: 'permissions'; accountId: string }
  | { kind: 'queued'; accountId: string; dest: string; messageId: string }
  | { kind: 'state'; accountId: string; entityName: string; apiKeyId: string }
  | { kind: 'subscribed'; device: DeviceIdentity; topic: 'messages' | 'state' };

export interface SignalDoc { _id: string; at: Date; origin: string; signal: MqttSignal }

/** External-broker mode: the device subscribed to its messages topic, as far as we know until expiresAt. */
export interface PresenceDoc { _id: string; device: DeviceIdentity; subscribedAt: Date; expiresAt: Date }

/** External-broker mode: which device listens on its messages topic, until its presence expires. */
export interface DevicePresence {
  markSubscribed(device: DeviceIdentity, at: Date, ttlMs: number): Promise<void>;
  refreshPresence(device: DeviceIdentity, at: Date, ttlMs: number): Promise<void>;
  subscribedDevice(accountId: string, entityName: string, now: Date): Promise<DeviceIdentity | undefined>;
  dropPresence(filter: { apiKeyId: string }): Promise<void>;
}

/** The shared log of signals every process writes and MQTT processes poll (mqtt/records.ts). */
export interface SignalLog {
  addSignal(origin: string, signal: MqttSignal, at: Date): Promise<void>;
  /** Signals at or after `since`, oldest first. */
  signalsSince(since: Date, limit: number): Promise<SignalDoc[]>;
  sweepSignals(before: Date): Promise<void>;
}

export interface MqttStore extends SignalLog, DevicePresence {}
