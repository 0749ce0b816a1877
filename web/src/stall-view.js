/*
 * The banner over a trace with stalled writes (stalls.js has the logic): "N stalled
 * writes", each with what it waits for, how long, how soon that usually comes, a link
 * that selects it in the waterfall, and the Events about its object (FailedScheduling
 * and the like, Warnings marked). Open at first when there are few, else one line that
 * says what kinds of writes wait for what; opened or closed, it stays so across live
 * updates.
 */
import { h } from './dom.js';
import { traceHref } from './route.js';
import { shortCpid } from './cpid.js';
import { eventsList } from './details-view.js';

/* Up to this many stalls the banner starts open; more start as one line. */
const OPEN_MAX = 3;

/* Fills box with the banner of stallBanner(...) (empties it for null). */
export function renderStallBanner(box, banner, { traceCpid, group }) {
  const prev = box.querySelector('details.stall-banner');
  const open = prev ? prev.open : banner?.count <= OPEN_MAX;
  if (!banner) {
    box.replaceChildren();
    box.hidden = true;
    return;
  }
  box.hidden = false;
  box.replaceChildren(h('details', { class: 'stall-banner', id: 'stall-banner', open, dataset: { count: String(banner.count) } },
    h('summary', {}, h('span', { class: 'stall-icon', 'aria-hidden': 'true' }, '!'), ' ',
      h('strong', { id: 'stall-count' }, banner.title),
      h('span', { class: 'muted stall-kinds' }, '— ', kindsText(banner))),
    h('ol', { class: 'stall-list' }, banner.items.map((it) => stallItem(it, traceCpid, group)))));
}

/* "3 × replicaset-controller create pods waiting for default-scheduler create pods/binding, ...". */
function kindsText(banner) {
  if (banner.count === 1) return 'waiting longer than usual for its next hop';
  const shown = banner.kinds.slice(0, 2).map((k) => `${k.count} × ${k.write} waiting for ${k.expect}`);
  const rest = banner.kinds.length - shown.length;
  return shown.join(', ') + (rest > 0 ? `, ${rest} other kind${rest === 1 ? '' : 's'}` : '');
}

function stallItem(it, traceCpid, group) {
  const href = it.inTrace
    ? traceHref(traceCpid, 'waterfall', { group: group === 'component' ? group : undefined, span: it.spanId })
    : traceHref(it.cpid, 'waterfall', { span: it.spanId });
  return h('li', { class: 'stall-item', dataset: { span: it.spanId, cpid: it.cpid }, title: it.tooltip },
    h('p', { class: 'stall-what' },
      h('a', { href, class: 'stall-link' }, h('code', {}, it.write)),
      it.object ? [' on ', h('strong', {}, it.object)] : null,
      it.owner ? h('span', { class: 'muted' }, ` (owner ${it.owner})`) : null,
      !it.inTrace && it.cpid ? h('span', { class: 'muted' }, ` · CPID ${shortCpid(it.cpid)}`) : null),
    h('p', { class: 'stall-why' }, 'waiting ', h('strong', {}, it.waiting), ' for ', h('code', {}, it.expect),
      ` (usually within ${it.p99}${it.samples !== null ? `, learned from ${it.samples} writes` : ''}) · admitted ${it.admitted}`,
      it.events.length ? null : h('span', { class: 'muted' }, ' · no Events about its object')),
    it.events.length ? eventsList(it.events) : null);
}
