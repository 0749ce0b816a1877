/*
 * Details of a trace (GET /v1/cpids/{cpid}/details, docs/api.md "Details of a cascade"):
 * what each write changed (a diff, or a snapshot for a create or delete), its audit
 * event (who exactly, refused or not), Kubernetes Events about the cascade's objects,
 * and the facts the server could join to no write. Pure (no DOM): turned here into the
 * rows the span panel and the Events tab show, so it is unit-tested.
 *
 * A server older than these endpoints answers 404; the dashboard then has no details
 * (null) and shows nothing of them.
 */
import { parseTime, formatClock } from './time.js';
import { objectLabel } from './model.js';

/* Values longer than this (as JSON) are shown pretty-printed on lines of their own. */
const INLINE_MAX = 60;

/*
 * The details answer indexed for the views: {bySpan (Map span_id -> {change, audit}),
 * events, changes, audit (each sorted by time), truncated}; null for no answer.
 */
export function indexDetails(details) {
  if (!details || typeof details !== 'object') return null;
  const bySpan = new Map();
  for (const w of details.writes ?? []) {
    if (!w?.span_id || bySpan.has(w.span_id)) continue;
    bySpan.set(w.span_id, { change: w.change ?? null, audit: w.audit ?? null });
  }
  return { bySpan, events: byTime(details.events), changes: byTime(details.changes), audit: byTime(details.audit),
    truncated: !!details.truncated };
}

/* Records by their time (oldest first); unparsable times last, in the server's order. */
function byTime(list) {
  const out = (list ?? []).filter((x) => x && typeof x === 'object').map((x, i) => ({ x, i, t: parseTime(x.time) }));
  out.sort((a, b) => (Number.isNaN(a.t) ? 1 : 0) - (Number.isNaN(b.t) ? 1 : 0) || (a.t - b.t) || a.i - b.i);
  return out.map((e) => e.x);
}

/* What the details know of one span: {change, audit} or null. */
export function writeOf(index, spanId) {
  return (index && spanId && index.bySpan.get(spanId)) || null;
}

/* How many facts the Events tab lists (for its count). */
export function eventsTabCount(index) {
  return index ? index.events.length + index.audit.length + index.changes.length : 0;
}

/* "Kind ns/name" of a record's object (an Event's involved object, an audit's objectRef). */
export function recordObject(o) {
  if (!o || typeof o !== 'object') return '';
  const kind = o.kind || o.resource || '';
  const name = o.name || (o.generateName ? `${o.generateName}…` : '');
  if (!kind && !name) return '';
  return objectLabel(kind || '?', o.namespace ?? '', name || '(no name)');
}

/*
 * A JSON Pointer (RFC 6901) as people read a field: /spec/template/spec/containers/0/image
 * is spec.template.spec.containers[0].image, a key with dots or slashes is quoted:
 * metadata.annotations["deployment.kubernetes.io/revision"].
 */
export function pointerText(path) {
  if (typeof path !== 'string' || path === '') return '(the whole object)';
  if (path[0] !== '/') return path;
  let out = '';
  for (const raw of path.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^(0|[1-9]\d*)$/.test(key)) out += `[${key}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(key)) out += out ? `.${key}` : key;
    else out += `[${JSON.stringify(key)}]`;
  }
  return out;
}

/*
 * One side of a diff entry: {absent} when the field was not there (added or removed),
 * else its JSON text, one line when short, pretty-printed (multiline) when long.
 */
export function formatValue(v) {
  if (v === undefined) return { absent: true, text: '' };
  const compact = JSON.stringify(v) ?? String(v);
  if (v !== null && typeof v === 'object' && compact.length > INLINE_MAX) {
    return { absent: false, text: JSON.stringify(v, null, 2), multiline: true };
  }
  return { absent: false, text: compact, multiline: false };
}

/*
 * The rows of a change's diff: {path (the pointer), label, op, redacted, old, new}, op
 * one of add, remove, replace, redacted. Entries without a path are skipped.
 */
export function diffRows(change) {
  const out = [];
  for (const e of change?.diff ?? []) {
    if (!e || typeof e.path !== 'string') continue;
    const label = pointerText(e.path);
    if (e.redacted) {
      out.push({ path: e.path, label, op: 'redacted', redacted: true, old: null, new: null });
      continue;
    }
    const hasOld = 'old' in e;
    const hasNew = 'new' in e;
    const op = hasOld && hasNew ? 'replace' : hasNew ? 'add' : hasOld ? 'remove' : 'replace';
    out.push({ path: e.path, label, op, redacted: false, old: formatValue(hasOld ? e.old : undefined),
      new: formatValue(hasNew ? e.new : undefined) });
  }
  return out;
}

/*
 * A change as the panel shows it: {op, time, resourceVersion, previousResourceVersion,
 * cpid, object, truncated, rows (diffRows), snapshot (pretty JSON text, or null)}.
 */
export function changeView(change) {
  if (!change || typeof change !== 'object') return null;
  const snap = change.snapshot && typeof change.snapshot === 'object' ? JSON.stringify(change.snapshot, null, 2) : null;
  return {
    op: change.op || 'update',
    time: formatClock(parseTime(change.time)),
    resourceVersion: change.resourceVersion ?? '',
    previousResourceVersion: change.previousResourceVersion ?? '',
    cpid: change.cpid ?? '',
    object: recordObject(change.object),
    truncated: !!change.truncated,
    rows: diffRows(change),
    snapshot: snap,
  };
}

/*
 * An audit event as the panel shows it: who (user, groups, impersonated user, user
 * agent, source IP), the answer (code, refused when 400 or more, status, reason,
 * message), and what (verb, object, the version written, audit id, time).
 */
export function auditView(audit) {
  if (!audit || typeof audit !== 'object') return null;
  const code = Number.isInteger(audit.code) ? audit.code : Number.isInteger(audit.responseStatus?.code) ? audit.responseStatus.code : null;
  return {
    user: typeof audit.user === 'string' ? audit.user : audit.user?.username ?? '',
    groups: Array.isArray(audit.groups) ? audit.groups.filter((g) => typeof g === 'string') : [],
    impersonatedUser: audit.impersonatedUser ?? '',
    userAgent: audit.userAgent ?? '',
    sourceIP: audit.sourceIP ?? '',
    verb: audit.verb ?? '',
    code,
    refused: code !== null && code >= 400,
    status: audit.status ?? '',
    reason: audit.reason ?? '',
    message: audit.message ?? '',
    object: recordObject(audit.object),
    writtenResourceVersion: audit.writtenResourceVersion ?? '',
    auditID: audit.auditID ?? '',
    time: formatClock(parseTime(audit.time)),
  };
}

/*
 * Events as the Events tab and the stall banner list them: {time, type, warning,
 * reason, object, message, count, source}.
 */
export function eventRows(events) {
  return (events ?? []).filter((e) => e && typeof e === 'object').map((e) => ({
    time: formatClock(parseTime(e.time)),
    type: e.eventType ?? '',
    warning: e.eventType === 'Warning',
    reason: e.reason ?? '',
    object: recordObject(e.object),
    message: e.message ?? '',
    count: Number.isInteger(e.count) ? e.count : null,
    source: e.source ?? '',
  }));
}

/*
 * The Events about the object a span wrote: by uid when both have one, else by kind,
 * namespace and name. A generateName create (no name yet) matches none.
 */
export function eventsOfSpan(index, span) {
  if (!index) return [];
  const a = span?.attributes ?? {};
  return index.events.filter((e) => {
    const o = e.object ?? {};
    if (a.uid && o.uid) return a.uid === o.uid;
    return !!a.name && o.kind === a.kind && (o.namespace ?? '') === (a.namespace ?? '') && o.name === a.name;
  });
}

/* What changes when details grow: counts, and the newest Event's count and time. */
export function detailsSignature(details) {
  if (!details) return 'none';
  let latest = '';
  let counts = 0;
  for (const e of details.events ?? []) {
    if ((e?.time ?? '') > latest) latest = e.time;
    counts += Number.isInteger(e?.count) ? e.count : 1;
  }
  return `${details.writes?.length ?? 0}:${details.changes?.length ?? 0}:${details.audit?.length ?? 0}:${details.events?.length ?? 0}:${counts}:${latest}`;
}
