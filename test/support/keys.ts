/** The test stack's data-encryption key, for tests that open what the service sealed. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeKey } from '../../src/config';
import { stack } from './env';

export function stackDataKey(): Buffer {
  const file = JSON.parse(readFileSync(path.join(stack().dataDir, 'secrets.json'), 'utf8')) as { dataEncryptionKey: string };
  return decodeKey(file.dataEncryptionKey) as Buffer;
}
