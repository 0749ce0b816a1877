#!/usr/bin/env node
/*
 * Hops across many cascades (#/hops, GET /v1/hops), checked in a real browser against a
 * real ripple-server:
 *
 *   node test/e2e/hopstats.mjs --server URL
 *
 * Posts five scales of one Deployment as the webhook sends them (as
 * tests/server/analysis/test_hops.c does), each binding 30 to 1030 ms after the
 * ReplicaSet's write it waited for, and a ConfigMap change. Asserts that Find, given a
 * time range and the kind, links to #/hops with them; that the view's table shows the
 * binding first, marked the slowest, in 5 cascades with the server's p50 and max; that
 * the form's write filter narrows it to the ConfigMap's change. Exits 1 with what was
 * wrong.
 */
import { openBrowser, openView, waitView } from './browser.mjs';
import { assert, eq, serverArg, post as postTo } from './check.mjs';

const base = serverArg('hopstats.mjs');


const TAIL = Date.now().toString(16).padStart(12, '0').slice(-12);
const id = (n) => `${n.toString(16).padStart(8, '0')}-0000-4000-8000-${TAIL}`;
const P = (k) => id(10 + k);
const N = (k) => id(20 + k);
const sid = (key, n) => (key * 100 + n).toString(16).padStart(16, '0');
/* Scale k starts k minutes after t0, ten minutes ago (whole seconds: Find's inputs). */
const T0 = Math.floor((Date.now() - 10 * 60000) / 1000) * 1000;
const at = (k, ms) => new Date(T0 + k * 60000 + ms).toISOString();
const BIND = [0, 40, 140, 240, 340, 1040];

function span(cpid, key, n, service, name, kind, obj, owner, k, ms) {
  return { cpid, span_id: sid(key, n), service, name, start: at(k, 0), end: at(k, ms),
    attributes: { kind, namespace: 'hops', name: obj, uid: `${obj}-uid-${k}`, owner } };
}

const post = (what, body) => postTo(base, what, body);

function root(k, kind, name) {
  return { cpid: P(k), sources: [], time: at(k, 0), component: 'kubernetes-admin',
    object: { kind, namespace: 'hops', name, uid: `${name}-uid` } };
}

async function postScale(k) {
  await post('mergelogs', [root(k, 'Deployment', 'web'),
    { cpid: N(k), sources: [P(k)], trigger: [P(k)], time: at(k, 10), component: 'deployment-controller' }]);
  await post('spans', [
    span(P(k), 10 + k, 1, 'kubernetes-admin', 'update deployments', 'Deployment', 'web', '', k, 0),
    span(N(k), 20 + k, 2, 'deployment-controller', 'update replicasets', 'ReplicaSet', 'web-1', 'Deployment/web', k, 10),
    span(N(k), 20 + k, 3, 'replicaset-controller', 'create pods', 'Pod', '', 'ReplicaSet/web-1', k, 20),
    span(N(k), 20 + k, 4, 'kube-scheduler', 'create pods/binding', 'Pod', 'web-1-a', 'ReplicaSet/web-1', k, BIND[k]),
    span(N(k), 20 + k, 5, 'kwok', 'update pods/status', 'Pod', 'web-1-a', 'ReplicaSet/web-1', k, BIND[k] + 50),
  ]);
}

async function postConfigMap() {
  await post('mergelogs', [root(0, 'ConfigMap', 'cfg')]);
  await post('spans', [span(P(0), 10, 1, 'kubernetes-admin', 'update configmaps', 'ConfigMap', 'cfg', '', 0, 0)]);
}

const rows = (page) => page.$$eval('#hopstats-table tbody tr', (trs) => trs.map((tr) => ({
  hop: tr.dataset.hop, slowest: tr.dataset.slowest, cells: [...tr.children].map((td) => td.textContent.trim()) })));

async function checkFromFind(page) {
  const since = new Date(T0 - 60000).toISOString();
  const until = new Date(T0 + 10 * 60000).toISOString();
  const find = `${base}/#/find?since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}&kind=Deployment`;
  eq(await openView(page, find, 'find'), 'ready', 'Find with a time range and a kind');
  const href = await page.$eval('#find-hops', (a) => a.getAttribute('href'));
  assert(href.startsWith('#/hops?') && href.includes('kind=Deployment') && href.includes('since='), `Find's link: ${href}`);
  await page.evaluate(() => {
    delete document.body.dataset.ready;
  });
  await page.click('#find-hops');
  eq(await waitView(page, 'hopstats'), 'ready', 'the hops view from Find');
  const r = await rows(page);
  eq(r[0].hop, 'kube-scheduler/create pods/binding/Pod', 'the slowest hop');
  eq(r[0].slowest, 'true', 'the binding marked the slowest');
  /* Component, write, kind, cascades, writes, p50, p90, p99, max. */
  eq(r[0].cells[3], '5', 'the binding\'s cascades');
  eq(r[0].cells[4], '5', 'the binding\'s writes');
  eq(r[0].cells[5], '230 ms', 'the binding\'s p50');
  eq(r[0].cells[8], '1.03 s', 'the binding\'s max');
  assert(!r.some((x) => x.hop.includes('configmaps')), `a ConfigMap hop in the Deployments' table: ${JSON.stringify(r)}`);
  assert((await page.$eval('#hopstats-roots', (e) => e.textContent)).includes('5 changes'), 'the changes added up');
}

async function checkWriteFilter(page) {
  await page.fill('#hopstats-kind', '');
  await page.fill('#hopstats-write', 'update configmaps');
  await page.evaluate(() => {
    delete document.body.dataset.ready;
  });
  await page.click('#hopstats-form button[type="submit"]');
  eq(await waitView(page, 'hopstats'), 'ready', 'the form');
  assert(page.url().includes('write=update+configmaps'), `the write in the URL: ${page.url()}`);
  const r = await rows(page);
  eq(r.length, 1, 'the hops of the ConfigMap\'s change');
  eq(r[0].hop, 'kubernetes-admin/update configmaps/ConfigMap', 'the ConfigMap\'s hop');
}

async function main() {
  await postConfigMap();
  for (let k = 1; k <= 5; k++) await postScale(k);
  const { browser, page, problems } = await openBrowser();
  try {
    await checkFromFind(page);
    process.stdout.write('ok - hopstats: Find links to #/hops; the binding is the slowest hop, 5 cascades, p50 230 ms, max 1.03 s\n');
    await checkWriteFilter(page);
    process.stdout.write('ok - hopstats: the write filter narrows it to the ConfigMap\'s change\n');
    const bad = problems.filter((p) => !/Failed to load resource/.test(p));
    assert(!bad.length, bad.join('; '));
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  process.stdout.write(`not ok - hopstats: ${e.message}\n`);
  process.exit(1);
});
