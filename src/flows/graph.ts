/**
 * The shape of a workflow graph, shared by validation (API) and the interpreter (Temporal
 * workflow sandbox): pure code, no I/O, no Node.js modules.
 *
 * Back edges are found by a depth-first walk from the start nodes (nodes with no incoming edge)
 * in definition order: an edge into a node still on the walk's stack closes a loop. Joins wait
 * only on forward edges; the graph depth counts nodes on the longest path over forward edges.
 */
export interface GraphNode { id: string }
export interface GraphEdge { from: string; to: string; when?: string }

export interface GraphShape {
  starts: string[];
  /** Indexes (into the edge list) of the edges that close a loop. */
  backEdges: Set<number>;
  outgoing: Map<string, number[]>;
  incoming: Map<string, number[]>;
}

export function analyzeGraph(nodes: readonly GraphNode[], edges: readonly GraphEdge[]): GraphShape {
  const outgoing = new Map<string, number[]>();
  const incoming = new Map<string, number[]>();
  for (const n of nodes) {
    outgoing.set(n.id, []);
    incoming.set(n.id, []);
  }
  edges.forEach((e, i) => {
    outgoing.get(e.from)?.push(i);
    incoming.get(e.to)?.push(i);
  });
  const starts = nodes.filter((n) => (incoming.get(n.id) ?? []).length === 0).map((n) => n.id);
  const backEdges = new Set<number>();
  const state = new Map<string, 'open' | 'done'>();
  // Iterative DFS: a hostile definition of 1,000 nodes in a chain must not exhaust the stack.
  const walkFrom = (root: string) => {
    if (state.has(root)) return;
    const stack: Array<{ id: string; next: number }> = [{ id: root, next: 0 }];
    state.set(root, 'open');
    while (stack.length) {
      const top = stack[stack.length - 1];
      const outs = outgoing.get(top.id) ?? [];
      if (top.next >= outs.length) {
        state.set(top.id, 'done');
        stack.pop();
        continue;
      }
      const ei = outs[top.next++];
      const to = edges[ei].to;
      const s = state.get(to);
      if (s === 'open') backEdges.add(ei);
      else if (s === undefined) {
        state.set(to, 'open');
        stack.push({ id: to, next: 0 });
      }
    }
  };
  for (const s of starts) walkFrom(s);
  // Nodes reachable only inside a cycle with no entry still get their loop edge classified.
  for (const n of nodes) walkFrom(n.id);
  return { starts, backEdges, outgoing, incoming };
}

/** Nodes on the longest path over forward edges (Kahn's order over the acyclic remainder). */
export function graphDepth(nodes: readonly GraphNode[], edges: readonly GraphEdge[], shape = analyzeGraph(nodes, edges)): number {
  const indeg = new Map<string, number>();
  for (const n of nodes) indeg.set(n.id, 0);
  edges.forEach((e, i) => {
    if (!shape.backEdges.has(i)) indeg.set(e.to, (indeg.get(e.to) ?? 0) + 1);
  });
  const depth = new Map<string, number>();
  const queue: string[] = [];
  for (const n of nodes) {
    if (indeg.get(n.id) === 0) {
      queue.push(n.id);
      depth.set(n.id, 1);
    }
  }
  let max = nodes.length ? 1 : 0;
  for (let qi = 0; qi < queue.length; qi++) {
    const id = queue[qi];
    const d = depth.get(id) ?? 1;
    for (const ei of shape.outgoing.get(id) ?? []) {
      if (shape.backEdges.has(ei)) continue;
      const to = edges[ei].to;
      depth.set(to, Math.max(depth.get(to) ?? 0, d + 1));
      max = Math.max(max, d + 1);
      const left = (indeg.get(to) ?? 0) - 1;
      indeg.set(to, left);
      if (left === 0) queue.push(to);
    }
  }
  return max;
}
