/*
 * The hops view, #/hops?since=&until=&kind=&write=&component=&scope=: every hop's write
 * times (p50, p90, p99, max; in how many cascades) across the own cascades of the
 * changes of one kind in a time range, as GET /v1/hops answers. Reached from Find
 * ("Hops of these changes", with Find's time range and kind); its form narrows it to
 * one write of the person's change ("update deployments").
 */
import { h, markLoading, markReady } from './dom.js';
import { failView } from './errors.js';
import { formatRoute } from './route.js';
import { hopStatRows, hopStatsQuery, rootsText } from './hopstats.js';
import { formatDuration } from './time.js';

/* Mounts the hops view of route.params in app. Returns {key, destroy()}. */
export function mountHopStats(app, route, ctx) {
  const abort = new AbortController();
  const query = hopStatsQuery(route.params);

  async function load() {
    markLoading();
    app.replaceChildren(h('p', { class: 'loading' }, 'Adding up hops…'));
    let answer;
    try {
      answer = await ctx.api.hops(query, { signal: abort.signal });
    } catch (e) {
      if (!abort.signal.aborted) failView(app, e, { api: ctx.api, retry: ctx.retry });
      return;
    }
    if (abort.signal.aborted) return;
    app.replaceChildren(hopsDom(answer, route.params));
    markReady('hopstats');
  }

  load();
  return {
    key: `hopstats:${JSON.stringify(query)}`,
    destroy() {
      abort.abort();
    },
  };
}

function hopsDom(answer, params) {
  const p = params ?? {};
  const range = [p.since ? `since ${p.since}` : '', p.until ? `until ${p.until}` : ''].filter(Boolean).join(', ');
  return h('section', { class: 'compare-view', id: 'hopstats', 'aria-label': 'Hops across many cascades' },
    h('p', { class: 'eyebrow' }, 'Hops across many cascades', answer.scope === 'reachable' ? ' (everything reachable)' : ' (own cascades)'),
    h('h1', {}, [p.kind, p.write].filter(Boolean).join(' · ') || 'Every change'),
    h('p', { id: 'hopstats-roots' }, `Added up over ${rootsText(answer)}`, range ? `, ${range}` : '', '. ',
      h('a', { href: formatRoute({ view: 'find', params: findParams(p) }), id: 'hopstats-find' }, 'List them in Find')),
    filterForm(p),
    answer.truncated && !answer.roots?.truncated
      ? h('p', { class: 'notice', role: 'status' }, 'ripple-server cut a cascade short (its query limit): some writes are missing.') : null,
    statsTable(hopStatRows(answer, formatDuration)));
}

function findParams(p) {
  return { since: p.since, until: p.until, kind: p.kind, component: p.component, scope: p.scope };
}

/* Kind and write of the person's change; the time range stays. */
function filterForm(p) {
  const input = (name, label, placeholder) => h('label', {}, label, ' ',
    h('input', { name, id: `hopstats-${name}`, value: p[name] ?? '', placeholder, autocomplete: 'off' }));
  return h('form', { class: 'filters', id: 'hopstats-form', onsubmit: (ev) => {
    ev.preventDefault();
    const data = new FormData(ev.target);
    const params = { ...p, kind: String(data.get('kind') ?? '').trim(), write: String(data.get('write') ?? '').trim() };
    window.location.hash = formatRoute({ view: 'hopstats', params });
  } },
  input('kind', 'Kind', 'Deployment'), ' ', input('write', 'Write', 'update deployments'), ' ',
  h('button', { type: 'submit', class: 'button' }, 'Show'));
}

function statsTable(rows) {
  if (!rows.length) return h('p', { class: 'empty' }, 'No changes with writes in this range.');
  const th = (t, num) => h('th', { scope: 'col', class: num ? 'plain num' : 'plain' }, t);
  const num = (t) => h('td', { class: 'num' }, t);
  return h('table', { class: 'hops compare-table', id: 'hopstats-table' },
    h('caption', {}, 'Per hop, the slowest p50 first: what each write took from the write it waited for.'),
    h('thead', {}, h('tr', {}, th('Component'), th('Write'), th('Kind'), th('Cascades', true), th('Writes', true),
      th('p50', true), th('p90', true), th('p99', true), th('Max', true))),
    h('tbody', {}, rows.map((r) => h('tr', { class: r.slowest ? 'longest' : null,
      dataset: { hop: `${r.component}/${r.write}/${r.kind}`, slowest: String(r.slowest) } },
    h('td', {}, r.component), h('td', {}, h('code', {}, r.write)), h('td', {}, r.kind),
    num(String(r.cascades)), num(String(r.writes)),
    num(r.slowest ? h('strong', {}, r.p50) : r.p50), num(r.p90), num(r.p99), num(r.max)))));
}
