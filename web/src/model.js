/*
 * The trace model: spans and mergelogs as the server answers them, turned into what the
 * waterfall draws. Pure (no DOM), so it is unit-tested and cheap to rebuild on every
 * live update: O(n log n) in the number of spans.
 *
 * Two groupings of rows, each a tree of nodes:
 *   object:    one row per object (Kind namespace/name), nested by the span attribute
 *              `owner` (Deployment > ReplicaSet > Pods); a generateName create (empty
 *              name) goes into a row "Kind (created)" under its owner.
 *   component: one row per service (component), with a row per object it wrote below.
 * Times are milliseconds from t = 0, the earliest span start.
 */
import { parseTime } from './time.js';

/*
 * Spans deduplicated by (cpid, span_id), times parsed; unparsable ones are dropped.
 * Spans that wrote the same object share its row reference (objectOf's answer): a
 * large trace has a few spans per object, and a cold page pays for every object made.
 */
export function normalizeSpans(raw) {
  const seen = new Map(); /* span_id -> cpid, or a Set of them when ids repeat across CPIDs */
  const objects = new Map();
  const out = [];
  for (const s of raw ?? []) {
    if (isDuplicate(seen, s.span_id, s.cpid)) continue;
    const startAbs = parseTime(s.start);
    const endAbs = parseTime(s.end);
    if (Number.isNaN(startAbs) || Number.isNaN(endAbs)) continue;
    const service = s.service ?? '';
    const attributes = s.attributes ?? {};
    const ok = `${service}\n${attributes.kind ?? ''}\n${attributes.namespace ?? ''}\n${attributes.name ?? ''}\n${attributes.owner ?? ''}`;
    let obj = objects.get(ok);
    if (!obj) objects.set(ok, (obj = objectOf(attributes, service)));
    out.push({ raw: s, id: s.span_id, cpid: s.cpid, service, name: s.name ?? '', attributes, obj,
      objectKey: obj.key, startAbs, endAbs, start: 0, end: 0 });
  }
  return out;
}

/* Whether (cpid, id) was seen; remembers it. */
function isDuplicate(seen, id, cpid) {
  const had = seen.get(id);
  if (!seen.has(id)) {
    seen.set(id, cpid);
    return false;
  }
  if (had === cpid) return true;
  if (typeof had === 'string') {
    seen.set(id, new Set([had, cpid]));
    return false;
  }
  if (had.has(cpid)) return true;
  had.add(cpid);
  return false;
}

/* "Kind ns/name" (or "Kind name" for cluster-scoped objects). */
export function objectLabel(kind, namespace, name) {
  return `${kind} ${namespace ? namespace + '/' : ''}${name}`;
}

/* The row key of the object a span wrote, with the owner row it belongs under. */
export function objectOf(attrs, service) {
  const kind = attrs.kind ?? '';
  const ns = attrs.namespace ?? '';
  const name = attrs.name ?? '';
  const owner = parseOwner(attrs.owner, ns);
  if (!kind) return { key: `~${service}`, label: `${service || 'unknown'} (no object)`, owner: null };
  if (!name) {
    const suffix = owner ? `@${owner.key}` : '';
    return { key: `${kind}/${ns}/(created)${suffix}`, label: `${kind} (created)`, owner, created: true,
      kind, namespace: ns };
  }
  return { key: `${kind}/${ns}/${name}`, label: objectLabel(kind, ns, name), owner, kind, namespace: ns, name };
}

/* The owner attribute "Kind/name" (same namespace as the object) as a row reference. */
export function parseOwner(text, ns) {
  if (!text) return null;
  const i = text.indexOf('/');
  if (i <= 0 || i === text.length - 1) return null;
  const kind = text.slice(0, i);
  const name = text.slice(i + 1);
  return { key: `${kind}/${ns}/${name}`, label: objectLabel(kind, ns, name), kind, namespace: ns, name };
}

function newNode(key, label, extra = {}) {
  return { key, label, spans: [], marks: [], children: [], parent: null, first: Infinity, firstEnd: Infinity, ...extra };
}

/* A tree of rows: nodes by key, top-level nodes, and a way to add a node once. */
function newTree() {
  const nodes = new Map();
  const roots = [];
  const get = (key, label, extra) => {
    let n = nodes.get(key);
    if (!n) nodes.set(key, (n = newNode(key, label, extra?.())));
    return n;
  };
  return { nodes, roots, get };
}

/* Whether making `parent` the parent of `child` would close a cycle. */
function wouldCycle(child, parent) {
  for (let p = parent; p; p = p.parent) if (p === child) return true;
  return false;
}

/* Links nodes to their parents, then sorts children and roots by first activity. */
function finishTree(tree, parentOf) {
  for (const n of tree.nodes.values()) {
    const pk = parentOf.get(n.key);
    const p = pk ? tree.nodes.get(pk) : null;
    if (p && !wouldCycle(n, p)) {
      n.parent = p;
      p.children.push(n);
    }
  }
  for (const n of tree.nodes.values()) if (!n.parent) tree.roots.push(n);
  propagateFirst(tree.roots);
  const visit = (list) => {
    list.sort(byFirst);
    for (const n of list) if (n.children.length) visit(n.children);
  };
  visit(tree.roots);
  return tree;
}

/*
 * A parent row without writes of its own starts where its first descendant starts
 * (and is first admitted where its first descendant is). Returns [first, firstEnd].
 */
function propagateFirst(list) {
  let first = Infinity;
  let firstEnd = Infinity;
  for (const n of list) {
    const [f, e] = propagateFirst(n.children);
    n.first = Math.min(n.first, f);
    n.firstEnd = Math.min(n.firstEnd, e);
    first = Math.min(first, n.first);
    firstEnd = Math.min(firstEnd, n.firstEnd);
  }
  return [first, firstEnd];
}

/* Rows in order of their first write's cause, then of its admission, then by key. */
function byFirst(a, b) {
  return a.first - b.first || a.firstEnd - b.firstEnd || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

function addSpan(node, span) {
  node.spans.push(span);
  if (span.start < node.first) node.first = span.start;
  if (span.end < node.firstEnd) node.firstEnd = span.end;
}

function addMark(node, mark) {
  node.marks.push(mark);
  if (mark.time < node.first) node.first = mark.time;
  if (mark.time < node.firstEnd) node.firstEnd = mark.time;
}

/* Rows grouped by object, nested by owner. */
export function groupByObject(spans, marks) {
  const tree = newTree();
  const parentOf = new Map();
  for (const s of spans) {
    const o = s.obj;
    const n = tree.get(o.key, o.label, () => ({ kind: o.kind, created: !!o.created }));
    addSpan(n, s);
    if (o.owner) {
      tree.get(o.owner.key, o.owner.label, () => ({ kind: o.owner.kind }));
      parentOf.set(o.key, o.owner.key);
    }
  }
  for (const m of marks) {
    if (!m.object) continue;
    const n = tree.get(m.object.key, m.object.label, () => ({ kind: m.object.kind }));
    addMark(n, m);
  }
  return finishTree(tree, parentOf);
}

/* Rows grouped by component (service), each with a row per object it wrote. */
export function groupByComponent(spans, marks) {
  const tree = newTree();
  const parentOf = new Map();
  for (const s of spans) {
    const svc = tree.get(s.service, s.service || 'unknown', () => ({ service: s.service, isService: true }));
    const o = s.obj;
    const key = `${s.service}>${o.key}`;
    const label = o.created && o.owner ? `${o.label} by ${o.owner.label}` : o.label;
    const n = tree.get(key, label, () => ({ service: s.service, kind: o.kind }));
    addSpan(n, s);
    parentOf.set(key, svc.key);
  }
  for (const m of marks) {
    if (!m.component) continue;
    const n = tree.get(m.component, m.component, () => ({ service: m.component, isService: true }));
    addMark(n, m);
  }
  return finishTree(tree, parentOf);
}

/* Merges and roots as marks at the time their CPID was made, on the object written. */
function mergeMarks(mergelogs, t0) {
  const out = [];
  for (const ml of mergelogs.values()) {
    const time = parseTime(ml.time) - t0;
    if (Number.isNaN(time)) continue;
    const ob = ml.object ?? {};
    const object = ob.kind && ob.name
      ? { key: `${ob.kind}/${ob.namespace ?? ''}/${ob.name}`, label: objectLabel(ob.kind, ob.namespace ?? '', ob.name), kind: ob.kind }
      : null;
    out.push({ cpid: ml.cpid, time, component: ml.component ?? '', sources: ml.sources ?? [],
      root: (ml.sources ?? []).length === 0, object });
  }
  return out.sort((a, b) => a.time - b.time);
}

/* Services in the order they first wrote (cause, then admission): stable colours and legends. */
export function servicesOf(spans) {
  const first = new Map();
  for (const s of spans) {
    const f = first.get(s.service);
    if (!f) first.set(s.service, [s.start, s.end]);
    else {
      f[0] = Math.min(f[0], s.start);
      f[1] = Math.min(f[1], s.end);
    }
  }
  return [...first.entries()].sort((a, b) => a[1][0] - b[1][0] || a[1][1] - b[1][1] || (a[0] < b[0] ? -1 : 1)).map((e) => e[0]);
}

/*
 * The whole model of a trace: {t0 (epoch ms), duration, spans (start/end from t0),
 * spanById, mergelogs (Map cpid -> mergelog), root (the CPID's mergelog), cpids,
 * services, marks, byObject, byComponent}.
 */
export function buildModel({ cpid, spans: rawSpans, mergelogs: rawMergelogs, related }) {
  const spans = normalizeSpans(rawSpans);
  const mergelogs = new Map((rawMergelogs ?? []).map((m) => [m.cpid, m]));
  let t0 = Infinity;
  for (const s of spans) if (s.startAbs < t0) t0 = s.startAbs;
  if (t0 === Infinity) {
    for (const m of mergelogs.values()) t0 = Math.min(t0, parseTime(m.time) || Infinity);
  }
  if (t0 === Infinity) t0 = 0;
  let end = 0;
  for (const s of spans) {
    s.start = s.startAbs - t0;
    s.end = s.endAbs - t0;
    if (s.end > end) end = s.end;
  }
  spans.sort((a, b) => a.start - b.start || a.end - b.end);
  const marks = mergeMarks(mergelogs, t0);
  for (const m of marks) if (m.time > end) end = m.time;
  const spanById = new Map();
  for (const s of spans) if (!spanById.has(s.id)) spanById.set(s.id, s);
  const cpids = new Set(related ?? []);
  for (const s of spans) cpids.add(s.cpid);
  for (const c of mergelogs.keys()) cpids.add(c);
  let byComponent = null;
  return {
    cpid, t0, duration: end, spans, spanById, mergelogs, root: mergelogs.get(cpid) ?? null,
    cpids, services: servicesOf(spans), marks,
    byObject: groupByObject(spans, marks),
    /* Made on first use: most views of a trace never group by component. */
    get byComponent() {
      byComponent ??= groupByComponent(spans, marks);
      return byComponent;
    },
  };
}

/* The key of the row a span's bar is in, grouped by object or by component. */
export function rowKeyOf(span, group) {
  return group === 'component' ? `${span.service}>${span.objectKey}` : span.objectKey;
}

/* The rows to show, depth first, skipping the children of collapsed nodes. */
export function flattenRows(tree, collapsed) {
  const rows = [];
  const stack = [];
  for (let i = tree.roots.length - 1; i >= 0; i--) stack.push([tree.roots[i], 0]);
  while (stack.length) {
    const [node, depth] = stack.pop();
    rows.push({ node, depth });
    if (node.children.length && !collapsed.has(node.key)) {
      for (let i = node.children.length - 1; i >= 0; i--) stack.push([node.children[i], depth + 1]);
    }
  }
  return rows;
}

/*
 * A node's subtree in brief, computed once and cached: spans below and in it, and the
 * merged intervals they cover (what a parent row draws behind its own bars).
 */
export function subtreeSummary(node) {
  if (node.summary) return node.summary;
  const intervals = [];
  let count = 0;
  const stack = [node];
  while (stack.length) {
    const n = stack.pop();
    for (const s of n.spans) intervals.push([s.start, s.end]);
    count += n.spans.length;
    for (const c of n.children) stack.push(c);
  }
  node.summary = { count, coverage: mergeIntervals(intervals) };
  return node.summary;
}

/* Overlapping or touching intervals [a, b] merged into disjoint ones, sorted. */
export function mergeIntervals(intervals) {
  const sorted = [...intervals].sort((x, y) => x[0] - y[0]);
  const out = [];
  for (const [a, b] of sorted) {
    const last = out[out.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/* The keys of a node's ancestors, nearest first (to expand them when selecting). */
export function ancestorKeys(node) {
  const out = [];
  for (let p = node.parent; p; p = p.parent) out.push(p.key);
  return out;
}
