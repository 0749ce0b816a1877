/*
 * Details in the page (details.js has the logic): a write's change (the diff table, or
 * the snapshot of a create or delete as collapsible JSON) and its audit event for the
 * span panel; tables of Events, of audit events no span names, and of changes joined
 * to no write, for the Events tab. Text only, never markup from the server.
 */
import { h } from './dom.js';
import { changeView, auditView, eventRows, recordObject } from './details.js';
import { formatClock, parseTime } from './time.js';
import { shortCpid } from './cpid.js';
import { traceHref } from './route.js';

/* The "Changes" section of a span: a diff table, a snapshot, or a note that none is known. */
export function changeSection(change) {
  return [h('h3', { class: 'panel-section' }, 'Changes'), changeEl(change, { id: 'span-change' })];
}

/* A change: its operation and versions over its diff or snapshot. */
export function changeEl(change, { id } = {}) {
  const v = changeView(change);
  if (!v) return h('p', { class: 'muted', id }, 'No change recorded for this write (the watch agent did not see it, or it could not be joined).');
  return changeBody(v, id);
}

function changeBody(v, id) {
  const versions = v.previousResourceVersion || v.resourceVersion
    ? `resourceVersion ${v.previousResourceVersion ? v.previousResourceVersion + ' → ' : ''}${v.resourceVersion || '?'}`
    : null;
  return h('div', { class: 'change', id, dataset: { op: v.op } },
    h('p', { class: 'change-head' }, h('span', { class: `op op-${v.op}` }, v.op), ' ',
      versions ? h('span', { class: 'muted' }, versions) : null,
      v.time !== '–' ? h('span', { class: 'muted' }, ` · seen ${v.time}`) : null),
    v.rows.length ? diffTable(v.rows) : null,
    !v.rows.length && !v.snapshot ? h('p', { class: 'muted' }, v.op === 'update' ? 'No field changed that is kept.' : 'No snapshot kept.') : null,
    v.snapshot ? snapshotEl(v) : null,
    v.truncated ? h('p', { class: 'notice small' }, 'Cut to its size limit: some fields are missing.') : null);
}

/*
 * The diff: path, old, new; redacted entries say so instead of values. Each entry is a
 * tbody of two lines, the path over its old and new values (the panel is narrow).
 */
export function diffTable(rows) {
  return h('table', { class: 'diff' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Old'), h('th', { scope: 'col' }, 'New'))),
    rows.map((r) => h('tbody', { class: `diff-${r.op}`, dataset: { path: r.path } },
      h('tr', {}, h('th', { class: 'diff-path', scope: 'rowgroup', colspan: '2', title: r.path }, h('code', {}, r.label))),
      h('tr', {}, r.redacted
        ? h('td', { class: 'redacted', colspan: '2' }, '(redacted)')
        : [valueCell(r.old, 'diff-old'), valueCell(r.new, 'diff-new')]))));
}

function valueCell(v, cls) {
  if (v.absent) return h('td', { class: `${cls} absent`, title: cls === 'diff-old' ? 'not there before' : 'removed' }, '—');
  return h('td', { class: cls }, v.multiline ? h('pre', { class: 'json' }, v.text) : h('code', {}, v.text));
}

function snapshotEl(v) {
  const what = v.op === 'delete' ? 'the object as it was deleted' : v.op === 'create' ? 'the object as created' : 'the object';
  return h('details', { class: 'snapshot' },
    h('summary', {}, `Snapshot: ${what}`),
    h('pre', { class: 'json' }, v.snapshot));
}

/* The "Audit" section of a span: who, and what kube-apiserver answered. */
export function auditSection(audit) {
  const a = auditView(audit);
  if (!a) return [h('h3', { class: 'panel-section' }, 'Audit'), h('p', { class: 'muted', id: 'span-audit' }, 'No audit event names this write.')];
  const kv = (k, v, field) => (v === '' || v === null || v === undefined ? null : [h('dt', {}, k), h('dd', { dataset: { audit: field } }, v)]);
  return [h('h3', { class: 'panel-section' }, 'Audit'),
    h('dl', { class: 'kv audit', id: 'span-audit' },
      kv('user', a.user, 'user'),
      a.groups.length ? kv('groups', h('span', {}, a.groups.map((g, i) => [i ? ', ' : '', h('code', {}, g)])), 'groups') : null,
      kv('impersonated', a.impersonatedUser, 'impersonatedUser'),
      kv('user agent', a.userAgent, 'userAgent'),
      kv('source IP', a.sourceIP, 'sourceIP'),
      kv('verb', a.verb, 'verb'),
      kv('response', codeEl(a), 'code'),
      kv('status', a.status, 'status'),
      kv('reason', a.reason, 'reason'),
      kv('message', a.message, 'message'),
      kv('wrote version', a.writtenResourceVersion, 'writtenResourceVersion'),
      kv('audit id', a.auditID ? h('code', {}, a.auditID) : '', 'auditID'),
      kv('time', a.time === '–' ? '' : a.time, 'time'))];
}

/* The response code, with "refused" when it is 400 or more. */
function codeEl(a) {
  if (a.code === null) return '';
  return h('span', {}, h('code', {}, String(a.code)), a.refused ? [' ', h('span', { class: 'badge refused', title: 'kube-apiserver refused this write' }, 'refused')] : null);
}

/* Events (eventRows) as a table: time, type (Warnings highlighted), reason, object, message, count. */
export function eventsTable(rows, { id, object = true } = {}) {
  return h('table', { class: 'list events', id },
    h('thead', {}, h('tr', {}, ['Time (UTC)', 'Type', 'Reason', object ? 'Object' : null, 'Message', 'Count']
      .filter(Boolean).map((t) => h('th', { scope: 'col', class: t === 'Count' ? 'num' : null }, t)))),
    h('tbody', {}, rows.map((e) => h('tr', { class: e.warning ? 'warning' : null, dataset: { reason: e.reason, type: e.type } },
      h('td', {}, e.time),
      h('td', {}, e.warning ? h('span', { class: 'badge warning' }, e.type) : e.type || h('span', { class: 'muted' }, '–')),
      h('td', {}, h('strong', {}, e.reason || '–')),
      object ? h('td', {}, e.object || h('span', { class: 'muted' }, '–')) : null,
      h('td', { class: 'message' }, e.message, e.source ? h('span', { class: 'muted' }, ` (${e.source})`) : null),
      h('td', { class: 'num' }, e.count === null ? '' : String(e.count))))));
}

/* Events (eventRows) in a narrow column (the span panel, the stall banner): one item each. */
export function eventsList(rows, { id } = {}) {
  return h('ul', { class: 'event-list', id }, rows.map((e) => h('li', { class: e.warning ? 'warning' : null, dataset: { reason: e.reason } },
    h('p', { class: 'event-head' }, e.warning ? h('span', { class: 'badge warning' }, e.type) : h('span', { class: 'muted' }, e.type), ' ',
      h('strong', {}, e.reason || '–'), e.count !== null && e.count > 1 ? h('span', { class: 'muted' }, ` ×${e.count}`) : null,
      h('span', { class: 'muted event-time' }, ` ${e.time}`)),
    e.message ? h('p', { class: 'event-message' }, e.message) : null)));
}

/* Audit events no span names: by object and time, with who and the answer. */
function auditTable(list) {
  return h('table', { class: 'list audit-list', id: 'unattributed-audit' },
    h('thead', {}, h('tr', {}, ['Time (UTC)', 'User', 'Verb', 'Object', 'Response', 'Reason', 'User agent']
      .map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, list.map((raw) => {
      const a = auditView(raw);
      return h('tr', { class: a.refused ? 'refused' : null, dataset: { audit: a.auditID } },
        h('td', {}, a.time),
        h('td', {}, a.user || h('span', { class: 'muted' }, '–'), a.impersonatedUser ? h('span', { class: 'muted' }, ` as ${a.impersonatedUser}`) : null),
        h('td', {}, a.verb),
        h('td', {}, a.object || h('span', { class: 'muted' }, '–')),
        h('td', {}, codeEl(a)),
        h('td', { class: 'message' }, [a.reason, a.message].filter(Boolean).join(': ')),
        h('td', { class: 'agent' }, a.userAgent));
    })));
}

/* Changes joined to no write: each with its diff or snapshot behind a disclosure. */
function changesList(list, traceCpid) {
  return h('ul', { class: 'change-list', id: 'unattributed-changes' }, list.map((c) => {
    const n = (c.diff ?? []).length;
    const what = n ? `${n} field${n === 1 ? '' : 's'}` : c.snapshot ? 'snapshot' : 'nothing kept';
    return h('li', { dataset: { op: c.op ?? '' } },
      h('details', {},
        h('summary', {}, formatClock(parseTime(c.time)), ' ', h('span', { class: `op op-${c.op}` }, c.op ?? '?'), ' ',
          recordObject(c.object) || '?', ' ', h('span', { class: 'muted' }, `(${what})`),
          c.cpid ? [' ', h('a', { href: traceHref(traceCpid, 'graph', { select: c.cpid }), title: c.cpid }, h('code', {}, shortCpid(c.cpid)))] : null),
        changeEl(c)));
  }));
}

/*
 * The Events tab: Events about the cascade's objects, then what the server could join
 * to no write (audit events without a span, changes of the cascade's objects).
 * opts: {details (indexDetails, or null), state ('loading', 'none', 'ready'), error,
 * traceCpid}. Returns {update(opts), destroy()}.
 */
export function createEventsView(container, opts) {
  let st = opts;
  /* One scroll box for the view's life: live updates keep where the reader is. */
  const box = h('div', { class: 'events-view', id: 'events-view' });
  container.replaceChildren(box);

  function render() {
    const d = st.details;
    if (!d) {
      const text = st.state === 'loading' ? 'Loading details…'
        : st.error ? `ripple-server gave no details for this trace: ${st.error.message ?? st.error}.`
          : 'ripple-server has no details for this trace (it is older than this dashboard): Events and audit need its /v1/cpids/{cpid}/details.';
      box.replaceChildren(h('p', { class: 'empty' }, text));
      return;
    }
    box.replaceChildren(...[
      d.truncated ? h('p', { class: 'notice' }, 'ripple-server cut these details short (its query limit).') : null,
      h('section', { class: 'card', 'aria-labelledby': 'events-title' },
        h('h2', { id: 'events-title' }, 'Events ', h('span', { class: 'muted' }, `(${d.events.length})`)),
        h('p', { class: 'muted intro' }, 'Kubernetes Events about the objects the cascade wrote, from a minute before its first write to ten minutes after its last.'),
        d.events.length ? eventsTable(eventRows(d.events), { id: 'events' }) : h('p', { class: 'empty' }, 'No Events.')),
      h('section', { class: 'card', 'aria-labelledby': 'unattributed-title' },
        h('h2', { id: 'unattributed-title' }, 'Unattributed audit ', h('span', { class: 'muted' }, `(${d.audit.length + d.changes.length})`)),
        h('h3', {}, `Writes the webhook never saw (${d.audit.length})`),
        h('p', { class: 'muted intro' }, 'Audit events about the cascade\'s objects that name no span: refused before admission, in a namespace the webhook skips, or admitted while it failed open.'),
        d.audit.length ? auditTable(d.audit) : h('p', { class: 'empty' }, 'None.'),
        h('h3', {}, `Changes joined to no write (${d.changes.length})`),
        h('p', { class: 'muted intro' }, 'Changes of objects that carry one of the cascade\'s CPIDs but match none of its spans (such as a Pod created with generateName).'),
        d.changes.length ? changesList(d.changes, st.traceCpid) : h('p', { class: 'empty' }, 'None.')),
    ].filter(Boolean));
  }

  /* The disclosures of the changes list, opened or not, by position. */
  const opened = () => [...box.querySelectorAll('#unattributed-changes > li > details')].map((e) => e.open);

  render();
  return {
    update(next) {
      const was = opened();
      st = { ...st, ...next };
      render();
      box.querySelectorAll('#unattributed-changes > li > details').forEach((e, i) => {
        if (was[i]) e.open = true;
      });
    },
    destroy() {},
  };
}
