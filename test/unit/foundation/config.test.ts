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

  it('YARA_RULES_DIR is made absolute and must be an existing directory', () => {
    expect(loadConfig({ YARA_RULES_DIR: 'rules/yara' }).yaraRulesDir).toBe(path.resolve('rules/yara'));
    expect(loadConfig({}).yaraRulesDir).toBeUndefined();
    expect(() => loadConfig({ YARA_RULES_DIR: '/nonexistent/yara' })).toThrow('YARA_RULES_DIR="/nonexistent/yara" must be an existing directory of YARA rules');
  });

  it('SCAN_THREADS is at most 64', () => {
    expect(loadConfig({ SCAN_THREADS: '64' }).scanThreads).toBe(64);
    expect(() => loadConfig({ SCAN_THREADS: '400' })).toThrow('SCAN_THREADS=400 must be at most 64');
  });
});

// Found by an outside probe of the documented settings.
describe('numbers and ports', () => {
  it('integers are decimal digits: 0x50 and 1e3 are refused, naming the variable', () => {
    expect(() => loadConfig({ PORT: '0x50' })).toThrow('PORT="0x50" must be a TCP port (an integer 1-65535)');
    expect(() => loadConfig({ PORT: '1e3' })).toThrow('PORT="1e3" must be a TCP port');
    expect(() => loadConfig({ SCAN_THREADS: '0x2' })).toThrow(/SCAN_THREADS="0x2" must be a non-negative integer/);
    expect(loadConfig({ PORT: '8081' }).port).toBe(8081);
  });
  it('the ports this process listens on must differ', () => {
    expect(() => loadConfig({ PORT: '3987', MQTT_PORT: '3987' })).toThrow('PORT and MQTT_PORT are both 3987: this process listens on each, so they must differ');
    expect(() => loadConfig({ PORT: '3987', METRICS_PORT: '3987' })).toThrow('PORT and METRICS_PORT are both 3987');
    // A process that does not listen on one of them may share the number.
    expect(loadConfig({ ROLES: 'worker', PORT: '3987', MQTT_PORT: '3987' }).port).toBe(3987);
    expect(loadConfig({ PORT: '3987', METRICS_PORT: '0' }).metricsPort).toBe(0);
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
