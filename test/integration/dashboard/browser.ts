/**
 * A real headless Chromium for the dashboard tests: Debian's `chromium` driven by playwright-core
 * (which never downloads a browser). Console errors, page errors and failed responses are
 * collected so each test can assert there were none it did not expect.
 */
import { accessSync, constants, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { ROOT } from '../../support/service';

export const SCREENSHOT_DIR = path.join(ROOT, 'test', 'output', 'dashboard');

const CANDIDATES = ['/usr/bin/chromium', '/usr/lib/chromium/chromium', '/usr/bin/chromium-browser'];

function chromiumPath(): string {
  for (const p of CANDIDATES) {
    try { accessSync(p, constants.X_OK); return p; } catch { /* next */ }
  }
  // Never skipped: the dashboard e2e suite is part of the test command (npm run setup installs chromium).
  throw new Error(`Debian chromium not found (${CANDIDATES.join(', ')}): run npm run setup as root or apt-get install chromium`);
}

export async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // Root in a container has no user namespace sandbox; /dev/shm is small there.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}

export interface Problem { kind: 'console' | 'pageerror' | 'response'; text: string }

/** A browser page on the dashboard that records every problem it sees. */
export class DashPage {
  readonly problems: Problem[] = [];
  private constructor(readonly context: BrowserContext, readonly page: Page, readonly baseUrl: string) {
    page.on('console', (m: ConsoleMessage) => {
      if (m.type() === 'error' || m.type() === 'warning') this.problems.push({ kind: 'console', text: `${m.type()}: ${m.text()} @ ${m.location().url}` });
    });
    page.on('pageerror', (e) => this.problems.push({ kind: 'pageerror', text: String(e) }));
    page.on('response', (r) => {
      if (r.status() >= 400) this.problems.push({ kind: 'response', text: `${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}` });
    });
    // Confirmations (delete, rotate) are accepted, as the operator in these tests always means it.
    page.on('dialog', (d) => { void d.accept(); });
  }

  static async open(browser: Browser, baseUrl: string, viewport = { width: 1280, height: 860 }): Promise<DashPage> {
    const context = await browser.newContext({ viewport, acceptDownloads: true, baseURL: baseUrl });
    const page = await context.newPage();
    return new DashPage(context, page, baseUrl);
  }

  async goto(hashPath: string): Promise<void> {
    if (this.page.url().startsWith(`${this.baseUrl}/dashboard`)) {
      await this.page.evaluate(`location.hash = ${JSON.stringify(`#${hashPath}`)}`);
    } else {
      await this.page.goto(`/dashboard/#${hashPath}`);
    }
  }

  async signIn(key: string): Promise<void> {
    await this.page.getByLabel('Account API key').fill(key);
    await this.page.getByRole('button', { name: 'Sign in' }).click();
  }

  // Browser-side expressions are strings: this code is type-checked without the DOM library.
  storedKey(): Promise<string | null> {
    return this.page.evaluate("sessionStorage.getItem('sentinel.apiKey')");
  }

  async replaceStoredKey(key: string): Promise<void> {
    await this.page.evaluate(`sessionStorage.setItem('sentinel.apiKey', ${JSON.stringify(key)})`);
  }

  /** How many CSS pixels the page is wider than the viewport (0 when nothing scrolls sideways). */
  overflowX(): Promise<number> {
    return this.page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
  }

  async screenshot(name: string): Promise<void> {
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await this.page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
  }

  /**
   * Problems other than the failed responses a test provoked on purpose (patterns over
   * "<status> <method> <path>"); clears the record. Chromium also echoes each 4xx/5xx answer as
   * a console error "Failed to load resource", which counts as the same provoked response.
   */
  takeProblems(expected: RegExp[] = []): string[] {
    const isExpected = (t: string) => expected.some((re) => re.test(t));
    const left = this.problems.filter((p) => {
      if (p.kind === 'response') return !isExpected(p.text);
      const echo = /Failed to load resource: the server responded with a status of (\d{3}).* @ (\S+)$/.exec(p.text);
      if (p.kind === 'console' && echo) return !isExpected(`${echo[1]} ANY ${new URL(echo[2]).pathname}`);
      return true;
    });
    this.problems.length = 0;
    return left.map((p) => `${p.kind}: ${p.text}`);
  }

  async close(): Promise<void> {
    await this.context.close();
  }
}
