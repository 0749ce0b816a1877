/*
 * Time for traces: RFC 3339 timestamps with nanoseconds to milliseconds (floats keep
 * sub-microsecond precision for today's epochs), durations in words people read, and
 * the waterfall's time axis (t = 0 at the earliest span start, ticks in µs, ms or s).
 */
import { scaleLinear } from 'd3-scale';
import { utcFormat } from 'd3-time-format';

const RFC3339 = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/i;

/* The last whole second parsed: the server's times of one trace share most of them. */
let lastSecond = '';
let lastSecondMs = NaN;

/* Milliseconds since the epoch of an RFC 3339 time, fractions kept; NaN if malformed. */
export function parseTime(text) {
  if (typeof text === 'string' && text.length === 30 && text[19] === '.' && text[29] === 'Z') {
    const fast = parseCanonical(text);
    if (!Number.isNaN(fast)) return fast;
  }
  return parseAny(text);
}

/*
 * The server's own form, "2026-11-21T22:18:34.356047558Z", quickly: a trace has two
 * of them per span, so no string is made unless the second changed (a cold page parses
 * 20,000 of them before its first draw).
 */
function parseCanonical(text) {
  if (!text.startsWith(lastSecond) || lastSecond === '') {
    const second = text.slice(0, 19);
    const ms = parseAny(`${second}Z`);
    if (Number.isNaN(ms)) return NaN;
    lastSecond = second;
    lastSecondMs = ms;
  }
  let ns = 0;
  for (let i = 20; i < 29; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return NaN;
    ns = ns * 10 + d;
  }
  return lastSecondMs + ns / 1e6;
}

function parseAny(text) {
  const m = RFC3339.exec(String(text ?? ''));
  if (!m) return NaN;
  const whole = Date.parse(m[1] + (m[3].toUpperCase() === 'Z' ? 'Z' : m[3]));
  if (Number.isNaN(whole)) return NaN;
  const frac = m[2] ? Number('0.' + m[2]) * 1000 : 0;
  return whole + frac;
}

/* A duration in ms as text: "850 µs", "12.3 ms", "1.24 s", "2 min 03 s". */
export function formatDuration(ms) {
  if (!Number.isFinite(ms)) return '–';
  const a = Math.abs(ms);
  if (a === 0) return '0 ms';
  if (a < 1) return `${trim(ms * 1000)} µs`;
  if (a < 1000) return `${trim(ms)} ms`;
  if (a < 60000) return `${trim(ms / 1000)} s`;
  const min = Math.floor(a / 60000);
  const s = Math.round((a - min * 60000) / 1000);
  return `${ms < 0 ? '-' : ''}${min} min ${String(s).padStart(2, '0')} s`;
}

/* Three significant digits, no trailing zeros beyond what they need. */
function trim(v) {
  const a = Math.abs(v);
  const digits = a >= 100 ? 0 : a >= 10 ? 1 : 2;
  return v.toFixed(digits);
}

const clock = utcFormat('%Y-%m-%d %H:%M:%S.%L');

/* A wall-clock time (UTC) with milliseconds, for tables and panels. */
export function formatClock(ms) {
  if (!Number.isFinite(ms)) return '–';
  return clock(new Date(ms)) + 'Z';
}

/* The unit an axis of this span of time is labelled in. */
export function axisUnit(domainMs) {
  if (domainMs < 1) return { name: 'µs', factor: 1000 };
  if (domainMs < 2000) return { name: 'ms', factor: 1 };
  return { name: 's', factor: 0.001 };
}

/*
 * The time axis: a linear scale from [from, to] ms (offsets from t = 0) onto
 * [0, width] px, and its ticks with labels in one unit.
 */
export function timeAxis(from, to, width, count = Math.max(2, Math.floor(width / 90))) {
  const hi = to > from ? to : from + 1;
  const scale = scaleLinear().domain([from, hi]).range([0, width]);
  const unit = axisUnit(hi - from);
  const ticks = scale.ticks(count).map((ms) => ({
    ms,
    x: scale(ms),
    label: formatTick(ms * unit.factor, unit.name),
  }));
  return { scale, unit, ticks };
}

function formatTick(v, unit) {
  const r = Math.round(v * 1000) / 1000;
  return `${Number.isInteger(r) ? r : r.toString()} ${unit}`;
}
