import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createApi, apiBase, checkCpid, prefetchPath, takePrefetch } from '../../src/api.js';

const C = '3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60';

function fakeFetch(answer) {
  const calls = [];
  const fn = async (url, init) => {
    calls.push({ url, init });
    return answer(url, init);
  };
  return { fn, calls };
}

const json = (status, body) => ({ ok: status < 300, status, json: async () => body });
const store = () => {
  const m = new Map();
  return { getItem: (k) => m.get(k) ?? null, setItem: (k, v) => m.set(k, v), removeItem: (k) => m.delete(k) };
};

test('a malformed CPID is refused before asking the server', async () => {
  const f = fakeFetch(() => json(200, {}));
  const api = createApi({ fetch: f.fn, storage: store() });
  await assert.rejects(api.trace('not-a-cpid'), (e) => e.kind === 'malformed' && e.message.startsWith('"not-a-cpid" is not a CPID'));
  assert.throws(() => checkCpid('00000000-0000-0000-0000-000000000000'), /is not a CPID/);
  assert.equal(f.calls.length, 0);
});

test('a trace is one answer: related, mergelogs and spans of the CPID, and a cursor', async () => {
  const f = fakeFetch(() => json(200, { related: [C], mergelogs: [{ cpid: C }], spans: [], truncated: true, next: '1.0' }));
  const api = createApi({ base: 'http://127.0.0.1:1', fetch: f.fn, storage: store(), prefetch: null });
  const t = await api.trace(C.toUpperCase());
  assert.deepEqual(f.calls.map((c) => c.url), [`http://127.0.0.1:1/v1/cpids/${C}/trace`]);
  assert.equal(t.cpid, C);
  assert.equal(t.truncated, true);
  assert.equal(t.next, '1.0');
  assert.equal(t.delta, false);
  const d = await api.trace(C, { after: '1.0' });
  assert.equal(f.calls[1].url, `http://127.0.0.1:1/v1/cpids/${C}/trace?after=1.0`);
  assert.equal(d.delta, true);
});

test('everything reachable: scope=reachable on the trace, its cursor, details and the boot path; own asks as before', async () => {
  const f = fakeFetch(() => json(200, { related: [C], mergelogs: [], spans: [], next: '1.0' }));
  const api = createApi({ base: 'http://127.0.0.1:1', fetch: f.fn, storage: store(), prefetch: null });
  await api.trace(C, { scope: 'reachable' });
  await api.trace(C, { scope: 'reachable', after: '1.0' });
  await api.trace(C, { scope: 'own' });
  await api.extras(C, { scope: 'reachable' });
  assert.deepEqual(f.calls.map((c) => c.url.slice('http://127.0.0.1:1'.length)).slice(0, 3), [
    `/v1/cpids/${C}/trace?scope=reachable`, `/v1/cpids/${C}/trace?scope=reachable&after=1.0`, `/v1/cpids/${C}/trace`]);
  assert.ok(f.calls.some((c) => c.url.endsWith(`/v1/cpids/${C}/details?scope=reachable`)));
  assert.equal(prefetchPath(C, 'reachable'), `/v1/cpids/${C}/trace?scope=reachable`);
  assert.equal(prefetchPath(C), `/v1/cpids/${C}/trace`);
});

test('a server older than /trace gets the three requests it knows', async () => {
  const f = fakeFetch((url) => (url.endsWith('/trace')
    ? json(404, { error: 'unknown query; use related, origins, mergelogs, spans, details or stalls' })
    : json(200, { related: [C], mergelogs: [{ cpid: C }], spans: [], truncated: url.endsWith('spans') })));
  const api = createApi({ base: 'http://127.0.0.1:1', fetch: f.fn, storage: store(), prefetch: null });
  const t = await api.trace(C);
  assert.deepEqual(f.calls.map((c) => c.url).slice(1).sort(), ['related', 'mergelogs', 'spans'].map((w) => `http://127.0.0.1:1/v1/cpids/${C}/${w}`).sort());
  assert.equal(t.truncated, true);
  assert.equal(t.next, null);
  await api.trace(C, { after: '1.0' });
  assert.equal(f.calls.length, 7, 'asked once: /trace is not asked again');
});

test('an unknown CPID on /trace is unknown, not an older server', async () => {
  const f = fakeFetch(() => json(404, { error: 'no such CPID in the merge graph', field: 'cpid' }));
  const api = createApi({ fetch: f.fn, storage: store(), prefetch: null });
  await assert.rejects(api.trace(C), (e) => e.kind === 'unknown');
  assert.equal(f.calls.length, 1);
});

test('a cursor the server refuses asks for the whole trace', async () => {
  const f = fakeFetch((url) => (url.includes('after=')
    ? json(400, { error: 'must be the "next" of an earlier trace answer', field: 'after' })
    : json(200, { related: [C], mergelogs: [], spans: [], next: '0.0' })));
  const t = await createApi({ fetch: f.fn, storage: store(), prefetch: null }).trace(C, { after: 'x' });
  assert.equal(t.delta, false);
  assert.equal(f.calls[1].url, `./v1/cpids/${C}/trace`);
});

test('the boot script\'s request is taken once, for the same path and token only', async () => {
  const f = fakeFetch(() => json(200, { related: [C], mergelogs: [], spans: [{ cpid: C, span_id: 'b' }], next: '0.1' }));
  const early = json(200, { related: [C], mergelogs: [], spans: [{ cpid: C, span_id: 'a' }], next: '0.1' });
  const holder = { rippleBoot: { path: prefetchPath(C), token: '', response: Promise.resolve(early) } };
  const api = createApi({ fetch: f.fn, storage: store(), prefetch: holder });
  assert.equal((await api.trace(C)).spans[0].span_id, 'a');
  assert.equal(f.calls.length, 0);
  assert.equal(holder.rippleBoot, null);
  assert.equal((await api.trace(C)).spans[0].span_id, 'b');
  const other = { path: prefetchPath(C), token: 'old-token-xxxxxxxx', response: Promise.resolve(early) };
  assert.equal(takePrefetch(prefetchPath(C), '', { rippleBoot: other }), null, 'another token');
  assert.equal(takePrefetch('/v1/cpids/x/trace', other.token, { rippleBoot: other }), null, 'another path');
});

test('errors: 404 unknown, 400 malformed, network down, 401 auth, 404 on an endpoint missing', async () => {
  const cases = [
    [() => json(404, { error: 'unknown CPID' }), 'unknown', `ripple-server does not know CPID ${C}`],
    [() => json(400, { error: 'bad' }), 'malformed', 'is not a CPID'],
    [() => Promise.reject(new TypeError('Failed to fetch')), 'down', 'cannot reach ripple-server'],
    [() => json(401, { error: 'token' }), 'auth', 'reader token'],
    [() => json(503, { error: 'storage failed' }), 'server', 'answered 503'],
  ];
  for (const [answer, kind, text] of cases) {
    const api = createApi({ fetch: fakeFetch(answer).fn, storage: store() });
    await assert.rejects(api.trace(C), (e) => e.kind === kind && e.message.includes(text), kind);
  }
  const api = createApi({ fetch: fakeFetch(() => json(404, { error: 'no such endpoint' })).fn, storage: store() });
  await assert.rejects(api.roots({}), (e) => e.kind === 'missing' && e.message.includes('/v1/roots'));
});

test('the token is sent in X-Ripple-Token, never in the URL nor in Authorization', async () => {
  const f = fakeFetch(() => json(200, { roots: [], next: null }));
  const api = createApi({ fetch: f.fn, storage: store() });
  await api.roots({ limit: 5, component: '' });
  assert.equal(f.calls[0].init.headers['X-Ripple-Token'], undefined);
  assert.equal(f.calls[0].url, './v1/roots?limit=5');
  api.setToken('s3cret');
  await api.objects({ kind: 'Pod', name: 'x' });
  assert.equal(f.calls[1].init.headers['X-Ripple-Token'], 's3cret');
  assert.equal(f.calls[1].init.headers.Authorization, undefined);
  assert.ok(!f.calls[1].url.includes('s3cret'));
});

test('paths are relative to the page, so a path prefix (the API server\'s service proxy) works', async () => {
  const f = fakeFetch(() => json(200, { stalls: [] }));
  await createApi({ fetch: f.fn, storage: store() }).stalls();
  const page = 'https://api.example:6443/api/v1/namespaces/ripple-system/services/http:ripple-server:http/proxy/';
  assert.equal(new URL(f.calls[0].url, page).href, `${page}v1/stalls`);
  assert.equal(new URL(f.calls[0].url, 'http://127.0.0.1:7480/').href, 'http://127.0.0.1:7480/v1/stalls');
});

test('the development API base is honoured on loopback only', () => {
  assert.equal(apiBase('?api=http://127.0.0.1:7480'), 'http://127.0.0.1:7480');
  assert.equal(apiBase('?api=http://localhost:7480/x'), 'http://localhost:7480');
  assert.equal(apiBase('?api=https://evil.example'), '');
  assert.equal(apiBase('?api=javascript:alert(1)'), '');
  assert.equal(apiBase(''), '');
});

test('details and stalls beside a trace: a 404 (an older server) is null, other failures an error, never a throw', async () => {
  const answers = { details: json(200, { cpid: C, writes: [] }), stalls: json(404, { error: 'unknown path' }) };
  const f = fakeFetch((url) => answers[url.split('/').pop()]);
  const api = createApi({ fetch: f.fn, storage: store() });
  const x = await api.extras(C);
  assert.deepEqual(f.calls.map((c) => c.url).sort(), [`./v1/cpids/${C}/details`, `./v1/cpids/${C}/stalls`]);
  assert.deepEqual(x, { details: { cpid: C, writes: [] }, stalls: null, error: null, failed: [] });
  answers.details = json(503, { error: 'storage failed' });
  answers.stalls = json(200, { enabled: true, stalls: [] });
  const y = await api.extras(C);
  assert.equal(y.details, null);
  assert.deepEqual(y.stalls, { enabled: true, stalls: [] });
  assert.ok(y.error.message.includes('answered 503 to /v1/cpids/{cpid}/details'), y.error.message);
  assert.deepEqual(y.failed, ['details']);
  const down = createApi({ fetch: fakeFetch(() => Promise.reject(new TypeError('Failed to fetch'))).fn, storage: store() });
  assert.equal((await down.extras(C)).error.kind, 'down');
});

test('an aborted request for details rejects (the view is gone)', async () => {
  const abort = () => Promise.reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
  const api = createApi({ fetch: fakeFetch(abort).fn, storage: store() });
  await assert.rejects(api.extras(C), (e) => e.name === 'AbortError');
});

test('every stall now: GET /v1/stalls, null from an older server', async () => {
  const f = fakeFetch(() => json(200, { enabled: true, stalls: [{ span_id: 'a' }] }));
  assert.equal((await createApi({ fetch: f.fn, storage: store() }).stalls()).stalls.length, 1);
  assert.equal(f.calls[0].url, './v1/stalls');
  const old = createApi({ fetch: fakeFetch(() => json(404, {})).fn, storage: store() });
  assert.equal(await old.stalls(), null);
  const bad = createApi({ fetch: fakeFetch(() => json(503, { error: 'x' })).fn, storage: store() });
  await assert.rejects(bad.stalls(), (e) => e.kind === 'server');
});

test('the critical path and two cascades compared: their paths, scope, and errors', async () => {
  const B = '00000021-0000-4000-8000-000000000000';
  let status = 200;
  const f = fakeFetch(() => json(status, status === 200 ? { hops: [] } : status === 404 ? { error: 'no such CPID', field: 'cpid' } : { error: 'must be a CPID', field: 'a' }));
  const api = createApi({ base: 'http://127.0.0.1:1', fetch: f.fn, storage: store(), prefetch: null });
  assert.deepEqual(await api.criticalPath(C), { hops: [] });
  await api.criticalPath(C, { scope: 'reachable' });
  await api.compare(C, B);
  await api.compare(C, B, { scope: 'reachable' });
  assert.deepEqual(f.calls.map((c) => c.url), [`http://127.0.0.1:1/v1/cpids/${C}/critical-path`,
    `http://127.0.0.1:1/v1/cpids/${C}/critical-path?scope=reachable`,
    `http://127.0.0.1:1/v1/compare?a=${C}&b=${B}`, `http://127.0.0.1:1/v1/compare?a=${C}&b=${B}&scope=reachable`]);
  await assert.rejects(api.compare('nope', B), (e) => e.kind === 'malformed');
  status = 404;
  assert.equal(await api.criticalPath(C), null);
  await assert.rejects(api.compare(C, B), (e) => e.kind === 'unknown' && e.message.includes(B));
  status = 400;
  await assert.rejects(api.compare(C, B), (e) => e.kind === 'malformed');
});
