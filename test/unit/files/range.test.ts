/** HTTP Range parsing for GET /api/files/{id}/video (src/files/range.ts). */
import { parseRange } from '../../../src/files/range';

describe('parseRange', () => {
  const size = 1000;
  it.each([
    [undefined, { kind: 'full' }],
    ['', { kind: 'full' }],
    ['bytes=0-99', { kind: 'partial', start: 0, end: 99 }],
    ['bytes=100-', { kind: 'partial', start: 100, end: 999 }],
    ['bytes=-10', { kind: 'partial', start: 990, end: 999 }],
    ['bytes=-5000', { kind: 'partial', start: 0, end: 999 }],
    ['bytes=990-5000', { kind: 'partial', start: 990, end: 999 }],
    ['BYTES = 5-5', { kind: 'partial', start: 5, end: 5 }],
    // Another unit, or several ranges: the whole content (a server may ignore Range).
    ['items=0-1', { kind: 'full' }],
    ['bytes=0-1,5-6', { kind: 'full' }],
    // Past the end, reversed, empty suffix, garbage: 416.
    ['bytes=1000-', { kind: 'unsatisfiable' }],
    ['bytes=5-2', { kind: 'unsatisfiable' }],
    ['bytes=-0', { kind: 'unsatisfiable' }],
    ['bytes=-', { kind: 'unsatisfiable' }],
    ['bytes=abc', { kind: 'unsatisfiable' }],
    ['bytes=1.5-3', { kind: 'unsatisfiable' }],
  ])('%s', (header, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });

  it('has nothing to serve from an empty part', () => {
    expect(parseRange('bytes=0-', 0)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=-1', 0)).toEqual({ kind: 'unsatisfiable' });
  });
});
