#!/usr/bin/env node
/*
 * The large-trace benchmark of the dashboard (bench/bench-dashboard.sh runs it):
 * how long a trace takes to render and become interactive in headless Chromium.
 *
 *   node trace-render.mjs --server URL --cpid CPID [--runs 7]
 *
 * Each run is a new browser (a cold start: no cache, no compiled scripts) that
 * navigates to the trace view; "render" is the page's own ripple:ready:trace mark
 * (from navigation start to the rows and bars drawn and their handlers attached: the
 * page answers input from then on), "click" the time from a click on a bar to its span
 * panel shown, "scroll" from a scroll to half the rows to the next frame drawn. One
 * warm navigation in the last browser is reported beside. Prints one line per run (with
 * where its time went: the trace asked for, its answer in, parsed, modelled) and the
 * median and worst; the figure is printed, not judged (timings are not tests).
 */
import { parseArgs } from 'node:util';
import { openBrowser } from '../e2e/browser.mjs';
import { measureTrace } from '../e2e/views.mjs';

const { values: opt } = parseArgs({ options: {
  server: { type: 'string' }, cpid: { type: 'string' }, runs: { type: 'string', default: '7' },
} });
if (!opt.server || !opt.cpid) {
  process.stderr.write('usage: trace-render.mjs --server URL --cpid CPID [--runs N]\n');
  process.exit(2);
}
const base = opt.server.replace(/\/$/, '');
const runs = Math.max(1, Number(opt.runs) || 7);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const line = (label, m, p) => `${label}: ${m.spans} spans, ${m.rows} rows: render ${m.renderMs.toFixed(0)} ms, ` +
  `click ${m.clickMs.toFixed(0)} ms, scroll ${m.scrollMs.toFixed(0)} ms${p ? ` (${p})` : ''}\n`;

/*
 * Where a render's time went, from the page's own marks and resource timing: when the
 * trace was asked for and its (last) answer was in, when the page had it parsed
 * (ripple:fetched) and its model built (ripple:model).
 */
async function phases(page) {
  return page.evaluate(() => {
    const at = (n) => performance.getEntriesByName(n)[0]?.startTime;
    const asks = performance.getEntriesByType('resource').filter((e) => /\/v1\/cpids\/[^/]+\/(trace|related|mergelogs|spans)$/.test(new URL(e.name).pathname));
    if (!asks.length || at('ripple:fetched') === undefined) return '';
    const asked = Math.min(...asks.map((e) => e.startTime)), inAt = Math.max(...asks.map((e) => e.responseEnd));
    const f = (x) => Math.round(x);
    return `asked ${f(asked)}, answer in ${f(inAt)}, parsed ${f(at('ripple:fetched'))}, model ${f(at('ripple:model'))} ms; ` +
      `${asks.length} request${asks.length > 1 ? 's' : ''}, ${Math.round(asks.reduce((a, e) => a + e.transferSize, 0) / 1024)} KiB`;
  });
}

async function main() {
  const cold = [];
  let warm = null;
  for (let i = 0; i < runs; i++) {
    const { browser, page } = await openBrowser();
    try {
      const m = await measureTrace(page, base, opt.cpid);
      if (!Number.isFinite(m.renderMs)) throw new Error('the trace did not render (see the page)');
      cold.push(m);
      process.stdout.write(line(`cold run ${i + 1}`, m, await phases(page)));
      if (i === runs - 1) warm = await measureTrace(page, base, opt.cpid);
    } finally {
      await browser.close();
    }
  }
  process.stdout.write(line('warm (same browser, again)', warm));
  const r = cold.map((m) => m.renderMs), c = cold.map((m) => m.clickMs);
  process.stdout.write(`cold render: median ${median(r).toFixed(0)} ms, worst ${Math.max(...r).toFixed(0)} ms ` +
    `over ${runs} runs; click median ${median(c).toFixed(0)} ms (target: under 700 ms, issue 28)\n`);
}

main().catch((e) => {
  process.stderr.write(`trace-render: ${e.message}\n`);
  process.exit(1);
});
