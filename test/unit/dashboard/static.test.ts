/** The dashboard's static route: content types, CSP, caching, and a clear failure without a bundle. */
import http from 'node:http';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Koa from 'koa';
import { dashboardMiddleware } from '../../../src/dashboard/routes';

function bundleDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dash-static-'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><script type="module" src="/dashboard/app-ABCDEFGH.js"></script>');
  writeFileSync(path.join(dir, 'app-ABCDEFGH.js'), 'console.log(1)');
  writeFileSync(path.join(dir, 'app-ABCDEFGH.css'), 'body{}');
  writeFileSync(path.join(dir, 'notes.txt'), 'not served');
  mkdirSync(path.join(dir, 'img'));
  writeFileSync(path.join(dir, 'img', 'logo.svg'), '<svg/>');
  return dir;
}

describe('dashboard static route', () => {
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    const app = new Koa();
    app.use(dashboardMiddleware(bundleDir(), { temporalUi: { port: 18233, namespace: 'prod' } }));
    app.use(async (ctx) => { ctx.status = 404; ctx.body = 'fell through'; });
    server = http.createServer(app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('serves index.html at /dashboard and /dashboard/ with a strict CSP and no-cache', async () => {
    for (const p of ['/dashboard', '/dashboard/']) {
      const res = await fetch(base + p);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toMatch(/default-src 'none'/);
      expect(csp).toMatch(/script-src 'self'(;|$)/);
      expect(csp).toMatch(/style-src 'self'(;|$)/);
      expect(csp).toMatch(/frame-ancestors 'none'/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await res.text()).toContain('app-ABCDEFGH.js');
    }
  });

  it('serves hashed bundles as immutable with their content types, and nested files', async () => {
    const js = await fetch(`${base}/dashboard/app-ABCDEFGH.js`);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const css = await fetch(`${base}/dashboard/app-ABCDEFGH.css`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    const svg = await fetch(`${base}/dashboard/img/logo.svg`);
    expect(svg.headers.get('content-type')).toBe('image/svg+xml');
    expect(svg.headers.get('cache-control')).toBe('no-cache');
  });

  it('passes on unknown files, other types, other methods and paths outside the bundle', async () => {
    for (const p of ['/dashboard/missing.js', '/dashboard/notes.txt', '/dashboard/../package.json', '/dashboard/%2e%2e/package.json', '/dashboardx']) {
      const res = await fetch(base + p);
      expect(res.status).toBe(404);
      expect(await res.text()).toBe('fell through');
    }
    const post = await fetch(`${base}/dashboard/`, { method: 'POST' });
    expect(await post.text()).toBe('fell through');
  });

  it('serves the settings the app needs as /dashboard/config.json, never cached', async () => {
    const res = await fetch(`${base}/dashboard/config.json`);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(await res.json()).toEqual({ temporalUi: { port: 18233, namespace: 'prod' } });
  });

  it('stops start-up with a message naming the build step when the bundle is missing', () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'dash-empty-'));
    expect(() => dashboardMiddleware(empty)).toThrow(/dashboard bundle is missing .*npm run build/);
  });
});
