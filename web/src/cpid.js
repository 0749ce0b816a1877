/*
 * CPIDs as the dashboard sees them: validation before asking the server (a CPID is a
 * non-nil UUID, as ripple-server's parser reads it) and the short form shown in labels.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NIL = '00000000-0000-0000-0000-000000000000';

/* The canonical (lower-case, trimmed) form of what a person typed or a URL held. */
export function normalizeCpid(text) {
  return String(text ?? '').trim().toLowerCase();
}

/* Whether text (after normalizeCpid) is a CPID the server can know. */
export function isCpid(text) {
  const s = normalizeCpid(text);
  return UUID.test(s) && s !== NIL;
}

/* The first eight hex digits: enough to tell CPIDs of one trace apart. */
export function shortCpid(cpid) {
  return String(cpid).slice(0, 8);
}
