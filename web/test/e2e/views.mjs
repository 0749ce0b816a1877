/*
 * Page-level checks of the dashboard, reusable against any running ripple-server that
 * serves it and has data: given a page, the server's URL and a CPID, each check opens a
 * view and compares what it shows with what the API answers (counts, rows, bars, links),
 * and the error pages with their messages. A check throws CheckError on the first wrong
 * thing; run.mjs runs them in order.
 *
 * The expected values are computed here from the API's answers, independently of the
 * dashboard's own modules.
 */

export class CheckError extends Error {}

function assert(cond, message) {
  if (!cond) throw new CheckError(message);
}

function eq(actual, expected, what) {
  assert(actual === expected, `${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

/* GET a JSON answer of the API (status and body). */
export async function api(base, path, token) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const res = await fetch(base + path, { headers });
  let body = null;
  try {
    body = await res.json();
  } catch {
    /* not JSON */
  }
  return { status: res.status, body };
}

/* The trace as the API answers it, with what the views should show: the change's own
 * cascade, what the dashboard shows by default (/related's default is everything reachable). */
export async function expectedTrace(base, cpid, token) {
  const get = async (what) => {
    const r = await api(base, `/v1/cpids/${cpid}/${what}?scope=own`, token);
    assert(r.status === 200, `GET /v1/cpids/${cpid}/${what} answered ${r.status}: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const [rel, mls, sps] = await Promise.all([get('related'), get('mergelogs'), get('spans')]);
  const seen = new Set();
  const spans = sps.spans.filter((s) => !seen.has(`${s.cpid}/${s.span_id}`) && seen.add(`${s.cpid}/${s.span_id}`));
  const mergelogs = new Map(mls.mergelogs.map((m) => [m.cpid, m]));
  return { cpid, related: rel.related, spans, mergelogs, root: mergelogs.get(cpid) };
}

/* The row key of a span's object as the waterfall names rows (data-row). */
function rowKey(s) {
  const a = s.attributes ?? {};
  if (!a.kind) return `~${s.service}`;
  const ns = a.namespace ?? '';
  if (!a.name) return `${a.kind}/${ns}/(created)${a.owner ? `@${ownerKey(a.owner, ns)}` : ''}`;
  return `${a.kind}/${ns}/${a.name}`;
}

function ownerKey(owner, ns) {
  const i = owner.indexOf('/');
  return `${owner.slice(0, i)}/${ns}/${owner.slice(i + 1)}`;
}

export async function rowsOnPage(page) {
  return page.$$eval('.wf-row', (els) => els.map((e) => ({
    key: e.dataset.row, depth: Number(e.dataset.depth),
    bars: [...e.querySelectorAll('[data-span]')].map((b) => b.dataset.span),
  })));
}

async function open(page, url, ready) {
  await page.goto('about:blank');
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  const sel = `body[data-ready="${ready}"], body[data-state="error"]`;
  await page.waitForSelector(sel, { timeout: 20000, state: 'attached' });
  const state = await page.evaluate(() => document.body.dataset.state);
  if (state === 'error') {
    const msg = await page.locator('.error').first().innerText().catch(() => '(no .error element)');
    throw new CheckError(`${url}: the page shows an error: ${msg.replace(/\s+/g, ' ')}`);
  }
}

async function text(page, selector) {
  return (await page.locator(selector).first().innerText()).trim();
}

/* The trace page: header counts, rows and bars against the API, nesting by owner. */
export async function checkWaterfall(page, base, exp) {
  await open(page, `${base}/#/trace/${exp.cpid}`, 'trace');
  eq(await text(page, '#root-cpid'), exp.cpid, '#root-cpid');
  eq(await text(page, '#span-count'), String(exp.spans.length), '#span-count (spans after deduplication)');
  eq(await text(page, '#cpid-count'), String(new Set(exp.related).size), '#cpid-count (related CPIDs)');
  if (exp.root?.component) eq(await text(page, '#root-who'), exp.root.component, '#root-who');
  const rows = await rowsOnPage(page);
  assert(rows.length > 0, 'the waterfall shows no rows');
  const byKey = new Map();
  for (const s of exp.spans) {
    const k = rowKey(s);
    if (!byKey.has(k)) byKey.set(k, []);
    byKey.get(k).push(s.span_id);
  }
  const parents = new Map();
  for (const s of exp.spans) {
    const a = s.attributes ?? {};
    if (a.owner && a.kind) parents.set(rowKey(s), ownerKey(a.owner, a.namespace ?? ''));
  }
  for (const [i, r] of rows.entries()) {
    const want = byKey.get(r.key) ?? [];
    eq([...r.bars].sort().join(','), [...want].sort().join(','), `bars of row ${r.key}`);
    if (r.depth > 0 && i > 0) {
      let j = i - 1;
      while (j >= 0 && rows[j].depth >= r.depth) j--;
      if (j >= 0) eq(rows[j].key, parents.get(r.key), `the row above ${r.key} at one level less (its owner)`);
    } else if (r.depth === 0) assert(!parents.has(r.key), `${r.key} has an owner but is at the top level`);
  }
  return rows.length;
}

/* Clicking a bar selects it: the URL carries &span=, the panel shows its attributes. */
/*
 * What the test knows of the cluster, beyond what the API says: each expectation
 * "GLOB[@DEPTH]=N" (a row key with * for any characters, at that depth when given)
 * must match exactly N rows of the waterfall of exp.cpid (all rows expanded).
 */
export async function checkRows(page, base, exp, expectations) {
  await open(page, `${base}/#/trace/${exp.cpid}`, 'trace');
  const rows = await rowsOnPage(page);
  const notes = [];
  for (const e of expectations) {
    const m = /^(.+?)(?:@(\d+))?=(\d+)$/.exec(e);
    assert(m, `expectation "${e}" is not GLOB[@DEPTH]=N`);
    const re = new RegExp('^' + m[1].split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*') + '$');
    const n = rows.filter((r) => re.test(r.key) && (m[2] === undefined || r.depth === Number(m[2]))).length;
    eq(n, Number(m[3]), `rows matching ${e}`);
    notes.push(`${m[1]}=${n}`);
  }
  return notes.join(', ');
}

export async function checkSelection(page, base, exp) {
  await open(page, `${base}/#/trace/${exp.cpid}`, 'trace');
  const id = await page.evaluate(() => [...document.querySelectorAll('.wf-row [data-span]')].find((b) => {
    const r = b.getBoundingClientRect();
    return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2) === b;
  })?.dataset.span);
  assert(id, 'no bar can be clicked');
  await page.locator(`.wf-row [data-span="${id}"]`).click();
  await page.waitForSelector('#span-panel:not([hidden])');
  const span = exp.spans.find((s) => s.span_id === id);
  assert(span, `a bar has data-span=${id}, which the API does not list`);
  assert(page.url().includes(`span=${id}`), `the URL does not carry span=${id}: ${page.url()}`);
  eq(await text(page, '#span-panel .panel-title'), span.name, 'the panel title (span name)');
  for (const [k, v] of Object.entries(span.attributes ?? {})) {
    if (v === '') continue;
    eq(await text(page, `#span-panel dd[data-attr="${k}"]`), v, `attribute ${k} in the panel`);
  }
  await open(page, page.url(), 'trace');
  await page.waitForSelector('#span-panel:not([hidden])', { timeout: 5000 }).catch(() => {
    throw new CheckError('opening a URL with span= does not show that span');
  });
  eq(await text(page, '#span-panel .panel-title'), span.name, 'the panel title after opening the deep link');
  const selected = await page.$$eval('.bar.selected', (els) => els.map((e) => e.dataset.span));
  assert(selected.includes(id), 'the deep-linked span is not highlighted');
}

/* Runs fn until it returns without a CheckError, at most `tries` times (data that moves). */
async function settled(fn, tries = 3) {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (e) {
      if (!(e instanceof CheckError) || i >= tries) throw e;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

async function detailsState(page) {
  await page.waitForSelector('.trace[data-details]', { timeout: 20000, state: 'attached' });
  return page.evaluate(() => ({ details: document.querySelector('.trace').dataset.details, stalls: Number(document.querySelector('.trace').dataset.stalls) }));
}

/*
 * Details and stalls against the API's own answers: a server without them (404) shows
 * nothing of them; else the Events tab lists what /details lists, a write's panel its
 * diff and audit, and the banner the writes /stalls lists. Each part is compared again
 * when the cluster changed it meanwhile (new Events, a stall that ended).
 */
export async function checkDetails(page, base, exp) {
  const notes = [];
  const first = await api(base, `/v1/cpids/${exp.cpid}/details`);
  if (first.status === 404) {
    await open(page, `${base}/#/trace/${exp.cpid}`, 'trace');
    eq((await detailsState(page)).details, 'none', 'details from a server without /details');
    eq(await page.locator('#stall-banner, .wf-row.stalled').count(), 0, 'stall marks from a server without /stalls');
    return 'the server has no details: none shown';
  }
  eq(first.status, 200, `GET /v1/cpids/${exp.cpid}/details`);
  await settled(async () => {
    await open(page, `${base}/#/trace/${exp.cpid}/events`, 'events');
    eq((await detailsState(page)).details, 'ready', 'details on the page');
    const d = (await api(base, `/v1/cpids/${exp.cpid}/details`)).body;
    eq(await page.locator('#events tbody tr').count(), d.events.length, 'Events in the Events tab');
    eq(await page.locator('#unattributed-audit tbody tr').count(), d.audit.length, 'unattributed audit events');
    eq(await page.locator('#unattributed-changes > li').count(), d.changes.length, 'changes joined to no write');
    notes.push(`${d.writes.length} writes with details, ${d.events.length} Events`);
  });
  const ids = new Set(exp.spans.map((x) => x.span_id));
  const w = first.body.writes.find((x) => ids.has(x.span_id) && x.change?.diff?.length && x.audit)
    ?? first.body.writes.find((x) => ids.has(x.span_id));
  if (w) {
    await open(page, `${base}/#/trace/${exp.cpid}?span=${w.span_id}`, 'trace');
    await detailsState(page);
    await page.waitForSelector('#span-panel:not([hidden]) #span-change', { timeout: 10000 });
    if (w.change?.diff) {
      eq(await page.locator('#span-change table.diff tbody').count(), w.change.diff.length, `diff entries of span ${w.span_id}`);
      eq(await page.locator('#span-change td.redacted').count(), w.change.diff.filter((e) => e.redacted).length, 'redacted entries');
    }
    if (w.audit) {
      if (w.audit.user) eq(await text(page, '#span-audit dd[data-audit="user"]'), w.audit.user, 'the audit user');
      eq(await page.locator('#span-audit .badge.refused').count(), w.audit.code >= 400 ? 1 : 0, 'the refused mark');
    }
  }
  const stalls = await api(base, `/v1/cpids/${exp.cpid}/stalls`);
  if (stalls.status === 200) {
    await settled(async () => {
      await open(page, `${base}/#/trace/${exp.cpid}`, 'trace');
      const shown = (await detailsState(page)).stalls;
      const want = (await api(base, `/v1/cpids/${exp.cpid}/stalls`)).body.stalls ?? [];
      eq(shown, want.length, 'stalls on the page');
      const items = await page.$$eval('#stall-banner .stall-item', (els) => els.map((e) => e.dataset.span));
      eq(items.sort().join(','), want.map((x) => x.span_id).sort().join(','), 'the banner\'s stalled writes');
      notes.push(`${want.length} stalled`);
    });
  }
  return notes.join(', ');
}

/* Grouped by component: each service is a top-level row. */
export async function checkByComponent(page, base, exp) {
  await open(page, `${base}/#/trace/${exp.cpid}?group=component`, 'trace');
  await page.getByRole('button', { name: 'Collapse all' }).click();
  const rows = await rowsOnPage(page);
  const services = new Set(exp.spans.map((s) => s.service));
  for (const m of exp.mergelogs.values()) if (m.component) services.add(m.component);
  eq(rows.filter((r) => r.depth === 0).map((r) => r.key).sort().join(','), [...services].sort().join(','), 'top-level rows by component');
  const legend = await page.$$eval('.legend-item', (els) => els.map((e) => e.dataset.service));
  eq(legend.sort().join(','), [...new Set(exp.spans.map((s) => s.service))].sort().join(','), 'the legend');
}

/* Hops: one line per (service, write) without roots, counts as the API's spans say. */
export async function checkHops(page, base, exp) {
  await open(page, `${base}/#/trace/${exp.cpid}/hops`, 'hops');
  const want = new Map();
  for (const s of exp.spans) {
    const ml = exp.mergelogs.get(s.cpid);
    const root = s.attributes?.spontaneous === 'true' || (ml && ml.sources.length === 0 && (ml.component ?? '') === s.service);
    if (root) continue;
    const k = `${s.service}/${s.name}`;
    want.set(k, (want.get(k) ?? 0) + 1);
  }
  const got = await page.$$eval('#hops-table tbody tr', (trs) => trs.map((tr) => [tr.dataset.hop, tr.querySelector('[data-col="count"]').textContent]));
  eq(got.length, want.size, 'hop lines');
  for (const [k, n] of got) eq(n, String(want.get(k)), `count of hop ${k}`);
  const hist = await page.locator('#hops-table svg.hist').count();
  eq(hist, want.size, 'histograms');
  await page.locator('th[data-column="count"] button').click();
  const sorted = await page.$$eval('#hops-table tbody [data-col="count"]', (tds) => tds.map((t) => Number(t.textContent)));
  assert(sorted.every((v, i) => i === 0 || sorted[i - 1] >= v), `sorting by count does not sort: ${sorted}`);
}

/* The merge graph: a node per related CPID, roots marked, origins lit on selection. */
export async function checkGraph(page, base, exp) {
  await open(page, `${base}/#/trace/${exp.cpid}/graph`, 'graph');
  const ids = await page.$$eval('.gnode:not(.external)', (els) => els.map((e) => e.dataset.cpid));
  eq(ids.length, Math.min(exp.related.length, 300), 'graph nodes');
  const roots = await page.$$eval('.gnode[data-root="true"]', (els) => els.map((e) => e.dataset.cpid));
  for (const id of roots) eq(exp.mergelogs.get(id)?.sources.length, 0, `node ${id} marked root`);
  const pick = ids[ids.length - 1];
  await page.locator(`.gnode[data-cpid="${pick}"]`).dispatchEvent('click');
  assert(page.url().includes(`select=${pick}`), `the URL does not carry select=${pick}`);
  eq(await text(page, '#selected-cpid'), pick, 'the selected CPID in the panel');
  const lit = await page.$$eval('.gnode.lit', (els) => els.map((e) => e.dataset.cpid));
  const ancestors = new Set([pick]);
  const queue = [pick];
  while (queue.length) {
    for (const src of exp.mergelogs.get(queue.shift())?.sources ?? []) if (!ancestors.has(src)) ancestors.add(src) && queue.push(src);
  }
  for (const id of lit) assert(ancestors.has(id), `node ${id} is lit but is not an ancestor of ${pick}`);
  assert(lit.includes(pick), 'the selected node is not lit');
  await page.waitForSelector('#origins li, #origins p:not(:has-text("Looking"))', { timeout: 5000 });
  const o = await api(base, `/v1/cpids/${pick}/origins`);
  const shown = await page.$$eval('#origins li a', (as) => as.map((a) => a.getAttribute('href')));
  for (const r of o.body.origins) assert(shown.includes(`#/trace/${r}`), `origin ${r} is not linked`);
}

/* Find: latest roots listed newest first (when the server has /v1/roots), links work. */
export async function checkFind(page, base, exp) {
  await open(page, `${base}/#/`, 'find');
  const r = await api(base, '/v1/roots?limit=50');
  if (r.status === 404) {
    assert(await page.locator('.notice').count() > 0, 'no notice for a server without /v1/roots');
    return 'skipped the roots list: the server has no /v1/roots';
  }
  eq(r.status, 200, 'GET /v1/roots');
  const rows = await page.$$eval('#roots tbody tr[data-cpid]', (trs) => trs.map((t) => t.dataset.cpid));
  eq(rows.join(','), r.body.roots.map((x) => x.cpid).join(','), 'the latest roots, in the API\'s order');
  if (rows.length) {
    await page.locator('#roots tbody tr[data-cpid] td a').first().click();
    await page.waitForSelector('body[data-ready="trace"], body[data-state="error"]');
    eq(await text(page, '#root-cpid'), rows[0], 'the trace opened from the first root');
  }
  const ob = exp.root?.object;
  if (ob?.kind && ob?.name) {
    const q = new URLSearchParams({ kind: ob.kind, namespace: ob.namespace ?? '', name: ob.name });
    await open(page, `${base}/#/find?${q}`, 'find');
    const cpids = await page.$$eval('.object-block tr[data-cpid]', (trs) => trs.map((t) => t.dataset.cpid));
    const ans = await api(base, `/v1/objects?${q}`);
    eq(cpids.join(','), (ans.body.objects ?? []).flatMap((o) => o.cpids.map((c) => c.cpid)).join(','), 'the object\'s CPIDs');
  }
  await open(page, `${base}/#/find?cpid=${exp.cpid.toUpperCase()}`, 'trace');
  eq(await text(page, '#root-cpid'), exp.cpid, 'Find with a CPID opens its trace');
  return '';
}

async function expectError(page, url, needle) {
  await page.goto('about:blank');
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('body[data-state="error"]', { timeout: 15000, state: 'attached' }).catch(() => {
    throw new CheckError(`${url}: no error state (expected "${needle}")`);
  });
  const msg = (await text(page, '.error')).replace(/\s+/g, ' ');
  assert(msg.includes(needle), `${url}: the error says "${msg}", not "${needle}"`);
  assert(await page.locator('.error').first().isVisible(), `${url}: the error is not visible`);
}

/*
 * The real thing: the page open, ripple-server (process pid) stops, and the next view
 * says it cannot reach the server (a hash change: the page is not reloaded, as when an
 * operator clicks on after the server died). Leaves the server stopped.
 */
export async function checkServerStops(page, base, exp, pid) {
  await open(page, `${base}/#/`, 'find');
  process.kill(pid, 'SIGTERM');
  for (let i = 0; ; i++) {
    const up = await fetch(`${base}/healthz`).then(() => true, () => false);
    if (!up) break;
    assert(i < 100, `ripple-server (pid ${pid}) still answers 10 s after SIGTERM`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await page.evaluate((cpid) => {
    delete document.body.dataset.state;
    location.hash = `#/trace/${cpid}`;
  }, exp.cpid);
  await page.waitForSelector('body[data-state="error"]', { timeout: 15000, state: 'attached' }).catch(() => {
    throw new CheckError('no error state after the server stopped');
  });
  const msg = (await text(page, '.error')).replace(/\s+/g, ' ');
  assert(msg.includes('cannot reach ripple-server'), `the error says "${msg}", not that the server cannot be reached`);
  return msg.slice(0, 80);
}

/* Unknown, malformed and nil CPIDs, and a server that does not answer. */
export async function checkErrors(page, base) {
  let unknown;
  for (let i = 0; i < 5 && !unknown; i++) {
    const id = crypto.randomUUID();
    if ((await api(base, `/v1/cpids/${id}/related`)).status === 404) unknown = id;
  }
  await expectError(page, `${base}/#/trace/${unknown}`, `ripple-server does not know CPID ${unknown}`);
  await expectError(page, `${base}/#/trace/not-a-cpid`, '"not-a-cpid" is not a CPID');
  await expectError(page, `${base}/#/trace/00000000-0000-0000-0000-000000000000`, 'is not a CPID');
  await expectError(page, `${base}/#/nowhere`, 'There is no page');
  await page.route('**/v1/**', (route) => route.abort('connectionrefused'));
  try {
    await expectError(page, `${base}/#/trace/${unknown}`, 'cannot reach ripple-server');
    await expectError(page, `${base}/#/`, 'cannot reach ripple-server');
  } finally {
    await page.unroute('**/v1/**');
  }
}

/* A 401 shows the token form; the token then goes in an X-Ripple-Token header. */
export async function checkToken(page, base, exp) {
  const seen = [];
  await page.route('**/v1/**', async (route) => {
    const auth = route.request().headers()['x-ripple-token'];
    seen.push(auth ?? '');
    if (auth !== 'e2e-token') return route.fulfill({ status: 401, contentType: 'application/json', body: '{"error":"a reader token is required"}' });
    const headers = { ...route.request().headers() };
    delete headers['x-ripple-token'];
    return route.continue({ headers });
  });
  try {
    await page.goto('about:blank');
    await page.goto(`${base}/#/trace/${exp.cpid}`, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('body[data-ready="token"]', { timeout: 15000, state: 'attached' });
    assert(!page.url().includes('e2e-token'), 'the token is in the URL');
    await page.fill('#token', 'e2e-token');
    await page.click('.token-form button[type="submit"]');
    await page.waitForSelector('body[data-ready="trace"]', { timeout: 15000, state: 'attached' });
    assert(seen.includes('e2e-token'), 'the token was not sent in X-Ripple-Token');
    assert(!page.url().includes('e2e-token'), 'the token is in the URL');
  } finally {
    await page.unroute('**/v1/**');
    await page.evaluate(() => sessionStorage.clear());
  }
}

/*
 * Time from navigation to a rendered trace (the ready mark), and from a click on a bar
 * to its panel: {renderMs, clickMs, rows, spans}.
 */
export async function measureTrace(page, base, cpid) {
  await page.goto('about:blank');
  await page.goto(`${base}/#/trace/${cpid}`, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('body[data-ready="trace"], body[data-state="error"]', { timeout: 30000, state: 'attached' });
  const renderMs = await page.evaluate(() => performance.getEntriesByName('ripple:ready:trace')[0]?.startTime ?? NaN);
  const clickMs = await page.evaluate(async () => {
    const bar = document.querySelector('.wf-row [data-span]');
    const t = performance.now();
    bar.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    return document.querySelector('#span-panel:not([hidden])') ? performance.now() - t : NaN;
  });
  const scrollMs = await page.evaluate(async () => {
    const sc = document.querySelector('.wf-scroll');
    const t = performance.now();
    sc.scrollTop = sc.scrollHeight / 2;
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    return performance.now() - t;
  });
  const rows = await page.evaluate(() => document.querySelector('.wf-spacer').offsetHeight / 24);
  const spans = Number(await text(page, '#span-count'));
  return { renderMs, clickMs, scrollMs, rows, spans };
}
