/*
 * Hash routes (deep links): the dashboard's whole state that is worth a link lives in
 * location.hash, so ripple-server needs no routes of its own and `kubectl ripple`
 * can print `<server>/#/trace/<cpid>`.
 *
 *   #/                                 Find, latest roots
 *   #/find?cpid=&kind=&namespace=&name=&component=&since=&until=
 *   #/trace/<cpid>[?group=object|component&span=<span_id>]
 *   #/trace/<cpid>/hops
 *   #/trace/<cpid>/graph[?select=<cpid>]
 *   #/trace/<cpid>/events
 *   #/compare/<cpid a>/<cpid b>        two cascades compared hop by hop
 *   #/hops?since=&until=&kind=&write=&component=   hops across the cascades of many changes
 *
 * The waterfall takes `path=off` to hide the critical path's mark (shown by default).
 * Find and every trace tab take `scope=reachable`: everything reachable from the change
 * (the CPID paper's related set) instead of its own cascade, the default (docs/api.md,
 * "Own cascade and everything reachable"; docs/dashboard.md).
 */

const TABS = new Set(['waterfall', 'hops', 'graph', 'events']);

/* {view: 'find'|'trace'|'compare'|'hopstats'|'notfound', cpid?, tab?, a?, b?, params: {name: value}} of a hash. */
export function parseRoute(hash) {
  const text = String(hash ?? '').replace(/^#/, '');
  const q = text.indexOf('?');
  const path = q < 0 ? text : text.slice(0, q);
  const params = parseParams(q < 0 ? '' : text.slice(q + 1));
  const parts = path.split('/').filter((p) => p !== '');
  if (parts.length === 0 || (parts.length === 1 && parts[0] === 'find')) {
    return { view: 'find', params };
  }
  if (parts[0] === 'trace' && parts.length >= 2 && parts.length <= 3) {
    const tab = parts.length === 3 ? parts[2] : 'waterfall';
    if (!TABS.has(tab)) return { view: 'notfound', path, params };
    return { view: 'trace', cpid: safeDecode(parts[1]), tab, params };
  }
  if (parts.length === 1 && parts[0] === 'hops') return { view: 'hopstats', params };
  if (parts[0] === 'compare' && parts.length === 3) {
    return { view: 'compare', a: safeDecode(parts[1]), b: safeDecode(parts[2]), params };
  }
  return { view: 'notfound', path, params };
}

function parseParams(text) {
  const out = {};
  for (const [k, v] of new URLSearchParams(text)) {
    if (v !== '') out[k] = v;
  }
  return out;
}

function safeDecode(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/* The hash of a route: the inverse of parseRoute (empty parameters left out). */
export function formatRoute(route) {
  let path = '/';
  if (route.view === 'find') path = hasParams(route.params) ? '/find' : '/';
  if (route.view === 'trace') {
    path = `/trace/${encodeURIComponent(route.cpid)}`;
    if (route.tab && route.tab !== 'waterfall') path += `/${route.tab}`;
  }
  if (route.view === 'hopstats') path = '/hops';
  if (route.view === 'compare') path = `/compare/${encodeURIComponent(route.a)}/${encodeURIComponent(route.b)}`;
  const qs = formatParams(route.params);
  return `#${path}${qs ? '?' + qs : ''}`;
}

function hasParams(params) {
  return Object.values(params ?? {}).some((v) => v !== undefined && v !== null && v !== '');
}

function formatParams(params) {
  const sp = new URLSearchParams();
  for (const [k, v] of Object.entries(params ?? {})) {
    if (v !== undefined && v !== null && v !== '') sp.set(k, String(v));
  }
  return sp.toString();
}

/* The cascade a route asks for: 'reachable' or 'own' (the default). */
export function scopeOf(route) {
  return route?.params?.scope === 'reachable' ? 'reachable' : 'own';
}

/* A link to a trace tab of a CPID, with optional parameters. */
export function traceHref(cpid, tab = 'waterfall', params = {}) {
  return formatRoute({ view: 'trace', cpid, tab, params });
}

/* The same route with some parameters replaced (undefined or '' removes one). */
export function withParams(route, changes) {
  return { ...route, params: { ...route.params, ...changes } };
}

/* A link to two cascades compared (a before, b after), with optional parameters. */
export function compareHref(a, b, params = {}) {
  return formatRoute({ view: 'compare', a, b, params });
}

/* A link to the hops across many cascades (#/hops), with its filters. */
export function hopStatsHref(params = {}) {
  return formatRoute({ view: 'hopstats', params });
}

/* Whether a waterfall route shows the critical path: unless path=off. */
export function showsPath(route) {
  return route?.params?.path !== 'off';
}
