/**
 * The uploading client of bench/isolation.ts, in a process of its own as a real client would be:
 * sending 160 MB keeps a Node process busy, and in the readers' process that time was counted
 * as the service's latency. Makes its random files, prints `ready`, uploads them all at once (as
 * deferred scans) when a line arrives on stdin, and prints the answers as one JSON line.
 *
 *   node --import tsx bench/_isolation-uploader.ts <baseUrl> <apiKey> <sizes in MB, comma-separated>
 */
import { randomBytes } from 'node:crypto';

const [baseUrl, apiKey, sizes] = process.argv.slice(2);
// Random bytes: nothing for the engines to find, the worst case for compression and scanning.
const files = sizes.split(',').map((mb) => randomBytes(Number(mb) * 1024 * 1024));

function upload(content: Buffer, name: string): Promise<{ status: number; scanId?: string }> {
  const form = new FormData();
  form.append('file', new Blob([content]), name);
  return fetch(`${baseUrl}/api/scan?defer=true`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: form })
    .then(async (r) => ({ status: r.status, scanId: ((await r.json()) as { scanId?: string }).scanId }));
}

process.stdout.write('ready\n');
process.stdin.once('data', () => {
  Promise.all(files.map((f, i) => upload(f, `big-${i}.bin`))).then(
    (answers) => {
      process.stdout.write(`${JSON.stringify(answers)}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
});
