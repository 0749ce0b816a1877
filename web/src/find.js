/*
 * The Find page: open a CPID; find an object's recent CPIDs (kind, namespace, name ->
 * /v1/objects); list changes (root mergelogs, /v1/roots) filtered by time range,
 * component, namespace and kind, newest first. Without a query it lists the latest
 * changes. The query lives in the URL (#/find?...), so every result is a link.
 * Above them, "Stalled now": every write waiting for its usual next hop (/v1/stalls),
 * each a link to its trace; nothing when the server has no stall detector.
 * Each change's counts and duration are of its own cascade; the toggle (scope=reachable
 * in the URL) lists them for everything reachable, and its links open that scope.
 * "Hops of these changes" opens #/hops with the same time range and kind: every hop's
 * times across their cascades (hopstats-view.js).
 */
import { h, markLoading, markReady } from './dom.js';
import { checkCpid } from './api.js';
import { isCpid } from './cpid.js';
import { failView } from './errors.js';
import { formatRoute, hopStatsHref, scopeOf, traceHref } from './route.js';
import { formatClock, formatDuration, parseTime } from './time.js';
import { objectLabel } from './model.js';
import { shortCpid } from './cpid.js';
import { stallList, stalledNowRows } from './stalls.js';

const FIELDS = ['cpid', 'kind', 'namespace', 'name', 'component', 'since', 'until', 'scope'];
const PAGE = 50;
/* Stalled writes listed before "Show all" (the latest changes stay in view). */
const STALLS_SHOWN = 10;

/* Mounts the Find page. Returns {key, destroy()}. */
export function mountFind(app, route, ctx) {
  const abort = new AbortController();
  const p = route.params;
  if (p.cpid && isCpid(p.cpid)) {
    window.location.replace(traceHref(checkCpid(p.cpid), 'waterfall', { scope: p.scope }));
    return { key: 'redirect', destroy() {} };
  }
  markLoading();
  const results = h('div', { class: 'results' });
  app.replaceChildren(h('section', { class: 'find' }, findForm(p), results));
  run(results, p, ctx, abort.signal).then(() => {
    if (abort.signal.aborted) return;
    markReady('find');
    if (p.cpid) document.body.dataset.state = 'error';
  }, (e) => {
    if (!abort.signal.aborted) failView(results, e, { api: ctx.api, retry: ctx.retry });
  });
  return { key: `find:${JSON.stringify(p)}`, destroy: () => abort.abort() };
}

async function run(results, p, ctx, signal) {
  const blocks = [];
  if (p.cpid) blocks.push(h('div', { class: 'error inline', role: 'alert' }, `"${p.cpid}" is not a CPID (a CPID is a non-nil UUID like 3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60)`));
  const stalled = stalledBlock(ctx, signal);
  if (p.kind && p.name) blocks.push(await objectsBlock(p, ctx, signal));
  blocks.push(await rootsBlock(p, ctx, signal));
  results.replaceChildren(...[await stalled, ...blocks].filter(Boolean));
}

/*
 * "Stalled now" (/v1/stalls), longest waiting first, each row a link to the stalled
 * write in its trace. null (nothing shown) from a server without it or with the
 * detector off; a failure says so in the card and leaves the rest of the page be.
 */
async function stalledBlock(ctx, signal) {
  let ans;
  try {
    ans = await ctx.api.stalls({ signal });
  } catch (e) {
    if (e?.name === 'AbortError' || e?.kind === 'down' || e?.kind === 'auth') return null;
    return h('section', { class: 'card stalled-now', 'aria-labelledby': 'stalled-title' },
      h('h2', { id: 'stalled-title' }, 'Stalled now'), h('p', { class: 'error inline' }, e.message));
  }
  if (!ans || ans.enabled === false) return null;
  const rows = stalledNowRows(stallList(ans));
  return h('section', { class: 'card stalled-now', id: 'stalled-now', 'aria-labelledby': 'stalled-title', dataset: { count: String(rows.length) } },
    h('h2', { id: 'stalled-title' }, rows.length ? [h('span', { class: 'stall-icon', 'aria-hidden': 'true' }, '!'), ' '] : null,
      'Stalled now ', h('span', { class: 'muted' }, `(${rows.length})`)),
    rows.length === 0
      ? h('p', { class: 'empty' }, 'No write is waiting for its usual next hop.')
      : h('table', { class: 'list stalls', id: 'stalls' },
        h('thead', {}, h('tr', {}, ['Waiting', 'Usually', 'Write', 'Object', 'Waiting for', 'Events', 'CPID'].map((t, i) =>
          h('th', { scope: 'col', class: i < 2 ? 'num' : null, title: i === 1 ? 'the p99 of the time the next hop takes' : null }, t)))),
        h('tbody', {}, rows.slice(0, STALLS_SHOWN).map(stalledRow)),
        rows.length > STALLS_SHOWN ? h('tfoot', {}, h('tr', {}, h('td', { colspan: '7' },
          h('button', { type: 'button', class: 'button small', onclick: (ev) => {
            const foot = ev.currentTarget.closest('tfoot');
            foot.previousElementSibling.append(...rows.slice(STALLS_SHOWN).map(stalledRow));
            foot.remove();
          } }, `Show all ${rows.length}`)))) : null));
}

function stalledRow(r) {
  const href = traceHref(r.cpid, 'waterfall', { span: r.spanId });
  return h('tr', { dataset: { cpid: r.cpid, span: r.spanId }, title: `${r.tooltip}; admitted ${r.admitted}` },
    h('td', { class: 'num' }, h('strong', {}, r.waiting)),
    h('td', { class: 'num muted' }, r.p99),
    h('td', {}, h('a', { href }, h('code', {}, r.write))),
    h('td', {}, r.object || h('span', { class: 'muted' }, '–')),
    h('td', { class: 'expect' }, h('code', {}, r.expect)),
    h('td', { class: 'reasons' }, r.reasons.length ? r.reasons.join(', ') : h('span', { class: 'muted' }, '–')),
    h('td', {}, h('a', { href, title: r.cpid }, h('code', {}, shortCpid(r.cpid)))));
}

function findForm(p) {
  const input = (name, label, attrs = {}) => h('div', { class: 'field' },
    h('label', { for: `f-${name}` }, label),
    h('input', { id: `f-${name}`, name, value: p[name] ?? '', autocomplete: 'off', spellcheck: 'false', ...attrs }));
  const submit = (ev) => {
    ev.preventDefault();
    const fd = new FormData(ev.target);
    const params = {};
    for (const f of FIELDS) {
      const v = String(fd.get(f) ?? '').trim();
      if (!v) continue;
      params[f] = f === 'since' || f === 'until' ? fromLocalInput(v) : v;
    }
    window.location.hash = formatRoute({ view: 'find', params });
  };
  return h('form', { class: 'card find-form', onsubmit: submit, role: 'search', 'aria-label': 'Find a change' },
    h('div', { class: 'find-row' },
      input('cpid', 'CPID', { placeholder: '3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60', class: 'mono wide' }),
      h('button', { type: 'submit', class: 'button primary' }, 'Find')),
    h('fieldset', { class: 'find-row' }, h('legend', {}, 'Object'),
      input('kind', 'Kind', { placeholder: 'Deployment' }),
      input('namespace', 'Namespace', { placeholder: 'default' }),
      input('name', 'Name', { placeholder: 'web' })),
    h('fieldset', { class: 'find-row' }, h('legend', {}, 'Changes'),
      input('component', 'Who (component)', { placeholder: 'kubernetes-admin' }),
      input('since', 'Since', { type: 'datetime-local', step: '1', value: toLocalInput(p.since) }),
      input('until', 'Until', { type: 'datetime-local', step: '1', value: toLocalInput(p.until) }),
      h('a', { href: '#/', class: 'button' }, 'Clear')));
}

/* RFC 3339 (UTC) <-> the local time a datetime-local input holds. */
function toLocalInput(rfc) {
  const ms = parseTime(rfc ?? '');
  if (Number.isNaN(ms)) return '';
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60000);
  return d.toISOString().slice(0, 19);
}

function fromLocalInput(v) {
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? v : d.toISOString();
}

async function objectsBlock(p, ctx, signal) {
  const ans = await ctx.api.objects({ kind: p.kind, namespace: p.namespace, name: p.name }, { signal });
  const objects = ans.objects ?? [];
  return h('section', { class: 'card', 'aria-labelledby': 'objects-title' },
    h('h2', { id: 'objects-title' }, `${objectLabel(p.kind, p.namespace ?? '', p.name)}: recent CPIDs`),
    objects.length === 0
      ? h('p', { class: 'empty' }, 'ripple-server has no writes of this object. Check the kind (Deployment, not deployments) and the namespace.')
      : objects.map((o) => h('div', { class: 'object-block', dataset: { object: `${o.kind}/${o.namespace}/${o.name}` } },
        h('h3', {}, objectLabel(o.kind, o.namespace ?? '', o.name)),
        h('table', { class: 'list' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Last write'), h('th', {}, 'CPID'), h('th', { class: 'num' }, 'Writes'))),
          h('tbody', {}, (o.cpids ?? []).map((c) => h('tr', { dataset: { cpid: c.cpid } },
            h('td', {}, formatClock(parseTime(c.time))),
            h('td', {}, h('a', { href: traceHref(c.cpid) }, h('code', {}, c.cpid))),
            h('td', { class: 'num' }, String(c.writes)))))))));
}

async function rootsBlock(p, ctx, signal) {
  const scope = scopeOf({ params: p });
  const query = { limit: PAGE, since: p.since, until: p.until, component: p.component, namespace: p.namespace, kind: p.kind, name: p.name,
    scope: scope === 'own' ? undefined : scope };
  const filtered = ['since', 'until', 'component', 'namespace', 'kind', 'name'].some((k) => p[k]);
  const body = h('tbody', {});
  const more = h('div', { class: 'more' });
  const section = h('section', { class: 'card', 'aria-labelledby': 'roots-title' },
    h('div', { class: 'card-head' }, h('h2', { id: 'roots-title' }, filtered ? 'Changes matching' : 'Latest changes'),
      h('a', { href: hopStatsHref({ since: p.since, until: p.until, kind: p.kind, component: p.component, scope: query.scope }),
        id: 'find-hops', class: 'button', title: 'every hop\'s times (p50, p90, p99, max) across these changes\' cascades' }, 'Hops of these changes'),
      findScopeToggle(p, scope)),
    h('table', { class: 'list roots', id: 'roots' },
      h('thead', {}, h('tr', {}, ['Time (UTC)', 'Who', 'Object', 'Cascade', 'Duration', 'CPID'].map((t, i) =>
        h('th', { scope: 'col', class: i === 3 || i === 4 ? 'num' : null }, t)))),
      body),
    more);
  let ans;
  try {
    ans = await ctx.api.roots(query, { signal });
  } catch (e) {
    if (e.kind !== 'missing') throw e;
    return h('section', { class: 'card' }, h('h2', {}, 'Latest changes'),
      h('p', { class: 'notice' }, `${e.message}. Open a CPID above, or use "kubectl ripple last".`));
  }
  addRoots(body, more, ans, query, ctx, signal);
  return section;
}

function addRoots(body, more, ans, query, ctx, signal) {
  const roots = ans.roots ?? [];
  if (roots.length === 0 && body.children.length === 0) {
    body.append(h('tr', {}, h('td', { colspan: '6', class: 'empty' }, 'No changes found.')));
  }
  body.append(...roots.map((r) => rootRow(r, query)));
  more.replaceChildren();
  if (ans.next) {
    more.append(h('button', { type: 'button', class: 'button', onclick: async () => {
      more.replaceChildren(h('span', { class: 'muted' }, 'Loading…'));
      try {
        addRoots(body, more, await ctx.api.roots({ ...query, cursor: ans.next }, { signal }), query, ctx, signal);
      } catch (e) {
        more.replaceChildren(h('span', { class: 'error inline' }, e.message));
      }
    } }, 'Older changes'));
  }
}

/* Own cascade / everything reachable, for every change listed: the same query, the
 * other scope. */
function findScopeToggle(p, scope) {
  const seg = (s, label, title) => h('a', {
    href: formatRoute({ view: 'find', params: { ...p, scope: s === 'own' ? undefined : s } }),
    class: s === scope ? 'seg active' : 'seg', 'aria-current': s === scope ? 'true' : null, title, dataset: { scope: s } }, label);
  return h('div', { class: 'segmented scope-toggle', id: 'scope-toggle', role: 'group', 'aria-label': 'Which cascade' },
    h('span', { class: 'seg-label' }, 'Cascade:'),
    seg('own', 'Own', 'what each change caused (the writes it triggered)'),
    seg('reachable', 'Everything reachable', 'every CPID reachable in the merge graph, later changes that carried it along included'));
}

function rootRow(r, query) {
  const ob = r.object ?? {};
  const sum = r.summary ?? {};
  const t = parseTime(r.time);
  const end = sum.end ? parseTime(sum.end) : NaN;
  const href = traceHref(r.cpid, 'waterfall', { scope: query.scope });
  return h('tr', { dataset: { cpid: r.cpid, scope: sum.scope ?? 'reachable' } },
    h('td', {}, h('a', { href }, formatClock(t))),
    h('td', {}, r.component || h('span', { class: 'muted' }, 'unknown')),
    h('td', {}, ob.kind ? objectLabel(ob.kind, ob.namespace ?? '', ob.name ?? '') : h('span', { class: 'muted' }, '–')),
    h('td', { class: 'num' }, sum.spans === undefined ? '–' : `${sum.spans} span${sum.spans === 1 ? '' : 's'}, ${sum.cpids} CPID${sum.cpids === 1 ? '' : 's'}${sum.truncated ? '+' : ''}`),
    h('td', { class: 'num' }, Number.isNaN(end) ? '–' : formatDuration(end - t)),
    h('td', {}, h('a', { href, title: r.cpid }, h('code', {}, shortCpid(r.cpid)))));
}
