#!/usr/bin/env node
/*
 * Details and stalls in a real browser, without a trace server: the built dashboard is
 * served with the production headers (dev-server.mjs, the CSP above all) and every /v1/
 * request is answered by the browser from the unit tests' fixtures (../unit/fixture.mjs,
 * ../unit/details-fixture.mjs), shaped as docs/api.md says ripple-server answers.
 *
 *   node test/e2e/details.mjs [--dir DIST]
 *
 * Without --dir it bundles the sources into a temporary directory first. Checks the
 * stall banner, the marked rows and bars, the span panel's Changes (diff, redacted,
 * snapshot) and Audit (refused), the Events tab, the Find page's "Stalled now", live
 * updates of the stalls (and details that fail for a while: what was shown stays), a
 * server older than these endpoints (404: nothing of them shown), and that no console
 * error or CSP violation happened. Prints one line per check
 * and exits 1 on the first failure.
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openBrowser } from './browser.mjs';
import { cascade, ROOT, MERGE } from '../unit/fixture.mjs';
import { details, stalls, fights, sid } from '../unit/details-fixture.mjs';
import { CheckError, assert, eq } from './check.mjs';

const { values: opt } = parseArgs({ options: { dir: { type: 'string' } } });
const web = fileURLToPath(new URL('../..', import.meta.url));


/* The fixtures' times moved to now (for the live check: a trace that just happened). */
function shiftToNow(obj) {
  const now = new Date(Date.now() - 1000).toISOString().slice(0, 19);
  return JSON.parse(JSON.stringify(obj).replaceAll('2026-11-21T22:18:34', now));
}

/* What the fake server answers: {trace, details, stalls} (null: 404, an older server). */
function answersOf(state) {
  const t = state.trace;
  const root = t.mergelogs.find((m) => m.cpid === ROOT);
  return {
    [`/v1/cpids/${ROOT}/related`]: { cpid: ROOT, truncated: false, related: t.related },
    [`/v1/cpids/${ROOT}/mergelogs`]: { cpid: ROOT, truncated: false, mergelogs: t.mergelogs },
    [`/v1/cpids/${ROOT}/spans`]: { cpid: ROOT, truncated: false, spans: t.spans },
    /* The whole trace in one answer; no cursor, so live updates ask for all of it again. */
    [`/v1/cpids/${ROOT}/trace`]: { cpid: ROOT, truncated: false, related: t.related, mergelogs: t.mergelogs,
      spans: t.spans, next: null },
    [`/v1/cpids/${ROOT}/details`]: state.details,
    [`/v1/cpids/${ROOT}/stalls`]: state.stalls,
    '/v1/stalls': state.stalls,
    '/v1/fights': state.fights,
    '/v1/roots': { roots: [{ ...root, summary: { spans: t.spans.length, cpids: t.related.length, end: t.spans[0].end } }], next: null },
  };
}

async function fakeServer(page, state) {
  await page.unroute('**/v1/**');
  await page.route('**/v1/**', (route) => {
    const path = new URL(route.request().url()).pathname;
    const body = answersOf(state)[path];
    if (!body) return route.fulfill({ status: 404, contentType: 'application/json', body: '{"error":"unknown path"}' });
    if (body === 'fail') return route.fulfill({ status: 503, contentType: 'application/json', body: '{"error":"storage failed"}' });
    return route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(body) });
  });
}

async function open(page, url, ready) {
  await page.goto('about:blank');
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector(`body[data-ready="${ready}"], body[data-state="error"]`, { timeout: 15000, state: 'attached' });
  if (await page.evaluate(() => document.body.dataset.state === 'error')) {
    throw new CheckError(`${url}: the page shows an error: ${await text(page, '.error').catch(() => '?')}`);
  }
}

const text = async (page, sel) => (await page.locator(sel).first().innerText()).replace(/\s+/g, ' ').trim();
const attrs = (page, sel, name) => page.$$eval(sel, (els, n) => els.map((e) => e.getAttribute(n)), name);

async function clickBar(page, id) {
  await page.locator(`.wf-row [data-span="${id}"]`).dispatchEvent('click');
  await page.waitForSelector(`#span-panel:not([hidden])[data-span="${id}"]`, { timeout: 5000 });
}

async function checkTrace(page, base) {
  await open(page, `${base}/#/trace/${ROOT}`, 'trace');
  await page.waitForSelector('.trace[data-details="ready"]', { timeout: 5000, state: 'attached' });
  eq(await text(page, '#stall-count'), '2 stalled writes', 'the banner');
  const items = await attrs(page, '#stall-banner .stall-item', 'data-span');
  eq(items.join(','), [sid(4), sid(2)].join(','), 'the banner\'s writes, longest waiting first');
  const first = await text(page, '#stall-banner .stall-item');
  assert(first.includes('waiting 41.2 s for default-scheduler create pods/binding (usually within 350 ms'), `the first stall says: ${first}`);
  assert(first.includes('FailedScheduling') && first.includes('0/3 nodes are available'), `the first stall has no FailedScheduling Event: ${first}`);
  const rows = await attrs(page, '.wf-row.stalled', 'data-row');
  eq(rows.sort().join(','), ['Pod/default/(created)@ReplicaSet/default/web-abc', 'ReplicaSet/default/web-abc'].join(','), 'stalled rows');
  const tip = await page.locator('.wf-row.stalled .stall-icon').first().getAttribute('title');
  assert(/^stalled: waiting .+ for .+ \(usually within .+\)$/.test(tip), `the stalled row's tooltip: ${tip}`);
  eq((await attrs(page, '.bar.stalled', 'data-span')).sort().join(','), [sid(2), sid(4)].join(','), 'stalled bars');
  return `${rows.length} stalled rows`;
}

async function checkPanel(page, base) {
  await open(page, `${base}/#/trace/${ROOT}`, 'trace');
  await page.waitForSelector('.trace[data-details="ready"]', { timeout: 5000, state: 'attached' });
  await clickBar(page, sid(2));
  assert(await page.locator('#span-stall').isVisible(), 'a stalled span\'s panel does not say it is stalled');
  const diff = await page.$$eval('#span-change table.diff tbody', (els) => els.map((e) => [e.dataset.path, e.className, e.innerText.replace(/\s+/g, ' ').trim()]));
  eq(diff.length, 6, 'diff rows');
  eq(diff[0][2], 'spec.replicas 1 3', 'the first diff row');
  assert(diff[1][2].includes('metadata.annotations["deployment.kubernetes.io/desired-replicas"] "1" "3"'), `the annotation row: ${diff[1][2]}`);
  eq(diff[4][1], 'diff-redacted', 'the redacted row');
  assert(diff[4][2].endsWith('(redacted)'), `the redacted row says: ${diff[4][2]}`);
  eq(await page.locator('#span-change td.absent').count(), 2, 'absent values (an added and a removed field)');
  assert(await text(page, '#span-audit') === 'No audit event names this write.', 'span 2 has no audit event');

  await clickBar(page, sid(3));
  const snap = page.locator('#span-change details.snapshot');
  assert(!(await snap.locator('pre').isVisible()), 'the snapshot is open before a click');
  await snap.locator('summary').click();
  assert((await snap.locator('pre').innerText()).includes('"generateName": "web-abc-"'), 'the snapshot is not the created Pod as JSON');

  await clickBar(page, sid(5));
  eq((await page.locator('#span-audit dd[data-audit="code"]').textContent()).trim(), '409 refused', 'a refused write\'s response');
  eq(await text(page, '#span-audit dd[data-audit="reason"]'), 'Conflict', 'its reason');
  assert((await page.locator('#span-refused').textContent()).startsWith('refused 409 Conflict: Operation cannot be fulfilled'), 'a refused write is not marked at the top of its panel');
  assert(await page.locator('#span-change').innerText().then((t) => t.startsWith('No change recorded')), 'span 5 has no change');

  await clickBar(page, sid(1));
  eq(await text(page, '#span-audit dd[data-audit="user"]'), 'kubernetes-admin', 'the audit user');
  eq(await text(page, '#span-audit dd[data-audit="groups"]'), 'system:masters, system:authenticated', 'the audit groups');
  eq(await page.locator('#span-audit .badge.refused, #span-refused').count(), 0, 'an admitted write marked refused');
  eq(await text(page, '#span-events li'), 'Normal ScalingReplicaSet 2026-11-21 22:18:34.012Z Scaled up replica set web-abc to 3', 'the object\'s Events');

  await page.locator(`#stall-banner .stall-item[data-span="${sid(4)}"] a.stall-link`).click();
  await page.waitForSelector(`#span-panel:not([hidden])[data-span="${sid(4)}"]`, { timeout: 5000 });
  assert(page.url().includes(`span=${sid(4)}`), `the banner's link did not select the span: ${page.url()}`);
  assert(await page.locator(`.bar.selected[data-span="${sid(4)}"]`).count() === 1, 'the banner\'s stall is not highlighted');
  return '';
}

/* The fights over a span's object (asked for by its uid when its panel opens), in the
 * panel, with links to the writes' traces; none for a span without a uid, or from a
 * server without fights. */
async function checkFights(page, base, state) {
  state.trace = cascade();
  state.trace.spans[0].attributes.uid = 'u-deploy';
  state.fights = fights('u-deploy');
  await fakeServer(page, state);
  await open(page, `${base}/#/trace/${ROOT}`, 'trace');
  await clickBar(page, sid(1));
  await page.waitForSelector('#span-fights li.fight', { timeout: 5000 });
  eq(await page.locator('#span-fights li.fight').count(), 1, 'the object\'s fights (not another object\'s)');
  assert((await text(page, '#span-fights li.fight code')).startsWith('spec.replicas: kubernetes-admin ↔ hpa-like, 3 reversals'),
    `the fight's line: ${await text(page, '#span-fights li.fight code')}`);
  eq(await page.locator('#span-fights .fight-writes li').count(), 4, 'the fight\'s writes');
  eq(await page.locator(`#span-fights .fight-writes a[href="#/trace/${MERGE}"]`).count(), 2, 'links to the writes\' traces');
  await clickBar(page, sid(2));
  eq(await page.locator('#span-fights').count(), 0, 'fights on a span without a uid');
  state.fights = null;
  await fakeServer(page, state);
  await open(page, `${base}/#/trace/${ROOT}`, 'trace');
  await clickBar(page, sid(1));
  await page.waitForTimeout(300);
  eq(await page.locator('#span-fights').count(), 0, 'fights from a server without them');
  state.trace = cascade();
  return '';
}

async function checkEventsTab(page, base) {
  await open(page, `${base}/#/trace/${ROOT}/events`, 'events');
  await page.waitForSelector('#events', { timeout: 5000 });
  eq(await text(page, '#events-count'), '4', 'the Events tab\'s count');
  const ev = await page.$$eval('#events tbody tr', (trs) => trs.map((tr) => [tr.dataset.reason, tr.classList.contains('warning')]));
  eq(JSON.stringify(ev), JSON.stringify([['ScalingReplicaSet', false], ['FailedScheduling', true]]), 'Events, Warnings highlighted');
  eq(await page.locator('#unattributed-audit tbody tr.refused .badge.refused').count(), 1, 'the refused unattributed audit event');
  assert((await text(page, '#unattributed-audit tbody tr')).includes('alice'), 'the unattributed audit event\'s user');
  eq(await page.locator('#unattributed-changes > li').count(), 1, 'changes joined to no write');
  return '';
}

async function checkFind(page, base, state) {
  const two = state.stalls;
  state.stalls = { ...two, stalls: Array.from({ length: 12 }, (_, i) => ({ ...two.stalls[i % 2], span_id: sid(100 + i), waiting_seconds: 100 - i })) };
  await open(page, `${base}/#/`, 'find');
  eq(await page.locator('#stalled-now #stalls tbody tr').count(), 10, 'Stalled now before "Show all"');
  await page.locator('#stalled-now tfoot button').click();
  eq(await page.locator('#stalled-now #stalls tbody tr').count(), 12, 'Stalled now after "Show all"');
  state.stalls = two;
  await open(page, `${base}/#/`, 'find');
  const rows = await attrs(page, '#stalled-now #stalls tbody tr', 'data-span');
  eq(rows.join(','), [sid(4), sid(2)].join(','), 'Stalled now');
  assert((await text(page, '#stalled-now #stalls tbody tr')).includes('FailedScheduling'), 'Stalled now: the Events\' reasons');
  await page.locator('#stalled-now #stalls tbody tr a').first().click();
  await page.waitForSelector(`#span-panel:not([hidden])[data-span="${sid(4)}"]`, { timeout: 10000 });
  eq(await text(page, '#root-cpid'), ROOT, 'the trace opened from Stalled now');
  return '';
}

async function checkLive(page, base, state) {
  state.trace = shiftToNow(cascade());
  state.details = shiftToNow(details());
  state.stalls = shiftToNow(stalls());
  await fakeServer(page, state);
  await open(page, `${base}/#/trace/${ROOT}`, 'trace');
  await page.waitForSelector('#live[data-live="live"]', { timeout: 5000, state: 'attached' });
  await page.waitForSelector('.trace[data-stalls="2"]', { timeout: 5000, state: 'attached' });
  await page.evaluate(() => (window.rippleLiveMarker = 'first load'));
  state.stalls = { ...state.stalls, stalls: state.stalls.stalls.slice(1) };
  await page.waitForSelector('.trace[data-stalls="1"]', { timeout: 10000, state: 'attached' }).catch(() => {
    throw new CheckError('a stall that ended is still shown after the live updates');
  });
  eq(await text(page, '#stall-count'), '1 stalled write', 'the banner after a live update');
  eq((await attrs(page, '.bar.stalled', 'data-span')).join(','), sid(2), 'stalled bars after a live update');
  /* The details fail for a while: what was shown stays. */
  const kept = state.details;
  state.details = 'fail';
  state.stalls = { ...state.stalls, stalls: [] };
  await page.waitForSelector('.trace[data-stalls="0"]', { timeout: 10000, state: 'attached' });
  assert(await page.locator('#stall-banner').count() === 0, 'the banner stays with no stalls');
  await page.waitForTimeout(2000);
  eq(await text(page, '#events-count'), '4', 'the Events tab\'s count while the details fail');
  eq(await page.evaluate(() => document.querySelector('.trace').dataset.details), 'ready', 'details while they fail');
  state.details = kept;
  assert(await page.evaluate(() => window.rippleLiveMarker === 'first load'), 'the page was reloaded');
  await page.click('#live button');
  return '';
}

async function checkOlderServer(page, base, state) {
  state.trace = cascade();
  state.details = null;
  state.stalls = null;
  await fakeServer(page, state);
  await open(page, `${base}/#/trace/${ROOT}`, 'trace');
  await page.waitForSelector('.trace[data-details="none"]', { timeout: 5000, state: 'attached' });
  eq(await page.locator('#stall-banner, .wf-row.stalled, .bar.stalled').count(), 0, 'stall marks from a server without stalls');
  await clickBar(page, sid(1));
  eq(await page.locator('#span-change, #span-audit, #span-stall').count(), 0, 'details sections from a server without details');
  eq(await text(page, '#events-count').catch(() => ''), '', 'the Events tab\'s count');
  await open(page, `${base}/#/trace/${ROOT}/events`, 'events');
  assert((await text(page, '#events-view')).includes('older than this dashboard'), 'the Events tab does not say why it is empty');
  await open(page, `${base}/#/`, 'find');
  eq(await page.locator('#stalled-now').count(), 0, 'Stalled now from a server without it');
  eq(await page.locator('#roots tbody tr[data-cpid]').count(), 1, 'the latest changes');
  return '';
}

async function serve(dir) {
  const p = spawn(process.execPath, [join(web, 'test/e2e/dev-server.mjs'), '--dir', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    p.stdout.on('data', (d) => {
      out += d;
      const m = /listening (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    p.on('exit', (code) => reject(new Error(`dev-server exited ${code}`)));
  });
  return { url, stop: () => p.kill() };
}

async function main() {
  let dir = opt.dir;
  let tmp = null;
  if (!dir) {
    tmp = mkdtempSync(join(tmpdir(), 'ripple-web-details.'));
    process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
    dir = tmp;
    execFileSync(process.execPath, [join(web, 'build.mjs'), '--out', dir], { cwd: web, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const server = await serve(dir);
  process.on('exit', () => server.stop());
  const { browser, page, problems } = await openBrowser();
  const state = { trace: cascade(), details: details(), stalls: stalls() };
  let passed = 0;
  const check = async (name, fn) => {
    const t = Date.now();
    try {
      const note = await fn();
      passed++;
      process.stdout.write(`ok - ${name} (${Date.now() - t} ms)${note ? ': ' + note : ''}\n`);
    } catch (e) {
      process.stdout.write(`not ok - ${name}: ${e.message}\n${passed} passed, 1 failed\n`);
      await browser.close().catch(() => {});
      server.stop();
      process.exit(1);
    }
  };
  try {
    await fakeServer(page, state);
    await check('stalls: banner, rows and bars', () => checkTrace(page, server.url));
    await check('span panel: stalled, changes, snapshot, audit, Events', () => checkPanel(page, server.url));
    await check('span panel: field fights over its object', () => checkFights(page, server.url, state));
    await check('Events tab: Events, unattributed audit and changes', () => checkEventsTab(page, server.url));
    await check('Find: Stalled now', () => checkFind(page, server.url, state));
    await check('live: stalls refreshed with the trace', () => checkLive(page, server.url, state));
    await check('an older server: no details, no stalls, nothing shown of them', () => checkOlderServer(page, server.url, state));
    await check('no console errors or CSP violations', async () => {
      const bad = problems.filter((p) => !/Failed to load resource/.test(p));
      assert(!bad.length, bad.join('; '));
    });
  } finally {
    await browser.close();
    server.stop();
  }
  process.stdout.write(`${passed} passed, 0 failed\n`);
}

main().catch((e) => {
  process.stderr.write(`details: ${e.message}\n`);
  process.exit(1);
});
