/**
 * Serves the operator dashboard (the bundle `npm run build` writes to dist/dashboard) at
 * /dashboard. The files are read once at start-up: the bundle is small and fixed for the life of
 * the process, and a missing bundle stops start-up with a message instead of a blank page later.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type Koa from 'koa';
import type { TemporalUiLink } from '../config';
import type { AppState } from '../http/route';

export const DASHBOARD_DIR = path.resolve(__dirname, '..', '..', 'dist', 'dashboard');
const PREFIX = '/dashboard';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/**
 * No inline script or style anywhere: the app sets styles through the CSSOM, which style-src
 * does not govern. blob: is for the CSV/JSON files the app assembles for download.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data: blob:", "media-src 'self' blob:",
  "connect-src 'self'", "font-src 'self'", "manifest-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

interface Asset { body: Buffer; type: string; cacheControl: string }

/** Bundled assets carry a content hash in their name and never change; index.html names them. */
const HASHED = /-[A-Z0-9]{8,}\.(js|css|map)$/i;

function loadAssets(dir: string): Map<string, Asset> {
  const index = path.join(dir, 'index.html');
  if (!existsSync(index)) {
    throw new Error(`the dashboard bundle is missing (${index}): run "npm run build" (npm run setup runs it)`);
  }
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const type = CONTENT_TYPES[path.extname(name)];
    if (!type) continue;
    const cacheControl = HASHED.test(name) ? 'public, max-age=31536000, immutable' : 'no-cache';
    assets.set(`/${name.split(path.sep).join('/')}`, { body: readFileSync(path.join(dir, name)), type, cacheControl });
  }
  return assets;
}

/** What the app needs from the service's configuration, served as /dashboard/config.json. */
export interface DashboardSettings { temporalUi: TemporalUiLink }

export function dashboardMiddleware(dir = DASHBOARD_DIR, settings: DashboardSettings = { temporalUi: null }): Koa.Middleware<AppState> {
  const assets = loadAssets(dir);
  assets.set('/config.json', { body: Buffer.from(JSON.stringify(settings)), type: 'application/json; charset=utf-8', cacheControl: 'no-cache' });
  return async (ctx, next) => {
    if (ctx.path !== PREFIX && !ctx.path.startsWith(`${PREFIX}/`)) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const rest = ctx.path.slice(PREFIX.length);
    const asset = assets.get(rest === '' || rest === '/' ? '/index.html' : rest);
    if (!asset) return next();
    ctx.set('Content-Security-Policy', DASHBOARD_CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
    ctx.set('Cache-Control', asset.cacheControl);
    ctx.type = asset.type;
    ctx.body = asset.body;
  };
}
