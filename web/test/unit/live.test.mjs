import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPoller, mergeTrace, traceSignature, isRecent, RECENT_MS } from '../../src/live.js';

/* Timers and a clock under the test's control. */
function fakeTime() {
  let now = 0;
  let pending = null;
  return {
    now: () => now,
    setTimer: (fn, ms) => (pending = { fn, at: now + ms }),
    clearTimer: () => (pending = null),
    async step() {
      if (!pending) return false;
      const p = pending;
      pending = null;
      now = p.at;
      await p.fn();
      return true;
    },
  };
}

const data = (n, end = '2026-01-01T00:00:00.000000000Z') => ({ related: ['a'], mergelogs: [], spans: Array.from({ length: n }, () => ({ end })) });

test('the signature changes when spans arrive or end later', () => {
  assert.notEqual(traceSignature(data(1)), traceSignature(data(2)));
  assert.notEqual(traceSignature(data(1)), traceSignature(data(1, '2026-01-01T00:00:01.000000000Z')));
  assert.equal(traceSignature(data(2)), traceSignature(data(2)));
});

test('a trace is recent for two minutes after its last span', () => {
  assert.equal(isRecent(1000, 1000 + RECENT_MS), true);
  assert.equal(isRecent(1000, 1001 + RECENT_MS), false);
  assert.equal(isRecent(NaN, 0), false);
});

test('the poller hands over changed data only, and stops after a minute without change', async () => {
  const t = fakeTime();
  const answers = [data(1), data(2), data(2)];
  const got = [];
  const states = [];
  const p = createPoller({ load: async () => answers[Math.min(answers.length - 1, got.length + 1)] ?? data(2),
    onData: (d) => got.push(d.spans.length), onState: (s) => states.push(s), ...t });
  p.start(traceSignature(data(1)));
  assert.equal(p.state(), 'live');
  let steps = 0;
  while (await t.step()) steps++;
  assert.deepEqual(got, [2]);
  assert.equal(p.state(), 'stopped');
  assert.deepEqual(states, ['live', 'stopped']);
  assert.ok(t.now() >= 60000 && t.now() <= 62000, String(t.now()));
  assert.ok(steps >= 40);
});

test('pause stops polling until resume', async () => {
  const t = fakeTime();
  let loads = 0;
  const p = createPoller({ load: async () => (loads++, data(1)), onData: () => {}, onState: () => {}, ...t });
  p.start('x');
  await t.step();
  p.pause();
  assert.equal(p.state(), 'paused');
  assert.equal(await t.step(), false);
  p.resume();
  await t.step();
  assert.equal(loads, 2);
});

test('a signature of the caller\'s (trace, details and stalls) decides what is new', async () => {
  const t = fakeTime();
  let stalls = 1;
  const got = [];
  const p = createPoller({ load: async () => ({ ...data(1), stalls }), signature: (d) => `${traceSignature(d)}/${d.stalls}`,
    onData: (d) => got.push(d.stalls), onState: () => {}, ...t });
  p.start(`${traceSignature(data(1))}/1`);
  await t.step();
  assert.deepEqual(got, [], 'nothing new');
  stalls = 2;
  await t.step();
  assert.deepEqual(got, [2], 'the same spans, another stall');
});

test('what was stored since the cursor is added to the trace; a CPID newly related without its mergelog asks for all', () => {
  const A = 'a', B = 'b', Z = 'z';
  const prev = { cpid: A, related: [A], mergelogs: [{ cpid: A }], spans: [{ cpid: A, span_id: '1' }], next: '1.1', truncated: false };
  const m = mergeTrace(prev, { related: [A, B], mergelogs: [{ cpid: B }], spans: [{ cpid: B, span_id: '2' }], next: '2.2', truncated: false });
  assert.deepEqual(m.related, [A, B]);
  assert.deepEqual(m.mergelogs.map((x) => x.cpid), [A, B]);
  assert.deepEqual(m.spans.map((x) => x.span_id), ['1', '2']);
  assert.equal(m.next, '2.2');
  assert.equal(traceSignature(m) === traceSignature(prev), false);
  /* Z is related now but its mergelog is older than the cursor: its spans may be too. */
  assert.equal(mergeTrace(m, { related: [A, B, Z], mergelogs: [], spans: [], next: '2.2' }), null);
  /* B went (retention): its records go with it. */
  const g = mergeTrace(m, { related: [A], mergelogs: [], spans: [{ cpid: A, span_id: '3' }], next: '2.3' });
  assert.deepEqual(g.spans.map((x) => x.span_id), ['1', '3']);
  assert.deepEqual(g.mergelogs.map((x) => x.cpid), [A]);
});
