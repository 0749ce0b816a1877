/*
 * Live traces: while a cascade is still going on (its latest span ended within the last
 * two minutes, or new spans keep arriving), poll the server every 1.5 s and hand new
 * data to the view; stop after 60 s without change. The view shows the state and can
 * pause and resume.
 */

export const POLL_MS = 1500;
export const RECENT_MS = 2 * 60 * 1000;
export const IDLE_STOP_MS = 60 * 1000;

/* What changes when a trace grows: counts and the latest end. */
export function traceSignature(data) {
  let last = '';
  for (const sp of data.spans ?? []) if (sp.end > last) last = sp.end;
  return `${data.related?.length ?? 0}:${data.mergelogs?.length ?? 0}:${data.spans?.length ?? 0}:${last}`;
}

/*
 * A trace answer with only what was stored after the previous one's cursor (api.trace
 * with `after`), added to the previous one: {..., related, mergelogs, spans, next} as a
 * whole answer would be. Null when it cannot be told from the two: a CPID newly related
 * whose mergelog did not come with it (its records may be older than the cursor), so the
 * caller asks for the whole trace. CPIDs no longer related (retention) are left out.
 */
export function mergeTrace(prev, delta) {
  const before = new Set(prev.related ?? []);
  const came = new Set((delta.mergelogs ?? []).map((m) => m.cpid));
  const related = delta.related ?? [];
  for (const c of related) if (!before.has(c) && !came.has(c) && c !== prev.cpid) return null;
  const now = new Set(related);
  const gone = [...before].some((c) => !now.has(c));
  const keep = (list) => (gone ? list.filter((r) => now.has(r.cpid)) : list);
  return { ...prev, related, truncated: delta.truncated, next: delta.next,
    mergelogs: [...keep(prev.mergelogs ?? []), ...(delta.mergelogs ?? [])],
    spans: [...keep(prev.spans ?? []), ...(delta.spans ?? [])] };
}

/* Whether a trace whose latest span ended at lastEndMs (epoch) is recent at nowMs. */
export function isRecent(lastEndMs, nowMs) {
  return Number.isFinite(lastEndMs) && nowMs - lastEndMs <= RECENT_MS;
}

/*
 * A poller: load() gives the trace's data, onData(data) gets every changed answer (by
 * signature(data), traceSignature unless given), onState(state) hears 'live', 'paused'
 * or 'stopped'. `now` and timers are injectable for tests. Returns {start(signature of
 * the data shown), pause(), resume(), stop(), state()}.
 */
export function createPoller({ load, onData, onState, onError = () => {}, signature = traceSignature, now = Date.now,
  setTimer = setTimeout, clearTimer = clearTimeout, interval = POLL_MS, idleStop = IDLE_STOP_MS }) {
  let state = 'stopped';
  let timer = null;
  let sig = '';
  let changedAt = 0;
  let inflight = false;

  const set = (s) => {
    if (s !== state) {
      state = s;
      onState(s);
    }
  };

  const schedule = () => {
    clearTimer(timer);
    timer = setTimer(tick, interval);
  };

  async function tick() {
    if (state !== 'live' || inflight) return;
    inflight = true;
    try {
      const data = await load();
      if (state !== 'live') return;
      const next = signature(data);
      if (next !== sig) {
        sig = next;
        changedAt = now();
        onData(data);
      } else if (now() - changedAt >= idleStop) {
        set('stopped');
        return;
      }
    } catch (e) {
      onError(e);
    } finally {
      inflight = false;
    }
    if (state === 'live') schedule();
  }

  return {
    start(initial) {
      sig = initial;
      changedAt = now();
      set('live');
      schedule();
    },
    pause() {
      clearTimer(timer);
      if (state === 'live') set('paused');
    },
    resume() {
      changedAt = now();
      set('live');
      schedule();
    },
    stop() {
      clearTimer(timer);
      set('stopped');
    },
    state: () => state,
  };
}
