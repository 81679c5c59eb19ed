/**
 * Service secrets: the entity-JWT signing secret and the data-encryption key for webhook
 * credentials. From the environment when set; in local mode (no MONGODB_URI) generated once into
 * DATA_DIR/secrets.json (mode 0600) so the CLI and restarts see the same values. A scaled-out
 * deployment (MONGODB_URI set) must set both explicitly, or replicas would disagree.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync, renameSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { Config, ConfigError, decodeKey } from './config';

export interface Secrets {
  entityKeySecret: Uint8Array;
  dataEncryptionKey: Buffer;
}

interface SecretsFile { entityKeySecret: string; dataEncryptionKey: string }

export function loadSecrets(config: Config): Secrets {
  if (config.entityKeySecret && config.dataEncryptionKey) {
    return {
      entityKeySecret: new TextEncoder().encode(config.entityKeySecret),
      dataEncryptionKey: decodeKey(config.dataEncryptionKey) as Buffer,
    };
  }
  if (config.mongodbUri !== undefined) {
    throw new ConfigError([
      'ENTITY_KEY_SECRET and DATA_ENCRYPTION_KEY must both be set when MONGODB_URI points at a shared database ' +
        '(every replica must sign and decrypt with the same keys); generate them with `openssl rand -hex 32`',
    ]);
  }
  const file = path.join(config.dataDir, 'secrets.json');
  let stored: SecretsFile;
  if (existsSync(file)) {
    stored = JSON.parse(readFileSync(file, 'utf8')) as SecretsFile;
  } else {
    mkdirSync(config.dataDir, { recursive: true });
    stored = { entityKeySecret: randomBytes(32).toString('hex'), dataEncryptionKey: randomBytes(32).toString('hex') };
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(stored), { mode: 0o600 });
    // A concurrent first start may have written it already; keep whichever landed first.
    if (existsSync(file)) {
      unlinkSync(tmp);
      stored = JSON.parse(readFileSync(file, 'utf8')) as SecretsFile;
    } else {
      renameSync(tmp, file);
    }
  }
  return {
    entityKeySecret: new TextEncoder().encode(config.entityKeySecret ?? stored.entityKeySecret),
    dataEncryptionKey: decodeKey(config.dataEncryptionKey ?? stored.dataEncryptionKey) as Buffer,
  };
}
