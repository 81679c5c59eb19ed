/**
 * Installed programs a test needs (clamd, mosquitto, ...), looked up on PATH as a shell would.
 * Under CI=true a missing one is an error naming it, so a CI run never passes without the part it
 * was meant to test; elsewhere the caller skips the tests that need it (reported as skipped).
 */
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

export const IN_CI = process.env.CI === 'true';

export function findOnPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

/** The program's path; null when missing outside CI; throws naming it when missing under CI=true. */
export function requireTool(name: string, install: string): string | null {
  const found = findOnPath(name);
  if (found || !IN_CI) return found;
  throw new Error(`${name} is required under CI=true but was not found on PATH (${install})`);
}

export const CLAMD_INSTALL = 'Debian package clamav-daemon; `npm run setup` as root installs it';
