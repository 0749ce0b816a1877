#!/usr/bin/env node
/*
 * Screenshots of every view at 1280x800, for reviews and docs:
 * find.png, trace.png, trace-component.png, hops.png, graph.png in DIR.
 *
 *   node test/e2e/screenshots.mjs --server URL --cpid CPID --out DIR
 *
 * URL serves the dashboard and its API (ripple-server, or test/e2e/dev-server.mjs).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openBrowser, openView } from './browser.mjs';

const { values: opt } = parseArgs({ options: {
  server: { type: 'string' }, cpid: { type: 'string' }, out: { type: 'string', default: 'screenshots' },
} });
if (!opt.server || !opt.cpid) {
  process.stderr.write('usage: screenshots.mjs --server URL --cpid CPID --out DIR\n');
  process.exit(2);
}

const base = opt.server.replace(/\/$/, '');
const shots = [
  ['find.png', '#/', 'find'],
  ['trace.png', `#/trace/${opt.cpid}`, 'trace', selectSomeSpan],
  ['trace-component.png', `#/trace/${opt.cpid}?group=component`, 'trace'],
  ['hops.png', `#/trace/${opt.cpid}/hops`, 'hops'],
  ['graph.png', `#/trace/${opt.cpid}/graph`, 'graph', selectLastNode],
];

/* The trace shot shows the side panel: select a visible bar a few rows down. */
async function selectSomeSpan(page) {
  const id = await page.evaluate(() => {
    const top = [...document.querySelectorAll('.wf-row [data-span]')].filter((b) => {
      const r = b.getBoundingClientRect();
      return r.bottom < window.innerHeight && document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2) === b;
    });
    return top[Math.min(top.length - 1, 6)]?.dataset.span;
  });
  if (id) await page.locator(`.wf-row [data-span="${id}"]`).click();
  await page.mouse.move(0, 0);
}

/* The graph shot shows a selection: the lowest node in view, with its origins lit. */
async function selectLastNode(page) {
  const id = await page.evaluate(() => {
    const box = document.querySelector('.graph-canvas').getBoundingClientRect();
    const inView = [...document.querySelectorAll('.gnode:not(.external)')].filter((g) => {
      const r = g.getBoundingClientRect();
      return r.top >= box.top && r.bottom <= box.bottom && r.left >= box.left && r.right <= box.right;
    });
    inView.sort((a, b) => b.getBoundingClientRect().top - a.getBoundingClientRect().top);
    return inView[0]?.dataset.cpid;
  });
  if (id) await page.locator(`.gnode[data-cpid="${id}"]`).click();
  await page.waitForTimeout(300);
}

async function main() {
  await mkdir(opt.out, { recursive: true });
  const { browser, page } = await openBrowser();
  try {
    for (const [file, hash, ready, prepare] of shots) {
      const state = await openView(page, `${base}/${hash}`, ready);
      if (state !== 'ready') throw new Error(`${hash}: the page shows an error: ${await page.locator('.error').first().innerText()}`);
      if (prepare) await prepare(page);
      await page.waitForTimeout(150);
      await page.screenshot({ path: join(opt.out, file) });
      process.stdout.write(`${join(opt.out, file)}\n`);
    }
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  process.stderr.write(`screenshots: ${e.message}\n`);
  process.exit(1);
});
