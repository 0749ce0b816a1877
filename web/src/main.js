/*
 * The dashboard's entry point: reads the hash route, mounts the view it names (Find, a
 * trace, two cascades compared, or hops across many cascades), and on hash changes either tells the mounted view what changed (same view,
 * other tab or selection) or mounts another one.
 */
import './style.css';
import { createApi, apiBase } from './api.js';
import { parseRoute, scopeOf } from './route.js';
import { h, showError } from './dom.js';
import { mountFind } from './find.js';
import { mountTrace } from './trace.js';
import { mountCompare } from './compare.js';
import { mountHopStats } from './hopstats-view.js';
import { hopStatsQuery } from './hopstats.js';

const api = createApi({ base: apiBase(window.location.search) });
const app = document.getElementById('app');
let current = null;

function viewKey(route) {
  /* Another scope is another trace: fetched anew. */
  if (route.view === 'trace') return `trace:${route.cpid}:${scopeOf(route)}`;
  if (route.view === 'find') return `find:${JSON.stringify(route.params)}`;
  if (route.view === 'compare') return `compare:${route.a}:${route.b}:${scopeOf(route)}`;
  if (route.view === 'hopstats') return `hopstats:${JSON.stringify(hopStatsQuery(route.params))}`;
  return `other:${route.path}`;
}

function render() {
  const route = parseRoute(window.location.hash);
  if (current && current.key === viewKey(route) && current.update) {
    current.update(route);
    return;
  }
  current?.destroy();
  current = null;
  markNav(route);
  const ctx = { api, retry: () => remount() };
  if (route.view === 'find') current = mountFind(app, route, ctx);
  else if (route.view === 'trace') current = mountTrace(app, route, ctx);
  else if (route.view === 'compare') current = mountCompare(app, route, ctx);
  else if (route.view === 'hopstats') current = mountHopStats(app, route, ctx);
  else {
    showError(app, `There is no page "#${route.path}" in the dashboard.`, { title: 'No such page',
      actions: [h('a', { href: '#/', class: 'button' }, 'Find a change')] });
    current = { key: viewKey(route), destroy() {} };
  }
}

function remount() {
  current?.destroy();
  current = null;
  render();
}

function markNav(route) {
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === route.view) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const note = document.getElementById('api-note');
  if (note) note.textContent = api.base ? `API: ${api.base} (development)` : '';
}

window.addEventListener('hashchange', render);
render();
