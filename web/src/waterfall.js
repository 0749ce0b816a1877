/*
 * The waterfall: every write of a trace as a bar on one time axis, from its cause (start)
 * to its admission (end), in rows grouped by object (nested by owner) or by component.
 *
 * Large traces (10,000 spans, thousands of rows) stay fast because rows are virtualised:
 * a spacer gives the scroll container the full height and only the rows in view (plus a
 * few either side) exist in the DOM, rebuilt on scroll in one animation frame. Hover
 * and click are delegated to the row box, so no listener is added per bar.
 *
 * Rows carry data-row (their key, "Kind/namespace/name" for an object), bars
 * data-span (span_id), data-span-cpid and data-service; merges are diamonds with data-cpid. A row with a
 * stalled write is .stalled with a "!" icon whose title says what it waits for, its bar
 * .stalled; a collapsed row with stalled writes below it gets a lighter icon. A write on
 * the critical path (critpath.js) is a .crit bar with data-crit="true".
 */
import { h, s } from './dom.js';
import { flattenRows, subtreeSummary, ancestorKeys, rowKeyOf } from './model.js';
import { timeAxis, formatDuration } from './time.js';
import { shortCpid } from './cpid.js';
import { createTooltip } from './tooltip.js';
import { stalledRows, stallTooltip } from './stalls.js';
import { spanKey } from './critpath.js';

const ROW_H = 24;
const BAR_H = 12;
const LABEL_W = 360;
const OVERSCAN = 10;
const INDENT = 16;

const KIND_SHORT = { Deployment: 'deploy', ReplicaSet: 'rs', Pod: 'pod', Service: 'svc', EndpointSlice: 'eps',
  Endpoints: 'ep', StatefulSet: 'sts', DaemonSet: 'ds', Job: 'job', CronJob: 'cron', Node: 'node',
  ConfigMap: 'cm', Secret: 'secret', Namespace: 'ns', PersistentVolumeClaim: 'pvc' };

/*
 * Mounts a waterfall in container. opts: {model, group, collapsed (Set of keys, kept by
 * the caller so it survives updates), color, selected (span id), onSelect(span|null),
 * stalls (Map span id -> stall), path (Set of critpath.spanKey: the bars to mark)}.
 * Returns {update(model), setStalls(map), setPath(set), select(id, reveal), destroy()}.
 */
export function createWaterfall(container, opts) {
  const st = { ...opts, rows: [], window: null, frame: 0, lastRange: '' };
  st.stalls ??= new Map();
  st.path ??= new Set();
  const markStalls = () => (st.stalled = stalledRows(st.model, st.group, st.stalls));
  markStalls();
  const dom = buildDom(container, st);
  const tip = createTooltip();

  const tree = () => (st.group === 'component' ? st.model.byComponent : st.model.byObject);
  const domain = () => st.window ?? [0, Math.max(st.model.duration, 0.001)];
  /* The scroll box's size, read once and then kept by the ResizeObserver (reading it
   * after DOM changes would force a layout on every frame). */
  const view = { width: dom.scroll.clientWidth, height: dom.scroll.clientHeight || 600 };
  st.view = view;
  const chartWidth = () => Math.max(200, view.width - LABEL_W);

  function relayout() {
    st.rows = flattenRows(tree(), st.collapsed);
    dom.spacer.style.height = `${st.rows.length * ROW_H}px`;
    dom.count.textContent = `${st.rows.length} rows`;
    st.lastRange = '';
    draw();
  }

  function draw() {
    st.axis = timeAxis(domain()[0], domain()[1], chartWidth());
    drawAxis(dom, st);
    drawRows(true);
  }

  function drawRows(force) {
    const top = dom.scroll.scrollTop;
    const height = view.height;
    const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
    const last = Math.min(st.rows.length, Math.ceil((top + height) / ROW_H) + OVERSCAN);
    const range = `${first}:${last}`;
    if (!force && range === st.lastRange) return;
    st.lastRange = range;
    dom.rows.style.transform = `translateY(${first * ROW_H}px)`;
    const els = [];
    for (let i = first; i < last; i++) els.push(rowEl(st.rows[i], st));
    dom.rows.replaceChildren(...els);
    drawGrid(dom, st, height);
  }

  const onScroll = () => {
    if (st.frame) return;
    st.frame = requestAnimationFrame(() => {
      st.frame = 0;
      drawRows(false);
    });
  };

  function toggle(key) {
    if (st.collapsed.has(key)) st.collapsed.delete(key);
    else st.collapsed.add(key);
    relayout();
  }

  function setAll(collapse) {
    st.collapsed.clear();
    if (collapse) for (const n of tree().nodes.values()) if (n.children.length) st.collapsed.add(n.key);
    relayout();
  }

  function select(id, reveal = false) {
    st.selected = id || null;
    const span = id ? st.model.spanById.get(id) : null;
    if (span && reveal) revealSpan(span);
    else drawRows(true);
    return span;
  }

  /* Expands the span's ancestors and scrolls its row into the middle of the view. */
  function revealSpan(span) {
    const node = nodeOfSpan(st, span);
    if (!node) return drawRows(true);
    let changed = false;
    for (const k of ancestorKeys(node)) changed = st.collapsed.delete(k) || changed;
    if (changed) relayout();
    const i = st.rows.findIndex((r) => r.node === node);
    if (i >= 0) dom.scroll.scrollTop = Math.max(0, i * ROW_H - view.height / 2);
    drawRows(true);
  }

  function onClick(ev) {
    const t = ev.target;
    const tog = t.closest('[data-toggle]');
    if (tog) return toggle(tog.dataset.toggle);
    const bar = t.closest('[data-span]');
    if (bar) {
      const span = select(bar.dataset.span);
      st.onSelect(span);
    }
  }

  function onKey(ev) {
    const bar = ev.target.closest?.('[data-span]');
    if (bar && (ev.key === 'Enter' || ev.key === ' ')) {
      ev.preventDefault();
      st.onSelect(select(bar.dataset.span));
    }
  }

  function onHover(ev) {
    const bar = ev.target.closest?.('[data-span]');
    const mark = ev.target.closest?.('[data-cpid]');
    if (bar) return showSpanTip(tip, st, st.model.spanById.get(bar.dataset.span), ev);
    if (mark) return showMarkTip(tip, st, mark.dataset.cpid, ev);
    tip.hide();
  }

  const resize = new ResizeObserver(() => {
    const w = dom.scroll.clientWidth;
    const hgt = dom.scroll.clientHeight || 600;
    if (w === view.width && hgt === view.height) return;
    const widthChanged = w !== view.width;
    view.width = w;
    view.height = hgt;
    if (widthChanged) draw();
    else drawRows(true);
  });
  dom.scroll.addEventListener('scroll', onScroll, { passive: true });
  dom.rows.addEventListener('click', onClick);
  dom.rows.addEventListener('keydown', onKey);
  dom.rows.addEventListener('pointermove', onHover);
  dom.rows.addEventListener('pointerleave', () => tip.hide());
  dom.expand.addEventListener('click', () => setAll(false));
  dom.collapse.addEventListener('click', () => setAll(true));
  resize.observe(dom.scroll);
  attachZoom(dom, st, (win) => {
    st.window = win;
    dom.reset.hidden = !win;
    draw();
  });

  relayout();
  if (st.selected) select(st.selected, true);

  return {
    /* New data (live): rows rebuilt, scroll position, collapsed rows and selection kept. */
    update(model) {
      const top = dom.scroll.scrollTop;
      st.model = model;
      markStalls();
      relayout();
      dom.scroll.scrollTop = top;
      drawRows(true);
    },
    /* New stalls (live): the rows redrawn, nothing else. */
    setStalls(stalls) {
      st.stalls = stalls ?? new Map();
      markStalls();
      drawRows(true);
    },
    /* The critical path came or changed (or was hidden: an empty set): bars redrawn. */
    setPath(keys) {
      st.path = keys ?? new Set();
      drawRows(true);
    },
    select,
    destroy() {
      resize.disconnect();
      if (st.frame) cancelAnimationFrame(st.frame);
      tip.destroy();
    },
  };
}

function buildDom(container, st) {
  const axisSvg = s('svg', { class: 'wf-axis-svg', height: 30, 'aria-hidden': 'true' });
  const gridSvg = s('svg', { class: 'wf-grid', 'aria-hidden': 'true' });
  const rows = h('div', { class: 'wf-rows', role: 'rowgroup' });
  const spacer = h('div', { class: 'wf-spacer' }, rows);
  const scroll = h('div', { class: 'wf-scroll', tabindex: '0', role: 'grid', 'aria-label': 'Writes of the trace by row' }, spacer);
  const count = h('span', { class: 'muted wf-count' });
  const expand = h('button', { type: 'button', class: 'button small' }, 'Expand all');
  const collapse = h('button', { type: 'button', class: 'button small' }, 'Collapse all');
  const reset = h('button', { type: 'button', class: 'button small', hidden: true }, 'Reset zoom');
  const head = h('div', { class: 'wf-head' },
    h('div', { class: 'wf-head-label' },
      h('span', { class: 'wf-head-title' }, st.group === 'component' ? 'Component' : 'Object'),
      count, expand, collapse),
    h('div', { class: 'wf-axis', title: 'Drag to zoom into a time range' }, axisSvg, reset));
  const chart = h('div', { class: 'wf-chart' }, head, h('div', { class: 'wf-body' }, gridSvg, scroll));
  container.replaceChildren(chart);
  reset.addEventListener('click', () => reset.dispatchEvent(new CustomEvent('zoomreset', { bubbles: true })));
  return { chart, axisSvg, gridSvg, scroll, spacer, rows, count, expand, collapse, reset };
}

function drawAxis(dom, st) {
  const { ticks } = st.axis;
  const width = st.view.width - LABEL_W;
  dom.axisSvg.setAttribute('width', Math.max(0, width));
  dom.axisSvg.replaceChildren(
    s('line', { class: 'axis-base', x1: 0, x2: width, y1: 29.5, y2: 29.5 }),
    ...ticks.map((t) => s('g', { class: 'tick', transform: `translate(${Math.round(t.x) + 0.5},0)` },
      s('line', { y1: 22, y2: 30 }),
      s('text', { y: 16, 'text-anchor': t.x < 20 ? 'start' : t.x > width - 30 ? 'end' : 'middle' }, t.label))),
  );
}

function drawGrid(dom, st, height) {
  dom.gridSvg.setAttribute('height', height);
  dom.gridSvg.setAttribute('width', Math.max(0, st.view.width - LABEL_W));
  dom.gridSvg.style.left = `${LABEL_W}px`;
  dom.gridSvg.replaceChildren(...st.axis.ticks.map((t) =>
    s('line', { x1: Math.round(t.x) + 0.5, x2: Math.round(t.x) + 0.5, y1: 0, y2: height })));
}

function rowEl({ node, depth }, st) {
  const hasKids = node.children.length > 0;
  const open = hasKids && !st.collapsed.has(node.key);
  const sum = hasKids ? subtreeSummary(node) : null;
  const stalls = st.stalled.own.get(node.key);
  const below = !open ? st.stalled.below.get(node.key) : 0;
  const label = h('div', { class: 'wf-label', role: 'rowheader', style: { paddingLeft: `${8 + depth * INDENT}px` } },
    hasKids
      ? h('button', { type: 'button', class: 'toggle', dataset: { toggle: node.key }, 'aria-expanded': String(open),
        'aria-label': `${open ? 'Collapse' : 'Expand'} ${node.label}` }, open ? '▾' : '▸')
      : h('span', { class: 'toggle-space' }),
    node.isService ? h('span', { class: 'svc-dot', style: { backgroundColor: st.color(node.service) } })
      : node.kind ? h('span', { class: `kind kind-${(node.kind || '').toLowerCase()}` }, KIND_SHORT[node.kind] ?? node.kind.slice(0, 4).toLowerCase())
        : null,
    h('span', { class: node.created ? 'wf-name created' : 'wf-name', title: node.label }, node.label),
    stalls ? stallIcon(rowStallText(stalls), 'stall-icon') : null,
    below ? stallIcon(`${below} stalled write${below === 1 ? '' : 's'} in rows below`, 'stall-icon below') : null,
    h('span', { class: 'wf-n', title: hasKids ? 'writes here / in all rows below' : 'writes' },
      hasKids ? `${node.spans.length ? node.spans.length + ' / ' : ''}${sum.count}` : String(node.spans.length)));
  const svg = s('svg', { class: 'wf-bars', width: Math.max(0, st.axis.scale.range()[1]), height: ROW_H },
    hasKids ? coverageEls(sum.coverage, st, open) : null,
    barEls(node.spans, st),
    markEls(node.marks, st));
  return h('div', { class: stalls ? 'wf-row stalled' : 'wf-row', role: 'row', dataset: stalls ? { row: node.key, depth: String(depth), stalled: 'true' } : { row: node.key, depth: String(depth) },
    'aria-level': String(depth + 1), 'aria-expanded': hasKids ? String(open) : null }, label, svg);
}

/* What a row's stalled writes wait for, a line each (five at most, then how many more). */
function rowStallText(stalls) {
  const lines = stalls.slice(0, 5).map(stallTooltip);
  if (stalls.length > 5) lines.push(`and ${stalls.length - 5} more stalled writes`);
  return lines.join('\n');
}

/* The "!" of a stalled row; its title is the tooltip (what it waits for, how long). */
function stallIcon(title, cls) {
  return h('span', { class: cls, title, role: 'img', 'aria-label': title }, '!');
}

/* Where a time falls on the chart, clamped a little outside so bars cut at the edge. */
function xOf(st, ms) {
  const w = st.axis.scale.range()[1];
  return Math.max(-2, Math.min(w + 2, st.axis.scale(ms)));
}

/* Bars of a row, longest first so that a shorter bar over a longer one stays visible. */
function barEls(spans, st) {
  const [from, to] = st.axis.scale.domain();
  const y = (ROW_H - BAR_H) / 2;
  const out = [];
  for (const sp of byLength(spans)) {
    if (sp.end < from || sp.start > to) continue;
    const x0 = xOf(st, sp.start);
    const x1 = xOf(st, sp.end);
    const sel = sp.id === st.selected;
    const stalled = st.stalls.has(sp.id);
    const crit = st.path.has(spanKey(sp.cpid, sp.id));
    out.push(s('rect', { class: `bar${sel ? ' selected' : ''}${stalled ? ' stalled' : ''}${crit ? ' crit' : ''}`, x: x0, y, width: Math.max(3, x1 - x0), height: BAR_H,
      rx: 2, fill: st.color(sp.service), tabindex: '0', role: 'button',
      'aria-label': `${sp.service} ${sp.name}, ${formatDuration(sp.end - sp.start)}${stalled ? ', stalled' : ''}${crit ? ', on the critical path' : ''}`,
      dataset: crit ? { span: sp.id, service: sp.service, spanCpid: sp.cpid, crit: 'true' } : { span: sp.id, service: sp.service, spanCpid: sp.cpid } }));
  }
  return out;
}

function byLength(spans) {
  if (!spans.sorted) {
    spans.sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start);
    spans.sorted = true;
  }
  return spans;
}

function coverageEls(coverage, st, open) {
  const [from, to] = st.axis.scale.domain();
  const y = open ? ROW_H - 5 : (ROW_H - 8) / 2;
  const height = open ? 3 : 8;
  return coverage.filter(([a, b]) => b >= from && a <= to).map(([a, b]) => {
    const x0 = xOf(st, a);
    return s('rect', { class: open ? 'cov' : 'cov collapsed', x: x0, y, width: Math.max(2, xOf(st, b) - x0), height });
  });
}

/* Roots and merges: small triangles above the bars (so both stay clickable). */
function markEls(marks, st) {
  const [from, to] = st.axis.scale.domain();
  const top = (ROW_H - BAR_H) / 2;
  return marks.filter((m) => m.time >= from && m.time <= to).map((m) => {
    const x = xOf(st, m.time);
    return s('path', { class: m.root ? 'mark root' : 'mark', d: `M${x - 4.5},0.5L${x + 4.5},0.5L${x},${top + 1}Z`,
      dataset: { cpid: m.cpid } });
  });
}

function nodeOfSpan(st, span) {
  const tree = st.group === 'component' ? st.model.byComponent : st.model.byObject;
  return tree.nodes.get(rowKeyOf(span, st.group));
}

function showSpanTip(tip, st, span, ev) {
  if (!span) return tip.hide();
  const a = span.attributes;
  const obj = a.kind ? `${a.kind} ${a.namespace ? a.namespace + '/' : ''}${a.name || '(generateName)'}` : '–';
  tip.show(`${span.service}: ${span.name}`, [
    ['duration', formatDuration(span.end - span.start)],
    ['object', obj],
    ['from t=0', `${formatDuration(span.start)} → ${formatDuration(span.end)}`],
    ['cpid', shortCpid(span.cpid)],
    ...(a.user ? [['user', a.user]] : []),
    ...(st.path.has(spanKey(span.cpid, span.id)) ? [['critical path', 'yes']] : []),
    ...(st.stalls.has(span.id) ? [['stalled', stallTooltip(st.stalls.get(span.id)).replace(/^stalled: /, '')]] : []),
  ], ev.clientX, ev.clientY);
}

function showMarkTip(tip, st, cpid, ev) {
  const m = st.model.marks.find((x) => x.cpid === cpid);
  if (!m) return tip.hide();
  tip.show(m.root ? 'root CPID' : `merge of ${m.sources.length} CPID${m.sources.length === 1 ? '' : 's'}`, [
    ['cpid', shortCpid(m.cpid)],
    ['made by', m.component || 'unknown'],
    ['at t=', formatDuration(m.time)],
    ...(m.sources.length ? [['from', m.sources.map(shortCpid).join(', ')]] : []),
  ], ev.clientX, ev.clientY);
}

/* Drag across the axis to zoom into a time range; the reset button zooms out. */
function attachZoom(dom, st, setWindow) {
  let startX = null;
  let band = null;
  const toMs = (x) => st.axis.scale.invert(x);
  const local = (ev) => ev.clientX - dom.axisSvg.getBoundingClientRect().left;
  dom.axisSvg.addEventListener('pointerdown', (ev) => {
    startX = local(ev);
    band = s('rect', { class: 'zoom-band', x: startX, y: 0, width: 0, height: 30 });
    dom.axisSvg.append(band);
    dom.axisSvg.setPointerCapture(ev.pointerId);
  });
  dom.axisSvg.addEventListener('pointermove', (ev) => {
    if (startX === null) return;
    const x = local(ev);
    band.setAttribute('x', Math.min(x, startX));
    band.setAttribute('width', Math.abs(x - startX));
  });
  dom.axisSvg.addEventListener('pointerup', (ev) => {
    if (startX === null) return;
    const x = local(ev);
    const [a, b] = [Math.min(x, startX), Math.max(x, startX)];
    startX = null;
    band?.remove();
    if (b - a >= 4) setWindow([toMs(a), toMs(b)]);
  });
  dom.axisSvg.addEventListener('dblclick', () => setWindow(null));
  dom.chart.addEventListener('zoomreset', () => setWindow(null));
}
