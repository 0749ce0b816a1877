/*
 * Field fights of an object (GET /v1/fights?uid=, docs/api.md "Field fights"): two
 * writers that keep setting one field of it back and forth, with the CPIDs of their
 * writes. Pure (no DOM): the server's answer turned here into the rows the span panel
 * shows, so it is unit-tested. Anything of the wrong shape is skipped or shown as "?".
 */
import { pointerText } from './details.js';
import { parseTime, formatClock } from './time.js';

const str = (v) => (typeof v === 'string' && v ? v : '?');

/* The fights of the object uid in an answer, newest first as the server sent them:
 * [{path, label, writers: [a, b], reversals, first, last, writes: [{writer, cpid, time}]}];
 * null for no answer (a server older than fights, or one that has them off). */
export function fightRows(answer, uid) {
  if (!answer || typeof answer !== 'object' || answer.enabled === false || !Array.isArray(answer.fights)) return null;
  return answer.fights
    .filter((f) => f && typeof f === 'object' && (!uid || f.object?.uid === uid))
    .map((f) => {
      const m = Array.isArray(f.managers) ? f.managers : [];
      const writes = (Array.isArray(f.writes) ? f.writes : []).filter((w) => w && typeof w === 'object');
      return {
        path: typeof f.path === 'string' ? f.path : '',
        label: pointerText(f.path),
        writers: [str(m[0]?.writer), str(m[1]?.writer)],
        reversals: Number.isInteger(f.reversals) ? f.reversals : 0,
        first: formatClock(parseTime(f.first)),
        last: formatClock(parseTime(f.last)),
        writes: writes.map((w) => ({ writer: str(w.writer), cpid: typeof w.cpid === 'string' ? w.cpid : '', time: formatClock(parseTime(w.time)) })),
      };
    });
}

/* One line of a fight: "spec.replicas: kubernetes-admin ↔ hpa-like, 3 reversals". */
export function fightText(r) {
  return `${r.label}: ${r.writers[0]} ↔ ${r.writers[1]}, ${r.reversals} reversal${r.reversals === 1 ? '' : 's'}`;
}
