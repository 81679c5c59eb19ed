/**
 * Numbers are rounded once, where a scan result leaves (publicResult): engines and the verdict
 * keep full precision, the answer carries two decimals wherever a number is fractional.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { analyze } from '../../../src/scan/analyze';
import { buildEngines, REGISTRY } from '../../../src/scan/registry';
import { round2 } from '../../../src/scan/rounding';
import { publicResult } from '../../../src/scan/service';
import { ensureFixtures } from './static/helpers';
import { numbers } from './support/values';

const engines = buildEngines({}, REGISTRY.filter((r) => !['clamav', 'threat_feed', 'yara'].includes(r.engine)));
const dir = ensureFixtures();

describe('rounding once, at output', () => {
  it.each(['pe_upx_packed.exe', 'ps_encoded.ps1'])('%s: full precision inside, two decimals in the answer, same shape', async (f) => {
    const analysis = await analyze({ content: readFileSync(path.join(dir, f)), name: f, scanType: 'file' }, { engines });
    const inside = numbers({ reports: analysis.reports, engines: analysis.engines, safetyScore: analysis.safetyScore });
    expect(inside.filter(([, n]) => n !== round2(n)).length).toBeGreaterThan(0);
    const answer = publicResult(analysis, { scanId: 's', requestId: 'r', name: f, scanType: 'file', at: new Date(0) });
    for (const [at, n] of numbers(answer)) expect([at, n]).toEqual([at, round2(n)]);
    // Every number inside reaches the answer at the same place, rounded.
    const answered = new Map(numbers({ reports: answer.details, safetyScore: answer.safetyScore }));
    for (const [at, n] of numbers({ reports: analysis.reports, safetyScore: analysis.safetyScore })) expect([at, answered.get(at)]).toEqual([at, round2(n)]);
  });
});
