/*
 * The merge graph of a trace, pure: CPIDs as nodes, an edge from each mergelog source to
 * its CPID, roots (no sources) marked with who made them, and the ancestors of a CPID
 * (every path back to its roots) for highlighting. Laid out top to bottom by dagre.
 */
import { Graph, layout } from '@dagrejs/dagre';
import { shortCpid } from './cpid.js';

export const GRAPH_LIMIT = 300;

/*
 * Nodes and edges of the related CPIDs (in the server's breadth-first order), at most
 * `limit` of them; sources outside the trace (another change merged in) are added as
 * external nodes. Returns {nodes, edges, byId, omitted}.
 */
export function buildGraph(related, mergelogs, limit = GRAPH_LIMIT) {
  const ids = related.slice(0, limit);
  const omitted = Math.max(0, related.length - ids.length);
  const byId = new Map();
  for (const id of ids) byId.set(id, nodeOf(id, mergelogs.get(id), false));
  const all = new Set(related);
  const edges = [];
  for (const id of ids) {
    const ml = mergelogs.get(id);
    for (const src of new Set(ml?.sources ?? [])) {
      if (!byId.has(src)) {
        if (all.has(src)) continue;
        byId.set(src, nodeOf(src, mergelogs.get(src), true));
      }
      edges.push({ from: src, to: id });
    }
  }
  return { nodes: [...byId.values()], edges, byId, omitted };
}

function nodeOf(id, ml, external) {
  const ob = ml?.object ?? {};
  const object = ob.kind ? `${ob.kind} ${ob.namespace ? ob.namespace + '/' : ''}${ob.name ?? ''}`.trim() : '';
  return { id, short: shortCpid(id), component: ml?.component ?? '', object, external,
    known: !!ml, root: !!ml && (ml.sources ?? []).length === 0, time: ml?.time ?? '' };
}

/*
 * The ancestors of `id` in the graph (itself included) and the edges between them:
 * all paths back to its roots. {nodes: Set, edges: Set of "from>to"}.
 */
export function ancestry(graph, id) {
  const incoming = new Map();
  for (const e of graph.edges) {
    if (!incoming.has(e.to)) incoming.set(e.to, []);
    incoming.get(e.to).push(e.from);
  }
  const nodes = new Set([id]);
  const edges = new Set();
  const queue = [id];
  while (queue.length) {
    const n = queue.shift();
    for (const from of incoming.get(n) ?? []) {
      edges.add(`${from}>${n}`);
      if (!nodes.has(from)) {
        nodes.add(from);
        queue.push(from);
      }
    }
  }
  return { nodes, edges };
}

/* Positions from dagre: {width, height, nodes: Map id -> {x, y}, edges: [{from, to, points}]}. */
export function layoutGraph(graph, nodeWidth = 220, nodeHeight = 54) {
  const g = new Graph();
  g.setGraph({ rankdir: 'TB', nodesep: 24, ranksep: 46, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of graph.nodes) g.setNode(n.id, { width: nodeWidth, height: nodeHeight });
  for (const e of graph.edges) g.setEdge(e.from, e.to);
  layout(g);
  const nodes = new Map(graph.nodes.map((n) => [n.id, { x: g.node(n.id).x, y: g.node(n.id).y }]));
  const edges = graph.edges.map((e) => ({ ...e, points: g.edge(e.from, e.to).points }));
  const { width, height } = g.graph();
  return { width, height, nodes, edges, nodeWidth, nodeHeight };
}
