/** The scan engines' settings are read by config.ts only (the engines take them as arguments). */
import path from 'node:path';
import { loadConfig, usesLocalBlobs, usesLocalMongo } from '../../../src/config';

describe('scan engine settings', () => {
  it('CLAMD_HOST / CLAMD_PORT: unset host means the local clamd; a bad port stops start-up naming it', () => {
    expect(loadConfig({ CLAMD_HOST: 'av', CLAMD_PORT: '3311' })).toMatchObject({ clamdHost: 'av', clamdPort: 3311 });
    expect(loadConfig({})).toMatchObject({ clamdHost: undefined, clamdPort: 3310 });
    expect(() => loadConfig({ CLAMD_PORT: 'x' })).toThrow(/CLAMD_PORT/);
  });
  it('ACTIVITY_HEARTBEAT_TIMEOUT_S: 60 s by default, in whole seconds, at least 15 (the activities beat every 5 s)', () => {
    expect(loadConfig({})).toMatchObject({ activityHeartbeatTimeoutMs: 60_000 });
    expect(loadConfig({ ACTIVITY_HEARTBEAT_TIMEOUT_S: '20' })).toMatchObject({ activityHeartbeatTimeoutMs: 20_000 });
    expect(() => loadConfig({ ACTIVITY_HEARTBEAT_TIMEOUT_S: '10' })).toThrow(/ACTIVITY_HEARTBEAT_TIMEOUT_S must be at least 15/);
    expect(() => loadConfig({ ACTIVITY_HEARTBEAT_TIMEOUT_S: '1.5' })).toThrow(/ACTIVITY_HEARTBEAT_TIMEOUT_S/);
  });

  it('YARA_RULES_DIR is made absolute', () => {
    expect(loadConfig({ YARA_RULES_DIR: 'my-rules' }).yaraRulesDir).toBe(path.resolve('my-rules'));
    expect(loadConfig({}).yaraRulesDir).toBeUndefined();
  });
});

describe('database engine', () => {
  it('embedded is the default without MONGODB_URI and starts no FerretDB; MONGODB_URI means MongoDB; a contradiction or an unknown engine stops start-up', () => {
    const embedded = loadConfig({});
    expect(embedded.databaseEngine).toBe('embedded');
    expect([usesLocalMongo(embedded), usesLocalBlobs(embedded)]).toEqual([false, false]);
    const remote = loadConfig({ MONGODB_URI: 'mongodb://db/' });
    expect(remote.databaseEngine).toBe('mongodb');
    expect([usesLocalMongo(remote), usesLocalBlobs(remote)]).toEqual([false, false]);
    const standIn = loadConfig({ DATABASE_ENGINE: 'mongodb' });
    expect([usesLocalMongo(standIn), usesLocalBlobs(standIn)]).toEqual([true, true]);
    expect(() => loadConfig({ DATABASE_ENGINE: 'embedded', MONGODB_URI: 'mongodb://db/' })).toThrow(/DATABASE_ENGINE=embedded and MONGODB_URI/);
    expect(() => loadConfig({ DATABASE_ENGINE: 'postgres' })).toThrow(/DATABASE_ENGINE="postgres" must be embedded or mongodb/);
  });
});
