/*
 * Headless Chromium for the page-level checks and screenshots, through playwright-core
 * (which downloads nothing): Debian's /usr/bin/chromium unless CHROMIUM says otherwise.
 * Collects the page's console errors and CSP violations so checks can fail on them.
 */
import { chromium } from 'playwright-core';

export const VIEWPORT = { width: 1280, height: 800 };

/* {browser, page, problems}: problems gathers console errors and page errors. */
export async function openBrowser({ viewport = VIEWPORT } = {}) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1, timezoneId: 'UTC' });
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return { browser, context, page, problems };
}

/*
 * Opens url and waits until the dashboard says it rendered `ready` (body[data-ready])
 * or failed (body[data-state=error]); returns 'ready' or 'error'.
 */
export async function openView(page, url, ready, timeout = 15000) {
  await page.evaluate(() => {
    if (document.body) {
      delete document.body.dataset.ready;
      delete document.body.dataset.state;
    }
  }).catch(() => {});
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  return waitView(page, ready, timeout);
}

/* Waits for body[data-ready=<ready>] or body[data-state=error]. */
export async function waitView(page, ready, timeout = 15000) {
  const sel = `body[data-ready="${ready}"], body[data-state="error"]`;
  await page.waitForSelector(sel, { timeout, state: 'attached' });
  return page.evaluate(() => (document.body.dataset.state === 'error' ? 'error' : 'ready'));
}
