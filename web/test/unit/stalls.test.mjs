import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stallList, stallsBySpan, expectText, stallTooltip, stallBanner, stalledRows, stallsSignature,
  stalledNowRows, stallObject } from '../../src/stalls.js';
import { buildModel } from '../../src/model.js';
import { cascade, ROOT } from './fixture.mjs';
import { stalls, sid } from './details-fixture.mjs';

test('no stalls from a 404 (null), a detector that is off, or a malformed answer', () => {
  assert.deepEqual(stallList(null), []);
  assert.deepEqual(stallList({ enabled: false, stalls: stalls().stalls }), []);
  assert.deepEqual(stallList({ enabled: true }), []);
  assert.deepEqual(stallList({ enabled: true, stalls: [null, { cpid: ROOT }] }), []);
  assert.equal(stallList(stalls()).length, 2);
  assert.equal(stallBanner([], null), null);
});

test('the tooltip says how long, for what, and how soon it usually comes', () => {
  const [pod, rs] = stallList(stalls());
  assert.equal(stallTooltip(pod), 'stalled: waiting 41.2 s for default-scheduler create pods/binding (usually within 350 ms)');
  assert.equal(stallTooltip(rs), 'stalled: waiting 12.0 s for any next hop (usually within 1.50 s)');
  assert.equal(expectText({ service: 'x', name: '' }), 'x');
  assert.equal(stallTooltip({ span_id: 'a' }), 'stalled: waiting ? for any next hop (usually within ?)');
});

test('the banner: longest waiting first, linked to spans of the trace, with their Events', () => {
  const m = buildModel(cascade());
  const b = stallBanner(stallList(stalls()), m);
  assert.equal(b.count, 2);
  assert.equal(b.title, '2 stalled writes');
  assert.deepEqual(b.items.map((i) => i.spanId), [sid(4), sid(2)]);
  const [pod, rs] = b.items;
  assert.deepEqual([pod.write, pod.object, pod.owner, pod.expect, pod.waiting, pod.p99, pod.samples, pod.inTrace],
    ['replicaset-controller create pods', 'Pod default/(created)', 'ReplicaSet/web-abc',
      'default-scheduler create pods/binding', '41.2 s', '350 ms', 24, true]);
  assert.deepEqual(pod.events.map((e) => [e.reason, e.warning, e.count]), [['FailedScheduling', true, 4]]);
  assert.equal(pod.warnings, 1);
  assert.deepEqual([rs.expect, rs.events.length, rs.warnings], ['any next hop', 0, 0]);
  assert.deepEqual(b.kinds.map((k) => [k.count, k.write, k.expect]), [
    [1, 'replicaset-controller create pods', 'default-scheduler create pods/binding'],
    [1, 'deployment-controller update replicasets', 'any next hop']]);
  assert.equal(stallBanner(stallList(stalls()).slice(0, 1), m).title, '1 stalled write');
  const many = stallList(stalls());
  many.push({ ...many[0], span_id: 'aaaaaaaaaaaaaaaa' }, { ...many[0], span_id: 'bbbbbbbbbbbbbbbb' });
  assert.deepEqual(stallBanner(many, m).kinds.map((k) => k.count), [3, 1], 'kinds: the most first');
  const outside = stallBanner([{ ...stalls().stalls[0], span_id: 'ffffffffffffffff' }], m);
  assert.equal(outside.items[0].inTrace, false);
});

test('stalled rows: the row of the stalled bar, and its ancestors count it below', () => {
  const m = buildModel(cascade());
  const by = stallsBySpan(stallList(stalls()));
  const o = stalledRows(m, 'object', by);
  assert.deepEqual([...o.own.keys()].sort(), ['Pod/default/(created)@ReplicaSet/default/web-abc', 'ReplicaSet/default/web-abc']);
  assert.equal(o.own.get('ReplicaSet/default/web-abc')[0].span_id, sid(2));
  assert.equal(o.below.get('ReplicaSet/default/web-abc'), 1);
  assert.equal(o.below.get('Deployment/default/web'), 2);
  const c = stalledRows(m, 'component', by);
  assert.deepEqual([...c.own.keys()].sort(), ['deployment-controller>ReplicaSet/default/web-abc',
    'replicaset-controller>Pod/default/(created)@ReplicaSet/default/web-abc']);
  assert.equal(c.below.get('replicaset-controller'), 1);
  const none = stalledRows(m, 'object', new Map([['ffffffffffffffff', {}]]));
  assert.equal(none.own.size + none.below.size, 0);
});

test('the stalls signature changes with which writes are stalled and their Events, not with the wait', () => {
  const a = stallList(stalls());
  const later = stallList(stalls()).map((x) => ({ ...x, waiting_seconds: x.waiting_seconds + 10 }));
  assert.equal(stallsSignature(a), stallsSignature(later));
  assert.notEqual(stallsSignature(a), stallsSignature(a.slice(1)));
  const more = stallList(stalls());
  more[1].events = [{ reason: 'X' }];
  assert.notEqual(stallsSignature(a), stallsSignature(more));
});

test('Stalled now: rows with the Events\' reasons, Warnings first, each once', () => {
  const list = stallList(stalls());
  list[0].events.push({ reason: 'Pulled', eventType: 'Normal' }, { reason: 'FailedScheduling', eventType: 'Warning' });
  const rows = stalledNowRows(list);
  assert.deepEqual(rows.map((r) => r.spanId), [sid(4), sid(2)]);
  assert.deepEqual(rows[0].reasons, ['FailedScheduling', 'Pulled']);
  assert.equal(rows[0].cpid, ROOT);
  assert.equal(rows[0].admitted, '2026-11-21 22:18:34.016Z');
  assert.equal(stallObject({ object: {} }), '');
});
