/** Runs the device library's pytest suites (sdk/python/tests) with the venv scripts/setup.sh builds. */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './service';

export const PYTHON = path.join(ROOT, '.tools', 'pyenv', 'bin', 'python');
export const SDK_DIR = path.join(ROOT, 'sdk', 'python');

export interface PytestRun { code: number; output: string }

export function pytest(files: string[], env: Record<string, string> = {}, timeoutMs = 600_000): Promise<PytestRun> {
  if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: run \`npm run setup\` (it creates the venv with paho-mqtt and pytest)`);
  return new Promise((resolve) => {
    execFile(PYTHON, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-o', 'console_output_style=classic', ...files.map((f) => path.join('tests', f))], {
      cwd: SDK_DIR,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...env },
      timeout: timeoutMs,
      maxBuffer: 16 * 1024 * 1024,
    }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

/** Fails the jest test with pytest's own report when pytest failed. */
export function expectPassed(run: PytestRun): void {
  if (run.code !== 0) throw new Error(`pytest exited with ${run.code}:\n${run.output}`);
}
