/*
 * The critical path on the trace page: the waterfall toolbar's toggle (a link, so the
 * deep link keeps it: path=off hides the mark) and the table of the path's hops in the
 * Hops tab, the longest hop emphasised, each hop's parts (seen, wrote, admission) in
 * columns of their own when the server split any. The data is GET /v1/cpids/{cpid}/critical-path
 * (docs/api.md), fetched by trace.js; critpath.js makes the rows.
 */
import { h } from './dom.js';
import { swatch } from './colors.js';
import { pathRows } from './critpath.js';
import { formatDuration } from './time.js';

/*
 * The toolbar's "Critical path" toggle: a link to the same waterfall with the mark shown
 * or hidden, its legend swatch, and the path's total. answer null: not come (yet).
 */
export function pathToggle(answer, on, href) {
  const hops = answer?.hops?.length ?? 0;
  const title = on ? 'hide the critical path\'s mark' : 'mark the writes on the critical path';
  return h('div', { class: 'crit-toggle', id: 'crit-toggle', dataset: { on: String(on), hops: String(hops) } },
    h('a', { href, class: on ? 'seg active' : 'seg', role: 'switch', 'aria-checked': String(on), title },
      h('span', { class: 'crit-swatch', 'aria-hidden': 'true' }), 'Critical path'),
    answer ? h('span', { class: 'muted crit-total' }, `${hops} hop${hops === 1 ? '' : 's'}, ${formatDuration(Number(answer.total_ms) || 0)}`) : null);
}

/*
 * The table of the path's hops in container: hop, component, write, object, +ms, and
 * seen, wrote, admission when a hop has parts. state:
 * 'loading', 'none' (an older server, or it failed) or 'ready'.
 */
export function renderPathTable(container, answer, { color, state, traceHref }) {
  if (state !== 'ready') {
    container.replaceChildren(h('p', { class: 'muted crit-note' },
      state === 'loading' ? 'Finding the critical path…' : 'No critical path: ripple-server did not give one (older than it, or it failed).'));
    return;
  }
  const rows = pathRows(answer);
  /* The parts' columns only when a hop has them (a watch agent, audit: docs/api.md). */
  const parts = rows.some((r) => r.parts);
  const caption = h('caption', {}, h('strong', {}, 'Critical path'),
    ` · the chain of writes that decided how long the cascade took: ${formatDuration(Number(answer.total_ms) || 0)} over ${rows.length} hop${rows.length === 1 ? '' : 's'}`,
    answer.truncated ? ' (the trace was cut short: the path may be too)' : '',
    '. +ms is the time from the write before it on the path',
    parts ? ', split where ripple knows it: seen (until the watch agent saw the write before), wrote (until the API server received this one), admission (until the webhook answered it).' : '.');
  const partCols = parts ? [['seen', 'Seen'], ['wrote', 'Wrote'], ['admission', 'Admission']] : [];
  const table = h('table', { class: 'hops crit-table', id: 'crit-table' }, caption,
    h('thead', {}, h('tr', {}, ['Hop', 'Component', 'Write', 'Object'].map((t) => h('th', { scope: 'col', class: 'plain' }, t)),
      h('th', { scope: 'col', class: 'plain num' }, '+ms'),
      partCols.map(([, t]) => h('th', { scope: 'col', class: 'plain num' }, t)))),
    h('tbody', {}, rows.map((r) => h('tr', { class: r.longest ? 'longest' : null,
      dataset: { span: r.spanId, spanCpid: r.cpid, longest: String(r.longest) } },
    h('td', { class: 'num' }, String(r.n)),
    h('td', {}, swatch(color(r.component)), ' ', r.component),
    h('td', {}, h('a', { href: traceHref(r.spanId), title: 'show this write in the waterfall' }, h('code', {}, r.write))),
    h('td', {}, r.object),
    h('td', { class: 'num', dataset: { col: 'ms' } }, r.longest ? h('strong', {}, `+${formatDuration(r.ms)}`) : `+${formatDuration(r.ms)}`),
    partCols.map(([k]) => h('td', { class: 'num', dataset: { col: k } }, typeof r.parts?.[k] === 'number' ? formatDuration(r.parts[k]) : '–'))))));
  container.replaceChildren(rows.length ? table : h('p', { class: 'muted crit-note' }, 'No critical path: this trace has no writes.'));
}
