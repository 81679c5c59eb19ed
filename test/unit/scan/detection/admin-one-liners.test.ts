/**
 * Regression check for the script model's short-text level (and the technique rules): ordinary
 * admin one-liners, saved as the script they are or pasted into a text file, stay below
 * Suspicious. A model whose short level flags them is not shipped (docs/detection.md).
 */
import { analyze, type AnalyzeDeps } from '../../../../src/scan/analyze';
import { memoryFeedLookup, parsePlainHashList } from '../../../../src/scan/engines/feeds';
import { ADMIN_ONE_LINERS } from './admin-one-liners';

const deps: AnalyzeDeps = { clamd: { host: '127.0.0.1', port: 1 }, feedLookup: memoryFeedLookup(parsePlainHashList('', 'test')) };

describe('ordinary admin one-liners', () => {
  it('the list is the size the docs state (at least 60)', () => {
    expect(ADMIN_ONE_LINERS.length).toBeGreaterThanOrEqual(60);
  });

  it.each(ADMIN_ONE_LINERS.flatMap(([name, cmd]) => [[name, cmd], ['command.txt', cmd]]))('%s: %s', async (name, cmd) => {
    const r = await analyze({ content: Buffer.from(`${cmd}\n`), name, scanType: 'file' }, deps);
    const flagged = r.safetyScore.threatLevel === 'Suspicious' || r.safetyScore.threatLevel === 'Malicious';
    // On failure, the findings that made it Suspicious are the message.
    expect(flagged ? Object.values(r.engines).flatMap((e) => e.findings.map((f) => `${f.id} (${f.severity})`)) : []).toEqual([]);
  });
});
