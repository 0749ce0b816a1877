/*
 * Hops across many cascades, as the dashboard shows them: pure functions over
 * GET /v1/hops (docs/api.md "Hops across many cascades"), so the view (hopstats-view.js)
 * stays thin and node tests them without a browser.
 */

/* The filters the view and the API take, in the order the URL shows them. */
export const HOP_FIELDS = ['since', 'until', 'kind', 'write', 'component', 'limit', 'scope'];

/* The API query of a #/hops route's parameters: only the filters it takes, own left out. */
export function hopStatsQuery(params) {
  const out = {};
  for (const f of HOP_FIELDS) {
    const v = params?.[f];
    if (v === undefined || v === null || v === '') continue;
    if (f === 'scope' && v !== 'reachable') continue;
    out[f] = String(v);
  }
  return out;
}

/*
 * The table's rows, in the server's order (slowest p50 first): {component, write, kind,
 * cascades, writes, p50, p90, p99, max} with times through fmt, and slowest on the first
 * row (the hop to look at first) when there are several.
 */
export function hopStatRows(answer, fmt) {
  const hops = answer?.hops ?? [];
  return hops.map((hop, i) => ({
    component: hop.component ?? '',
    write: hop.write ?? '',
    kind: hop.kind ?? '',
    cascades: Number(hop.cascades) || 0,
    writes: Number(hop.writes) || 0,
    p50: fmt(Number(hop.p50_ms) || 0),
    p90: fmt(Number(hop.p90_ms) || 0),
    p99: fmt(Number(hop.p99_ms) || 0),
    max: fmt(Number(hop.max_ms) || 0),
    slowest: i === 0 && hops.length > 1 && (Number(hop.p50_ms) || 0) > 0,
  }));
}

/* What the answer added up: "5 changes", "the newest 50 changes (more in the range)". */
export function rootsText(answer) {
  const n = Number(answer?.roots?.count) || 0;
  const noun = n === 1 ? 'change' : 'changes';
  if (answer?.roots?.truncated) return `the newest ${n} ${noun} (more in the range were left out)`;
  return `${n} ${noun}`;
}
