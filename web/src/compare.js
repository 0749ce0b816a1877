/*
 * The compare view, #/compare/<a>/<b>[?scope=reachable]: two cascades of the same kind of
 * change (last week's scale against today's) hop by hop, as GET /v1/compare answers
 * (docs/api.md "Two cascades compared"): both totals, the hops most changed first
 * (change, delta, component, write, a's and b's count × max), and the writes the two
 * had made by different components. Links lead to each trace, to the two swapped and
 * to the other scope.
 */
import { h, markLoading, markReady } from './dom.js';
import { failView } from './errors.js';
import { compareHref, scopeOf, traceHref } from './route.js';
import { compareRows, signed, writerRows } from './critpath.js';
import { formatDuration } from './time.js';
import { shortCpid } from './cpid.js';

/* Mounts the compare view of route.a and route.b in app. Returns {key, destroy()}. */
export function mountCompare(app, route, ctx) {
  const abort = new AbortController();
  const scope = scopeOf(route);

  async function load() {
    markLoading();
    app.replaceChildren(h('p', { class: 'loading' }, `Comparing ${route.a} with ${route.b}…`));
    let answer;
    try {
      answer = await ctx.api.compare(route.a, route.b, { signal: abort.signal, scope });
    } catch (e) {
      if (!abort.signal.aborted) failView(app, e, { api: ctx.api, retry: ctx.retry });
      return;
    }
    if (abort.signal.aborted) return;
    app.replaceChildren(compareDom(answer, scope));
    markReady('compare');
  }

  load();
  return {
    key: `compare:${route.a}:${route.b}:${scope}`,
    destroy() {
      abort.abort();
    },
  };
}

function compareDom(answer, scope) {
  const a = answer.a ?? {};
  const b = answer.b ?? {};
  const sp = scope === 'reachable' ? scope : undefined;
  const rows = compareRows(answer, formatDuration);
  const writers = writerRows(answer);
  const otherScope = scope === 'reachable' ? undefined : 'reachable';
  return h('section', { class: 'compare-view', id: 'compare', 'aria-label': 'Two cascades compared', dataset: { scope } },
    h('p', { class: 'eyebrow' }, 'Two cascades compared', scope === 'reachable' ? ' (everything reachable)' : ' (own cascades)'),
    h('h1', {}, h('a', { href: traceHref(a.cpid, 'waterfall', { scope: sp }), title: a.cpid }, h('code', {}, shortCpid(a.cpid ?? ''))),
      ' → ', h('a', { href: traceHref(b.cpid, 'waterfall', { scope: sp }), title: b.cpid }, h('code', {}, shortCpid(b.cpid ?? '')))),
    h('dl', { class: 'stats compare-totals' },
      total('A', 'total-a', a), total('B', 'total-b', b),
      h('div', { class: 'stat' }, h('dt', {}, 'B − A'), h('dd', { id: 'delta' }, signed(answer.delta_ms, formatDuration)))),
    h('p', {},
      h('a', { href: compareHref(b.cpid, a.cpid, { scope: sp }), id: 'compare-swap' }, 'Swap A and B'), ' · ',
      h('a', { href: compareHref(a.cpid, b.cpid, { scope: otherScope }), id: 'compare-scope' },
        otherScope ? 'Compare everything reachable' : 'Compare own cascades')),
    a.truncated || b.truncated ? h('p', { class: 'notice', role: 'status' }, 'ripple-server cut a trace short (its query limit): the comparison misses some writes.') : null,
    hopsTable(rows),
    writersPart(writers));
}

function total(label, id, side) {
  const text = `${formatDuration(Number(side.total_ms) || 0)} · ${side.writes ?? 0} writes`;
  return h('div', { class: 'stat' }, h('dt', {}, label), h('dd', { id }, text));
}

function hopsTable(rows) {
  if (!rows.length) return h('p', { class: 'empty' }, 'No hops in either cascade.');
  const th = (t, num) => h('th', { scope: 'col', class: num ? 'plain num' : 'plain' }, t);
  return h('table', { class: 'hops compare-table', id: 'compare-table' },
    h('caption', {}, 'Hop by hop, the most changed first: what each write took from the write before it, A against B.'),
    h('thead', {}, h('tr', {}, th('Change'), th('Delta', true), th('Component'), th('Write'), th('Kind'),
      th('A count × max', true), th('B count × max', true))),
    h('tbody', {}, rows.map((r) => h('tr', { class: r.change, dataset: { change: r.change, hop: `${r.component}/${r.write}/${r.kind}` } },
      h('td', { class: 'change' }, r.change),
      h('td', { class: 'num', dataset: { col: 'delta' } }, r.changed ? h('strong', {}, r.delta) : r.delta),
      h('td', {}, r.component),
      h('td', {}, h('code', {}, r.write)),
      h('td', {}, r.kind),
      h('td', { class: 'num', dataset: { col: 'a' } }, r.a),
      h('td', { class: 'num', dataset: { col: 'b' } }, r.b)))));
}

function writersPart(writers) {
  const title = h('h2', {}, 'Writers changed');
  if (!writers.length) return h('section', { class: 'compare-writers', id: 'compare-writers' }, title, h('p', { class: 'muted' }, 'None: every write both made, the same components made.'));
  return h('section', { class: 'compare-writers', id: 'compare-writers' }, title,
    h('table', { class: 'hops' },
      h('thead', {}, h('tr', {}, ['Write', 'Kind', 'A by', 'B by'].map((t) => h('th', { scope: 'col', class: 'plain' }, t)))),
      h('tbody', {}, writers.map((w) => h('tr', {}, h('td', {}, h('code', {}, w.write)), h('td', {}, w.kind), h('td', {}, w.a), h('td', {}, w.b))))));
}
