/**
 * The project-written benign training lines (scripts/admin-shapes.ts) stay apart from the
 * admin one-liner check (admin-one-liners.ts): a line in both would let the model learn the
 * check's answer, and the check must stay an independent test of the shipped model.
 */
import { ADMIN_SHAPES } from '../../../../scripts/admin-shapes';
import { ADMIN_ONE_LINERS } from './admin-one-liners';
import { DEV_ONE_LINERS, DEV_ONE_LINERS_STILL_FLAGGED } from './dev-one-liners';

/** Case and spacing do not make a different command line. */
const key = (line: string): string => line.trim().replace(/\s+/g, ' ').toLowerCase();

describe('benign admin training lines', () => {
  it('share no line with the admin and developer one-liner checks', () => {
    const checked = new Set([...ADMIN_ONE_LINERS, ...DEV_ONE_LINERS, ...DEV_ONE_LINERS_STILL_FLAGGED].map(([, cmd]) => key(cmd)));
    expect(ADMIN_SHAPES.filter((line) => checked.has(key(line)))).toEqual([]);
  });

  it('hold no line twice (a repeat would weigh double in training)', () => {
    const seen = new Set<string>();
    expect(ADMIN_SHAPES.filter((line) => seen.has(key(line)) || !seen.add(key(line)))).toEqual([]);
  });

  it('are the few hundred lines the docs state', () => {
    expect(ADMIN_SHAPES.length).toBeGreaterThanOrEqual(300);
  });
});
