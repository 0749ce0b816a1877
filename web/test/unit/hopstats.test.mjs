import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hopStatRows, hopStatsQuery, rootsText } from '../../src/hopstats.js';
import { hopStatsHref, parseRoute, formatRoute } from '../../src/route.js';

const fmt = (ms) => `${ms} ms`;

/* As GET /v1/hops answers five scales whose bindings took 30 to 1030 ms. */
const ANSWER = {
  scope: 'own', roots: { count: 5, truncated: false }, spans: 25, truncated: false,
  hops: [
    { component: 'kube-scheduler', write: 'create pods/binding', kind: 'Pod', cascades: 5, writes: 5,
      p50_ms: 230, p90_ms: 1030, p99_ms: 1030, max_ms: 1030 },
    { component: 'kwok', write: 'update pods/status', kind: 'Pod', cascades: 5, writes: 5,
      p50_ms: 50, p90_ms: 50, p99_ms: 50, max_ms: 50 },
    { component: 'kubernetes-admin', write: 'update deployments', kind: 'Deployment', cascades: 5, writes: 5,
      p50_ms: 0, p90_ms: 0, p99_ms: 0, max_ms: 0 },
  ],
};

test('the rows keep the server\'s order and mark the slowest hop', () => {
  const rows = hopStatRows(ANSWER, fmt);
  assert.equal(rows.length, 3);
  assert.deepEqual(rows[0], { component: 'kube-scheduler', write: 'create pods/binding', kind: 'Pod', cascades: 5, writes: 5,
    p50: '230 ms', p90: '1030 ms', p99: '1030 ms', max: '1030 ms', slowest: true });
  assert.equal(rows[1].slowest, false);
  assert.equal(rows[2].p50, '0 ms');
});

test('one hop, or all of them at 0, marks none; no answer, no rows', () => {
  assert.equal(hopStatRows({ hops: [ANSWER.hops[0]] }, fmt)[0].slowest, false);
  assert.equal(hopStatRows({ hops: [ANSWER.hops[2], ANSWER.hops[2]] }, fmt)[0].slowest, false);
  assert.deepEqual(hopStatRows(null, fmt), []);
  assert.deepEqual(hopStatRows({ hops: [{}] }, fmt)[0], { component: '', write: '', kind: '', cascades: 0, writes: 0,
    p50: '0 ms', p90: '0 ms', p99: '0 ms', max: '0 ms', slowest: false });
});

test('what was added up', () => {
  assert.equal(rootsText(ANSWER), '5 changes');
  assert.equal(rootsText({ roots: { count: 1 } }), '1 change');
  assert.equal(rootsText({ roots: { count: 50, truncated: true } }), 'the newest 50 changes (more in the range were left out)');
  assert.equal(rootsText({}), '0 changes');
});

test('the API query takes the filters, not own, not other parameters', () => {
  assert.deepEqual(hopStatsQuery({ since: '2026-11-24T10:00:00Z', kind: 'Deployment', write: '', scope: 'own', span: 'x' }),
    { since: '2026-11-24T10:00:00Z', kind: 'Deployment' });
  assert.deepEqual(hopStatsQuery({ scope: 'reachable', limit: 5 }), { limit: '5', scope: 'reachable' });
  assert.deepEqual(hopStatsQuery(undefined), {});
});

test('the #/hops route and its links', () => {
  assert.deepEqual(parseRoute('#/hops?since=2026-11-24T10%3A00%3A00Z&kind=Deployment'),
    { view: 'hopstats', params: { since: '2026-11-24T10:00:00Z', kind: 'Deployment' } });
  assert.equal(parseRoute('#/hops/x').view, 'notfound');
  const href = hopStatsHref({ kind: 'Deployment', write: 'update deployments', until: undefined });
  assert.equal(href, '#/hops?kind=Deployment&write=update+deployments');
  assert.deepEqual(parseRoute(href).params, { kind: 'Deployment', write: 'update deployments' });
  assert.equal(formatRoute({ view: 'hopstats', params: {} }), '#/hops');
});
