/*
 * Stalled writes (GET /v1/cpids/{cpid}/stalls and GET /v1/stalls, docs/api.md "Stalled
 * cascades"): writes whose usual next hop has not come. Pure (no DOM): which spans and
 * rows are stalled, the words of their tooltips, and the model of the banner over a
 * trace, so it is unit-tested.
 *
 * A server older than these endpoints answers 404, one with the detector off says
 * "enabled": false; either way there are no stalls to show.
 */
import { formatDuration, formatClock, parseTime } from './time.js';
import { objectLabel, rowKeyOf } from './model.js';
import { eventRows } from './details.js';

/* The stalls of an answer ([] for none, a 404 (null) or a detector that is off). */
export function stallList(answer) {
  if (!answer || answer.enabled === false || !Array.isArray(answer.stalls)) return [];
  return answer.stalls.filter((x) => x && typeof x === 'object' && typeof x.span_id === 'string');
}

/* Stalls by the span id of the stalled write (the first one kept for a repeated id). */
export function stallsBySpan(stalls) {
  const out = new Map();
  for (const x of stalls ?? []) if (!out.has(x.span_id)) out.set(x.span_id, x);
  return out;
}

/* What a stalled write waits for: "replicaset-controller create pods" or "any next hop". */
export function expectText(expect) {
  if (!expect || (!expect.service && !expect.name)) return 'any next hop';
  return [expect.service, expect.name].filter(Boolean).join(' ');
}

const seconds = (v) => (Number.isFinite(v) ? formatDuration(v * 1000) : '?');

/* "stalled: waiting 41.2 s for replicaset-controller create pods (usually within 350 ms)". */
export function stallTooltip(stall) {
  return `stalled: waiting ${seconds(stall.waiting_seconds)} for ${expectText(stall.expect)} (usually within ${seconds(stall.p99_seconds)})`;
}

/* "Kind ns/name" of the stalled write's object ('' when the answer names none). */
export function stallObject(stall) {
  const o = stall.object ?? {};
  if (!o.kind) return '';
  return objectLabel(o.kind, o.namespace ?? '', o.name || '(created)');
}

/*
 * The banner over a trace: {count, title, items, kinds}, items longest waiting first,
 * each {cpid, spanId, inTrace (the span is in the model: the link selects it), write
 * ("service name"), object, owner, expect, waiting, p99, samples, tooltip, admitted,
 * events (eventRows), warnings (how many of them are Warnings)}; kinds the items by
 * write and what it waits for ({write, expect, count}, most first). null for no stalls.
 */
export function stallBanner(stalls, model) {
  const list = stalls ?? [];
  if (list.length === 0) return null;
  const items = [...list].sort((a, b) => (b.waiting_seconds ?? 0) - (a.waiting_seconds ?? 0)).map((x) => {
    const events = eventRows(x.events);
    return {
      cpid: x.cpid ?? '',
      spanId: x.span_id,
      inTrace: !!model?.spanById?.has(x.span_id),
      write: [x.service, x.name].filter(Boolean).join(' ') || 'a write',
      object: stallObject(x),
      owner: x.object?.owner ?? '',
      expect: expectText(x.expect),
      waiting: seconds(x.waiting_seconds),
      p99: seconds(x.p99_seconds),
      samples: Number.isInteger(x.samples) ? x.samples : null,
      tooltip: stallTooltip(x),
      admitted: formatClock(parseTime(x.admitted)),
      events,
      warnings: events.filter((e) => e.warning).length,
    };
  });
  const kinds = new Map();
  for (const it of items) {
    const k = `${it.write}\n${it.expect}`;
    if (!kinds.has(k)) kinds.set(k, { write: it.write, expect: it.expect, count: 0 });
    kinds.get(k).count++;
  }
  return { count: items.length, title: `${items.length} stalled write${items.length === 1 ? '' : 's'}`, items,
    kinds: [...kinds.values()].sort((a, b) => b.count - a.count) };
}

/*
 * The rows to mark in a grouping's tree: own (Map row key -> stalls of spans in that
 * row) and below (Map row key -> how many stalled writes are in rows below it).
 */
export function stalledRows(model, group, bySpan) {
  const own = new Map();
  const below = new Map();
  if (!bySpan || bySpan.size === 0) return { own, below };
  const tree = group === 'component' ? model.byComponent : model.byObject;
  for (const [id, stall] of bySpan) {
    const span = model.spanById.get(id);
    if (!span) continue;
    const node = tree.nodes.get(rowKeyOf(span, group));
    if (!node) continue;
    if (!own.has(node.key)) own.set(node.key, []);
    own.get(node.key).push(stall);
    for (let p = node.parent; p; p = p.parent) below.set(p.key, (below.get(p.key) ?? 0) + 1);
  }
  return { own, below };
}

/* What changes when stalls change: which writes, and how many Events each has. */
export function stallsSignature(stalls) {
  return (stalls ?? []).map((x) => `${x.span_id}/${x.events?.length ?? 0}`).sort().join(',');
}

/*
 * Rows of the Find page's "Stalled now" list, longest waiting first: {cpid, spanId,
 * write, object, expect, waiting, p99, tooltip, admitted, reasons (the Events' reasons,
 * Warnings first, each once)}.
 */
export function stalledNowRows(stalls) {
  return [...(stalls ?? [])].sort((a, b) => (b.waiting_seconds ?? 0) - (a.waiting_seconds ?? 0)).map((x) => {
    const events = eventRows(x.events);
    const reasons = [...new Set([...events.filter((e) => e.warning), ...events.filter((e) => !e.warning)]
      .map((e) => e.reason).filter(Boolean))];
    return { cpid: x.cpid ?? '', spanId: x.span_id, write: [x.service, x.name].filter(Boolean).join(' ') || 'a write',
      object: stallObject(x), expect: expectText(x.expect), waiting: seconds(x.waiting_seconds), p99: seconds(x.p99_seconds),
      tooltip: stallTooltip(x), admitted: formatClock(parseTime(x.admitted)), reasons };
  });
}
