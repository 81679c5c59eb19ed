/** Direct database access for tests that must set up or inspect state the API does not expose. */
import { Db, MongoClient } from 'mongodb';
import { stack } from './env';

export async function withDb<T>(fn: (db: Db) => Promise<T>): Promise<T> {
  const client = new MongoClient(`mongodb://127.0.0.1:${stack().mongoPort}/?maxPoolSize=1`);
  await client.connect();
  try {
    return await fn(client.db('sentinel'));
  } finally {
    await client.close();
  }
}
