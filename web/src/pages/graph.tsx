/**
 * The drawing of a workflow graph (layout: graph-layout.ts). Loop edges are drawn as dashed arcs
 * below. Nodes and edges named by a validation error are marked; a run's node statuses colour
 * the nodes.
 */
import type { FlowEdge, FlowNode } from '../types';
import { layout, GAP_X, H, W } from './graph-layout';

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
