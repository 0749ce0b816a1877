/*
 * The side panel of a selected span: everything the span says (service, name, CPID,
 * times, and every attribute as sent, known ones first), plus what made its CPID.
 */
import { h } from './dom.js';
import { swatch } from './colors.js';
import { formatDuration, formatClock } from './time.js';
import { shortCpid } from './cpid.js';
import { traceHref } from './route.js';
import { objectOf } from './model.js';

const KNOWN = ['kind', 'namespace', 'name', 'uid', 'owner', 'user', 'operation', 'resourceVersion',
  'subresource', 'lastCpid', 'spontaneous'];

/* Fills panel with the span's details; onClose closes it. */
export function renderSpanPanel(panel, span, { model, color, traceCpid, onClose }) {
  const attrs = span.attributes ?? {};
  const ml = model.mergelogs.get(span.cpid);
  const keys = [...KNOWN.filter((k) => k in attrs), ...Object.keys(attrs).filter((k) => !KNOWN.includes(k)).sort()];
  const o = objectOf(attrs, span.service);
  panel.replaceChildren(
    h('div', { class: 'panel-head' },
      h('h2', { class: 'panel-title', id: 'panel-title' }, span.name || '(no name)'),
      h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Close details', title: 'Close (Esc)', onclick: onClose }, '×')),
    h('p', { class: 'panel-sub' }, swatch(color(span.service)), ' ', h('strong', {}, span.service || 'unknown'),
      o.kind ? [' wrote ', h('span', {}, o.label)] : null),
    h('p', { class: 'panel-duration' }, h('span', { class: 'big', id: 'span-duration' }, formatDuration(span.end - span.start)),
      h('span', { class: 'muted' }, ' from cause to admission')),
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
    h('h3', { class: 'panel-section' }, 'Attributes'),
    keys.length
      ? h('dl', { class: 'kv attrs' }, keys.map((k) => row(k, attrs[k] === '' ? h('span', { class: 'muted' }, '(empty)') : attrs[k], 'attr')))
      : h('p', { class: 'muted' }, 'none'),
  );
}

/* A term and its value; the value carries data-field=k (data-attr=k for attributes). */
function row(k, v, kind = 'field') {
  return [h('dt', {}, k), h('dd', { dataset: { [kind]: k } }, v)];
}
