/*
 * The client of ripple-server's HTTP API (docs/api.md): JSON over fetch, the reader
 * token (kept in sessionStorage, sent in an X-Ripple-Token header, never in a URL), and errors
 * a person can act on, each with a kind the views branch on:
 *   malformed  the CPID is not a CPID (checked before asking, or the server's 400)
 *   unknown    the server does not know the CPID (404)
 *   down       no answer at all (network error)
 *   auth       401: a reader token is needed (the token form is shown)
 *   missing    404 on an endpoint: a server older than the dashboard
 *   server     any other error answer
 */
import { isCpid, normalizeCpid } from './cpid.js';

export const TOKEN_KEY = 'ripple.readerToken';
const EXAMPLE = '3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60';

export class ApiError extends Error {
  constructor(kind, message, status = 0) {
    super(message);
    this.name = 'ApiError';
    this.kind = kind;
    this.status = status;
  }
}

/* The message for text that is not a CPID. */
export function notCpidMessage(text) {
  return `"${text}" is not a CPID (a CPID is a non-nil UUID like ${EXAMPLE})`;
}

/* The CPID in canonical form, or an ApiError of kind malformed. */
export function checkCpid(text) {
  if (!isCpid(text)) throw new ApiError('malformed', notCpidMessage(text), 400);
  return normalizeCpid(text);
}

/*
 * Where the API is: the page's own origin in production. For development only, a
 * `?api=http://127.0.0.1:PORT` in the page's query names a ripple-server on loopback
 * (anything else is ignored, so a link cannot send the token elsewhere; the server's CSP
 * forbids other origins anyway).
 */
export function apiBase(search) {
  const want = new URLSearchParams(search ?? '').get('api');
  if (!want) return '';
  try {
    const u = new URL(want);
    const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
    if (loopback && (u.protocol === 'http:' || u.protocol === 'https:')) return u.origin;
  } catch {
    /* not a URL: ignored */
  }
  return '';
}

/* sessionStorage, or a stand-in when it is not there (tests, locked-down browsers). */
function sessionStore(storage) {
  if (storage) return storage;
  try {
    if (globalThis.sessionStorage) return globalThis.sessionStorage;
  } catch {
    /* blocked */
  }
  const m = new Map();
  return { getItem: (k) => m.get(k) ?? null, setItem: (k, v) => m.set(k, v), removeItem: (k) => m.delete(k) };
}

/*
 * The path of a whole trace in one answer (docs/api.md), what boot.js asks for first: the
 * change's own cascade (the server's default), or with scope 'reachable' everything
 * reachable from it.
 */
export function prefetchPath(cpid, scope = 'own') {
  return `/v1/cpids/${normalizeCpid(cpid)}/trace${scope === 'reachable' ? '?scope=reachable' : ''}`;
}

/*
 * The answer the page's boot script started for path (boot.js), once: a promise of the
 * fetch Response, or null when it asked for another path, with another token, or
 * nothing.
 */
export function takePrefetch(path, token, holder = globalThis) {
  const boot = holder?.rippleBoot;
  if (!boot || boot.path !== path || boot.token !== token) return null;
  holder.rippleBoot = null;
  return boot.response;
}

/* Own is every trace answer's default but /related's: asked for as such only when not. */
function scopeQuery(scope) {
  return scope === 'reachable' ? '?scope=reachable' : '';
}

function query(params) {
  const sp = new URLSearchParams();
  for (const [k, v] of Object.entries(params ?? {})) if (v !== undefined && v !== null && v !== '') sp.set(k, v);
  const s = sp.toString();
  return s ? `?${s}` : '';
}

/*
 * An API client: {base, token(), setToken(t), getJson(path), trace(cpid), extras(cpid), ...}.
 * prefetch holds what boot.js started (rippleBoot); tests pass their own or null.
 */
export function createApi({ base = '', fetch: fetchImpl = globalThis.fetch?.bind(globalThis), storage, prefetch = globalThis } = {}) {
  const store = sessionStore(storage);
  const where = base || (globalThis.location ? globalThis.location.origin : 'this address');

  const token = () => store.getItem(TOKEN_KEY) || '';
  const setToken = (t) => (t ? store.setItem(TOKEN_KEY, t) : store.removeItem(TOKEN_KEY));

  /*
   * Paths are relative to the page (./v1/...), so the dashboard also works under a path
   * prefix: the Kubernetes API server's service proxy (.../services/http:ripple-server:http/proxy/).
   * The token goes in X-Ripple-Token, not Authorization: the API server (and `kubectl proxy`)
   * takes Authorization for its own.
   */
  async function getJson(path, { signal, endpoint = path } = {}) {
    const headers = { Accept: 'application/json' };
    if (token()) headers['X-Ripple-Token'] = token();
    let res;
    try {
      res = await (takePrefetch(path, token(), prefetch)
        ?? fetchImpl(base ? base + path : `.${path}`, { headers, signal, cache: 'no-store' }));
    } catch (e) {
      if (e?.name === 'AbortError') throw e;
      throw new ApiError('down', `cannot reach ripple-server at ${where} (${e?.message ?? e}); is it running?`);
    }
    const body = await res.json().catch(() => null);
    if (res.ok) return body;
    throw errorOf(res.status, body, endpoint);
  }

  function errorOf(status, body, endpoint) {
    const said = body?.error ? `: ${body.error}` : '';
    let e;
    if (status === 401) e = new ApiError('auth', `ripple-server wants a reader token${said}`, 401);
    else if (status === 404) e = new ApiError('missing', `ripple-server has no ${endpoint} (is it older than this dashboard?)`, 404);
    else e = new ApiError('server', `ripple-server answered ${status} to ${endpoint}${said}`, status);
    e.field = body?.field ?? '';
    return e;
  }

  const unknownCpid = (id) => new ApiError('unknown',
    `ripple-server does not know CPID ${id} (not traced, not sent yet, or deleted by retention)`, 404);

  /* One of the four walks of a CPID; 404 and 400 become unknown and malformed. */
  async function cpidQuery(cpid, what, signal) {
    const id = checkCpid(cpid);
    try {
      return await getJson(`/v1/cpids/${id}/${what}`, { signal, endpoint: `/v1/cpids/{cpid}/${what.split('?')[0]}` });
    } catch (e) {
      if (e.status === 404) throw unknownCpid(id);
      if (e.status === 400) throw new ApiError('malformed', notCpidMessage(cpid), 400);
      throw e;
    }
  }

  /* Whether the server answered /trace with "no such endpoint" (older than it). */
  let noTraceEndpoint = false;

  /*
   * A trace: {cpid, related, mergelogs, spans, truncated, next} of a CPID and its related
   * CPIDs, in one answer (GET /v1/cpids/{cpid}/trace). With `after` (the `next` of an
   * earlier answer) only the mergelogs and spans stored since come, related in full;
   * `delta` says which it is. A server older than /trace gets the three requests it
   * knows, and always answers in full (next null).
   */
  async function trace(cpid, { signal, after, scope = 'own' } = {}) {
    const id = checkCpid(cpid);
    if (!noTraceEndpoint) {
      const base = prefetchPath(id, scope);
      const path = base + (after ? `${base.includes('?') ? '&' : '?'}after=${encodeURIComponent(after)}` : '');
      try {
        const t = await getJson(path, { signal, endpoint: '/v1/cpids/{cpid}/trace' });
        return { cpid: id, related: t.related ?? [], mergelogs: t.mergelogs ?? [], spans: t.spans ?? [],
          truncated: !!t.truncated, next: t.next ?? null, delta: !!after };
      } catch (e) {
        /* An unknown CPID is a 404 about the cpid; an older server's is about the path. */
        if (e.status === 404 && e.field !== 'cpid') noTraceEndpoint = true;
        else if (e.status === 404) throw unknownCpid(id);
        else if (e.status === 400 && e.field === 'after') return trace(id, { signal, scope });
        else if (e.status === 400) throw new ApiError('malformed', notCpidMessage(cpid), 400);
        else throw e;
      }
    }
    const [rel, mls, sps] = await Promise.all(['related', 'mergelogs', 'spans'].map((w) => cpidQuery(id, w + scopeQuery(scope), signal)));
    return { cpid: id, related: rel.related ?? [], mergelogs: mls.mergelogs ?? [], spans: sps.spans ?? [],
      truncated: !!(rel.truncated || mls.truncated || sps.truncated), next: null, delta: false };
  }

  /*
   * A part of a trace that an older server does not have (details, stalls): its answer,
   * or null for a 404 (the trace itself answered, so the endpoint is what is missing).
   */
  async function optional(cpid, what, signal, scope) {
    const id = checkCpid(cpid);
    const q = scopeQuery(scope);
    try {
      return await getJson(`/v1/cpids/${id}/${what}${q}`, { signal, endpoint: `/v1/cpids/{cpid}/${what}` });
    } catch (e) {
      if (e.status === 404) return null;
      throw e;
    }
  }

  /*
   * What a trace's page shows beside its spans: {details, stalls, error, failed}, of the
   * trace's scope ('own' or 'reachable').
   * details and stalls are the answers, or null when the server has not got them (older)
   * or failed: then failed names which ('details', 'stalls') and error says why (the
   * trace stands without them). Rejects only when aborted.
   */
  async function extras(cpid, { signal, scope = 'own' } = {}) {
    const id = checkCpid(cpid);
    const settle = (p) => p.then((v) => ({ v }), (e) => {
      if (e?.name === 'AbortError') throw e;
      return { v: null, e };
    });
    const [d, st] = await Promise.all([settle(optional(id, 'details', signal, scope)), settle(optional(id, 'stalls', signal, scope))]);
    const failed = [d.e ? 'details' : null, st.e ? 'stalls' : null].filter(Boolean);
    return { details: d.v, stalls: st.v, error: d.e ?? st.e ?? null, failed };
  }

  /* An object's field fights (GET /v1/fights?uid=), or null from a server older than it. */
  async function fights(uid, { signal } = {}) {
    try {
      return await getJson(`/v1/fights?limit=20&uid=${encodeURIComponent(uid)}`, { signal, endpoint: '/v1/fights' });
    } catch (e) {
      if (e.status === 404) return null;
      throw e;
    }
  }

  /* Every stalled write now, or null from a server older than GET /v1/stalls. */
  async function stalls({ signal } = {}) {
    try {
      return await getJson('/v1/stalls', { signal, endpoint: '/v1/stalls' });
    } catch (e) {
      if (e.status === 404) return null;
      throw e;
    }
  }

  /*
   * The critical path of a CPID's cascade (GET /v1/cpids/{cpid}/critical-path), or null
   * from a server older than it: the trace stands without it.
   */
  async function criticalPath(cpid, { signal, scope = 'own' } = {}) {
    return optional(cpid, 'critical-path', signal, scope);
  }

  /*
   * Two cascades compared hop by hop (GET /v1/compare): 400 and a 404 about a CPID become
   * malformed and unknown, any other 404 missing (a server older than it).
   */
  async function compare(a, b, { signal, scope = 'own' } = {}) {
    const ia = checkCpid(a);
    const ib = checkCpid(b);
    const q = query({ a: ia, b: ib, scope: scope === 'reachable' ? scope : undefined });
    try {
      return await getJson(`/v1/compare${q}`, { signal, endpoint: '/v1/compare' });
    } catch (e) {
      /* The server's 404 says "cpid" for either: which one, it does not say. */
      if (e.status === 404 && e.field === 'cpid') {
        throw new ApiError('unknown', `ripple-server does not know CPID ${ia} or ${ib} (not traced, not sent yet, or deleted by retention)`, 404);
      }
      if (e.status === 400) throw new ApiError('malformed', e.message, 400);
      throw e;
    }
  }

  return {
    base,
    criticalPath,
    compare,
    token,
    setToken,
    getJson,
    trace,
    extras,
    stalls,
    fights,
    details: (cpid, opts = {}) => optional(cpid, 'details', opts.signal),
    cpidStalls: (cpid, opts = {}) => optional(cpid, 'stalls', opts.signal),
    origins: (cpid, opts = {}) => cpidQuery(cpid, 'origins', opts.signal),
    /* Hops across many cascades (GET /v1/hops); a 404: a server older than it. */
    hops: (params, opts = {}) => getJson(`/v1/hops${query(params)}`, { ...opts, endpoint: '/v1/hops' }),
    roots: (params, opts = {}) => getJson(`/v1/roots${query(params)}`, { ...opts, endpoint: '/v1/roots' }),
    objects: (params, opts = {}) => getJson(`/v1/objects${query(params)}`, { ...opts, endpoint: '/v1/objects' }),
  };
}
