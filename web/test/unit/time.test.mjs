import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTime, formatDuration, timeAxis, axisUnit, formatClock } from '../../src/time.js';

test('parseTime keeps nanoseconds as fractions of a millisecond', () => {
  const a = parseTime('2026-11-21T22:18:34.356047558Z');
  const b = parseTime('2026-11-21T22:18:34.356048558Z');
  assert.equal(Math.round(a), Date.UTC(2026, 10, 21, 22, 18, 34, 356));
  assert.ok(Math.abs(b - a - 0.001) < 5e-4, `${b - a}`); /* a double holds today's epoch to ~0.25 µs */
});

test('parseTime: the fast path and the general one agree; offsets and short fractions', () => {
  assert.equal(parseTime('2026-11-21T22:18:34.500000000Z'), parseTime('2026-11-21T22:18:34.5Z'));
  assert.equal(parseTime('2026-11-21T23:18:34.5+01:00'), parseTime('2026-11-21T22:18:34.5Z'));
  assert.equal(parseTime('2026-11-21T22:18:34Z'), Date.UTC(2026, 10, 21, 22, 18, 34));
  assert.ok(parseTime('2026-11-21T22:18:35.000001000Z') > parseTime('2026-11-21T22:18:35.000000000Z'));
});

test('parseTime: malformed times are NaN', () => {
  for (const bad of ['', 'yesterday', '2026-11-21 22:18:34Z', '2026-11-21T22:18:34.12345678xZ', '2026-13-45T22:18:34Z', null]) {
    assert.ok(Number.isNaN(parseTime(bad)), String(bad));
  }
});

test('formatDuration picks µs, ms, s and minutes', () => {
  assert.equal(formatDuration(0.25), '250 µs');
  assert.equal(formatDuration(3), '3.00 ms');
  assert.equal(formatDuration(12.34), '12.3 ms');
  assert.equal(formatDuration(417.2), '417 ms');
  assert.equal(formatDuration(1240), '1.24 s');
  assert.equal(formatDuration(125000), '2 min 05 s');
  assert.equal(formatDuration(NaN), '–');
});

test('the time axis: unit by the span of time, ticks inside the width, labelled in that unit', () => {
  assert.equal(axisUnit(0.5).name, 'µs');
  assert.equal(axisUnit(512).name, 'ms');
  assert.equal(axisUnit(5800).name, 's');
  const ax = timeAxis(0, 512, 900);
  assert.equal(ax.scale(0), 0);
  assert.equal(ax.scale(512), 900);
  assert.ok(ax.ticks.length >= 3);
  assert.deepEqual(ax.ticks.slice(0, 3).map((t) => t.label), ['0 ms', '50 ms', '100 ms']);
  for (const t of ax.ticks) assert.ok(t.x >= 0 && t.x <= 900);
  assert.equal(timeAxis(0, 5800, 900).ticks[1].label, '0.5 s');
});

test('formatClock is UTC with milliseconds', () => {
  assert.equal(formatClock(Date.UTC(2026, 10, 21, 22, 18, 34, 356)), '2026-11-21 22:18:34.356Z');
});
