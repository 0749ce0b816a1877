/*
 * The page's first script (issue 28): on a trace's link it asks for the trace before the
 * dashboard's bundle has been evaluated (d3 and the views take tens of milliseconds), so
 * the server's answer is on its way while the rest loads. The bundle's API client takes
 * the answer (api.js, takePrefetch) if it asks for the same path with the same token;
 * else it is simply not used. A bundle of its own (build.mjs), small, with no shared
 * chunk to wait for.
 */
import { apiBase, prefetchPath, TOKEN_KEY } from './api.js';
import { isCpid } from './cpid.js';
import { parseRoute, scopeOf } from './route.js';

function readToken() {
  try {
    return globalThis.sessionStorage?.getItem(TOKEN_KEY) || '';
  } catch {
    return '';
  }
}

const route = parseRoute(window.location.hash);
if (route.view === 'trace' && isCpid(route.cpid)) {
  const base = apiBase(window.location.search);
  const path = prefetchPath(route.cpid, scopeOf(route));
  const token = readToken();
  const headers = { Accept: 'application/json' };
  if (token) headers['X-Ripple-Token'] = token;
  const response = fetch(base ? base + path : `.${path}`, { headers, cache: 'no-store' });
  /* A failure is the bundle's to report, when it takes the answer. */
  response.catch(() => {});
  window.rippleBoot = { path, token, response };
}
