import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildModel, flattenRows, mergeIntervals, subtreeSummary, objectOf, ancestorKeys, normalizeSpans } from '../../src/model.js';
import { cascade, ROOT, MERGE } from './fixture.mjs';

const keys = (rows) => rows.map((r) => `${'  '.repeat(r.depth)}${r.node.key}`);

test('t = 0 is the earliest span start; duration is the latest end', () => {
  const m = buildModel(cascade());
  assert.equal(m.spans[0].start, 0);
  assert.ok(Math.abs(m.duration - 140) < 1e-6, String(m.duration));
  assert.equal(m.root.cpid, ROOT);
  assert.deepEqual([...m.cpids].sort(), [ROOT, MERGE].sort());
});

test('by object: Deployment > ReplicaSet > Pods, creates in "Pod (created)" under the owner', () => {
  const m = buildModel(cascade());
  assert.deepEqual(keys(flattenRows(m.byObject, new Set())), [
    'Deployment/default/web',
    '  ReplicaSet/default/web-abc',
    '    Pod/default/(created)@ReplicaSet/default/web-abc',
    '    Pod/default/web-abc-x1',
    '    Pod/default/web-abc-x2',
    '~other-sender',
  ]);
  const created = m.byObject.nodes.get('Pod/default/(created)@ReplicaSet/default/web-abc');
  assert.equal(created.label, 'Pod (created)');
  assert.equal(created.spans.length, 2);
  assert.equal(m.byObject.nodes.get('Pod/default/web-abc-x2').spans.length, 2);
  assert.equal(m.byObject.nodes.get('~other-sender').label, 'other-sender (no object)');
});

test('merges are marks on the object the CPID was made on', () => {
  const m = buildModel(cascade());
  const pod = m.byObject.nodes.get('Pod/default/web-abc-x1');
  assert.deepEqual(pod.marks.map((x) => [x.cpid, x.root]), [[MERGE, false]]);
  assert.deepEqual(m.byObject.nodes.get('Deployment/default/web').marks.map((x) => x.root), [true]);
});

test('collapsing a row hides everything below it', () => {
  const m = buildModel(cascade());
  const rows = flattenRows(m.byObject, new Set(['ReplicaSet/default/web-abc']));
  assert.deepEqual(keys(rows), ['Deployment/default/web', '  ReplicaSet/default/web-abc', '~other-sender']);
  const pod = m.byObject.nodes.get('Pod/default/web-abc-x2');
  assert.deepEqual(ancestorKeys(pod), ['ReplicaSet/default/web-abc', 'Deployment/default/web']);
});

test('by component: a row per service, in order of first write, objects below', () => {
  const m = buildModel(cascade());
  const top = m.byComponent.roots.map((n) => n.key);
  assert.deepEqual(top, ['kubernetes-admin', 'deployment-controller', 'replicaset-controller', 'default-scheduler', 'other-sender', 'kwok-controller']);
  const sched = m.byComponent.nodes.get('default-scheduler');
  assert.deepEqual(sched.children.map((c) => c.key), ['default-scheduler>Pod/default/web-abc-x1', 'default-scheduler>Pod/default/web-abc-x2']);
  assert.equal(m.byComponent.nodes.get('kwok-controller').marks.length, 1);
  assert.deepEqual(m.services, ['kubernetes-admin', 'deployment-controller', 'replicaset-controller', 'default-scheduler', 'other-sender', 'kwok-controller']);
});

test('an owner without writes of its own still gets a row; owners never form a cycle', () => {
  const data = cascade();
  data.spans = data.spans.filter((s) => s.attributes?.kind === 'Pod');
  const m = buildModel(data);
  assert.deepEqual(m.byObject.roots.map((n) => n.key), ['Deployment/default/web', 'ReplicaSet/default/web-abc']);
  assert.equal(m.byObject.nodes.get('ReplicaSet/default/web-abc').children.length, 3);
  const loop = { ...data, spans: [
    { ...data.spans[0], span_id: 'a1', attributes: { kind: 'A', namespace: 'n', name: 'a', owner: 'B/b' } },
    { ...data.spans[0], span_id: 'b1', attributes: { kind: 'B', namespace: 'n', name: 'b', owner: 'A/a' } }], mergelogs: [] };
  const lm = buildModel(loop);
  const rows = flattenRows(lm.byObject, new Set());
  assert.equal(rows.length, 2);
});

test('spans sent twice (same cpid and span_id) count once; bad times are dropped', () => {
  const data = cascade();
  data.spans.push({ ...data.spans[0] }, { ...data.spans[1], span_id: 'ffff', start: 'nope' });
  assert.equal(normalizeSpans(data.spans).length, 9);
  assert.equal(buildModel(data).spans.length, 9);
});

test('intervals merge when they overlap or touch; a parent summarises its subtree', () => {
  assert.deepEqual(mergeIntervals([[5, 6], [0, 2], [1, 3], [3, 4], [8, 9]]), [[0, 4], [5, 6], [8, 9]]);
  const m = buildModel(cascade());
  const sum = subtreeSummary(m.byObject.nodes.get('ReplicaSet/default/web-abc'));
  assert.equal(sum.count, 7);
  assert.deepEqual(sum.coverage.map(([a, b]) => [Math.round(a), Math.round(b)]), [[0, 30], [40, 140]]);
});

test('objectOf: names, cluster-scoped objects, owners', () => {
  assert.equal(objectOf({ kind: 'Node', name: 'n1' }, 's').label, 'Node n1');
  assert.equal(objectOf({ kind: 'Pod', namespace: 'a', name: '', owner: 'Job/j' }, 's').key, 'Pod/a/(created)@Job/a/j');
  assert.equal(objectOf({ kind: 'Pod', namespace: 'a', name: 'p', owner: 'garbage' }, 's').owner, null);
});

test('normalizeSpans: a span id repeated in another CPID is another span; spans of one object share its row', () => {
  const sp = (cpid, id, name) => ({ cpid, span_id: id, service: 's', name: 'n', start: '2026-11-21T22:18:34.000000000Z',
    end: '2026-11-21T22:18:35.001000000Z', attributes: { kind: 'Pod', namespace: 'a', name } });
  const out = normalizeSpans([sp('c1', 'x', 'p'), sp('c1', 'x', 'p'), sp('c2', 'x', 'p'), sp('c3', 'x', 'q'), sp('c2', 'x', 'p')]);
  assert.deepEqual(out.map((s) => s.cpid), ['c1', 'c2', 'c3']);
  assert.equal(out[0].obj, out[1].obj);
  assert.notEqual(out[0].obj, out[2].obj);
  assert.equal(out[2].objectKey, 'Pod/a/q');
  assert.equal(out[0].endAbs - out[0].startAbs, 1001);
});
