import { computeVerdict, notScannedVerdict, NO_THREATS } from '../../../src/scan/verdict';
import { round2, round2Deep } from '../../../src/scan/rounding';
import type { EngineResult, Finding, Severity } from '../../../src/scan/types';

const f = (severity: Severity, extra: Partial<Finding> = {}): Finding => ({
  id: `t.${severity}`, name: `Threat ${severity}`, severity, confidence: 0.9, description: 'test finding', ...extra,
});
const ok = (engine: string, findings: Finding[] = []): EngineResult => ({ engine, status: 'ok', durationMs: 1, findings });

describe('verdict: bands and actions (spec score ranges)', () => {
  it('no findings -> Clean 100, Allow, No threats detected', () => {
    const v = computeVerdict({ engines: [ok('clamav'), ok('yara')], coverage: 'full' });
    expect(v).toMatchObject({ score: 100, threatLevel: 'Clean', recommendedAction: 'Allow', primaryThreat: NO_THREATS });
  });
  it('a low finding alone -> Informational 71-85, Allow', () => {
    const v = computeVerdict({ engines: [ok('static_pe', [f('low')])], coverage: 'full' });
    expect(v.score).toBeGreaterThanOrEqual(71);
    expect(v.score).toBeLessThanOrEqual(85);
    expect(v).toMatchObject({ threatLevel: 'Informational', recommendedAction: 'Allow' });
  });
  it('a medium or high finding alone -> Suspicious 31-70, Review', () => {
    for (const sev of ['medium', 'high'] as const) {
      const v = computeVerdict({ engines: [ok('yara', [f(sev)])], coverage: 'full' });
      expect(v.score).toBeGreaterThanOrEqual(31);
      expect(v.score).toBeLessThanOrEqual(70);
      expect(v).toMatchObject({ threatLevel: 'Suspicious', recommendedAction: 'Review' });
    }
  });
  it('a critical finding alone (AV signature, feed hit) -> Malicious 0-30, Block, even at low confidence', () => {
    for (const confidence of [0, 0.5, 1]) {
      const v = computeVerdict({ engines: [ok('clamav', [f('critical', { confidence })])], coverage: 'full' });
      expect(v.score).toBeLessThanOrEqual(30);
      expect(v).toMatchObject({ threatLevel: 'Malicious', recommendedAction: 'Block' });
    }
  });
  it('info findings do not move the score', () => {
    expect(computeVerdict({ engines: [ok('cve', [f('info')])], coverage: 'full' }).score).toBe(100);
  });
  it('many low findings from several engines stay Informational', () => {
    const v = computeVerdict({ engines: [ok('a', [f('low'), f('low')]), ok('b', [f('low')]), ok('c', [f('low')])], coverage: 'full' });
    expect(v.threatLevel).toBe('Informational');
  });
});

describe('verdict: several independent engines agreeing lower the score more than one', () => {
  it('two engines with a medium finding score lower than one engine with two', () => {
    const one = computeVerdict({ engines: [ok('yara', [f('medium'), f('medium')])], coverage: 'full' });
    const two = computeVerdict({ engines: [ok('yara', [f('medium')]), ok('static_pe', [f('medium')])], coverage: 'full' });
    expect(two.score).toBeLessThan(one.score);
  });
  it('two high engines reach Malicious where one high engine stays Suspicious', () => {
    const one = computeVerdict({ engines: [ok('yara', [f('high'), f('high'), f('high')])], coverage: 'full' });
    const two = computeVerdict({ engines: [ok('yara', [f('high')]), ok('behavior', [f('high')])], coverage: 'full' });
    expect(one.threatLevel).toBe('Suspicious');
    expect(two.threatLevel).toBe('Malicious');
  });
  it('agreement raises confidence and the reason names the engines', () => {
    const one = computeVerdict({ engines: [ok('clamav', [f('critical')])], coverage: 'full' });
    const two = computeVerdict({ engines: [ok('clamav', [f('critical')]), ok('yara', [f('critical')])], coverage: 'full' });
    expect(two.confidenceScore).toBeGreaterThan(one.confidenceScore);
    expect(two.confidenceReason).toMatch(/2 independent engines agree \(clamav, yara\)/);
  });
});

describe('verdict: Malicious needs decisive evidence', () => {
  it('weaker findings of three engines add up to the top of Suspicious, not Malicious, and the reason says why', () => {
    const v = computeVerdict({ engines: [ok('yara', [f('medium')]), ok('static_pe', [f('medium')]), ok('pdf', [f('medium')])], coverage: 'full' });
    expect(v).toMatchObject({ score: 31, threatLevel: 'Suspicious', recommendedAction: 'Review' });
    expect(v.confidenceReason).toMatch(/no finding is decisive/);
  });
  it('the ml engine is never decisive: its high finding next to an unsure rule stays Suspicious', () => {
    const v = computeVerdict({ engines: [ok('ml', [f('high', { confidence: 1 })]), ok('static_script', [f('high', { confidence: 0.7 })])], coverage: 'partial' });
    expect(v.threatLevel).toBe('Suspicious');
  });
  it('a sure high rule finding next to ml reaches Malicious; a critical one alone does too', () => {
    const withMl = computeVerdict({ engines: [ok('ml', [f('medium')]), ok('static_script', [f('high', { confidence: 0.85 })])], coverage: 'partial' });
    expect(withMl.threatLevel).toBe('Malicious');
    expect(withMl.confidenceReason).not.toMatch(/no finding is decisive/);
    expect(computeVerdict({ engines: [ok('static_script', [f('critical', { confidence: 0.6 })])], coverage: 'partial' }).threatLevel).toBe('Malicious');
  });
});

describe('verdict: coverage', () => {
  it('minimal coverage never returns Clean: best is Informational 85, Allow, with a note', () => {
    const v = computeVerdict({ engines: [ok('yara')], coverage: 'minimal', coverageNote: 'JAR: pattern rules only' });
    expect(v).toMatchObject({ score: 85, threatLevel: 'Informational', recommendedAction: 'Allow', coverage: 'minimal', coverageNote: 'JAR: pattern rules only' });
  });
  it('minimal coverage never softens a real detection', () => {
    const full = computeVerdict({ engines: [ok('clamav', [f('critical')])], coverage: 'full' });
    const minimal = computeVerdict({ engines: [ok('clamav', [f('critical')])], coverage: 'minimal' });
    expect(minimal.score).toBe(full.score);
    expect(minimal.threatLevel).toBe('Malicious');
  });
  it('full coverage carries no coverageNote when every engine ran', () => {
    expect(computeVerdict({ engines: [ok('clamav')], coverage: 'full', coverageNote: 'x' }).coverageNote).toBeUndefined();
  });
});

describe('verdict: Rejected and Error', () => {
  it.each([['Rejected'], ['Error']] as const)('%s carries score 0, Block and the error message', (kind) => {
    const v = notScannedVerdict(kind, 'File type pe is not allowed by profile strict');
    expect(v).toMatchObject({ threatLevel: kind, recommendedAction: 'Block', score: 0, error: 'File type pe is not allowed by profile strict' });
    expect(v.enginesUsed).toEqual([]);
  });
});

describe('verdict: suppressedEngines', () => {
  const engines = [ok('clamav', [f('critical', { name: 'Win.Trojan.Test' })]), ok('yara')];
  it('hides the suppressed engine findings but keeps their effect on the score', () => {
    const shown = computeVerdict({ engines, coverage: 'full' });
    const hidden = computeVerdict({ engines, coverage: 'full', suppressedEngines: ['clamav'] });
    expect(hidden.score).toBe(shown.score);
    expect(hidden.threatLevel).toBe('Malicious');
    expect(hidden.primaryThreat).toBe(NO_THREATS);
    expect(hidden.threatSummary).not.toMatch(/Win\.Trojan/);
    expect(hidden.suppressedEngines).toEqual(['clamav']);
  });
  it('suppressedEngines appears only when a suppressed engine actually fired', () => {
    const v = computeVerdict({ engines: [ok('clamav'), ok('yara', [f('medium')])], coverage: 'full', suppressedEngines: ['clamav'] });
    expect(v.suppressedEngines).toBeUndefined();
    expect(v.primaryThreat).toBe('Threat medium');
  });
  it('hides CVE records of a suppressed engine', () => {
    const cve = { id: 'CVE-2021-44228', description: 'Log4Shell', cvss: 10, references: [] };
    const e = [ok('cve', [f('high', { cve })])];
    expect(computeVerdict({ engines: e, coverage: 'minimal' }).cveFindings).toEqual([cve]);
    expect(computeVerdict({ engines: e, coverage: 'minimal', suppressedEngines: ['cve'] }).cveFindings).toBeUndefined();
  });
});

describe('verdict: confidence, summary, enginesUsed, rounding', () => {
  it('engines that failed reduce confidence and are named in confidenceReason and coverageNote', () => {
    const all = computeVerdict({ engines: [ok('clamav'), ok('yara')], coverage: 'full' });
    const failed = computeVerdict({
      engines: [{ engine: 'clamav', status: 'unavailable', durationMs: 0, findings: [], note: 'clamd not reachable at 127.0.0.1:3310 (ECONNREFUSED)' }, ok('yara')],
      coverage: 'full',
    });
    expect(failed.confidenceScore).toBeLessThan(all.confidenceScore);
    expect(failed.confidenceReason).toMatch(/clamav unavailable \(clamd not reachable/);
    expect(failed.coverageNote).toMatch(/clamav \(unavailable\)/);
    expect(failed.enginesUsed).toEqual(['yara']);
  });
  it('enginesUsed lists only engines with status ok', () => {
    const v = computeVerdict({ engines: [ok('a'), { engine: 'b', status: 'timeout', durationMs: 5, findings: [] }, { engine: 'c', status: 'error', durationMs: 1, findings: [] }], coverage: 'partial' });
    expect(v.enginesUsed).toEqual(['a']);
  });
  it('confidence label follows confidenceScore', () => {
    const v = computeVerdict({ engines: [ok('clamav', [f('critical', { confidence: 1 })]), ok('yara', [f('critical', { confidence: 1 })])], coverage: 'full' });
    expect(v.confidence).toBe('High');
    const low = computeVerdict({ engines: [ok('x', [f('medium', { confidence: 0.1 })]), { engine: 'a', status: 'error', durationMs: 1, findings: [] }, { engine: 'b', status: 'error', durationMs: 1, findings: [] }, { engine: 'c', status: 'error', durationMs: 1, findings: [] }], coverage: 'minimal' });
    expect(low.confidence).toBe('Low');
  });
  it('keeps full precision (publicResult rounds once, at output); the score is an integer and the label follows the answered score', () => {
    const v = computeVerdict({ engines: [ok('x', [f('high', { confidence: 0.123456, cve: { id: 'CVE-1', description: '', cvss: 7.456, references: [] } })])], coverage: 'partial' });
    expect(Number.isInteger(v.score)).toBe(true);
    expect(v.cveFindings?.[0].cvss).toBe(7.456);
    expect(v.confidenceScore).not.toBe(round2(v.confidenceScore));
    const answered = round2Deep(v);
    expect(answered.cveFindings?.[0].cvss).toBe(7.46);
    expect(answered.confidenceScore).toBe(round2(v.confidenceScore));
    // 0.5 * 0.75 (partial coverage) + 0.5 * 0.8451 = 0.79755, answered as 0.8: High, as the answer reads.
    const near = computeVerdict({ engines: [ok('x', [f('high', { confidence: 0.8451 })])], coverage: 'partial' });
    expect([round2(near.confidenceScore), near.confidence]).toEqual([0.8, 'High']);
  });
  it('threatSummary names the findings; primaryThreat is the worst finding', () => {
    const v = computeVerdict({ engines: [ok('yara', [f('medium', { name: 'Miner' })]), ok('clamav', [f('critical', { name: 'Eicar-Test-Signature' })])], coverage: 'partial' });
    expect(v.primaryThreat).toBe('Eicar-Test-Signature');
    expect(v.threatSummary).toMatch(/2 findings from 2 engines/);
    expect(v.threatSummary).toMatch(/clamav: Eicar-Test-Signature \(critical\)/);
  });
});

describe('verdict: archive members', () => {
  it('the worst member drives the verdict and is named in primaryThreat', () => {
    const v = computeVerdict({
      engines: [
        ok('clamav', [f('critical', { name: 'Eicar-Test-Signature', member: 'a.zip/b/eicar.com' })]),
        ok('yara', [f('low', { name: 'Minor thing', member: 'a.zip/notes.txt' })]),
      ],
      coverage: 'partial',
    });
    expect(v.threatLevel).toBe('Malicious');
    expect(v.primaryThreat).toBe('Eicar-Test-Signature in a.zip/b/eicar.com');
    expect(v.threatSummary).toMatch(/a\.zip\/b\/eicar\.com/);
  });
  it('findings on different members do not count as agreement', () => {
    const same = computeVerdict({ engines: [ok('a', [f('medium', { member: 'z/x' })]), ok('b', [f('medium', { member: 'z/x' })])], coverage: 'partial' });
    const apart = computeVerdict({ engines: [ok('a', [f('medium', { member: 'z/x' })]), ok('b', [f('medium', { member: 'z/y' })])], coverage: 'partial' });
    expect(same.score).toBeLessThan(apart.score);
  });
});
