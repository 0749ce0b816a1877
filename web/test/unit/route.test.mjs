import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRoute, formatRoute, scopeOf, traceHref, withParams, compareHref, showsPath } from '../../src/route.js';

const C = '3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60';

test('the Find routes', () => {
  assert.deepEqual(parseRoute(''), { view: 'find', params: {} });
  assert.deepEqual(parseRoute('#/'), { view: 'find', params: {} });
  assert.deepEqual(parseRoute('#/find?kind=Deployment&name=web&namespace='), { view: 'find', params: { kind: 'Deployment', name: 'web' } });
});

test('the trace routes: tab from the path, group, span and select from the query', () => {
  assert.deepEqual(parseRoute(`#/trace/${C}`), { view: 'trace', cpid: C, tab: 'waterfall', params: {} });
  assert.deepEqual(parseRoute(`#/trace/${C}?group=component&span=00000000000000ab`),
    { view: 'trace', cpid: C, tab: 'waterfall', params: { group: 'component', span: '00000000000000ab' } });
  assert.equal(parseRoute(`#/trace/${C}/hops`).tab, 'hops');
  assert.equal(parseRoute(`#/trace/${C}/events`).tab, 'events');
  assert.deepEqual(parseRoute(`#/trace/${C}/graph?select=${C}`).params, { select: C });
});

test('unknown paths and tabs are notfound; a bad CPID is kept for the view to explain', () => {
  assert.equal(parseRoute('#/nowhere').view, 'notfound');
  assert.equal(parseRoute(`#/trace/${C}/flame`).view, 'notfound');
  assert.equal(parseRoute('#/trace/not%20a%20cpid').cpid, 'not a cpid');
  assert.equal(parseRoute('#/trace/%E0%A4%A').cpid, '%E0%A4%A');
});

test('formatRoute is the inverse of parseRoute', () => {
  for (const hash of ['#/', '#/find?kind=Pod&name=x', `#/trace/${C}`, `#/trace/${C}/hops`,
    `#/trace/${C}/graph?select=${C}`, `#/trace/${C}?group=component&span=ab`, `#/trace/${C}/events`]) {
    assert.equal(formatRoute(parseRoute(hash)), hash);
  }
});

test('links and parameter changes', () => {
  assert.equal(traceHref(C), `#/trace/${C}`);
  assert.equal(traceHref(C, 'waterfall', { group: 'component', span: undefined }), `#/trace/${C}?group=component`);
  const r = withParams(parseRoute(`#/trace/${C}?span=ab`), { span: undefined, group: 'component' });
  assert.equal(formatRoute(r), `#/trace/${C}?group=component`);
});

test('the scope: own unless the URL says reachable, kept by links', () => {
  assert.equal(scopeOf(parseRoute('#/trace/abc')), 'own');
  assert.equal(scopeOf(parseRoute('#/trace/abc/hops?scope=reachable')), 'reachable');
  assert.equal(scopeOf(parseRoute('#/trace/abc?scope=mine')), 'own');
  assert.equal(scopeOf(parseRoute('#/find?scope=reachable&kind=Pod')), 'reachable');
  assert.equal(traceHref('abc', 'hops', { scope: 'reachable' }), '#/trace/abc/hops?scope=reachable');
  assert.equal(traceHref('abc', 'waterfall', { scope: undefined }), '#/trace/abc');
});

test('the compare route: two CPIDs, a scope, its inverse; the critical path\'s toggle', () => {
  const B = '00000021-0000-4000-8000-000000000000';
  assert.deepEqual(parseRoute(`#/compare/${C}/${B}`), { view: 'compare', a: C, b: B, params: {} });
  assert.deepEqual(parseRoute(`#/compare/${C}/${B}?scope=reachable`).params, { scope: 'reachable' });
  assert.equal(parseRoute(`#/compare/${C}`).view, 'notfound');
  assert.equal(parseRoute(`#/compare/${C}/${B}/x`).view, 'notfound');
  assert.equal(compareHref(C, B, { scope: undefined }), `#/compare/${C}/${B}`);
  for (const hash of [`#/compare/${C}/${B}`, `#/compare/${C}/${B}?scope=reachable`, `#/trace/${C}?path=off`]) {
    assert.equal(formatRoute(parseRoute(hash)), hash);
  }
  assert.equal(showsPath(parseRoute(`#/trace/${C}`)), true);
  assert.equal(showsPath(parseRoute(`#/trace/${C}?path=off`)), false);
});
