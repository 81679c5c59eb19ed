/**
 * The Python device library (sdk/python): publishes per second from one CPython client, over HTTP
 * and over MQTT, against a real service started like `npm start` (bench/sdk_client.py does the
 * publishing with the venv of scripts/setup.sh). BENCH_SDK_MESSAGES (default 500) per run.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { startServiceProcess } from '../test/support/service';
import { PYTHON } from '../test/support/pytest';

function runCli(env: Record<string, string>, ...args: string[]): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', path.join(__dirname, '..', 'src', 'cli', 'main.ts'), ...args], { env: { ...process.env, ...env } },
      (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(JSON.parse(stdout) as Record<string, string>)));
  });
}

export async function run(): Promise<void> {
  const service = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' } });
  try {
    const account = await runCli(service.env.env, 'account', 'create', '--name', 'bench-sdk', '--plan', 'pro');
    const out = await new Promise<string>((resolve, reject) => {
      execFile(PYTHON, [path.join(__dirname, 'sdk_client.py')], {
        env: { ...process.env, SENTINEL_BASE_URL: service.env.baseUrl, SENTINEL_ACCOUNT_KEY: account.apiKey },
        timeout: 900_000,
      }, (err, stdout, stderr) => (err ? reject(new Error(`${stdout}${stderr}`)) : resolve(stdout)));
    });
    const r = JSON.parse(out.trim().split('\n').pop() as string) as Record<string, Record<string, unknown>>;
    console.log('one CPython client (sentinel_device), local stack');
    console.log(`HTTP  publish(): ${r.http.per_second} msg/s over ${r.http.messages} messages (${r.http.retry_after_waits} Retry-After waits, call p50 ${r.http.call_p50_ms} ms), stored ${r.http.stored}`);
    console.log(`MQTT  publish() calls: ${r.mqtt_burst.publish_calls_per_second} msg/s; burst of ${r.mqtt_burst.messages}: stored ${r.mqtt_burst.stored}, refused ${JSON.stringify(r.mqtt_burst.refused)}`);
    console.log(`MQTT  paced at ${r.mqtt_paced.rate_offered} msg/s: stored ${r.mqtt_paced.stored}/${r.mqtt_paced.messages}, refused ${JSON.stringify(r.mqtt_paced.refused)}, ${r.mqtt_paced.stored_per_second} msg/s`);
    console.log(JSON.stringify(r));
  } finally {
    await service.stop();
  }
}
