/**
 * The drawing of a workflow graph: a layered layout, left to right, each node in the column of
 * its longest path from a start node. Loop edges (back to a node already on the walk, as the
 * service defines loops) are left out of the layering and drawn as arcs below. Nodes named by a
 * validation error, and edges, are marked; a run's node statuses colour the nodes.
 */
import type { FlowEdge, FlowNode } from '../types';

const W = 160;
const H = 46;
const GAP_X = 60;
const GAP_Y = 22;
const PAD = 12;

export interface Layout { pos: Map<string, { x: number; y: number }>; back: Set<number>; width: number; height: number }

export function layout(nodes: FlowNode[], edges: FlowEdge[]): Layout {
  const ids = nodes.map((n) => n.id);
  const known = new Set(ids);
  const out = new Map<string, { to: string; i: number }[]>(ids.map((id) => [id, []]));
  const hasIncoming = new Set<string>();
  edges.forEach((e, i) => {
    if (!known.has(e.from) || !known.has(e.to)) return;
    out.get(e.from)?.push({ to: e.to, i });
    hasIncoming.add(e.to);
  });
  // Loop edges: those reaching a node still on the depth-first walk from the start nodes.
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

const short = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function Graph({ nodes, edges, badNodes, badEdges, status }: {
  nodes: FlowNode[]; edges: FlowEdge[]; badNodes: Set<string>; badEdges: Set<number>; status?: Map<string, string>;
}) {
  const l = layout(nodes, edges);
  const label = `Graph of ${nodes.length} nodes and ${edges.length} edges${badNodes.size ? `; nodes with errors: ${[...badNodes].join(', ')}` : ''}`;
  return (
    <div class="graph-wrap">
      <svg class="graph" width={l.width} height={l.height} viewBox={`0 0 ${l.width} ${l.height}`} role="img" aria-label={label}>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" class="arrow" />
          </marker>
        </defs>
        {edges.map((e, i) => {
          const a = l.pos.get(e.from);
          const b = l.pos.get(e.to);
          if (!a || !b) return null;
          const cls = `edge${badEdges.has(i) ? ' bad' : ''}${l.back.has(i) ? ' loop' : ''}`;
          let d: string;
          let mid: { x: number; y: number };
          if (l.back.has(i)) {
            const low = Math.max(a.y, b.y) + H + 30;
            d = `M ${a.x + W / 2} ${a.y + H} C ${a.x + W / 2} ${low}, ${b.x + W / 2} ${low}, ${b.x + W / 2} ${b.y + H}`;
            mid = { x: (a.x + b.x + W) / 2, y: low - 8 };
          } else {
            const x1 = a.x + W;
            const y1 = a.y + H / 2;
            const x2 = b.x;
            const y2 = b.y + H / 2;
            d = `M ${x1} ${y1} C ${x1 + GAP_X / 2} ${y1}, ${x2 - GAP_X / 2} ${y2}, ${x2} ${y2}`;
            mid = { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 4 };
          }
          return (
            <g key={`e${i}`} class={cls} data-edge={i}>
              <path d={d} marker-end="url(#arrow)" />
              {e.when ? <text x={mid.x} y={mid.y} text-anchor="middle" class="when">{e.when}</text> : null}
            </g>
          );
        })}
        {nodes.map((n) => {
          const p = l.pos.get(n.id);
          if (!p) return null;
          const st = status?.get(n.id);
          return (
            <g key={n.id} class={`node${badNodes.has(n.id) ? ' bad' : ''}${st ? ` st-${st}` : ''}`} data-node={n.id}>
              <title>{`${n.id} (${n.type})${st ? `: ${st}` : ''}${badNodes.has(n.id) ? ': has a validation error' : ''}`}</title>
              <rect x={p.x} y={p.y} width={W} height={H} rx="6" />
              <text x={p.x + 10} y={p.y + 19} class="nid">{short(n.id, 20)}</text>
              <text x={p.x + 10} y={p.y + 36} class="ntype">{short(String(n.type), 14)}{st ? ` · ${st}` : ''}</text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
