/*
 * The side panel of a selected span: everything the span says (service, name, CPID,
 * times, and every attribute as sent, known ones first), plus what made its CPID; and,
 * when ripple-server has details of the trace, what the write changed, its audit event
 * (a refused write says so at the top) and the Events about its object; when it is
 * stalled, what it is waiting for; and the fights over its object's fields (two writers
 * setting one back and forth), when the server has flagged any.
 */
import { h } from './dom.js';
import { swatch } from './colors.js';
import { formatDuration, formatClock } from './time.js';
import { shortCpid } from './cpid.js';
import { traceHref } from './route.js';
import { objectOf } from './model.js';
import { writeOf, eventsOfSpan, eventRows, auditView } from './details.js';
import { stallTooltip, expectText } from './stalls.js';
import { changeSection, auditSection, eventsList } from './details-view.js';
import { fightText } from './fights.js';

const KNOWN = ['kind', 'namespace', 'name', 'uid', 'owner', 'user', 'operation', 'resourceVersion',
  'subresource', 'lastCpid', 'spontaneous'];

/*
 * Fills panel with the span's details; onClose closes it. details is the trace's
 * indexDetails (null: the server has none, and no section of them is shown), stall the
 * span's stall or null, fights the fightRows of its object (null or []: no section).
 */
export function renderSpanPanel(panel, span, { model, color, traceCpid, onClose, details = null, stall = null, fights = null }) {
  const attrs = span.attributes ?? {};
  const ml = model.mergelogs.get(span.cpid);
  const keys = [...KNOWN.filter((k) => k in attrs), ...Object.keys(attrs).filter((k) => !KNOWN.includes(k)).sort()];
  const o = objectOf(attrs, span.service);
  /* Live updates redraw the panel: an opened snapshot stays open. */
  const snapshotOpen = panel.dataset.span === span.id && !!panel.querySelector('details.snapshot[open]');
  panel.dataset.span = span.id;
  panel.replaceChildren(...[
    h('div', { class: 'panel-head' },
      h('h2', { class: 'panel-title', id: 'panel-title' }, span.name || '(no name)'),
      h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Close details', title: 'Close (Esc)', onclick: onClose }, '×')),
    h('p', { class: 'panel-sub' }, swatch(color(span.service)), ' ', h('strong', {}, span.service || 'unknown'),
      o.kind ? [' wrote ', h('span', {}, o.label)] : null),
    h('p', { class: 'panel-duration' }, h('span', { class: 'big', id: 'span-duration' }, formatDuration(span.end - span.start)),
      h('span', { class: 'muted' }, ' from cause to admission')),
    stall ? stallNote(stall) : null,
    details ? refusedNote(writeOf(details, span.id)?.audit) : null,
    h('dl', { class: 'kv' },
      row('service', span.service),
      row('name', span.name),
      row('cpid', h('span', {}, h('code', {}, span.cpid), ' ',
        h('a', { href: traceHref(traceCpid, 'graph', { select: span.cpid }) }, 'in graph'))),
      row('span_id', h('code', {}, span.id)),
      span.raw.parent_id ? row('parent_id', h('code', {}, span.raw.parent_id)) : null,
      row('start', h('code', {}, span.raw.start)),
      row('end', h('code', {}, span.raw.end)),
      row('duration', formatDuration(span.end - span.start)),
      row('after t=0', `${formatDuration(span.start)} → ${formatDuration(span.end)}`),
      ml ? row('cpid made by', `${ml.component || 'unknown'} at ${formatClock(Date.parse(ml.time))}`) : null,
      ml && ml.sources?.length ? row('merged from', h('span', {}, ml.sources.map((c, i) => [i ? ', ' : '',
        h('a', { href: traceHref(traceCpid, 'graph', { select: c }) }, h('code', {}, shortCpid(c)))]))) : null),
    details ? detailSections(details, span) : null,
    fights?.length ? fightsSection(fights) : null,
    h('h3', { class: 'panel-section' }, 'Attributes'),
    keys.length
      ? h('dl', { class: 'kv attrs' }, keys.map((k) => row(k, attrs[k] === '' ? h('span', { class: 'muted' }, '(empty)') : attrs[k], 'attr')))
      : h('p', { class: 'muted' }, 'none'),
  ].flat(Infinity).filter(Boolean));
  if (snapshotOpen) panel.querySelector('details.snapshot')?.setAttribute('open', '');
}

/* What a stalled write waits for, at the top of its panel. */
function stallNote(stall) {
  return h('div', { class: 'stall-note', id: 'span-stall', title: stallTooltip(stall) },
    h('p', {}, h('span', { class: 'stall-icon', 'aria-hidden': 'true' }, '!'), ' ', h('strong', {}, 'Stalled'),
      `: waiting ${formatDuration((stall.waiting_seconds ?? NaN) * 1000)} for `, h('code', {}, expectText(stall.expect)),
      ` (usually within ${formatDuration((stall.p99_seconds ?? NaN) * 1000)}).`));
}

/* A write kube-apiserver refused (its audit event's code is 400 or more), at the top. */
function refusedNote(audit) {
  const a = auditView(audit);
  if (!a?.refused) return null;
  return h('p', { class: 'refused-note', id: 'span-refused' }, h('span', { class: 'badge refused' }, 'refused'), ' ',
    h('code', {}, String(a.code)), a.reason ? ` ${a.reason}` : '', a.message ? h('span', { class: 'muted' }, `: ${a.message}`) : null);
}

/* Changes, Audit and Events of the span, from the trace's details. */
function detailSections(details, span) {
  const w = writeOf(details, span.id);
  const events = eventRows(eventsOfSpan(details, span));
  return [changeSection(w?.change ?? null), auditSection(w?.audit ?? null),
    events.length ? [h('h3', { class: 'panel-section' }, `Events about its object (${events.length})`), eventsList(events, { id: 'span-events' })] : null];
}

/* Fights over the object's fields: each field, its two writers, and their writes' CPIDs. */
function fightsSection(rows) {
  return [h('h3', { class: 'panel-section' }, `Field fights over its object (${rows.length})`),
    h('ul', { class: 'fights', id: 'span-fights' }, rows.map((r) => h('li', { class: 'fight', dataset: { path: r.path } },
      h('p', {}, h('span', { class: 'badge refused' }, 'fight'), ' ', h('code', { title: r.path }, fightText(r)),
        h('span', { class: 'muted' }, ` · ${r.first} – ${r.last}`)),
      h('ol', { class: 'fight-writes' }, r.writes.map((w) => h('li', {}, h('span', { class: 'muted' }, `${w.time} `), w.writer, ' ',
        w.cpid ? h('a', { href: traceHref(w.cpid) }, h('code', {}, shortCpid(w.cpid))) : null))))))];
}

/* A term and its value; the value carries data-field=k (data-attr=k for attributes). */
function row(k, v, kind = 'field') {
  return [h('dt', {}, k), h('dd', { dataset: { [kind]: k } }, v)];
}
