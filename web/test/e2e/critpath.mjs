#!/usr/bin/env node
/*
 * The critical path and the compare view, checked in a real browser against a real
 * ripple-server:
 *
 *   node test/e2e/critpath.mjs --server URL
 *
 * Posts two scales of one Deployment as the webhook sends them (as
 * tests/server/analysis/test_paths.c does): the person's update, the ReplicaSet's, a Pod's
 * create, its binding and its status; the second scale's binding 2 s late. Asserts that
 * the second scale's waterfall marks exactly the spans of its critical path (as the
 * server answers it, by CPID and span id), that the toggle hides the mark in the URL
 * (path=off, a deep link keeps it) and shows it again, that the Hops tab's table of the
 * path emphasises the binding as its longest hop and shows its parts (seen, wrote,
 * admission: from a watch agent's change and an audit event posted here), and that #/compare/<first>/<second>,
 * opened directly and from the trace page's "Compare with", lists the binding first as
 * slower. Exits 1 with what was wrong.
 */
import { openBrowser, openView, waitView } from './browser.mjs';
import { CheckError, assert, eq, serverArg, post as postTo } from './check.mjs';

const base = serverArg('critpath.mjs');


/* CPIDs of this run: P(k) the person's change of scale k, N(k) the ReplicaSet's merge. */
const TAIL = Date.now().toString(16).padStart(12, '0').slice(-12);
const id = (n) => `${n.toString(16).padStart(8, '0')}-0000-4000-8000-${TAIL}`;
const P = (k) => id(10 + k);
const N = (k) => id(20 + k);
const sid = (key, n) => (key * 100 + n).toString(16).padStart(16, '0');
/* Scale k starts k minutes after t0, ten minutes ago. */
const T0 = Date.now() - 10 * 60000;
const at = (k, ms) => new Date(T0 + k * 60000 + ms).toISOString();

function span(cpid, key, n, service, name, kind, obj, owner, k, ms) {
  return { cpid, span_id: sid(key, n), service, name, start: at(k, 0), end: at(k, ms),
    attributes: { kind, namespace: 'crit', name: obj, uid: `${obj}-uid-${k}`, owner, operation: 'UPDATE', resourceVersion: String(n) } };
}

const post = (what, body) => postTo(base, what, body);

/* Scale k: the person's update, the ReplicaSet's, a binding bindMs in, the Pod's status 50 ms later. */
async function postScale(k, bindMs) {
  await post('mergelogs', [
    { cpid: P(k), sources: [], time: at(k, 0), component: 'kubernetes-admin',
      object: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'crit', name: 'web' } },
    { cpid: N(k), sources: [P(k)], trigger: [P(k)], time: at(k, 10), component: 'deployment-controller' },
  ]);
  await post('spans', [
    span(P(k), 10 + k, 1, 'kubernetes-admin', 'update deployments', 'Deployment', 'web', '', k, 0),
    span(N(k), 20 + k, 2, 'deployment-controller', 'update replicasets', 'ReplicaSet', 'web-1', 'Deployment/web', k, 10),
    span(N(k), 20 + k, 3, 'replicaset-controller', 'create pods', 'Pod', '', 'ReplicaSet/web-1', k, 20),
    span(N(k), 20 + k, 4, 'kube-scheduler', 'create pods/binding', 'Pod', 'web-1-a', 'ReplicaSet/web-1', k, bindMs),
    span(N(k), 20 + k, 5, 'kwok', 'update pods/status', 'Pod', 'web-1-a', 'ReplicaSet/web-1', k, bindMs + 50),
  ]);
}

/*
 * The second scale's details: the watch agent saw the ReplicaSet's update (the binding's
 * predecessor on the path) 5 ms after it; the API server received the binding 15 ms
 * before the webhook answered it. The binding's parts: seen 5 ms, wrote 2010 ms, admission 15 ms.
 */
async function postDetails(k, bindMs) {
  await post('details', [{ type: 'change', op: 'update', time: at(k, 15),
    object: { apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace: 'crit', name: 'web-1', uid: `web-1-uid-${k}` },
    resourceVersion: '3', previousResourceVersion: '2', cpid: N(k), diff: [{ path: '/spec/replicas', old: 1, new: 2 }] }]);
  await post('audit', { kind: 'EventList', apiVersion: 'audit.k8s.io/v1', items: [{
    kind: 'Event', apiVersion: 'audit.k8s.io/v1', level: 'Metadata', auditID: `au-${TAIL}`, stage: 'ResponseComplete',
    verb: 'create', user: { username: 'system:kube-scheduler' },
    objectRef: { resource: 'pods', subresource: 'binding', namespace: 'crit', name: 'web-1-a', apiVersion: 'v1' },
    responseStatus: { code: 201 }, requestReceivedTimestamp: at(k, bindMs - 15), stageTimestamp: at(k, bindMs + 5),
    annotations: { 'ripple.example/ripple-span': sid(20 + k, 4) } }] });
}

async function getJson(path) {
  const res = await fetch(`${base}${path}`);
  if (!res.ok) throw new CheckError(`GET ${path}: ${res.status}`);
  return res.json();
}

const keyList = (pairs) => pairs.map(([c, s]) => `${c}/${s}`).sort();
const markedBars = (page) => page.$$eval('rect.bar[data-crit="true"]', (rs) => rs.map((r) => [r.dataset.spanCpid, r.dataset.span]));

async function checkWaterfall(page) {
  const answer = await getJson(`/v1/cpids/${P(2)}/critical-path`);
  const want = keyList(answer.hops.map((x) => [x.cpid, x.span_id]));
  /* The server's path: everything but the Pod's create (of an object the others are not). */
  eq(want.join(' '), keyList([[P(2), sid(12, 1)], [N(2), sid(22, 2)], [N(2), sid(22, 4)], [N(2), sid(22, 5)]]).join(' '), 'the server\'s critical path');
  eq(await openView(page, `${base}/#/trace/${P(2)}`, 'trace'), 'ready', 'the trace of the second scale');
  await page.waitForSelector('section.trace[data-path="ready"]', { timeout: 15000, state: 'attached' });
  eq(await page.locator('rect.bar').count(), 5, 'the bars');
  eq(keyList(await markedBars(page)).join(' '), want.join(' '), 'the bars marked as the critical path');
  eq(await page.$eval('#crit-toggle', (e) => e.dataset.on), 'true', 'the toggle, by default');
  /* The toggle hides the mark, in the URL; a deep link keeps it. */
  await page.click('#crit-toggle a');
  await page.waitForSelector('#crit-toggle[data-on="false"]', { timeout: 15000, state: 'attached' });
  assert(page.url().includes('path=off'), `the toggle is not in the URL: ${page.url()}`);
  eq((await markedBars(page)).length, 0, 'bars marked with the mark hidden');
  /* Opened afresh (the same URL again would not even be a hashchange). */
  await page.goto('about:blank');
  eq(await openView(page, `${base}/#/trace/${P(2)}?path=off`, 'trace'), 'ready', 'a deep link with path=off');
  await page.waitForSelector('section.trace[data-path="ready"]', { timeout: 15000, state: 'attached' });
  eq((await markedBars(page)).length, 0, 'bars marked after a deep link with path=off');
  await page.click('#crit-toggle a');
  await page.waitForSelector('#crit-toggle[data-on="true"]', { timeout: 15000, state: 'attached' });
  assert(!page.url().includes('path='), `shown is the default, not in the URL: ${page.url()}`);
  eq(keyList(await markedBars(page)).join(' '), want.join(' '), 'the bars marked again');
}

async function checkTable(page) {
  eq(await openView(page, `${base}/#/trace/${P(2)}/hops`, 'hops'), 'ready', 'the Hops tab');
  await page.waitForSelector('#crit-table', { timeout: 15000, state: 'attached' });
  const rows = await page.$$eval('#crit-table tbody tr', (trs) => trs.map((tr) => ({
    longest: tr.dataset.longest, cells: [...tr.children].map((td) => td.textContent.trim()) })));
  eq(rows.length, 4, 'the hops of the path');
  const longest = rows.filter((r) => r.longest === 'true');
  eq(longest.length, 1, 'the longest hops');
  eq(longest[0].cells[1], 'kube-scheduler', 'the longest hop\'s component');
  eq(longest[0].cells[2], 'create pods/binding', 'the longest hop\'s write');
  eq(longest[0].cells[3], 'Pod crit/web-1-a', 'the longest hop\'s object');
  eq(await page.locator('#crit-table tr.longest strong').count(), 1, 'the longest hop emphasised');
  /* The hops' parts, in columns of their own; "–" where the server knew none. */
  const head = await page.$$eval('#crit-table thead th', (ths) => ths.map((th) => th.textContent.trim()));
  eq(head.slice(5).join(' '), 'Seen Wrote Admission', 'the parts\' columns');
  eq(longest[0].cells.slice(5).join(' / '), '5.00 ms / 2.01 s / 15.0 ms', 'the binding\'s parts');
  eq(rows[1].cells.slice(5).join(' / '), '– / – / –', 'the ReplicaSet\'s parts (no details)');
}

async function compareRows(page) {
  return page.$$eval('#compare-table tbody tr', (trs) => trs.map((tr) => ({ change: tr.dataset.change, hop: tr.dataset.hop })));
}

async function checkCompare(page) {
  eq(await openView(page, `${base}/#/compare/${P(1)}/${P(2)}`, 'compare'), 'ready', 'the compare deep link');
  const rows = await compareRows(page);
  assert(rows.length >= 4, `the compared hops: ${JSON.stringify(rows)}`);
  eq(rows[0].hop, 'kube-scheduler/create pods/binding/Pod', 'the most changed hop');
  eq(rows[0].change, 'slower', 'the binding\'s change');
  assert(rows.slice(1).every((r) => r.change === 'same'), `the other hops: ${JSON.stringify(rows.slice(1))}`);
  const delta = await page.$eval('#delta', (e) => e.textContent);
  assert(delta.startsWith('+2'), `B − A: ${delta}`);
  /* From a trace page: "Compare with" another CPID. */
  eq(await openView(page, `${base}/#/trace/${P(1)}`, 'trace'), 'ready', 'the trace of the first scale');
  await page.fill('#compare-with', 'not a cpid');
  await page.click('#compare-form button[type="submit"]');
  assert((await page.$eval('#compare-error', (e) => e.textContent)).includes('is not a CPID'), 'a bad CPID in Compare with');
  await page.evaluate(() => {
    delete document.body.dataset.ready;
  });
  await page.fill('#compare-with', P(2).toUpperCase());
  await page.click('#compare-form button[type="submit"]');
  eq(await waitView(page, 'compare'), 'ready', 'Compare with');
  assert(page.url().endsWith(`#/compare/${P(1)}/${P(2)}`), `Compare with's link: ${page.url()}`);
  eq((await compareRows(page))[0].change, 'slower', 'the binding, from Compare with');
}

async function main() {
  await postScale(1, 40);
  await postScale(2, 2040);
  await postDetails(2, 2040);
  const { browser, page, problems } = await openBrowser();
  try {
    await checkWaterfall(page);
    process.stdout.write('ok - critpath: the waterfall marks exactly the critical path\'s spans; path=off hides them, in the URL\n');
    await checkTable(page);
    process.stdout.write('ok - critpath: the Hops tab\'s table of the path emphasises the binding, its longest hop, with its parts\n');
    await checkCompare(page);
    process.stdout.write('ok - critpath: #/compare lists the binding first as slower, opened directly and from Compare with\n');
    const bad = problems.filter((p) => !/Failed to load resource/.test(p));
    assert(!bad.length, bad.join('; '));
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  process.stdout.write(`not ok - critpath: ${e.message}\n`);
  process.exit(1);
});
