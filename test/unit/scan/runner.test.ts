import { EngineUnavailableError, runEngine } from '../../../src/scan/runner';
import { FileAnalysis } from '../../../src/scan/file-analysis';
import type { Engine, ScanSubject } from '../../../src/scan/types';

const content = Buffer.from('x');
const subject: ScanSubject = { content, name: '', size: 1, fileType: 'text', contentType: 'text/plain', sha256: '', md5: '', sha1: '', depth: 0, scanType: 'file', file: new FileAnalysis(content) };
const engine = (name: string, scan: Engine['scan']): Engine => ({ name, scan });

describe('runner', () => {
  it('records ok results with duration, fills finding.engine, clamps confidence and keeps its precision (rounded only at output)', async () => {
    const r = await runEngine(engine('e1', async () => ({ findings: [
      { id: 'x', name: 'X', severity: 'low', confidence: 0.33333, description: 'd', excerpt: 'y'.repeat(500) },
      { id: 'y', name: 'Y', severity: 'low', confidence: 1.7, description: 'd' },
    ] })), subject, 1000);
    expect(r).toMatchObject({ engine: 'e1', status: 'ok' });
    expect(r.findings[0]).toMatchObject({ engine: 'e1', confidence: 0.33333 });
    expect(r.findings[1].confidence).toBe(1);
    expect(r.findings[0].excerpt).toHaveLength(200);
    expect(r.durationMs).toBeGreaterThanOrEqual(0);
  });
  it('turns a throw into status error with the message', async () => {
    const r = await runEngine(engine('boom', async () => { throw new Error('parser exploded'); }), subject, 1000);
    expect(r).toMatchObject({ engine: 'boom', status: 'error', note: 'parser exploded', findings: [] });
  });
  it('turns a budget overrun into status timeout and aborts the engine signal', async () => {
    let aborted = false;
    const r = await runEngine(engine('slow', (_s, ctx) => new Promise((resolve) => {
      const timer = setTimeout(() => resolve({ findings: [] }), 5000);
      ctx.signal.addEventListener('abort', () => { aborted = true; clearTimeout(timer); });
    })), subject, 100);
    expect(r.status).toBe('timeout');
    expect(aborted).toBe(true);
  });
  it('maps EngineUnavailableError to status unavailable', async () => {
    const r = await runEngine(engine('clamav', async () => { throw new EngineUnavailableError('clamd not reachable'); }), subject, 1000);
    expect(r).toMatchObject({ status: 'unavailable', note: 'clamd not reachable' });
  });
});
