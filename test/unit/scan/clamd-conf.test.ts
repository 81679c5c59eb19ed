/**
 * The generated clamd.conf bounds clamd's own work on one file by the clamav engine's budget: past
 * it the engine has answered `timeout`, and clamd once went on for its default 120 s (an outside
 * probe: a 5 MB zip of 60,000 empty entries kept a core busy about 47 s after the API answered).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLAMD_MAX_SCAN_TIME_MS, writeClamdConf } from '../../../src/stack/clamd';
import { REGISTRY } from '../../../src/scan/registry';

test('MaxScanTime in clamd.conf is the clamav engine budget', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clamd-conf-'));
  try {
    const confPath = path.join(dir, 'clamd.conf');
    writeClamdConf({ confPath, port: 3310, dbDir: dir, tmpDir: path.join(dir, 'tmp'), logFile: path.join(dir, 'clamd.log') });
    const lines = fs.readFileSync(confPath, 'utf8').split('\n');
    const budget = REGISTRY.find((r) => r.engine === 'clamav')?.budgetMs;
    expect(budget).toBe(CLAMD_MAX_SCAN_TIME_MS);
    expect(lines).toContain(`MaxScanTime ${budget}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
