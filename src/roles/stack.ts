/**
 * The DATA_DIR's local stack: which parts this process must start (those whose address is not
 * configured), the lock that makes one full start per DATA_DIR, and the parts' start. A process
 * beside the holder that needs only clamd shares the holder's; any other second start refuses,
 * naming the running service.
 */
import path from 'node:path';
import { Config, usesLocalBlobs, usesLocalMongo, usesLocalTemporal } from '../config';
import type { Logger } from '../log';
import { startLocalStack, LocalStack, type LocalStackOptions } from '../stack';
import { inUseMessage, takeStackLock } from '../stack/lock';

export interface DataDirClaim {
  /** Releases the lock; absent when this process does not hold it. */
  release?: () => Promise<void>;
  /** Starts the parts this process owns; undefined when it holds no lock. `onExit`: a started part died. */
  startStack(onExit?: LocalStackOptions['onExit']): Promise<LocalStack | undefined>;
}

/** Taken before anything binds a port. */
export function claimDataDir(config: Config, logger: Logger): DataDirClaim {
  const scans = config.roles.includes('api') || config.roles.includes('worker');
  const startMongo = usesLocalMongo(config);
  const startBlobs = usesLocalBlobs(config);
  const startTemporal = scans && usesLocalTemporal(config);
  const startClamd = config.clamdHost === undefined && scans;
  const lock = startMongo || startBlobs || startTemporal || startClamd ? takeStackLock(config.dataDir) : undefined;
  if (!lock) return { startStack: async () => undefined };
  if ('holder' in lock) {
    // Another service runs this DATA_DIR's stack: a full start refuses; a process that only
    // needs clamd beside it (ROLES=api with TEMPORAL_ADDRESS) uses the holder's, or scans
    // without ClamAV as the holder does when it has none.
    if (startMongo || startBlobs || startTemporal) throw new Error(inUseMessage(config.dataDir, lock.holder));
    if (lock.holder.clamd) {
      config.clamdHost = lock.holder.clamd.host;
      config.clamdPort = lock.holder.clamd.port;
    }
    logger.info({ pid: lock.holder.pid, clamd: lock.holder.clamd }, 'sharing the local stack of the service that holds DATA_DIR');
    return { startStack: async () => undefined };
  }
  return {
    release: async () => lock.held.release(),
    startStack: async (onExit) => {
      const s = await startLocalStack({
        onExit,
        rootDir: config.rootDir,
        dataDir: config.dataDir,
        mongo: startMongo ? { port: config.mongoPort } : false,
        blobs: startBlobs ? { port: config.mongoBlobPort } : false,
        temporal: startTemporal ? { port: config.temporalPort, uiPort: config.temporalUiPort, namespace: config.temporalNamespace } : false,
        clamd: startClamd ? { port: config.clamdPort, signatureDirs: [path.join(config.rootDir, 'signatures', 'clamav')] } : false,
        logger: logger.child({ component: 'local-stack' }),
      });
      if (startClamd && s.clamdAddress) {
        config.clamdHost = s.clamdAddress.host;
        config.clamdPort = s.clamdAddress.port;
      }
      lock.held.publish({ temporalAddress: s.temporalAddress, clamd: s.clamdAddress, mongoUri: s.mongoUri, blobsUri: s.blobsUri });
      return s;
    },
  };
}
