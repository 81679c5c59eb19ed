/**
 * MongoDB access for the MQTT transport: the signal log that tells MQTT processes what another
 * process did (a key revoked, a message queued, a state table changed, a device subscribed through
 * an external broker), and device presence in external-broker mode.
 *
 * Why a polled collection: FerretDB (the local stack) has no change streams, and an API replica
 * that rotates a key or queues a message has no connection to the broker. Signals are tiny,
 * insert-only (inserts are exact on FerretDB across connections) and swept after SIGNAL_KEEP_MS (signals.ts).
 */
import { Collection, Db, ObjectId } from 'mongodb';
import { COLLECTIONS } from '../../storage/mongo';
import type { DeviceIdentity } from '../acl';
import type { MqttSignal, MqttStore, PresenceDoc, SignalDoc } from '../records';

const presenceId = (accountId: string, entityName: string): string => `${accountId}/${entityName}`;

export class MongoMqttStore implements MqttStore {
  private readonly signals: Collection<SignalDoc>;
  private readonly presence: Collection<PresenceDoc>;

  constructor(db: Db) {
    this.signals = db.collection<SignalDoc>(COLLECTIONS.mqttSignals);
    this.presence = db.collection<PresenceDoc>(COLLECTIONS.mqttPresence);
  }

  async addSignal(origin: string, signal: MqttSignal, at: Date): Promise<void> {
    await this.signals.insertOne({ _id: new ObjectId().toHexString(), at, origin, signal });
  }

  /** Signals at or after `since`, oldest first (callers overlap windows and de-duplicate by id). */
  signalsSince(since: Date, limit: number): Promise<SignalDoc[]> {
    return this.signals.find({ at: { $gte: since } }).sort({ at: 1, _id: 1 }).limit(limit).toArray();
  }

  async sweepSignals(before: Date): Promise<void> {
    await this.signals.deleteMany({ at: { $lt: before } });
  }

  async markSubscribed(device: DeviceIdentity, at: Date, ttlMs: number): Promise<void> {
    await this.presence.replaceOne(
      { _id: presenceId(device.accountId, device.entityName) },
      { device, subscribedAt: at, expiresAt: new Date(at.getTime() + ttlMs) },
      { upsert: true },
    );
  }

  async refreshPresence(device: DeviceIdentity, at: Date, ttlMs: number): Promise<void> {
    await this.presence.updateOne(
      { _id: presenceId(device.accountId, device.entityName), 'device.apiKeyId': device.apiKeyId },
      { $set: { expiresAt: new Date(at.getTime() + ttlMs) } },
    );
  }

  /** The subscribed device of an entity, if its presence has not expired. */
  async subscribedDevice(accountId: string, entityName: string, now: Date): Promise<DeviceIdentity | undefined> {
    const p = await this.presence.findOne({ _id: presenceId(accountId, entityName), expiresAt: { $gt: now } });
    return p?.device;
  }

  async dropPresence(filter: { apiKeyId: string } | { accountId: string; entityName: string }): Promise<void> {
    if ('apiKeyId' in filter) await this.presence.deleteMany({ 'device.apiKeyId': filter.apiKeyId });
    else await this.presence.deleteOne({ _id: presenceId(filter.accountId, filter.entityName) });
  }
}
