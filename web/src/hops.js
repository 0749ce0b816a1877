/*
 * Per-hop statistics of a trace: the spans grouped by hop, (service, name) such as
 * (replicaset-controller, create pods), with count, p50, p99 and max of the hop's time
 * (end - start: from the write's cause to its admission) and a histogram. Pure.
 *
 * Roots are not hops: a span is left out when it is spontaneous (attribute
 * spontaneous = "true") or when it is the root write itself: its CPID's mergelog has no
 * sources and was made by the span's own service (a person's change, whose bar starts
 * at its own write).
 *
 * Percentiles use the nearest-rank rule: p of n sorted values is the value at rank
 * ceil(p / 100 * n) (1-based), so p50 of [1, 2, 3, 4] is 2 and p99 of 100 values is
 * the 99th.
 */
import { bin } from 'd3-array';

/* Whether a span is a root write (not a hop), given the trace's mergelogs by CPID. */
export function isRootSpan(span, mergelogs) {
  const attrs = span.attributes ?? {};
  if (attrs.spontaneous === 'true') return true;
  const ml = mergelogs.get(span.cpid);
  return !!ml && (ml.sources ?? []).length === 0 && (ml.component ?? '') === span.service;
}

/* The value at nearest rank p (0 < p <= 100) of ascending values; NaN when empty. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

/*
 * Hops of spans (with start and end in ms, as model.normalizeSpans makes them):
 * [{service, name, count, p50, p99, max, min, durations (ascending)}], largest p99 first.
 */
export function hopStats(spans, mergelogs) {
  const groups = new Map();
  for (const s of spans) {
    if (isRootSpan(s, mergelogs)) continue;
    const key = `${s.service}\u0000${s.name}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { service: s.service, name: s.name, durations: [] }));
    g.durations.push(Math.max(0, s.end - s.start));
  }
  const out = [];
  for (const g of groups.values()) {
    const d = g.durations.sort((a, b) => a - b);
    out.push({ service: g.service, name: g.name, count: d.length, min: d[0],
      p50: percentile(d, 50), p99: percentile(d, 99), max: d[d.length - 1], durations: d });
  }
  return out.sort((a, b) => b.p99 - a.p99 || cmp(a.service, b.service) || cmp(a.name, b.name));
}

function cmp(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

/* Equal-width bins of durations over [0, max]: [{x0, x1, count}], `count` bins. */
export function histogram(durations, count = 20) {
  const max = durations.reduce((m, v) => (v > m ? v : m), 0);
  const hi = max > 0 ? max : 1;
  const step = hi / count;
  const thresholds = Array.from({ length: count - 1 }, (_, i) => (i + 1) * step);
  const bins = bin().domain([0, hi]).thresholds(thresholds)(durations);
  return bins.map((b) => ({ x0: b.x0, x1: b.x1, count: b.length }));
}

/* Sorts hop rows by a column, ascending or descending, ties by service and name. */
export function sortHops(hops, column, descending) {
  const dir = descending ? -1 : 1;
  const val = (h) => h[column];
  return [...hops].sort((a, b) => {
    const x = val(a);
    const y = val(b);
    const c = typeof x === 'string' ? cmp(x, y) : x - y;
    return dir * c || cmp(a.service, b.service) || cmp(a.name, b.name);
  });
}
