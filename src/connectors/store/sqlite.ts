/** The embedded store of connectors: `_id` is the connector id; every query carries the account. */
import { DocTable, SqliteDatabase } from '../../storage/sqlite';
import type { ConnectorRecord, ConnectorStore } from '../records';

type ConnectorDoc = Omit<ConnectorRecord, 'id'> & { _id: string };

const recordOf = ({ _id, ...rest }: ConnectorDoc): ConnectorRecord => ({ id: _id, ...rest });
const docOf = ({ id, ...rest }: ConnectorRecord): ConnectorDoc => ({ _id: id, ...rest });

export class SqliteConnectorStore implements ConnectorStore {
  private readonly connectors: DocTable<ConnectorDoc>;

  constructor(db: SqliteDatabase) {
    this.connectors = new DocTable(db, 'connectors');
  }

  async insert(c: ConnectorRecord): Promise<void> { this.connectors.insert(docOf(c)); }

  async find(accountId: string, id: string): Promise<ConnectorRecord | null> {
    const d = this.connectors.findOne('id = ? AND account_id = ?', [id, accountId]);
    return d && recordOf(d);
  }

  async list(accountId: string): Promise<ConnectorRecord[]> {
    return this.connectors.find('account_id = ?', [accountId], { order: 'created_at, id' }).map(recordOf);
  }

  async replace(c: ConnectorRecord): Promise<boolean> {
    let matched = false;
    this.connectors.update(c.id, (cur) => {
      if (cur.accountId !== c.accountId) return undefined;
      matched = true;
      return docOf(c);
    });
    return matched;
  }

  async remove(accountId: string, id: string): Promise<boolean> {
    return this.connectors.deleteWhere('id = ? AND account_id = ?', [id, accountId]) === 1;
  }
}
