import { test } from 'node:test';
import assert from 'node:assert/strict';
import { percentile, hopStats, histogram, isRootSpan, sortHops } from '../../src/hops.js';
import { buildModel } from '../../src/model.js';
import { cascade } from './fixture.mjs';

test('percentiles by nearest rank', () => {
  assert.equal(percentile([1, 2, 3, 4], 50), 2);
  assert.equal(percentile([1, 2, 3, 4], 99), 4);
  assert.equal(percentile([7], 50), 7);
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.equal(percentile(hundred, 99), 99);
  assert.equal(percentile(hundred, 50), 50);
  assert.ok(Number.isNaN(percentile([], 50)));
});

test('hops: one per (service, name); the root write and spontaneous writes are not hops', () => {
  const m = buildModel(cascade());
  const hops = hopStats(m.spans, m.mergelogs);
  const byKey = new Map(hops.map((h) => [`${h.service}/${h.name}`, h]));
  assert.equal(byKey.has('kubernetes-admin/update deployments/scale'), false);
  assert.equal(hops.length, 5);
  const status = byKey.get('kwok-controller/update pods/status');
  assert.equal(status.count, 2);
  assert.ok(Math.abs(status.p50 - 40) < 1e-3 && Math.abs(status.p99 - 100) < 1e-3 && Math.abs(status.max - 100) < 1e-3);
  assert.equal(hops[0].service, 'kwok-controller', 'largest p99 first');
  const spont = { ...m.spans[1], attributes: { spontaneous: 'true' } };
  assert.equal(isRootSpan(spont, m.mergelogs), true);
  assert.equal(isRootSpan(m.spans[1], new Map()), false);
});

test('histogram: equal bins over [0, max], every value counted once', () => {
  const values = [0, 1, 1, 2, 5, 10];
  const bins = histogram(values, 10);
  assert.equal(bins.length, 10);
  assert.equal(bins.reduce((n, b) => n + b.count, 0), values.length);
  assert.equal(bins[0].x0, 0);
  assert.equal(bins[9].x1, 10);
  assert.equal(bins[9].count, 1);
  assert.equal(histogram([], 4).reduce((n, b) => n + b.count, 0), 0);
});

test('sorting hops by a column, both ways', () => {
  const hops = [{ service: 'a', name: 'x', count: 3, p99: 1 }, { service: 'b', name: 'y', count: 1, p99: 5 }, { service: 'c', name: 'z', count: 2, p99: 2 }];
  assert.deepEqual(sortHops(hops, 'count', true).map((h) => h.count), [3, 2, 1]);
  assert.deepEqual(sortHops(hops, 'p99', false).map((h) => h.p99), [1, 2, 5]);
  assert.deepEqual(sortHops(hops, 'service', true).map((h) => h.service), ['c', 'b', 'a']);
});
