#!/usr/bin/env node
/*
 * The dashboard in a real browser through `kubectl ripple dashboard`'s relay
 * (tests/kubectl/relay-browser.sh starts the server, the trace and the relay):
 *
 *   node test/e2e/relay.mjs --url TRACE_URL --spans N
 *
 * Opens the trace's page at the URL the relay printed (under its secret prefix, on
 * 127.0.0.1), and asserts that the trace renders with no token typed (the relay adds
 * it), that it shows all N spans and their bars, and that the page logged no error and
 * no CSP violation. Exits 1 with what was wrong.
 */
import { parseArgs } from 'node:util';
import { openBrowser, openView } from './browser.mjs';

const { values: opt } = parseArgs({ options: { url: { type: 'string' }, spans: { type: 'string' } } });
if (!opt.url || !opt.spans) {
  process.stderr.write('usage: relay.mjs --url TRACE_URL --spans N\n');
  process.exit(2);
}

async function main() {
  const { browser, page, problems } = await openBrowser();
  try {
    const state = await openView(page, opt.url, 'trace', 20000);
    const text = await page.evaluate(() => document.body.innerText);
    if (state !== 'ready') throw new Error(`the trace did not render: ${text.slice(0, 300)}`);
    const shown = await page.$eval('#span-count', (e) => Number(e.textContent));
    if (shown !== Number(opt.spans)) throw new Error(`the page shows ${shown} spans, not ${opt.spans}`);
    const bars = await page.$$eval('[data-span]', (els) => els.filter((e) => {
      const r = e.getBoundingClientRect();
      return r.width > 0 && r.height > 0;
    }).length);
    if (bars < 1) throw new Error('no span bar is visible');
    if (!text.includes('kubernetes-admin')) throw new Error('the root write (kubernetes-admin) is not shown');
    if (await page.$('input[type="password"]')) throw new Error('the page asks for a reader token');
    if (problems.length) throw new Error(`the page had problems:\n${problems.join('\n')}`);
    process.stdout.write(`relay.mjs: the trace renders through the relay: ${shown} spans, ${bars} bars visible\n`);
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  process.stderr.write(`relay.mjs: ${e.message}\n`);
  process.exit(1);
});
