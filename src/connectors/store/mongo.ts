/** MongoDB access for connectors: `_id` is the connector id; queries always carry the account. */
import type { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '../../storage/mongo';
import type { ConnectorRecord, ConnectorStore } from '../records';

type ConnectorDoc = Omit<ConnectorRecord, 'id'> & { _id: string };

const recordOf = ({ _id, ...rest }: ConnectorDoc): ConnectorRecord => ({ id: _id, ...rest });

export class MongoConnectorStore implements ConnectorStore {
  private readonly col: Collection<ConnectorDoc>;

  constructor(db: Db) {
    this.col = db.collection<ConnectorDoc>(COLLECTIONS.connectors);
  }

  async insert(c: ConnectorRecord): Promise<void> {
    const { id, ...rest } = c;
    await this.col.insertOne({ _id: id, ...rest });
  }

  async find(accountId: string, id: string): Promise<ConnectorRecord | null> {
    const d = await this.col.findOne({ _id: id, accountId });
    return d ? recordOf(d) : null;
  }

  async list(accountId: string): Promise<ConnectorRecord[]> {
    return (await this.col.find({ accountId }).sort({ createdAt: 1, _id: 1 }).toArray()).map(recordOf);
  }

  async replace(c: ConnectorRecord): Promise<boolean> {
    const { id, ...rest } = c;
    return (await this.col.replaceOne({ _id: id, accountId: c.accountId }, rest)).matchedCount === 1;
  }

  async remove(accountId: string, id: string): Promise<boolean> {
    return (await this.col.deleteOne({ _id: id, accountId })).deletedCount === 1;
  }
}
