/**
 * The clips and workflows pages of the dashboard in a real headless Chromium against the real
 * local stack: a device's jpeg_burst clip plays in the gallery; a workflow is written with a
 * mistake, the service's validation error is placed on the graph, then it is fixed, saved and run
 * to completion. Screenshots go to test/output/dashboard/. Every test ends by asserting the
 * browser reported no problem beyond those it provoked on purpose.
 */
import type { Browser } from 'playwright-core';
import { api, Json, stack } from '../../support/env';
import { jpegFrames, sendFile, settled, zipOf } from '../files/helpers';
import { fleet, Fleet } from '../messaging/helpers';
import { DashPage, launch } from './browser';

const WAIT = { timeout: 30_000 };

/**
 * Polls a condition read from the page until it holds (WAIT bounds it). `locator.evaluate` calls a
 * function without eval; `waitForFunction` re-evaluates its predicate in the page with eval, which
 * the dashboard's CSP refuses, so it only worked when the first check already passed.
 */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + WAIT.timeout;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let browser: Browser;
let f: Fleet;
let dash: DashPage;

beforeAll(async () => {
  browser = await launch();
  f = await fleet('standard', ['cam-1']);
  dash = await DashPage.open(browser, stack().baseUrl);
  await dash.goto('/');
  await dash.signIn(f.apiKey);
  await dash.page.getByRole('heading', { name: 'Overview' }).waitFor(WAIT);
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe('dashboard pages: clips and workflows', () => {
  it('shows a device clip in the poster grid with its frames, fps and duration, and plays the MP4', async () => {
    const frames = await jpegFrames(20, 320, 240);
    const zip = await zipOf(frames.map((b, i): [string, Buffer] => [`f${String(i).padStart(4, '0')}.jpg`, b]));
    const sent = await sendFile(f.devices['cam-1'].apiKey, zip, 'burst.zip', { kind: 'clip', meta: JSON.stringify({ format: 'jpeg_burst', fps: 10 }) });
    expect(sent.status).toBe(202);
    const done: Json = await settled(f.devices['cam-1'].apiKey, sent.body.id, 180_000);
    expect(done.status).toBe('delivered');

    await dash.goto('/clips');
    await dash.page.getByRole('heading', { name: 'Clips' }).waitFor(WAIT);
    const card = dash.page.locator('li.clip').filter({ hasText: 'cam-1' });
    await card.waitFor(WAIT);
    expect(await card.textContent()).toContain('20 frames · 10 fps · 2.0 s · 320×240');
    // The poster is the first frame, loaded through the API into a blob: URL.
    const poster = card.locator('img.poster');
    await poster.waitFor(WAIT);
    expect(await poster.getAttribute('src')).toMatch(/^blob:/);
    await until(async () => Boolean(await poster.evaluate((i: Json) => i.complete && i.naturalWidth > 0)), 'the poster to decode');
    expect(await poster.evaluate((i: Json) => i.naturalWidth)).toBe(320);

    // The entity filter narrows the gallery to one device.
    await dash.page.getByLabel('Device').fill('nobody');
    await dash.page.getByRole('button', { name: 'Show' }).click();
    await dash.page.getByText('No clips from nobody').waitFor(WAIT);
    await dash.page.getByLabel('Device').fill('cam-1');
    await dash.page.getByRole('button', { name: 'Show' }).click();
    await card.waitFor(WAIT);
    await dash.screenshot('20-clips');

    await card.getByRole('button', { name: /^Play the clip from cam-1/ }).click();
    const video = dash.page.locator('.player video');
    await video.waitFor(WAIT);
    expect(await video.getAttribute('src')).toMatch(/^blob:/);
    await until(async () => Boolean(await video.evaluate((v: Json) => v.readyState >= 2 && v.duration > 0)), 'the video to load');
    const duration = Number(await video.evaluate((v: Json) => v.duration));
    expect(duration).toBeGreaterThan(1.5);
    expect(duration).toBeLessThan(2.5);
    await dash.screenshot('21-clip-playing');
    expect(dash.takeProblems()).toEqual([]);
  }, 240_000);

  it('places a validation error on the graph, then saves the fixed workflow and runs it to completion', async () => {
    const invalid = {
      name: 'double it',
      nodes: [
        { id: 'double', type: 'transform', config: { expression: '{ "n": input.n * 2 }' } },
        { id: 'label', type: 'transform', config: {} },
      ],
      edges: [{ from: 'double', to: 'label' }],
    };
    await dash.goto('/workflows');
    await dash.page.getByRole('link', { name: 'New workflow' }).click();
    await dash.page.getByRole('heading', { name: 'New workflow' }).waitFor(WAIT);
    const editor = dash.page.getByLabel('Definition (JSON)');
    await editor.fill(JSON.stringify(invalid, null, 2));
    // The graph follows the editor: two nodes, one edge.
    await dash.page.locator('svg.graph g.node').nth(1).waitFor(WAIT);
    expect(await dash.page.locator('svg.graph g.node').count()).toBe(2);
    // Saved by keyboard (Ctrl+Enter in the editor).
    await editor.focus();
    await dash.page.keyboard.press('Control+Enter');
    const errors = dash.page.locator('#def-errors');
    await errors.waitFor(WAIT);
    expect(await errors.textContent()).toMatch(/nodes\[1\][^:]*\(node label\)/);
    expect(await dash.page.locator('svg.graph g.node.bad').getAttribute('data-node')).toBe('label');
    expect(await dash.page.locator('svg.graph g.node.bad').count()).toBe(1);
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    await dash.screenshot('22-workflow-invalid');
    expect(dash.takeProblems([/^422 \w+ \/api\/workflows$/])).toEqual([]);

    const fixed = { ...invalid, nodes: [invalid.nodes[0], { id: 'label', type: 'transform', config: { expression: '{ "text": "n is " & $string(nodes.double.n) }' } }] };
    await editor.fill(JSON.stringify(fixed, null, 2));
    await dash.page.getByRole('button', { name: 'Create workflow' }).click();
    await dash.page.getByRole('heading', { name: 'double it' }).waitFor(WAIT);
    const list = await api('GET', '/api/workflows', { key: f.apiKey });
    expect(list.body.workflows).toHaveLength(1);
    const wf = list.body.workflows[0];
    expect(wf.nodes).toMatchObject(fixed.nodes);
    expect(dash.page.url()).toContain(`#/workflows/${wf.id}`);
    expect(await dash.page.locator('svg.graph g.node.bad').count()).toBe(0);

    await dash.page.getByLabel('Run input (JSON)').fill('{"n": 21}');
    await dash.page.getByRole('button', { name: 'Run workflow' }).click();
    const run = dash.page.getByRole('article', { name: 'Run' });
    await run.locator('h2 .badge', { hasText: 'completed' }).waitFor({ timeout: 90_000 });
    const runs = await api('GET', `/api/workflows/${wf.id}/runs`, { key: f.apiKey });
    const runId = runs.body.runs[0].runId as string;
    expect(dash.page.url()).toContain(`/runs/${runId}`);
    const record = await api('GET', `/api/workflows/runs/${runId}`, { key: f.apiKey });
    expect(record.body).toMatchObject({ status: 'completed', output: { label: { text: 'n is 42' } } });

    // Per-node status, executions and output, as the service recorded them.
    for (const id of ['double', 'label']) {
      const row = run.locator(`tr[data-node="${id}"]`);
      expect(await row.locator('.badge').textContent()).toBe('completed');
      expect(await row.locator('td').nth(1).textContent()).toBe('1');
    }
    expect(await run.locator('tr[data-node="label"]').textContent()).toContain('n is 42');
    expect(await dash.page.locator('svg.graph g.node.st-completed').count()).toBe(2);
    const temporal = run.getByRole('link', { name: 'Open in the Temporal Web UI' });
    // The stack's own UI port (TEMPORAL_UI_PORT), not a fixed 8233.
    expect(stack().temporalUiPort).not.toBe(8233);
    expect(await temporal.getAttribute('href')).toBe(`http://${new URL(stack().baseUrl).hostname}:${stack().temporalUiPort}/namespaces/default/workflows/${encodeURIComponent(record.body.temporal.workflowId)}`);
    await dash.screenshot('23-workflow-run');
    expect(dash.takeProblems()).toEqual([]);
  }, 240_000);

  it('lists a run input the input_schema refuses, and cancels a run in progress', async () => {
    const created = await api('POST', '/api/workflows', {
      key: f.apiKey,
      body: {
        name: 'slow', input_schema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
        nodes: [{ id: 'wait', type: 'delay', config: { ms: 120_000 } }, { id: 'after', type: 'transform', config: { expression: 'input.n' } }],
        edges: [{ from: 'wait', to: 'after' }],
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await dash.goto(`/workflows/${id}`);
    await dash.page.getByRole('heading', { name: 'slow' }).waitFor(WAIT);
    await dash.page.getByLabel('Run input (JSON)').fill('{"n": "seven"}');
    await dash.page.getByRole('button', { name: 'Run workflow' }).click();
    await dash.page.locator('#run-errors').filter({ hasText: 'input.n' }).waitFor(WAIT);
    expect((await api('GET', `/api/workflows/${id}/runs`, { key: f.apiKey })).body.runs).toEqual([]);
    expect(dash.takeProblems([new RegExp(`^422 \\w+ /api/workflows/${id}/run$`)])).toEqual([]);

    await dash.page.getByLabel('Run input (JSON)').fill('{"n": 7}');
    await dash.page.getByRole('button', { name: 'Run workflow' }).click();
    const run = dash.page.getByRole('article', { name: 'Run' });
    await run.locator('tr[data-node="wait"] .badge', { hasText: 'running' }).waitFor({ timeout: 60_000 });
    await run.getByRole('button', { name: 'Cancel run' }).click();
    await run.locator('h2 .badge', { hasText: 'cancelled' }).waitFor({ timeout: 60_000 });
    expect(await run.getByRole('button', { name: 'Cancel run' }).count()).toBe(0);
    const runId = (await api('GET', `/api/workflows/${id}/runs`, { key: f.apiKey })).body.runs[0].runId;
    expect((await api('GET', `/api/workflows/runs/${runId}`, { key: f.apiKey })).body.status).toBe('cancelled');
    await dash.screenshot('26-workflow-cancelled');
    expect(dash.takeProblems()).toEqual([]);
  }, 180_000);

  it('fits a phone width: the clip grid, the player and the workflow page scroll nothing sideways', async () => {
    const phone = await DashPage.open(browser, stack().baseUrl, { width: 390, height: 844 });
    try {
      await phone.goto('/clips');
      await phone.signIn(f.apiKey);
      await phone.page.locator('li.clip img.poster').first().waitFor(WAIT);
      await phone.page.getByRole('button', { name: /^Play the clip from cam-1/ }).first().click();
      await phone.page.locator('.player video').waitFor(WAIT);
      // Opening the player moves focus to its heading.
      expect(await phone.page.evaluate('document.activeElement.id')).toBe('player-h');
      expect(await phone.overflowX()).toBeLessThanOrEqual(0);
      await phone.screenshot('24-phone-clips');
      const wf = (await api('GET', '/api/workflows', { key: f.apiKey })).body.workflows.find((w: Json) => w.name === 'double it');
      const runId = (await api('GET', `/api/workflows/${wf.id}/runs`, { key: f.apiKey })).body.runs[0].runId;
      await phone.goto(`/workflows/${wf.id}/runs/${runId}`);
      await phone.page.getByRole('article', { name: 'Run' }).waitFor(WAIT);
      expect(await phone.overflowX()).toBeLessThanOrEqual(0);
      await phone.screenshot('25-phone-workflow-run');
      expect(phone.takeProblems()).toEqual([]);
    } finally {
      await phone.close();
    }
  }, 120_000);
});
