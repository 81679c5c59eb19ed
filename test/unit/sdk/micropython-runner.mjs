/**
 * Runs sdk/python/tests/micropython/checks.py in the real MicroPython interpreter compiled to
 * WebAssembly (npm @micropython/micropython-webassembly-pyscript): copies the sentinel_device
 * package, the shared routing cases and the fake socket/requests modules into its file system
 * under /lib, runs the checks and prints their RESULT line. Used by micropython.test.ts.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadMicroPython } from '@micropython/micropython-webassembly-pyscript/micropython.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const sdk = path.join(root, 'sdk', 'python');
const mp = await loadMicroPython({ stdout: (line) => process.stdout.write(`${line}\n`), linebuffer: true });

function mkdirs(dir) {
  let cur = '';
  for (const part of dir.split('/').filter(Boolean)) {
    cur += `/${part}`;
    try { mp.FS.mkdir(cur); } catch { /* exists */ }
  }
}
function copyTree(from, to) {
  mkdirs(to);
  for (const name of readdirSync(from)) {
    const src = path.join(from, name);
    if (name === '__pycache__') continue;
    if (statSync(src).isDirectory()) copyTree(src, `${to}/${name}`);
    else mp.FS.writeFile(`${to}/${name}`, readFileSync(src));
  }
}
copyTree(path.join(sdk, 'sentinel_device'), '/lib/sentinel_device');
mkdirs('/tmp');
for (const f of ['socket.py', 'requests.py']) mp.FS.writeFile(`/lib/${f}`, readFileSync(path.join(sdk, 'tests', 'micropython', f)));
mp.FS.writeFile('/lib/routing_cases.py', readFileSync(path.join(sdk, 'tests', 'routing_cases.py')));
await mp.runPythonAsync(readFileSync(path.join(sdk, 'tests', 'micropython', 'checks.py'), 'utf8'));
