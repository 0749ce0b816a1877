/*
 * The critical path and the comparison of two cascades, as the dashboard shows them:
 * pure functions over the server's answers (GET /v1/cpids/{cpid}/critical-path and
 * GET /v1/compare, docs/api.md), so the views stay thin and node tests them
 * without a browser.
 */
import { objectLabel } from './model.js';

/* A span's key on the path: span ids repeat across CPIDs, so the CPID is part of it. */
export function spanKey(cpid, spanId) {
  return `${cpid}/${spanId}`;
}

/* The keys (spanKey) of the spans on a critical-path answer; empty for none. */
export function pathKeys(answer) {
  const out = new Set();
  for (const hop of answer?.hops ?? []) {
    if (hop?.cpid && hop?.span_id) out.add(spanKey(hop.cpid, hop.span_id));
  }
  return out;
}

/* The spans of a model that are on the path: what the waterfall marks. */
export function pathSpans(spans, keys) {
  return (spans ?? []).filter((sp) => keys.has(spanKey(sp.cpid, sp.id)));
}

/* A part of a hop (docs/api.md, "The critical path"): its ms, or null when absent. */
function partMs(parts, key) {
  const v = parts?.[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/*
 * A hop's parts, {seen, wrote, admission} in ms (null each when the server did not know
 * it), or null when the hop has none: no watch agent, no audit, or the first hop.
 */
export function hopParts(hop) {
  const p = hop?.parts;
  if (!p || typeof p !== 'object') return null;
  const out = { seen: partMs(p, 'seen_ms'), wrote: partMs(p, 'wrote_ms'), admission: partMs(p, 'admission_ms') };
  return out.seen === null && out.wrote === null && out.admission === null ? null : out;
}

/*
 * The table's rows of a critical-path answer, in path order: {n (1-based), component,
 * write, object, ms, parts (hopParts), longest, cpid, spanId}. longest marks the hop that
 * took the most (the first of equals): the one to look at first.
 */
export function pathRows(answer) {
  const hops = answer?.hops ?? [];
  let most = -1;
  hops.forEach((hop, i) => {
    if (most < 0 || (Number(hop.ms) || 0) > (Number(hops[most].ms) || 0)) most = i;
  });
  return hops.map((hop, i) => ({
    n: i + 1,
    component: hop.component ?? '',
    write: hop.write ?? '',
    object: hop.kind ? objectLabel(hop.kind, hop.namespace ?? '', hop.name ?? '') : '–',
    ms: Number(hop.ms) || 0,
    parts: hopParts(hop),
    longest: i === most && hops.length > 1,
    cpid: hop.cpid ?? '',
    spanId: hop.span_id ?? '',
  }));
}

/* What a side of a compared hop had: "count × max ms", or "–" when it had none. */
export function sideText(side, fmt) {
  if (!side) return '–';
  return `${side.count} × ${fmt(Number(side.max_ms) || 0)}`;
}

/* A signed duration: "+2 s", "-15 ms", "0 ms". */
export function signed(ms, fmt) {
  const v = Number(ms) || 0;
  return v > 0 ? `+${fmt(v)}` : fmt(v);
}

/*
 * The compare table's rows, in the server's order (most changed first): {change,
 * delta, component, write, kind, a, b, changed} with a and b as sideText. changed is
 * false for "same" hops, which the view shows dimmed.
 */
export function compareRows(answer, fmt) {
  return (answer?.hops ?? []).map((hop) => ({
    change: hop.change ?? 'same',
    delta: signed(hop.delta_ms, fmt),
    deltaMs: Number(hop.delta_ms) || 0,
    component: hop.component ?? '',
    write: hop.write ?? '',
    kind: hop.kind ?? '',
    a: sideText(hop.a, fmt),
    b: sideText(hop.b, fmt),
    changed: (hop.change ?? 'same') !== 'same',
  }));
}

/* The writers changed: "write (kind): a → b" with each side's components. */
export function writerRows(answer) {
  return (answer?.writers ?? []).map((w) => ({
    write: w.write ?? '',
    kind: w.kind ?? '',
    a: (w.a ?? []).join(', ') || '–',
    b: (w.b ?? []).join(', ') || '–',
  }));
}
