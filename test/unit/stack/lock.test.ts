/** The DATA_DIR lock (src/stack/lock.ts): a DATA_DIR that cannot be used is named with what to change. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { takeStackLock } from '../../../src/stack/lock';

test('a DATA_DIR under a file is refused naming DATA_DIR and what it needs, not a bare ENOTDIR', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lock-unit-'));
  try {
    const file = path.join(dir, 'a-file');
    fs.writeFileSync(file, 'x');
    expect(() => takeStackLock(path.join(file, 'data'))).toThrow(
      new RegExp(`^DATA_DIR ${path.join(file, 'data')} cannot be used \\(ENOTDIR: .*\\): set DATA_DIR to a directory this user can create and write$`),
    );
    const held = takeStackLock(path.join(dir, 'data'));
    expect('held' in held).toBe(true);
    if ('held' in held) held.held.release();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
