import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareRows, pathKeys, pathRows, pathSpans, signed, sideText, spanKey, writerRows } from '../../src/critpath.js';
import { formatDuration } from '../../src/time.js';

const A = '00000011-0000-4000-8000-000000000000';
const N = '00000021-0000-4000-8000-000000000000';

/* The critical path of a scale (tests/server/analysis/test_paths.c): the person's update,
 * the ReplicaSet's, a binding 2 s late, the Pod's status. */
const PATH = {
  cpid: A, scope: 'own', truncated: false, writes: 5, total_ms: 2090,
  hops: [
    { cpid: A, span_id: '0000000000000451', component: 'kubernetes-admin', write: 'update deployments', kind: 'Deployment', namespace: 'd', name: 'web', ms: 0 },
    { cpid: N, span_id: '0000000000000835', component: 'deployment-controller', write: 'update replicasets', kind: 'ReplicaSet', namespace: 'd', name: 'web-1', ms: 10 },
    { cpid: N, span_id: '0000000000000837', component: 'kube-scheduler', write: 'create pods/binding', kind: 'Pod', namespace: 'd', name: 'web-1-a', ms: 2030 },
    { cpid: N, span_id: '0000000000000838', component: 'kwok', write: 'update pods/status', kind: 'Pod', namespace: 'd', name: 'web-1-a', ms: 50 },
  ],
};

test('the path\'s spans are matched by CPID and span id, not by span id alone', () => {
  const keys = pathKeys(PATH);
  assert.equal(keys.size, 4);
  assert.ok(keys.has(spanKey(N, '0000000000000837')));
  const spans = [
    { cpid: A, id: '0000000000000451' },
    { cpid: N, id: '0000000000000836' }, /* the Pod's create: not on the path */
    { cpid: N, id: '0000000000000837' },
    { cpid: A, id: '0000000000000837' }, /* the same span id in another CPID */
    { cpid: N, id: '0000000000000838' },
  ];
  assert.deepEqual(pathSpans(spans, keys).map((s) => `${s.cpid.slice(6, 8)}:${s.id.slice(-3)}`), ['11:451', '21:837', '21:838']);
  assert.equal(pathKeys(null).size, 0);
  assert.equal(pathKeys({ hops: [{ cpid: A }] }).size, 0);
});

test('the table\'s rows: in path order, objects named, the longest hop marked once', () => {
  const rows = pathRows(PATH);
  assert.deepEqual(rows.map((r) => r.n), [1, 2, 3, 4]);
  assert.deepEqual(rows.map((r) => r.longest), [false, false, true, false]);
  assert.equal(rows[2].component, 'kube-scheduler');
  assert.equal(rows[2].object, 'Pod d/web-1-a');
  assert.equal(rows[2].spanId, '0000000000000837');
  assert.equal(rows[2].cpid, N);
  /* Equals: the first is the longest; one hop alone is not emphasised. */
  const even = pathRows({ hops: [{ ms: 5 }, { ms: 5 }] });
  assert.deepEqual(even.map((r) => r.longest), [true, false]);
  assert.equal(even[0].object, '–');
  assert.deepEqual(pathRows({ hops: [{ ms: 5 }] }).map((r) => r.longest), [false]);
  assert.deepEqual(pathRows(null), []);
});

test('a hop\'s parts: each known one in ms, absent ones null, none without parts', () => {
  const path = structuredClone(PATH);
  path.hops[2].parts = { seen_ms: 5, wrote_ms: 2010, admission_ms: 15 };
  path.hops[3].parts = { seen_ms: 2, wrote_ms: 48 }; /* no audit: no admission */
  path.hops[1].parts = { clamped: true, seen_ms: 'x' }; /* nothing readable */
  const rows = pathRows(path);
  assert.deepEqual(rows[2].parts, { seen: 5, wrote: 2010, admission: 15 });
  assert.deepEqual(rows[3].parts, { seen: 2, wrote: 48, admission: null });
  assert.equal(rows[1].parts, null);
  assert.equal(rows[0].parts, null);
  assert.equal(pathRows(PATH)[2].parts, null);
});

const COMPARE = {
  a: { cpid: A, truncated: false, total_ms: 90, writes: 5 },
  b: { cpid: N, truncated: false, total_ms: 2090, writes: 5 },
  scope: 'own', delta_ms: 2000,
  hops: [
    { component: 'kube-scheduler', write: 'create pods/binding', kind: 'Pod', change: 'slower',
      a: { count: 1, p50_ms: 20, max_ms: 20 }, b: { count: 1, p50_ms: 2020, max_ms: 2020 }, delta_ms: 2000 },
    { component: 'endpoint-controller', write: 'update endpoints', kind: 'Endpoints', change: 'disappeared',
      a: { count: 1, p50_ms: 3, max_ms: 3 }, b: null, delta_ms: -3 },
    { component: 'kwok', write: 'update pods/status', kind: 'Pod', change: 'same',
      a: { count: 1, p50_ms: 50, max_ms: 50 }, b: { count: 1, p50_ms: 50, max_ms: 50 }, delta_ms: 0 },
  ],
  writers: [{ write: 'update pods/status', kind: 'Pod', a: ['kwok'], b: ['kubelet', 'kwok'] }],
};

test('the compare rows: the server\'s order, signed deltas, count × max of each side', () => {
  const rows = compareRows(COMPARE, formatDuration);
  assert.deepEqual(rows.map((r) => r.change), ['slower', 'disappeared', 'same']);
  assert.equal(rows[0].delta, '+2.00 s');
  assert.equal(rows[0].a, '1 × 20.0 ms');
  assert.equal(rows[0].b, '1 × 2.02 s');
  assert.equal(rows[1].delta, '-3.00 ms');
  assert.equal(rows[1].b, '–');
  assert.deepEqual(rows.map((r) => r.changed), [true, true, false]);
  assert.equal(rows[2].delta, '0 ms');
  assert.deepEqual(compareRows({}, formatDuration), []);
});

test('the writers changed, and the small formatters', () => {
  assert.deepEqual(writerRows(COMPARE), [{ write: 'update pods/status', kind: 'Pod', a: 'kwok', b: 'kubelet, kwok' }]);
  assert.deepEqual(writerRows({ writers: [{ write: 'w', kind: 'k', a: [], b: ['x'] }] })[0].a, '–');
  assert.equal(sideText(null, formatDuration), '–');
  assert.equal(signed(12.5, formatDuration), '+12.5 ms');
  assert.equal(signed(undefined, formatDuration), '0 ms');
});
