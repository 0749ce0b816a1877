/*
 * The Graph tab: the merge graph of a trace as a DAG (dagre), CPIDs as nodes labelled
 * with short CPID, component and object, an edge from each mergelog source to its CPID,
 * roots marked. Clicking a node selects it (?select= in the URL) and lights up its
 * origins: every path back to its roots. Pan and zoom with the mouse (d3-zoom).
 */
import { select as d3select } from 'd3-selection';
import { zoom as d3zoom, zoomIdentity } from 'd3-zoom';
import { line, curveBasis } from 'd3-shape';
import { h, s } from './dom.js';
import { buildGraph, ancestry, layoutGraph, GRAPH_LIMIT } from './merge-graph.js';
import { traceHref } from './route.js';
import { formatClock } from './time.js';
import { parseTime } from './time.js';
import { shortCpid } from './cpid.js';

/*
 * opts: {model, related, selected, color, api, traceCpid, onSelect(cpid|null)}.
 * Returns {update(model, related), select(cpid), destroy()}.
 */
export function createGraphView(container, opts) {
  const st = { ...opts, abort: null };
  const panel = h('aside', { class: 'side-panel graph-panel', 'aria-live': 'polite' });
  const canvas = h('div', { class: 'graph-canvas' });
  const note = h('p', { class: 'graph-note muted' });
  container.replaceChildren(h('div', { class: 'graph-view' }, h('div', { class: 'graph-main' }, note, canvas), panel));

  function render() {
    st.graph = buildGraph(st.related, st.model.mergelogs, GRAPH_LIMIT);
    st.layout = layoutGraph(st.graph);
    note.replaceChildren(noteText(st));
    drawGraph(canvas, st, (id) => choose(id));
    highlight();
  }

  function choose(id) {
    st.selected = id;
    highlight();
    st.onSelect(id);
  }

  function highlight() {
    const lit = st.selected && st.graph.byId.has(st.selected) ? ancestry(st.graph, st.selected) : null;
    for (const g of canvas.querySelectorAll('.gnode')) {
      const id = g.dataset.cpid;
      g.classList.toggle('selected', id === st.selected);
      g.classList.toggle('lit', !!lit && lit.nodes.has(id));
      g.classList.toggle('dim', !!lit && !lit.nodes.has(id));
    }
    for (const e of canvas.querySelectorAll('.gedge')) {
      const on = !!lit && lit.edges.has(`${e.dataset.from}>${e.dataset.to}`);
      e.classList.toggle('lit', on);
      e.classList.toggle('dim', !!lit && !on);
    }
    renderPanel();
  }

  function renderPanel() {
    st.abort?.abort();
    if (!st.selected) {
      panel.replaceChildren(h('h2', { class: 'panel-title' }, 'Merge graph'),
        h('p', { class: 'muted' }, 'Each box is a CPID; an arrow goes from each CPID merged into another. ' +
          'Roots (thick border) are the changes people or controllers started. Select a CPID to light up every path back to its roots.'),
        legendOf());
      return;
    }
    const id = st.selected;
    const ml = st.model.mergelogs.get(id);
    const origins = h('div', { class: 'origins', id: 'origins' }, h('p', { class: 'muted' }, 'Looking up origins…'));
    panel.replaceChildren(
      h('div', { class: 'panel-head' }, h('h2', { class: 'panel-title' }, ml?.sources?.length ? 'Merge' : 'Root'),
        h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Clear selection', onclick: () => choose(null) }, '×')),
      h('dl', { class: 'kv' },
        kv('cpid', h('code', { id: 'selected-cpid' }, id)),
        kv('made by', ml?.component || 'unknown'),
        kv('time', ml ? formatClock(parseTime(ml.time)) : '–'),
        kv('object', ml?.object?.kind ? `${ml.object.kind} ${ml.object.namespace ? ml.object.namespace + '/' : ''}${ml.object.name ?? ''}` : '–'),
        kv('sources', ml?.sources?.length ? h('span', {}, ml.sources.map((c, i) => [i ? ', ' : '',
          h('a', { href: traceHref(st.traceCpid, 'graph', { select: c }) }, h('code', {}, shortCpid(c)))])) : 'none (a root)'),
        kv('spans', String(st.model.spans.filter((x) => x.cpid === id).length))),
      h('p', {}, h('a', { href: traceHref(id) }, 'Open the trace of this CPID →')),
      h('h3', { class: 'panel-section' }, 'Origins'),
      origins);
    loadOrigins(id, origins);
  }

  async function loadOrigins(id, box) {
    const ctl = new AbortController();
    st.abort = ctl;
    try {
      const o = await st.api.origins(id, { signal: ctl.signal });
      box.replaceChildren(originList(o, st));
    } catch (e) {
      if (e.name !== 'AbortError') box.replaceChildren(h('p', { class: 'muted' }, e.message));
    }
  }

  render();
  return {
    update(model, related) {
      const grew = related.length !== st.related.length || model.mergelogs.size !== st.model.mergelogs.size;
      st.model = model;
      st.related = related;
      if (grew) render();
    },
    select(id) {
      st.selected = id;
      highlight();
    },
    destroy() {
      st.abort?.abort();
    },
  };
}

function kv(k, v) {
  return [h('dt', {}, k), h('dd', {}, v)];
}

function noteText(st) {
  const n = st.graph.nodes.filter((x) => !x.external).length;
  const ext = st.graph.nodes.length - n;
  const parts = [`${n} CPID${n === 1 ? '' : 's'}, ${st.graph.edges.length} merge edge${st.graph.edges.length === 1 ? '' : 's'}`];
  if (ext) parts.push(`${ext} source${ext === 1 ? '' : 's'} from outside this trace (dashed)`);
  if (st.graph.omitted) parts.push(`showing the first ${GRAPH_LIMIT} of ${st.related.length} CPIDs, breadth first: a larger graph is not readable`);
  return parts.join(' · ') + '. Drag to pan, scroll to zoom.';
}

function legendOf() {
  return h('ul', { class: 'graph-legend' },
    h('li', {}, h('span', { class: 'gl gl-root' }), 'root'),
    h('li', {}, h('span', { class: 'gl gl-merge' }), 'merge / kept CPID'),
    h('li', {}, h('span', { class: 'gl gl-ext' }), 'source outside this trace'));
}

function originList(o, st) {
  if (!o.origins?.length) return h('p', { class: 'muted' }, 'none');
  return h('ol', { class: 'origin-list' }, o.origins.map((root, i) => h('li', {},
    h('a', { href: traceHref(root) }, h('code', {}, shortCpid(root))),
    root === st.traceCpid ? h('span', { class: 'muted' }, ' (this trace)') : null,
    h('div', { class: 'path muted' }, (o.paths?.[i] ?? []).map(shortCpid).join(' → ')))),
  o.truncated ? h('li', { class: 'muted' }, 'truncated') : null);
}

function drawGraph(canvas, st, onPick) {
  const L = st.layout;
  const root = s('g', { class: 'graph-root' });
  const svg = s('svg', { class: 'graph-svg', role: 'img', 'aria-label': 'Merge graph' },
    s('defs', {}, s('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
      s('path', { d: 'M0,0L10,5L0,10z', class: 'arrow' }))),
    root);
  const path = line().x((p) => p.x).y((p) => p.y).curve(curveBasis);
  for (const e of L.edges) {
    root.append(s('path', { class: 'gedge', d: path(e.points), 'marker-end': 'url(#arrow)', dataset: { from: e.from, to: e.to } }));
  }
  for (const n of st.graph.nodes) root.append(nodeEl(n, L, st, onPick));
  canvas.replaceChildren(svg);
  attachZoom(svg, root, L, canvas, st);
}

function nodeEl(n, L, st, onPick) {
  const p = L.nodes.get(n.id);
  const w = L.nodeWidth;
  const hh = L.nodeHeight;
  const cls = ['gnode', n.root ? 'root' : '', n.external ? 'external' : '', n.id === st.traceCpid ? 'origin-cpid' : ''].filter(Boolean).join(' ');
  const pick = () => onPick(n.id);
  return s('g', { class: cls, transform: `translate(${p.x - w / 2},${p.y - hh / 2})`, tabindex: '0', role: 'button',
    'aria-label': `CPID ${n.short}${n.root ? ', root' : ''}, ${n.component || 'unknown component'}${n.object ? ', ' + n.object : ''}`,
    dataset: { cpid: n.id, root: n.root ? 'true' : 'false' },
    onclick: pick, onkeydown: (ev) => (ev.key === 'Enter' || ev.key === ' ') && (ev.preventDefault(), pick()) },
  s('rect', { class: 'gbox', width: w, height: hh, rx: 6 }),
  s('rect', { class: 'gstrip', width: 5, height: hh, rx: 2, fill: n.component ? st.color(n.component) : '#bbb' }),
  s('text', { class: 'gcpid', x: 13, y: 17 }, n.short),
  n.root ? s('text', { class: 'groot', x: w - 8, y: 17, 'text-anchor': 'end' }, 'ROOT') : null,
  n.external && !n.known ? s('text', { class: 'groot', x: w - 8, y: 17, 'text-anchor': 'end' }, 'outside') : null,
  s('text', { class: 'gcomp', x: 13, y: 32 }, clip(n.component || (n.known ? 'unknown' : 'not in this trace'), 32)),
  s('text', { class: 'gobj', x: 13, y: 46 }, clip(n.object, 34)),
  s('title', {}, `${n.id}\n${n.component}\n${n.object}`));
}

function clip(text, n) {
  return text.length > n ? text.slice(0, n - 1) + '…' : text;
}

/*
 * Pan and zoom. The first view fits the graph when it stays readable (never enlarging
 * past 100%); a larger graph starts at a readable scale on its top (the roots), or on
 * the selected CPID.
 */
function attachZoom(svg, root, L, canvas, st) {
  const z = d3zoom().scaleExtent([0.1, 2.5]).on('zoom', (ev) => root.setAttribute('transform', ev.transform.toString()));
  const sel = d3select(svg);
  sel.call(z).on('dblclick.zoom', null);
  const cw = canvas.clientWidth || 800;
  const ch = canvas.clientHeight || 600;
  const fit = Math.min(1, cw / (L.width || 1), ch / (L.height || 1));
  const focus = st.selected && L.nodes.get(st.selected);
  let t;
  if (fit >= 0.6 && !(focus && fit < 0.8)) {
    t = zoomIdentity.translate((cw - L.width * fit) / 2, Math.max(0, (ch - L.height * fit) / 2)).scale(fit);
  } else if (focus) {
    t = zoomIdentity.translate(cw / 2 - focus.x * 0.8, ch / 2 - focus.y * 0.8).scale(0.8);
  } else {
    const top = [...L.nodes.values()].reduce((a, b) => (b.y < a.y ? b : a), { x: L.width / 2, y: Infinity });
    t = zoomIdentity.translate(cw / 2 - top.x * 0.8, 24 - (top.y - L.nodeHeight / 2) * 0.8).scale(0.8);
  }
  sel.call(z.transform, t);
}
