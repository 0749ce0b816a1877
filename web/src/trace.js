/*
 * The trace page of a CPID: fetches it with all its related CPIDs, shows a header (who
 * changed what, counts, duration, live state) and one of four tabs: the waterfall,
 * the hops table, the merge graph and the Events. Tab, grouping and selection come from
 * the URL; changing them re-renders only what changed, without fetching again.
 *
 * Then it asks for the trace's details (diffs, audit, Events) and its stalls, and adds
 * them when they come (a server older than them answers 404: nothing of them is shown).
 * Live updates fetch all of it together: of the trace only what was stored since the last
 * answer (its cursor), added to what the page has.
 *
 * The trace is the change's own cascade unless the URL says scope=reachable (everything
 * reachable from it); a toggle in the header switches, in the URL, so the link keeps it.
 * Another scope is another page (main.js mounts it anew).
 *
 * The critical path (GET /v1/cpids/{cpid}/critical-path, of the same scope) comes after the
 * trace, as the details do: marked on the waterfall's bars unless the URL says path=off,
 * and as a table above the Hops tab's. A form in the header leads to this trace compared
 * with another CPID (#/compare/<this>/<other>, compare.js).
 */
import { h, markLoading, markReady, replaceHash } from './dom.js';
import { checkCpid } from './api.js';
import { failView } from './errors.js';
import { buildModel, objectLabel } from './model.js';
import { colorScale, legend } from './colors.js';
import { createWaterfall } from './waterfall.js';
import { createHopsView } from './hops-view.js';
import { createGraphView } from './graph.js';
import { renderSpanPanel } from './span-panel.js';
import { fightRows } from './fights.js';
import { createPoller, isRecent, mergeTrace, traceSignature } from './live.js';
import { indexDetails, detailsSignature, eventsTabCount } from './details.js';
import { stallList, stallsBySpan, stallBanner, stallsSignature } from './stalls.js';
import { createEventsView } from './details-view.js';
import { renderStallBanner } from './stall-view.js';
import { compareHref, formatRoute, scopeOf, showsPath, traceHref, withParams } from './route.js';
import { pathKeys } from './critpath.js';
import { pathToggle, renderPathTable } from './critpath-view.js';
import { isCpid, normalizeCpid } from './cpid.js';
import { formatDuration, formatClock, parseTime } from './time.js';
import { shortCpid } from './cpid.js';

const READY_NAME = { waterfall: 'trace', hops: 'hops', graph: 'graph', events: 'events' };

/* What makes a live update worth drawing: the trace, its details and its stalls. */
function liveSignature(data) {
  return `${traceSignature(data)}|${detailsSignature(data.extras?.details)}|${stallsSignature(stallList(data.extras?.stalls))}`;
}

/* Mounts the trace view of route.cpid in app. Returns {key, update(route), destroy()}. */
export function mountTrace(app, route, ctx) {
  const st = { route, data: null, model: null, sub: null, subKey: '', dom: null, poller: null,
    extras: null, details: null, stalls: [], stallsBySpan: new Map(), fights: new Map(),
    collapsed: { object: new Set(), component: new Set() }, abort: new AbortController(), scope: scopeOf(route),
    path: null, pathState: 'loading' };
  const scope = st.scope;

  async function load() {
    markLoading();
    app.replaceChildren(h('p', { class: 'loading' }, `Loading the trace of ${route.cpid}…`));
    try {
      const cpid = checkCpid(route.cpid);
      st.data = await ctx.api.trace(cpid, { signal: st.abort.signal, scope });
    } catch (e) {
      if (!st.abort.signal.aborted) failView(app, e, { api: ctx.api, retry: ctx.retry });
      return;
    }
    if (st.abort.signal.aborted) return;
    performance.mark('ripple:fetched');
    st.model = buildModel(st.data);
    performance.mark('ripple:model');
    st.color = colorScale(st.model.services);
    renderPage();
    startLive();
    loadPath();
    /* Asked once the trace is drawn, not with it: asked with it, the details query (the
     * heavier one) slows the trace's own answers, and their arrival the first render of
     * a large trace (by a sixth at 10,000 spans). */
    const x = await ctx.api.extras(st.data.cpid, { signal: st.abort.signal, scope })
      .catch((e) => (e?.name === 'AbortError' ? null : { details: null, stalls: null, error: e, failed: ['details', 'stalls'] }));
    /* A live update may have brought newer ones already. */
    if (x && !st.abort.signal.aborted && !st.extras) applyExtras(x);
  }

  /* The critical path of the trace as it is now; the page stands without it. */
  async function loadPath() {
    const answer = await ctx.api.criticalPath(st.data.cpid, { signal: st.abort.signal, scope }).catch(() => null);
    if (st.abort.signal.aborted) return;
    st.path = answer;
    st.pathState = answer ? 'ready' : 'none';
    drawPath();
  }

  /* Everything that shows the critical path, drawn again. */
  function drawPath() {
    if (st.route.tab === 'waterfall') {
      st.sub.setPath(showsPath(st.route) ? pathKeys(st.path) : new Set());
      st.dom.critBox?.replaceChildren(pathToggle(st.path, showsPath(st.route), pathHref(st, !showsPath(st.route))));
    } else if (st.route.tab === 'hops') {
      renderPathTable(st.dom.critTable, st.path, { color: st.color, state: st.pathState,
        traceHref: (span) => traceHref(st.data.cpid, 'waterfall', { span, scope: scopeParam(st) }) });
    }
    st.dom.root.dataset.path = st.pathState;
  }

  function renderPage() {
    st.dom = pageDom(st);
    app.replaceChildren(st.dom.root);
    fillHeader(st);
    renderTab();
    loadOrigins(st, ctx.api);
  }

  /* The tab's view, made anew when the tab or grouping changed, else told what changed. */
  function renderTab() {
    const tab = st.route.tab;
    const group = groupOf(st.route);
    const subKey = `${tab}:${group}`;
    markTabs(st);
    /* The toggle leads to this tab in the other scope. */
    st.dom.scopeBox.replaceChildren(scopeToggle(st));
    if (subKey !== st.subKey) {
      st.sub?.destroy();
      st.subKey = subKey;
      st.sub = makeSub(tab, group);
      drawBanner();
    } else if (tab === 'waterfall') {
      st.sub.select(st.route.params.span, true);
      showSpan(st.route.params.span);
      drawPath();
    } else if (tab === 'graph') st.sub.select(st.route.params.select ?? null);
    markReady(READY_NAME[tab]);
  }

  function makeSub(tab, group) {
    const body = st.dom.body;
    if (tab === 'hops') {
      const hopsBox = h('div', { class: 'hops-box' });
      st.dom.critTable = h('div', { class: 'crit-box' });
      body.replaceChildren(st.dom.critTable, hopsBox);
      const view = createHopsView(hopsBox, { model: st.model, color: st.color });
      drawPath();
      return view;
    }
    if (tab === 'events') return createEventsView(body, eventsOpts());
    if (tab === 'graph') {
      return createGraphView(body, { model: st.model, related: st.data.related, selected: st.route.params.select ?? null,
        color: st.color, api: ctx.api, traceCpid: st.data.cpid, onSelect: (id) => setParam('select', id) });
    }
    return waterfallTab(body, group);
  }

  function waterfallTab(body, group) {
    const chartBox = h('div', { class: 'wf-box' });
    const panel = h('aside', { class: 'side-panel span-panel', id: 'span-panel', hidden: true, 'aria-labelledby': 'panel-title' });
    st.dom.critBox = h('div', { class: 'crit-toggle-box' });
    body.replaceChildren(toolbar(st, group), h('div', { class: 'wf-main' }, chartBox, panel));
    st.panel = panel;
    const wf = createWaterfall(chartBox, { model: st.model, group, collapsed: st.collapsed[group], color: st.color,
      stalls: st.stallsBySpan, path: showsPath(st.route) ? pathKeys(st.path) : new Set(),
      selected: st.route.params.span ?? null, onSelect: (span) => {
        setParam('span', span?.id);
        showSpan(span?.id);
      } });
    showSpan(st.route.params.span);
    st.dom.critBox.replaceChildren(pathToggle(st.path, showsPath(st.route), pathHref(st, !showsPath(st.route))));
    return wf;
  }

  function showSpan(id) {
    const span = id ? st.model.spanById.get(id) : null;
    st.panel.hidden = !span;
    if (span) {
      renderSpanPanel(st.panel, span, { model: st.model, color: st.color, traceCpid: st.data.cpid,
        details: st.details, stall: st.stallsBySpan.get(span.id) ?? null, fights: fightsOf(span),
        onClose: () => {
          setParam('span', null);
          st.sub.select(null);
          showSpan(null);
        } });
    }
  }

  /*
   * The fights over a span's object (by its uid), asked for once per object when its
   * panel first shows; the panel is drawn again when they come. null until then, and
   * when the server has none (older, off, or failing: the panel stands without them).
   */
  function fightsOf(span) {
    const uid = span.attributes?.uid;
    if (!uid || !ctx.api.fights) return null;
    if (!st.fights.has(uid)) {
      st.fights.set(uid, null);
      ctx.api.fights(uid, { signal: st.abort.signal }).then((a) => {
        st.fights.set(uid, fightRows(a, uid));
        if (st.panel && !st.panel.hidden && st.panel.dataset.span === span.id) showSpan(span.id);
      }, () => {});
    }
    return st.fights.get(uid);
  }

  /* A selection goes into the URL without a hashchange (nothing to re-render). */
  function setParam(name, value) {
    st.route = withParams(st.route, { [name]: value ?? undefined });
    replaceHash(formatRoute(st.route));
  }

  /* The Events tab's options: the details, or why there are none. */
  function eventsOpts() {
    return { details: st.details, traceCpid: st.data.cpid, error: st.extras?.error ?? null,
      state: !st.extras ? 'loading' : st.details ? 'ready' : 'none' };
  }

  /* Details and stalls came (first, or from a live update): everything that shows them. */
  function applyExtras(x) {
    st.extras = x;
    st.details = indexDetails(x.details);
    st.stalls = stallList(x.stalls);
    st.stallsBySpan = stallsBySpan(st.stalls);
    st.dom.eventsCount.textContent = st.details ? String(eventsTabCount(st.details)) : '';
    drawBanner();
    if (st.route.tab === 'waterfall') {
      st.sub.setStalls(st.stallsBySpan);
      if (st.route.params.span) showSpan(st.route.params.span);
    } else if (st.route.tab === 'events') st.sub.update(eventsOpts());
    /* For tests: what came (details: ready, none or error; how many stalls). */
    st.dom.root.dataset.details = st.details ? 'ready' : x.error ? 'error' : 'none';
    st.dom.root.dataset.stalls = String(st.stalls.length);
  }

  function drawBanner() {
    renderStallBanner(st.dom.banner, stallBanner(st.stalls, st.model), { traceCpid: st.data.cpid, group: groupOf(st.route) });
  }

  function startLive() {
    st.poller = createPoller({
      load: async () => {
        const [data, extras] = await Promise.all([loadNewer(), ctx.api.extras(st.data.cpid, { signal: st.abort.signal, scope })]);
        return { ...data, extras };
      },
      signature: liveSignature,
      onData: (data) => {
        st.dom.live.classList.remove('lagging');
        if (traceSignature(data) !== traceSignature(st.data)) applyData(data);
        /* A part that failed this time keeps what it showed. */
        const x = data.extras;
        const keep = (part) => (x.failed?.includes(part) && st.extras ? st.extras[part] : x[part]);
        applyExtras({ ...x, details: keep('details'), stalls: keep('stalls') });
      },
      onState: () => drawLive(st, st.poller),
      onError: () => st.dom.live.classList.add('lagging'),
    });
    const lastEnd = st.model.t0 + st.model.duration;
    if (isRecent(lastEnd, Date.now())) st.poller.start(liveSignature({ ...st.data, extras: st.extras }));
    drawLive(st, st.poller);
  }

  /* The trace as it is now: what was stored since the last answer, added to it. */
  async function loadNewer() {
    const prev = st.data;
    const signal = st.abort.signal;
    if (!prev.next) return ctx.api.trace(prev.cpid, { signal, scope });
    const d = await ctx.api.trace(prev.cpid, { signal, after: prev.next, scope });
    return d.delta ? (mergeTrace(prev, d) ?? ctx.api.trace(prev.cpid, { signal, scope })) : d;
  }

  function applyData(data) {
    st.data = data;
    st.model = buildModel(data);
    st.color = colorScale(st.model.services);
    fillHeader(st);
    if (st.route.tab === 'graph') st.sub.update(st.model, data.related);
    else if (st.route.tab === 'waterfall') {
      st.sub.update(st.model);
      if (st.route.params.span) showSpan(st.route.params.span);
    } else if (st.route.tab === 'hops') st.sub.update(st.model);
    loadPath();
  }

  const onKey = (ev) => {
    if (ev.key === 'Escape' && st.route.tab === 'waterfall' && st.route.params.span) {
      setParam('span', null);
      st.sub.select(null);
      showSpan(null);
    }
  };
  document.addEventListener('keydown', onKey);
  load();

  return {
    key: `trace:${route.cpid}:${scope}`,
    update(next) {
      st.route = next;
      if (st.model) renderTab();
    },
    destroy() {
      st.abort.abort();
      st.poller?.stop();
      st.sub?.destroy();
      document.removeEventListener('keydown', onKey);
    },
  };
}

function groupOf(route) {
  return route.params.group === 'component' ? 'component' : 'object';
}

function pageDom(st) {
  const live = h('div', { class: 'live', id: 'live' });
  const eventsCount = h('span', { class: 'tab-count', id: 'events-count' });
  const tabs = h('nav', { class: 'tabs', 'aria-label': 'Trace views' },
    tabLink(st, 'waterfall', 'Waterfall'), tabLink(st, 'hops', 'Hops'), tabLink(st, 'graph', 'Merge graph'),
    tabLink(st, 'events', ['Events', eventsCount]));
  const banner = h('div', { class: 'stall-box', hidden: true });
  const head = h('header', { class: 'trace-head' });
  const origins = h('p', { class: 'trace-origins muted', id: 'trace-origins' });
  const body = h('div', { class: 'trace-body' });
  const truncated = st.data.truncated
    ? h('p', { class: 'notice', role: 'status' }, 'ripple-server cut this trace short (its query limit): some CPIDs and spans are missing.')
    : null;
  const scopeBox = h('div', { class: 'scope-box' });
  const root = h('section', { class: 'trace', 'aria-label': 'Trace', dataset: { scope: st.scope } }, head,
    h('div', { class: 'trace-tools' }, scopeBox, compareForm(st)), origins, truncated, banner, h('div', { class: 'tabbar' }, tabs, live), body);
  return { root, head, tabs, live, body, origins, banner, eventsCount, scopeBox };
}

/* "Compare with…": another CPID, and this trace against it (#/compare/<this>/<other>). */
function compareForm(st) {
  const input = h('input', { type: 'text', id: 'compare-with', name: 'compare-with', placeholder: 'another CPID',
    spellcheck: 'false', autocomplete: 'off', 'aria-describedby': 'compare-error', size: 38 });
  const error = h('span', { class: 'field-error', id: 'compare-error', role: 'status' });
  const submit = (ev) => {
    ev.preventDefault();
    const other = input.value.trim();
    if (!isCpid(other)) {
      error.textContent = other ? `"${other}" is not a CPID` : 'enter a CPID';
      return;
    }
    error.textContent = '';
    window.location.hash = compareHref(st.data.cpid, normalizeCpid(other), { scope: scopeParam(st) });
  };
  return h('form', { class: 'compare-form', id: 'compare-form', onsubmit: submit, 'aria-label': 'Compare with another cascade' },
    h('label', { for: 'compare-with', class: 'seg-label' }, 'Compare with'), input,
    h('button', { type: 'submit', class: 'button small' }, 'Compare'), error);
}

/* The waterfall's link with the critical path's mark shown (on) or hidden. */
function pathHref(st, on) {
  const p = st.route.params;
  return traceHref(st.data.cpid, 'waterfall', { group: p.group, span: p.span, scope: scopeParam(st), path: on ? undefined : 'off' });
}

/* Own cascade / everything reachable: links to the same tab in the other scope. */
function scopeToggle(st) {
  const { tab } = st.route;
  const keep = tab === 'waterfall' ? { group: st.route.params.group, path: st.route.params.path } : {};
  const seg = (scope, label, title) => h('a', {
    href: traceHref(st.data.cpid, tab, { ...keep, scope: scope === 'own' ? undefined : scope }),
    class: scope === st.scope ? 'seg active' : 'seg', 'aria-current': scope === st.scope ? 'true' : null,
    title, dataset: { scope } }, label);
  return h('div', { class: 'segmented scope-toggle', id: 'scope-toggle', role: 'group', 'aria-label': 'Which cascade' },
    h('span', { class: 'seg-label' }, 'Cascade:'),
    seg('own', 'Own', 'what this change caused (the writes it triggered)'),
    seg('reachable', 'Everything reachable', 'every CPID reachable in the merge graph, later changes that carried this one along included'));
}

/* The scope as a link parameter: absent for own, the default. */
function scopeParam(st) {
  return st.scope === 'own' ? undefined : st.scope;
}

function tabLink(st, tab, label) {
  const params = tab === 'waterfall' ? { group: st.route.params.group, scope: scopeParam(st), path: st.route.params.path } : { scope: scopeParam(st) };
  return h('a', { href: traceHref(st.data.cpid, tab, params), class: 'tab', dataset: { tab } }, label);
}

function markTabs(st) {
  for (const a of st.dom.tabs.querySelectorAll('a')) {
    const on = a.dataset.tab === st.route.tab;
    a.classList.toggle('active', on);
    if (on) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

/* The header: who changed what, and the trace's counts. */
function fillHeader(st) {
  const m = st.model;
  const ml = m.root;
  const ob = ml?.object;
  const objectText = ob?.kind ? objectLabel(ob.kind, ob.namespace ?? '', ob.name ?? '') : 'an object not recorded';
  const who = ml?.component || 'unknown';
  const rootSpan = m.spans.find((x) => x.cpid === m.cpid && x.service === who);
  const isRoot = ml && (ml.sources ?? []).length === 0;
  st.dom.head.replaceChildren(
    h('div', { class: 'trace-title' },
      h('p', { class: 'eyebrow' }, isRoot ? 'Change' : 'Merged CPID', ' ', h('code', { id: 'root-cpid', title: m.cpid }, m.cpid)),
      h('h1', {}, h('span', { id: 'root-object' }, objectText)),
      h('p', { class: 'trace-sub' }, 'by ', h('strong', { id: 'root-who' }, who),
        rootSpan ? [' · ', h('code', {}, rootSpan.name)] : null,
        ml ? ` · ${formatClock(parseTime(ml.time))}` : null)),
    h('dl', { class: 'stats' },
      stat('Spans', 'span-count', String(m.spans.length)),
      stat('CPIDs', 'cpid-count', String(m.cpids.size)),
      stat('Components', 'component-count', String(m.services.length)),
      stat('Duration', 'duration', formatDuration(m.duration))),
  );
}

function stat(label, id, value) {
  return h('div', { class: 'stat' }, h('dt', {}, label), h('dd', { id }, value));
}

function toolbar(st, group) {
  const seg = (g, label) => h('a', { href: traceHref(st.data.cpid, 'waterfall', { group: g === 'object' ? undefined : g, span: st.route.params.span, scope: scopeParam(st), path: st.route.params.path }),
    class: g === group ? 'seg active' : 'seg', 'aria-current': g === group ? 'true' : null, dataset: { group: g } }, label);
  const counts = new Map();
  for (const sp of st.model.spans) counts.set(sp.service, (counts.get(sp.service) ?? 0) + 1);
  return h('div', { class: 'wf-toolbar' },
    h('div', { class: 'segmented', role: 'group', 'aria-label': 'Group rows' }, h('span', { class: 'seg-label' }, 'Rows:'),
      seg('object', 'By object'), seg('component', 'By component')),
    st.dom.critBox,
    legend(st.model.services, st.color, counts));
}

function drawLive(st, poller) {
  const state = poller.state();
  const el = st.dom.live;
  el.dataset.live = state;
  const btn = (label, fn) => h('button', { type: 'button', class: 'button small', onclick: fn }, label);
  if (state === 'live') {
    el.replaceChildren(h('span', { class: 'live-dot', 'aria-hidden': 'true' }), h('span', { class: 'live-text' }, 'Live'),
      btn('Pause', () => poller.pause()));
  } else if (state === 'paused') {
    el.replaceChildren(h('span', { class: 'live-text muted' }, 'Paused'), btn('Resume', () => poller.resume()));
  } else {
    el.replaceChildren(btn('Watch for new spans', () => poller.resume()));
  }
}

/* For a merged CPID: where it came from (its roots), shown under the header. */
async function loadOrigins(st, api) {
  const ml = st.model.root;
  if (!ml || (ml.sources ?? []).length === 0) return;
  try {
    const o = await api.origins(st.data.cpid, { signal: st.abort.signal });
    st.dom.origins.replaceChildren('Came from ', ...o.origins.flatMap((c, i) => [i ? ', ' : '',
      h('a', { href: traceHref(c) }, h('code', {}, shortCpid(c)))]), '.');
  } catch {
    /* the header stands without it */
  }
}
