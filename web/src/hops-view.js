/*
 * The Hops tab: one line per hop (component, write) with count, p50, p99 and max of the
 * time from cause to admission, sortable by any column, each with a small histogram.
 */
import { h, s } from './dom.js';
import { swatch } from './colors.js';
import { hopStats, histogram, sortHops } from './hops.js';
import { formatDuration } from './time.js';

const COLUMNS = [
  { key: 'service', label: 'Component', numeric: false },
  { key: 'name', label: 'Write', numeric: false },
  { key: 'count', label: 'Count', numeric: true },
  { key: 'p50', label: 'p50', numeric: true },
  { key: 'p99', label: 'p99', numeric: true },
  { key: 'max', label: 'Max', numeric: true },
];

const HIST_W = 180;
const HIST_H = 30;

/* Renders the hops of model into container; sort state kept across live updates. */
export function createHopsView(container, { model, color }) {
  const st = { model, column: 'p99', descending: true };

  function render() {
    const hops = sortHops(hopStats(st.model.spans, st.model.mergelogs), st.column, st.descending);
    const table = h('table', { class: 'hops', id: 'hops-table' },
      h('caption', {}, 'Time from each write\'s cause to its admission, per hop. Percentiles by nearest rank; roots and spontaneous writes are not hops.'),
      h('thead', {}, h('tr', {}, COLUMNS.map((c) => headerCell(c, st, onSort)), h('th', { scope: 'col' }, 'Distribution'))),
      h('tbody', {}, hops.map((hop) => hopRow(hop, color))));
    container.replaceChildren(hops.length ? table : h('p', { class: 'empty' }, 'No hops: this trace has no writes besides its roots.'));
  }

  function onSort(column) {
    if (st.column === column) st.descending = !st.descending;
    else {
      st.column = column;
      st.descending = COLUMNS.find((c) => c.key === column).numeric;
    }
    render();
    container.querySelector(`th[data-column="${column}"] button`)?.focus();
  }

  render();
  return {
    update(next) {
      st.model = next;
      render();
    },
    destroy() {},
  };
}

function headerCell(col, st, onSort) {
  const active = st.column === col.key;
  const sort = active ? (st.descending ? 'descending' : 'ascending') : 'none';
  return h('th', { scope: 'col', class: col.numeric ? 'num' : null, 'aria-sort': sort, dataset: { column: col.key } },
    h('button', { type: 'button', class: 'sort', onclick: () => onSort(col.key) }, col.label,
      h('span', { class: 'sort-arrow', 'aria-hidden': 'true' }, active ? (st.descending ? ' ↓' : ' ↑') : '')));
}

function hopRow(hop, color) {
  return h('tr', { dataset: { hop: `${hop.service}/${hop.name}`, service: hop.service } },
    h('td', {}, swatch(color(hop.service)), ' ', hop.service),
    h('td', {}, h('code', {}, hop.name)),
    h('td', { class: 'num', dataset: { col: 'count' } }, String(hop.count)),
    h('td', { class: 'num', dataset: { col: 'p50' } }, formatDuration(hop.p50)),
    h('td', { class: 'num', dataset: { col: 'p99' } }, formatDuration(hop.p99)),
    h('td', { class: 'num', dataset: { col: 'max' } }, formatDuration(hop.max)),
    h('td', { class: 'hist-cell' }, histogramSvg(hop, color(hop.service))));
}

function histogramSvg(hop, fill) {
  const bins = histogram(hop.durations, 24);
  const most = Math.max(1, ...bins.map((b) => b.count));
  const bw = HIST_W / bins.length;
  return s('svg', { class: 'hist', width: HIST_W, height: HIST_H + 12, role: 'img',
    'aria-label': `histogram of ${hop.count} durations from 0 to ${formatDuration(hop.max)}` },
  bins.map((b) => {
    const bh = b.count ? Math.max(1.5, (b.count / most) * HIST_H) : 0;
    return s('rect', { x: b.x0 / (bins[bins.length - 1].x1 || 1) * HIST_W + 0.5, y: HIST_H - bh, width: Math.max(1, bw - 1), height: bh, fill },
      s('title', {}, `${formatDuration(b.x0)} – ${formatDuration(b.x1)}: ${b.count}`));
  }),
  s('line', { class: 'hist-base', x1: 0, x2: HIST_W, y1: HIST_H + 0.5, y2: HIST_H + 0.5 }),
  s('text', { class: 'hist-label', x: 0, y: HIST_H + 11 }, '0'),
  s('text', { class: 'hist-label', x: HIST_W, y: HIST_H + 11, 'text-anchor': 'end' }, formatDuration(hop.max)));
}
