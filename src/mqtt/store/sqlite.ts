/** The embedded store of the MQTT transport: the signal log between processes and external-broker presence. */
import { DocTable, SqliteDatabase } from '../../storage/sqlite';
import { newTimeOrderedId } from '../../storage/ids';
import type { DeviceIdentity } from '../acl';
import type { MqttSignal, MqttStore, PresenceDoc, SignalDoc } from '../records';

const presenceId = (accountId: string, entityName: string): string => `${accountId}/${entityName}`;

export class SqliteMqttStore implements MqttStore {
  private readonly signals: DocTable<SignalDoc>;
  private readonly presence: DocTable<PresenceDoc>;

  constructor(db: SqliteDatabase) {
    this.signals = new DocTable(db, 'mqtt_signals');
    this.presence = new DocTable(db, 'mqtt_presence');
  }

  async addSignal(origin: string, signal: MqttSignal, at: Date): Promise<void> {
    this.signals.insert({ _id: newTimeOrderedId(), at, origin, signal });
  }

  async signalsSince(since: Date, limit: number): Promise<SignalDoc[]> {
    return this.signals.find('at >= ?', [since.getTime()], { order: 'at, id', limit });
  }

  async sweepSignals(before: Date): Promise<void> {
    this.signals.deleteWhere('at < ?', [before.getTime()]);
  }

  async markSubscribed(device: DeviceIdentity, at: Date, ttlMs: number): Promise<void> {
    this.presence.put({ _id: presenceId(device.accountId, device.entityName), device, subscribedAt: at, expiresAt: new Date(at.getTime() + ttlMs) });
  }

  async refreshPresence(device: DeviceIdentity, at: Date, ttlMs: number): Promise<void> {
    this.presence.update(presenceId(device.accountId, device.entityName), (p) => (
      p.device.apiKeyId === device.apiKeyId ? { ...p, expiresAt: new Date(at.getTime() + ttlMs) } : undefined
    ));
  }

  async subscribedDevice(accountId: string, entityName: string, now: Date): Promise<DeviceIdentity | undefined> {
    const p = this.presence.get(presenceId(accountId, entityName));
    return p && p.expiresAt > now ? p.device : undefined;
  }

  async dropPresence(filter: { apiKeyId: string } | { accountId: string; entityName: string }): Promise<void> {
    if ('apiKeyId' in filter) this.presence.deleteWhere('api_key_id = ?', [filter.apiKeyId]);
    else this.presence.delete(presenceId(filter.accountId, filter.entityName));
  }
}
