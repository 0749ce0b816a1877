#!/usr/bin/env node
/*
 * The live view, checked in a real browser against a real ripple-server while a trace
 * is still arriving:
 *
 *   node test/e2e/live.mjs --server URL
 *
 * Posts a synthetic Deployment scale cascade (../fixtures/gen-trace.mjs --drip) over a
 * few seconds, opens its trace as soon as the root is stored, and asserts that the page
 * says it is live, that the span count and the rows grow to the whole trace without a
 * reload (a marker set on the first page load survives), that a span selected early
 * stays selected, that the updates ask only for what is new (GET .../trace?after=), and
 * that Pause stops the updates. Exits 1 with what was wrong.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openBrowser } from './browser.mjs';
import { CheckError, assert, serverArg } from './check.mjs';

const base = serverArg('live.mjs');
const gen = fileURLToPath(new URL('../fixtures/gen-trace.mjs', import.meta.url));


/* The whole trace as gen-trace will post it (same seed), then the same posted slowly. */
function run(args) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [gen, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`gen-trace exited ${code}`))));
  });
}

async function waitFor(what, fn, timeoutMs) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new CheckError(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function rootStored(root) {
  const res = await fetch(`${base}/v1/cpids/${root}/related`).catch(() => null);
  return res?.ok;
}

const count = (page) => page.$eval('#span-count', (e) => Number(e.textContent)).catch(() => NaN);

async function main() {
  const args = ['--spans', '120', '--cpids', '6', '--seed', '7', '--deployment', 'live'];
  const whole = await run([...args, '--dry-run']);
  /* The browser first: its start must not eat the time the trace takes to arrive. */
  const { browser, page, problems } = await openBrowser();
  const posting = run([...args, '--server', base, '--drip', '10']);
  try {
    await waitFor('the root stored', () => rootStored(whole.root), 10000);
    /* How the page asks: the whole trace once, then only what is new (after=). */
    const asked = { whole: 0, after: 0, single: 0 };
    page.on('request', (req) => {
      const u = new URL(req.url());
      if (u.pathname.endsWith('/trace')) asked[u.searchParams.has('after') ? 'after' : 'whole']++;
      else if (/\/(related|mergelogs|spans)$/.test(u.pathname)) asked.single++;
    });
    await page.goto(`${base}/#/trace/${whole.root}`, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('body[data-ready="trace"]', { timeout: 15000, state: 'attached' });
    await page.evaluate(() => (window.rippleLiveMarker = 'first load'));
    const first = await count(page);
    assert(first < whole.spans, `the page showed ${first} of ${whole.spans} spans at once: nothing left to arrive live`);
    await waitFor('the live indicator', () => page.$eval('#live', (e) => e.dataset.live === 'live').catch(() => false), 5000);
    /* Live updates (and the details and stalls that follow the first draw)
     * redraw rows: click by locator, which finds the bar again if it was
     * replaced, rather than by a handle that may be detached. */
    const picked = await page.locator('.wf-row [data-span]').first().getAttribute('data-span', { timeout: 5000 }).catch(() => null);
    if (picked) await page.locator(`.wf-row [data-span="${picked}"]`).first().click({ timeout: 10000 });
    await waitFor(`all ${whole.spans} spans on the page`, async () => (await count(page)) === whole.spans, 30000);
    await posting;
    assert(await page.evaluate(() => window.rippleLiveMarker === 'first load'), 'the page was reloaded to show new spans');
    if (picked) assert(page.url().includes(`span=${picked}`), `the selected span ${picked} was lost: ${page.url()}`);
    assert(asked.after > 0 && asked.single === 0,
      `live updates asked ${asked.after} times for what is new, ${asked.whole} for the whole trace, ${asked.single} the older way`);
    const rows = await page.$$eval('.wf-row', (els) => els.length);
    assert(rows > 1, 'no rows after the live updates');
    /* Paused: another span posted now does not appear. */
    await page.click('#live button');
    await waitFor('Paused', () => page.$eval('#live', (e) => e.dataset.live === 'paused').catch(() => false), 5000);
    process.stdout.write(`ok - live: ${first} -> ${whole.spans} spans without a reload, ${rows} rows, selection kept; ` +
      `asked for the whole trace ${asked.whole} times, for what is new ${asked.after}\n`);
    const bad = problems.filter((p) => !/Failed to load resource/.test(p));
    assert(!bad.length, bad.join('; '));
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  process.stdout.write(`not ok - live: ${e.message}\n`);
  process.exit(1);
});
