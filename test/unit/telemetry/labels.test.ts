/** The label rules: every label value comes from a fixed set, whatever the request carried. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { Router } from '@koa/router';
import { DB_COMMANDS, dbCommandLabel, engineLabel, methodLabel, oneOf, routeLabel, statusLabel } from '../../../src/telemetry/labels';
import { countMessage, enableMetrics, messageTypeLabel, observeHttp, observeMessage, observeRunEnded, registry } from '../../../src/telemetry/metrics';
import { observeRequests, routeTemplateOf } from '../../../src/telemetry/http';

beforeAll(() => enableMetrics());

describe('label values', () => {
  test('routes are templates or fixed words, never the path', () => {
    expect(routeLabel('/api/entities/:name', '/api/entities/boiler-7')).toBe('/api/entities/:name');
    expect(routeLabel(undefined, '/healthz')).toBe('/healthz');
    expect(routeLabel(undefined, '/openapi.json')).toBe('/openapi.json');
    expect(routeLabel(undefined, '/dashboard/assets/app-1234.js')).toBe('/dashboard/*');
    expect(routeLabel(undefined, '/dashboard')).toBe('/dashboard/*');
    expect(routeLabel(undefined, '/dashboardx')).toBe('unmatched');
    expect(routeLabel(undefined, '/api/no-such-thing/sk_live_secret')).toBe('unmatched');
    expect(routeLabel(undefined, '/wp-admin.php')).toBe('unmatched');
  });

  test('methods, statuses, engines, commands and enumerations outside their sets become other', () => {
    expect(methodLabel('POST')).toBe('POST');
    expect(methodLabel('PROPFIND')).toBe('other');
    expect(methodLabel('get')).toBe('other');
    expect(statusLabel(404)).toBe('404');
    expect(statusLabel(99)).toBe('other');
    expect(statusLabel(600)).toBe('other');
    expect(statusLabel(200.5)).toBe('other');
    const known = new Set(['yara', 'clamav']);
    expect(engineLabel('yara', known)).toBe('yara');
    expect(engineLabel('clamav-evil', known)).toBe('other');
    expect(engineLabel('Yara', new Set(['Yara']))).toBe('other');
    expect(dbCommandLabel('find')).toBe('find');
    expect(dbCommandLabel('$where')).toBe('other');
    expect(DB_COMMANDS).toContain('getMore');
    expect(oneOf('Clean', ['Clean', 'Malicious'])).toBe('Clean');
    expect(oneOf({ toString: () => 'Clean' }, ['Clean'])).toBe('other');
    expect(oneOf(undefined, ['Clean'])).toBe('other');
  });

  test('message types come from the message schema; anything a device sends instead is other', () => {
    expect(messageTypeLabel({ msg_type: 'publish' })).toBe('publish');
    expect(messageTypeLabel({ msg_type: 'client_cmd_resp' })).toBe('client_cmd_resp');
    expect(messageTypeLabel({ msg_type: 'my-account-id-123' })).toBe('other');
    expect(messageTypeLabel('publish')).toBe('other');
    expect(messageTypeLabel(null)).toBe('other');
    expect(messageTypeLabel([{ msg_type: 'publish' }])).toBe('other');
  });
});

describe('series', () => {
  const sample = async (name: string) => (await registry.getSingleMetricAsString(name)).split('\n').filter((l) => !l.startsWith('#'));

  test('an HTTP answer counts under its normalised labels', async () => {
    observeHttp('BREW', '/api/scan/:scanId', 418, 0.002);
    expect(await sample('http_requests_total')).toContain('http_requests_total{method="other",route="/api/scan/:scanId",status="418"} 1');
  });

  test('messages count by type, transport and outcome from the status they were answered with', async () => {
    observeMessage('mqtt', { msg_type: 'heartbeat' }, 200);
    observeMessage('mqtt', { msg_type: 'no such type, from device 42' }, 400);
    await expect(countMessage('http', { msg_type: 'publish' }, async () => { throw Object.assign(new Error('limit'), { status: 429 }); })).rejects.toThrow('limit');
    await expect(countMessage('http', { msg_type: 'publish' }, async () => { throw new Error('bug'); })).rejects.toThrow('bug');
    await expect(countMessage('http', { msg_type: 'state_new' }, async () => 'ok')).resolves.toBe('ok');
    const lines = await sample('messages_total');
    expect(lines).toEqual(expect.arrayContaining([
      'messages_total{type="heartbeat",transport="mqtt",outcome="accepted"} 1',
      'messages_total{type="other",transport="mqtt",outcome="refused"} 1',
      'messages_total{type="publish",transport="http",outcome="refused"} 1',
      'messages_total{type="publish",transport="http",outcome="failed"} 1',
      'messages_total{type="state_new",transport="http",outcome="accepted"} 1',
    ]));
    expect(lines.join('\n')).not.toContain('device 42');
  });

  test('run ends count by final status; a bulk expiry counts each run; timeouts count apart', async () => {
    observeRunEnded('failed', true);
    observeRunEnded('expired', false, 3);
    observeRunEnded('expired', false, 0);
    observeRunEnded('weird', false);
    expect(await sample('workflow_runs_total')).toEqual(expect.arrayContaining([
      'workflow_runs_total{status="failed"} 1', 'workflow_runs_total{status="expired"} 3', 'workflow_runs_total{status="other"} 1',
    ]));
    expect(await sample('workflow_run_timeouts_total')).toContain('workflow_run_timeouts_total 1');
  });
});

describe('the HTTP middleware', () => {
  test('labels a request with its route template, also for 404s on a known pattern and unmatched paths', async () => {
    const router = new Router();
    router.get('/api/things/:name', (ctx) => { ctx.body = { ok: true }; });
    router.get('/api/things/:name/parts/:part', (ctx) => { ctx.status = 404; });
    const app = new Koa();
    app.use(observeRequests(router));
    app.use(router.routes());
    const server = http.createServer(app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await fetch(`${base}/api/things/private-entity-name`)).status).toBe(200);
      expect((await fetch(`${base}/api/things/x/parts/sk_test_abcdef`)).status).toBe(404);
      expect((await fetch(`${base}/api/things/x`, { method: 'DELETE' })).status).toBe(404);
      expect((await fetch(`${base}/etc/passwd`)).status).toBe(404);
    } finally {
      server.close();
    }
    const text = await registry.getSingleMetricAsString('http_requests_total');
    expect(text).toContain('http_requests_total{method="GET",route="/api/things/:name",status="200"} 1');
    expect(text).toContain('http_requests_total{method="GET",route="/api/things/:name/parts/:part",status="404"} 1');
    expect(text).toContain('http_requests_total{method="DELETE",route="/api/things/:name",status="404"} 1');
    expect(text).toContain('http_requests_total{method="GET",route="unmatched",status="404"} 1');
    for (const raw of ['private-entity-name', 'sk_test_abcdef', 'passwd']) expect(text).not.toContain(raw);
  });

  test('a path no route serves has no template; of several patterns the most specific wins', () => {
    const router = new Router();
    router.get('/api/entities/:name', () => undefined);
    router.post('/api/entities/bulk', () => undefined);
    expect(routeTemplateOf(router, { path: '/api/entities/bulk' })).toBe('/api/entities/bulk');
    expect(routeTemplateOf(router, { path: '/api/entities/pump-3' })).toBe('/api/entities/:name');
    expect(routeTemplateOf(router, { path: '/nowhere' })).toBeUndefined();
    expect(routeTemplateOf(router, { path: '/api/entities/pump-3', _matchedRoute: '/api/entities/:name' })).toBe('/api/entities/:name');
  });
});
