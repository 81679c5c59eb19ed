/**
 * Layered layout of a workflow graph, left to right: each node in the column of its longest path
 * from a start node (no incoming edge). Loop edges (those reaching a node still on the
 * depth-first walk from the start nodes, as the service defines loops) are left out of the
 * layering and reported in `back`. Pure, so it is unit-tested without a browser.
 */
interface GraphNode { id: string }
interface GraphEdge { from: string; to: string }

export const W = 160;
export const H = 46;
export const GAP_X = 60;
const GAP_Y = 22;
const PAD = 12;

export interface Layout { pos: Map<string, { x: number; y: number }>; back: Set<number>; width: number; height: number }

export function layout(nodes: GraphNode[], edges: GraphEdge[]): Layout {
  const ids = nodes.map((n) => n.id);
  const known = new Set(ids);
  const out = new Map<string, { to: string; i: number }[]>(ids.map((id) => [id, []]));
  const hasIncoming = new Set<string>();
  edges.forEach((e, i) => {
    if (!known.has(e.from) || !known.has(e.to)) return;
    out.get(e.from)?.push({ to: e.to, i });
    hasIncoming.add(e.to);
  });
  const back = new Set<number>();
  const state = new Map<string, 'open' | 'done'>();
  const walk = (id: string) => {
    state.set(id, 'open');
    for (const { to, i } of out.get(id) ?? []) {
      const s = state.get(to);
      if (s === 'open') back.add(i);
      else if (s === undefined) walk(to);
    }
    state.set(id, 'done');
  };
  for (const id of ids) if (!hasIncoming.has(id) && !state.has(id)) walk(id);
  for (const id of ids) if (!state.has(id)) walk(id);

  // Longest path over the forward edges, in topological order (Kahn).
  const indegree = new Map<string, number>(ids.map((id) => [id, 0]));
  edges.forEach((e, i) => { if (!back.has(i) && known.has(e.from) && known.has(e.to)) indegree.set(e.to, (indegree.get(e.to) ?? 0) + 1); });
  const layer = new Map<string, number>(ids.map((id) => [id, 0]));
  const queue = ids.filter((id) => indegree.get(id) === 0);
  while (queue.length) {
    const id = queue.shift() as string;
    for (const { to, i } of out.get(id) ?? []) {
      if (back.has(i)) continue;
      layer.set(to, Math.max(layer.get(to) ?? 0, (layer.get(id) ?? 0) + 1));
      indegree.set(to, (indegree.get(to) ?? 1) - 1);
      if (indegree.get(to) === 0) queue.push(to);
    }
  }
  const rows = new Map<number, number>();
  const pos = new Map<string, { x: number; y: number }>();
  for (const id of ids) {
    if (pos.has(id)) continue;
    const l = layer.get(id) ?? 0;
    const r = rows.get(l) ?? 0;
    rows.set(l, r + 1);
    pos.set(id, { x: PAD + l * (W + GAP_X), y: PAD + r * (H + GAP_Y) });
  }
  const columns = Math.max(1, ...[...rows.keys()].map((l) => l + 1));
  const tallest = Math.max(1, ...rows.values());
  return { pos, back, width: PAD * 2 + columns * W + (columns - 1) * GAP_X, height: PAD * 2 + tallest * H + (tallest - 1) * GAP_Y + (back.size ? 40 : 0) };
}

