#!/usr/bin/env node
/*
 * Own cascade / everything reachable, checked in a real browser against a real
 * ripple-server:
 *
 *   node test/e2e/scope.mjs --server URL
 *
 * Posts three scales of one Deployment as the webhook sends them: each scale's
 * ReplicaSet update merges the person's change with the ReplicaSet's context from the
 * scale before, naming the person's change as its trigger (docs/api.md). Asserts that
 * the trace of the first scale shows its own spans by default, that the toggle switches
 * to everything reachable (the later scales' spans too) and back, keeping the scope in
 * the URL (a deep link opens it), that the tabs keep it, and that Find lists each
 * change's own span count by default and everything reachable after its toggle. Exits 1
 * with what was wrong.
 */
import { openBrowser, openView } from './browser.mjs';
import { assert, eq, serverArg, post as postTo } from './check.mjs';

const base = serverArg('scope.mjs');


const SCALES = 3;
const PODS = 5;
/* Each scale's own spans: the person's update, the ReplicaSet's, the Pods' creates. */
const OWN = 2 + PODS;
/* Reachable from the first scale: its own, and every later scale's but the person's update. */
const REACH = OWN + (SCALES - 1) * (OWN - 1);
/* CPIDs of this run (a fresh server each time, but a tail of its own costs nothing). */
const TAIL = Date.now().toString(16).padStart(12, '0').slice(-12);
const id = (n) => `${n.toString(16).padStart(8, '0')}-0000-4000-8000-${TAIL}`;
const R0 = id(1);
const P = (k) => id(0x10 + k);
const N = (k) => (k ? id(0x20 + k) : R0);
const Q = (k, i) => id(0x100 * k + i);
const at = (k, s) => new Date(Date.now() - (SCALES + 1 - k) * 60000 + s * 100).toISOString();

function span(cpid, sid, service, name, kind, oname, k, s) {
  return { cpid, span_id: sid.toString(16).padStart(16, '0'), service, name, start: at(k, s - 1), end: at(k, s),
    attributes: { kind, namespace: 'scope', name: oname, user: service, operation: name.startsWith('create') ? 'CREATE' : 'UPDATE' } };
}

const post = (what, body) => postTo(base, what, body);

async function record() {
  await post('mergelogs', [{ cpid: R0, sources: [], time: at(0, 1), component: 'deployment-controller' }]);
  for (let k = 1; k <= SCALES; k++) {
    const mls = [
      { cpid: P(k), sources: [], time: at(k, 1), component: 'kubernetes-admin',
        object: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'scope', name: 'web' } },
      { cpid: N(k), sources: [P(k), N(k - 1)], trigger: [P(k)], time: at(k, 2), component: 'deployment-controller' },
    ];
    const sps = [span(P(k), 0x1000 * k + 1, 'kubernetes-admin', 'update deployments', 'Deployment', 'web', k, 1),
      span(N(k), 0x1000 * k + 2, 'deployment-controller', 'update replicasets', 'ReplicaSet', 'web-1', k, 2)];
    for (let i = 0; i < PODS; i++) {
      mls.push({ cpid: Q(k, i), sources: [N(k)], time: at(k, 3), component: 'replicaset-controller' });
      sps.push(span(Q(k, i), 0x1000 * k + 0x10 + i, 'replicaset-controller', 'create pods', 'Pod', `web-1-${k}${i}`, k, 3 + i));
    }
    await post('mergelogs', mls);
    await post('spans', sps);
  }
}

const count = (page) => page.$eval('#span-count', (e) => Number(e.textContent));
const scopeShown = (page) => page.$eval('section.trace', (e) => e.dataset.scope);
const current = (page) => page.$eval('#scope-toggle [aria-current="true"]', (e) => e.dataset.scope);

/* Clicks the toggle's scope and waits for the page it leads to. */
async function toggle(page, scope, ready) {
  await page.evaluate(() => {
    delete document.body.dataset.ready;
  });
  await page.click(`#scope-toggle a[data-scope="${scope}"]`);
  await page.waitForSelector(`body[data-ready="${ready}"]`, { timeout: 15000, state: 'attached' });
}

async function checkTrace(page) {
  const url = `${base}/#/trace/${P(1)}`;
  eq(await openView(page, url, 'trace'), 'ready', 'the trace of the first scale');
  eq(await scopeShown(page), 'own', 'the default scope');
  eq(await current(page), 'own', 'the toggle marks');
  eq(await count(page), OWN, 'the first scale\'s own spans');
  await toggle(page, 'reachable', 'trace');
  assert(page.url().includes('scope=reachable'), `the scope is not in the URL: ${page.url()}`);
  eq(await scopeShown(page), 'reachable', 'after the toggle');
  eq(await current(page), 'reachable', 'the toggle marks');
  eq(await count(page), REACH, 'everything reachable from the first scale');
  /* The tabs keep the scope. */
  const hops = await page.$eval('a.tab[data-tab="hops"]', (a) => a.getAttribute('href'));
  assert(hops.includes('scope=reachable'), `the Hops tab drops the scope: ${hops}`);
  await page.click('a.tab[data-tab="hops"]');
  await page.waitForSelector('body[data-ready="hops"]', { timeout: 15000, state: 'attached' });
  eq(await count(page), REACH, 'the Hops tab of everything reachable');
  await toggle(page, 'own', 'hops');
  assert(!page.url().includes('scope='), `own is the default, not in the URL: ${page.url()}`);
  eq(await count(page), OWN, 'back to own, on the Hops tab');
  /* A deep link opens its scope; the last scale reaches nothing later. */
  eq(await openView(page, `${base}/#/trace/${P(1)}?scope=reachable`, 'trace'), 'ready', 'a deep link');
  eq(await count(page), REACH, 'the deep link\'s scope');
  eq(await openView(page, `${base}/#/trace/${P(SCALES)}?scope=reachable`, 'trace'), 'ready', 'the last scale');
  eq(await count(page), OWN, 'the last scale reaches only its own');
}

/* Find's row of the first scale: its cascade cell. */
const firstScaleRow = (page) => page.$eval(`#roots tr[data-cpid="${P(1)}"]`, (tr) => ({ scope: tr.dataset.scope, text: tr.children[3].textContent }));

async function checkFind(page) {
  eq(await openView(page, `${base}/#/find?component=kubernetes-admin&namespace=scope`, 'find'), 'ready', 'Find');
  let row = await firstScaleRow(page);
  eq(row.scope, 'own', 'Find\'s default scope');
  assert(row.text.startsWith(`${OWN} spans, ${2 + PODS} CPIDs`), `Find's own cascade of the first scale: ${row.text}`);
  const rows = await page.$$eval('#roots tbody tr[data-cpid]', (trs) => trs.map((tr) => tr.children[3].textContent));
  eq(rows.length, SCALES, 'the scales listed');
  for (const t of rows) assert(t.startsWith(`${OWN} spans`), `a scale's own cascade in Find: ${t}`);
  await toggle(page, 'reachable', 'find');
  assert(page.url().includes('scope=reachable'), `Find's scope is not in the URL: ${page.url()}`);
  row = await firstScaleRow(page);
  eq(row.scope, 'reachable', 'Find after the toggle');
  assert(row.text.startsWith(`${REACH} spans`), `Find's everything reachable of the first scale: ${row.text}`);
  const href = await page.$eval(`#roots tr[data-cpid="${P(1)}"] a`, (a) => a.getAttribute('href'));
  assert(href.includes('scope=reachable'), `Find's link drops the scope: ${href}`);
}

async function main() {
  await record();
  const { browser, page, problems } = await openBrowser();
  try {
    await checkTrace(page);
    process.stdout.write(`ok - scope: the first scale's own ${OWN} spans, everything reachable ${REACH}, toggled in the URL, kept by the tabs\n`);
    await checkFind(page);
    process.stdout.write('ok - scope: Find lists own cascades, and everything reachable after its toggle\n');
    const bad = problems.filter((p) => !/Failed to load resource/.test(p));
    assert(!bad.length, bad.join('; '));
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  process.stdout.write(`not ok - scope: ${e.message}\n`);
  process.exit(1);
});
