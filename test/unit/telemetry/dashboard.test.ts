/**
 * The Grafana dashboard: the committed JSON is the object typed against @grafana/schema's
 * dashboard model and declares that model's schema version; every query is valid PromQL naming
 * series this service registers (the Temporal SDK's `temporal_*` ones are checked against a
 * live worker in test/integration/telemetry/metrics.test.ts).
 */
import { readFileSync } from 'node:fs';
import { defaultDashboard } from '@grafana/schema';
import { dashboard, dashboardJson, dashboardQueries, DASHBOARD_FILE } from '../../../tools/grafana-dashboard';
import { enableMetrics, registry } from '../../../src/telemetry/metrics';
import { exposedSeries, seriesOf } from '../../support/promql';

test('the committed JSON is the typed dashboard, at the schema version of the model it was checked against', () => {
  expect(readFileSync(DASHBOARD_FILE, 'utf8')).toBe(dashboardJson());
  expect(dashboard.schemaVersion).toBe(defaultDashboard.schemaVersion);
  const ids = (dashboard.panels ?? []).map((p) => p.id);
  expect(new Set(ids).size).toBe(ids.length);
  for (const p of dashboard.panels ?? []) {
    expect(p.gridPos && p.gridPos.x + p.gridPos.w).toBeLessThanOrEqual(24);
  }
});

test('every query parses and names only series the service exports', async () => {
  enableMetrics();
  // Series with labels appear once something is recorded; a registry's families are known before.
  const families = (await registry.getMetricsAsJSON()).map((m) => m.name);
  const names = new Set(families.flatMap((n) => [n, `${n}_bucket`, `${n}_sum`, `${n}_count`]));
  expect(exposedSeries(await registry.metrics()).size).toBeGreaterThan(10);
  const queries = dashboardQueries();
  expect(queries.length).toBeGreaterThan(15);
  for (const q of queries) {
    const series = seriesOf(q);
    expect(series.length).toBeGreaterThan(0);
    for (const s of series) if (!s.startsWith('temporal_')) expect({ query: q, series: s, known: names.has(s) }).toEqual({ query: q, series: s, known: true });
  }
  expect(() => seriesOf('sum(rate(http_requests_total[5m])')).toThrow('not valid PromQL');
  expect(seriesOf('rate(a_total[1m]) / on() group_left max(b)')).toEqual(['a_total', 'b']);
});
