/** The dashboard's workflow graph layout: columns by longest path, loop edges found and set aside. */
import { GAP_X, layout, W } from '../../../web/src/pages/graph-layout';

const nodes = (...ids: string[]) => ids.map((id) => ({ id }));
const column = (l: ReturnType<typeof layout>, id: string) => Math.round(((l.pos.get(id)?.x ?? NaN) - 12) / (W + GAP_X));

describe('workflow graph layout', () => {
  it('puts each node in the column of its longest path from a start node', () => {
    // a → b → c → d and a shortcut a → d: d sits after c, not beside b.
    const l = layout(nodes('a', 'b', 'c', 'd'), [{ from: 'a', to: 'b' }, { from: 'b', to: 'c' }, { from: 'c', to: 'd' }, { from: 'a', to: 'd' }]);
    expect(['a', 'b', 'c', 'd'].map((id) => column(l, id))).toEqual([0, 1, 2, 3]);
    expect(l.back.size).toBe(0);
  });

  it('stacks parallel branches in one column and joins after the longer one', () => {
    const l = layout(nodes('start', 'x', 'y', 'y2', 'join'), [
      { from: 'start', to: 'x' }, { from: 'start', to: 'y' }, { from: 'y', to: 'y2' }, { from: 'x', to: 'join' }, { from: 'y2', to: 'join' },
    ]);
    expect(column(l, 'x')).toBe(1);
    expect(column(l, 'y')).toBe(1);
    expect(l.pos.get('x')?.y).not.toBe(l.pos.get('y')?.y);
    expect(column(l, 'join')).toBe(3);
  });

  it('sets a loop edge apart and still lays out every node', () => {
    // inc → check → (true) back to inc: edge 2 is the loop.
    const l = layout(nodes('init', 'inc', 'check', 'done'), [
      { from: 'init', to: 'inc' }, { from: 'inc', to: 'check' }, { from: 'check', to: 'inc' }, { from: 'check', to: 'done' },
    ]);
    expect([...l.back]).toEqual([2]);
    expect(['init', 'inc', 'check', 'done'].map((id) => column(l, id))).toEqual([0, 1, 2, 3]);
  });

  it('lays out a cycle without any start node, and ignores edges to unknown nodes', () => {
    const l = layout(nodes('p', 'q'), [{ from: 'p', to: 'q' }, { from: 'q', to: 'p' }, { from: 'q', to: 'ghost' }]);
    expect(l.back.size).toBe(1);
    expect(l.pos.size).toBe(2);
    expect(new Set([column(l, 'p'), column(l, 'q')])).toEqual(new Set([0, 1]));
  });
});
