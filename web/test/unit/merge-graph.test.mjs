import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGraph, ancestry, layoutGraph } from '../../src/merge-graph.js';
import { cascade, ROOT, MERGE, OTHER } from './fixture.mjs';

const mls = () => new Map(cascade().mergelogs.map((m) => [m.cpid, m]));

test('nodes are the related CPIDs, edges go from sources; outside sources are external nodes', () => {
  const g = buildGraph([ROOT, MERGE], mls());
  assert.deepEqual(g.nodes.map((n) => [n.id, n.root, n.external]), [[ROOT, true, false], [MERGE, false, false], [OTHER, false, true]]);
  assert.deepEqual(g.edges, [{ from: ROOT, to: MERGE }, { from: OTHER, to: MERGE }]);
  assert.equal(g.byId.get(ROOT).component, 'kubernetes-admin');
  assert.equal(g.byId.get(MERGE).object, 'Pod default/web-abc-x1');
});

test('a graph over the limit keeps the first CPIDs and says how many it left out', () => {
  const g = buildGraph([ROOT, MERGE], mls(), 1);
  assert.deepEqual(g.nodes.map((n) => n.id), [ROOT]);
  assert.equal(g.omitted, 1);
  assert.equal(g.edges.length, 0);
});

test('ancestry: every path back to the roots', () => {
  const ids = ['a', 'b', 'c', 'd', 'e'];
  const g = { edges: [{ from: 'a', to: 'b' }, { from: 'b', to: 'd' }, { from: 'c', to: 'd' }, { from: 'd', to: 'e' }, { from: 'a', to: 'c' }] };
  const an = ancestry(g, 'd');
  assert.deepEqual([...an.nodes].sort(), ['a', 'b', 'c', 'd']);
  assert.deepEqual([...an.edges].sort(), ['a>b', 'a>c', 'b>d', 'c>d']);
  assert.equal(ancestry(g, 'a').nodes.size, 1);
  assert.ok(ids.length);
});

test('dagre lays sources out above what they merged into', () => {
  const g = buildGraph([ROOT, MERGE], mls());
  const l = layoutGraph(g);
  assert.ok(l.nodes.get(ROOT).y < l.nodes.get(MERGE).y);
  assert.ok(l.width > 0 && l.height > 0);
  assert.ok(l.edges.every((e) => e.points.length >= 2));
});
