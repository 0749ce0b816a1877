import { test } from 'node:test';
import assert from 'node:assert/strict';
import { indexDetails, writeOf, diffRows, changeView, auditView, eventRows, eventsOfSpan, pointerText, formatValue,
  recordObject, eventsTabCount, detailsSignature } from '../../src/details.js';
import { buildModel } from '../../src/model.js';
import { cascade } from './fixture.mjs';
import { details, sid } from './details-fixture.mjs';

test('no answer (a server older than /details) is no details', () => {
  assert.equal(indexDetails(null), null);
  assert.equal(writeOf(null, sid(1)), null);
  assert.deepEqual(eventsOfSpan(null, {}), []);
  assert.equal(eventsTabCount(null), 0);
  const empty = indexDetails({ cpid: 'x' });
  assert.deepEqual([empty.bySpan.size, empty.events, empty.changes, empty.audit, empty.truncated], [0, [], [], [], false]);
});

test('writes are matched to spans by span_id; a span without facts has none', () => {
  const m = buildModel(cascade());
  const d = indexDetails(details());
  const w1 = writeOf(d, m.spanById.get(sid(1)).id);
  assert.equal(w1.change.resourceVersion, '4180');
  assert.equal(w1.audit.user, 'kubernetes-admin');
  assert.equal(writeOf(d, sid(2)).audit, null);
  assert.equal(writeOf(d, sid(5)).change, null);
  assert.equal(writeOf(d, sid(7)), null);
  for (const id of d.bySpan.keys()) assert.ok(m.spanById.has(id), `write ${id} is a span of the trace`);
});

test('a repeated span_id keeps its first write; records are sorted by time', () => {
  const raw = details();
  raw.writes.push({ span_id: sid(1), change: null, audit: null });
  const d = indexDetails(raw);
  assert.ok(writeOf(d, sid(1)).change);
  assert.deepEqual(d.events.map((e) => e.reason), ['ScalingReplicaSet', 'FailedScheduling']);
  assert.equal(eventsTabCount(d), 2 + 1 + 1);
});

test('JSON Pointers read as field paths', () => {
  assert.equal(pointerText('/spec/replicas'), 'spec.replicas');
  assert.equal(pointerText('/metadata/annotations/deployment.kubernetes.io~1desired-replicas'),
    'metadata.annotations["deployment.kubernetes.io/desired-replicas"]');
  assert.equal(pointerText('/spec/template/spec/containers/0/image'), 'spec.template.spec.containers[0].image');
  assert.equal(pointerText('/a~0b/c'), '["a~b"].c', 'a key with a tilde is quoted');
  assert.equal(pointerText(''), '(the whole object)');
});

test('diff rows: replace, add, remove, redacted; long values pretty-printed', () => {
  const rows = diffRows(details().writes[1].change);
  assert.deepEqual(rows.map((r) => r.op), ['replace', 'replace', 'add', 'remove', 'redacted', 'replace']);
  assert.deepEqual([rows[0].old.text, rows[0].new.text], ['1', '3']);
  assert.deepEqual([rows[1].old.text, rows[1].new.text], ['"1"', '"3"'], 'strings stay strings');
  assert.equal(rows[2].old.absent, true);
  assert.equal(rows[2].new.text, '"yes"');
  assert.equal(rows[3].new.absent, true);
  assert.equal(rows[4].redacted, true);
  assert.equal(rows[4].old, null, 'a redacted entry has no values to show');
  assert.equal(rows[5].old.multiline, false);
  assert.equal(rows[5].new.multiline, true);
  assert.ok(rows[5].new.text.includes('\n  {'), rows[5].new.text);
  assert.deepEqual(diffRows({ diff: [{ old: 1 }, null] }), [], 'entries without a path are skipped');
  assert.deepEqual(formatValue(null), { absent: false, text: 'null', multiline: false });
});

test('a redacted value never reaches the rows even when a sender put one beside the flag', () => {
  const rows = diffRows({ diff: [{ path: '/data/password', redacted: true, old: 'hunter2', new: 'hunter3' }] });
  assert.equal(JSON.stringify(rows).includes('hunter'), false);
});

test('a create shows its snapshot as pretty JSON', () => {
  const v = changeView(details().writes[2].change);
  assert.equal(v.op, 'create');
  assert.equal(v.rows.length, 0);
  assert.ok(v.snapshot.startsWith('{\n  "apiVersion": "v1"'), v.snapshot);
  assert.equal(v.object, 'Pod default/web-abc-x1');
  assert.equal(changeView(null), null);
  assert.equal(changeView({ op: 'delete', truncated: true }).truncated, true);
});

test('audit: who, and a refusal when the code is 400 or more', () => {
  const ok = auditView(details().writes[0].audit);
  assert.deepEqual([ok.user, ok.groups, ok.userAgent, ok.code, ok.refused], ['kubernetes-admin',
    ['system:masters', 'system:authenticated'], 'kubectl/v1.31.0 (linux/amd64)', 200, false]);
  assert.equal(ok.object, 'Scale default/web');
  const no = auditView(details().writes[3].audit);
  assert.deepEqual([no.code, no.refused, no.reason], [409, true, 'Conflict']);
  assert.equal(auditView({ code: 399 }).refused, false);
  assert.equal(auditView({}).refused, false);
  assert.equal(auditView({}).code, null);
  assert.equal(auditView(null), null);
});

test('events: Warnings flagged, objects named, counts kept', () => {
  const rows = eventRows(indexDetails(details()).events);
  assert.deepEqual(rows.map((r) => [r.reason, r.warning, r.object, r.count]), [
    ['ScalingReplicaSet', false, 'Deployment default/web', 1],
    ['FailedScheduling', true, 'Pod default/web-abc-x2', 4]]);
  assert.equal(rows[1].time, '2026-11-21 22:18:34.040Z');
});

test('events of a span\'s object: by uid, else by kind, namespace and name; none for a generateName create', () => {
  const m = buildModel(cascade());
  const d = indexDetails(details());
  assert.deepEqual(eventsOfSpan(d, m.spanById.get(sid(6))).map((e) => e.reason), ['FailedScheduling']);
  assert.deepEqual(eventsOfSpan(d, m.spanById.get(sid(1))).map((e) => e.reason), ['ScalingReplicaSet']);
  assert.deepEqual(eventsOfSpan(d, m.spanById.get(sid(3))), []);
  assert.deepEqual(eventsOfSpan(d, { attributes: { kind: 'Pod', namespace: 'default', name: 'web-abc-x2', uid: 'other' } }), []);
});

test('record objects: kind or resource, generateName when there is no name', () => {
  assert.equal(recordObject({ resource: 'pods', namespace: 'ns', generateName: 'web-' }), 'pods ns/web-…');
  assert.equal(recordObject({ kind: 'Node', name: 'n1' }), 'Node n1');
  assert.equal(recordObject(null), '');
});

test('the details signature changes when facts arrive or an Event repeats', () => {
  const a = details();
  const b = details();
  b.events[0].count = 5;
  const c = details();
  c.audit.push({ type: 'audit' });
  assert.equal(detailsSignature(a), detailsSignature(details()));
  assert.notEqual(detailsSignature(a), detailsSignature(b));
  assert.notEqual(detailsSignature(a), detailsSignature(c));
  assert.equal(detailsSignature(null), 'none');
});
