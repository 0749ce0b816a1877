#!/usr/bin/env node
/*
 * Runs the page-level checks (views.mjs) against a running ripple-server that serves
 * the dashboard and has the trace of CPID:
 *
 *   node test/e2e/run.mjs --server URL --cpid CPID [--max-render-ms N] [--skip-token]
 *                         [--expect-rows GLOB[@DEPTH]=N ...] [--stop-server PID]
 *
 * Prints one line per check and "N passed, N failed" at the end; exits 1 on the first
 * failed check, with what was wrong. With --max-render-ms, the trace must render within
 * that many milliseconds of navigation (the benchmark of large traces). Each
 * --expect-rows names rows the caller knows the cluster made (checkRows in views.mjs).
 * With --stop-server, the last check stops that process (the server) under the open
 * page and expects the page to say so.
 */
import { parseArgs } from 'node:util';
import { openBrowser } from './browser.mjs';
import * as views from './views.mjs';

const { values: opt } = parseArgs({ options: {
  server: { type: 'string' }, cpid: { type: 'string' }, 'max-render-ms': { type: 'string' },
  'skip-token': { type: 'boolean', default: false },
  'expect-rows': { type: 'string', multiple: true, default: [] },
  'stop-server': { type: 'string' },
} });
if (!opt.server || !opt.cpid) {
  process.stderr.write('usage: run.mjs --server URL --cpid CPID [--max-render-ms N]\n');
  process.exit(2);
}
const base = opt.server.replace(/\/$/, '');
const cpid = opt.cpid.toLowerCase();

/* Console errors that the checks cause on purpose (refused and failed requests). */
const EXPECTED = /Failed to load resource|net::ERR_CONNECTION_REFUSED|net::ERR_FAILED/;

async function main() {
  const exp = await views.expectedTrace(base, cpid);
  const { browser, page, problems } = await openBrowser();
  let passed = 0;
  const check = async (name, fn) => {
    const t = Date.now();
    try {
      const note = await fn();
      passed++;
      process.stdout.write(`ok - ${name} (${Date.now() - t} ms)${note ? ': ' + note : ''}\n`);
    } catch (e) {
      process.stdout.write(`not ok - ${name}: ${e.message}\n${passed} passed, 1 failed\n`);
      await browser.close();
      process.exit(1);
    }
  };
  await check('waterfall: header and rows match the API', async () => `${await views.checkWaterfall(page, base, exp)} rows on screen`);
  if (opt['expect-rows'].length) await check('waterfall: the rows the cluster made', () => views.checkRows(page, base, exp, opt['expect-rows']));
  await check('waterfall: selecting a span, deep link', () => views.checkSelection(page, base, exp));
  await check('details and stalls', () => views.checkDetails(page, base, exp));
  await check('waterfall: grouped by component', () => views.checkByComponent(page, base, exp));
  await check('hops table', () => views.checkHops(page, base, exp));
  await check('merge graph', () => views.checkGraph(page, base, exp));
  await check('find', () => views.checkFind(page, base, exp));
  await check('errors: unknown, malformed, server down', () => views.checkErrors(page, base));
  if (!opt['skip-token']) await check('reader token form', () => views.checkToken(page, base, exp));
  await check('large-trace timing', async () => {
    const m = await views.measureTrace(page, base, cpid);
    const limit = Number(opt['max-render-ms'] ?? Infinity);
    if (!(m.renderMs <= limit)) throw new views.CheckError(`rendered in ${m.renderMs.toFixed(0)} ms, over ${limit} ms`);
    return `${m.spans} spans, ${m.rows} rows: rendered ${m.renderMs.toFixed(0)} ms after navigation, click ${m.clickMs.toFixed(0)} ms, scroll ${m.scrollMs.toFixed(0)} ms`;
  });
  if (opt['stop-server']) {
    await check('the server stops under an open page', () => views.checkServerStops(page, base, exp, Number(opt['stop-server'])));
  }
  await check('no console errors or CSP violations', async () => {
    const bad = problems.filter((p) => !EXPECTED.test(p));
    if (bad.length) throw new views.CheckError(bad.join('; '));
  });
  await browser.close();
  process.stdout.write(`${passed} passed, 0 failed\n`);
}

main().catch((e) => {
  process.stderr.write(`e2e: ${e.message}\n`);
  process.exit(1);
});
