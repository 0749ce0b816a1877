/*
 * writes.h - a trace's writes and which one each waited for: what
 * critpath.c (the critical path) and hops.c (hops, for compare.c and
 * GET /v1/hops) are computed from. Private to ripplex.
 *
 * A write's predecessor (ripplex/critpath.h says why) is the latest of the
 * previous write of its object (for a status write, of its object or of an
 * object it owns), the write that made the CPID it keeps, and, for the first
 * write of a merged CPID, the latest earlier write of the CPIDs that
 * triggered the merge. A person's change (the first write of a root CPID)
 * waited for nothing. Found with sorted indexes, so a trace of 10,000 writes
 * costs n log n, not n squared.
 *
 * Memory: cw_load allocates; cw_free releases. Strings point into the trace
 * (a jansson value the caller keeps alive meanwhile) or into t->keys.
 */
#ifndef RIPPLEX_WRITES_H
#define RIPPLEX_WRITES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define CW_NONE SIZE_MAX
/* The service of the watch agent's spans: observations, not writes. */
#define CW_WATCH_SERVICE "ripple-watch"

typedef struct cw_write {
  const char *cpid, *span_id, *service, *name, *kind, *ns, *oname, *uid, *owner;
  int64_t end;  /* when it was answered (ns) */
  size_t pred;  /* the write it waited for, or CW_NONE */
  int64_t took; /* end - pred's end; 0 without a predecessor */
} cw_write_t;

typedef struct cw_trace {
  cw_write_t *w; /* the readable spans, in the trace's order */
  size_t n;
  size_t last;  /* the last write, or CW_NONE when there is none */
  size_t first; /* the earliest write, or CW_NONE */
  char **keys;  /* owned: each write's object key, or NULL */
  char **names; /* owned: each write's "kind/namespace/name", or NULL */
  char **owned; /* owned: its owner's "kind/namespace/name", or NULL */
} cw_trace_t;

/* later - earlier, saturated: a hostile trace's times may be anywhere. */
static inline int64_t cw_diff(int64_t later, int64_t earlier) {
  int64_t d;
  if (!__builtin_sub_overflow(later, earlier, &d)) return d;
  return later > earlier ? INT64_MAX : INT64_MIN;
}

/* The writes of trace (its "spans" and "mergelogs"), each with its
 * predecessor. Spans without a cpid or a readable end, and the watch
 * agent's (service CW_WATCH_SERVICE), are left out.
 * RIPPLE_OK, RIPPLE_EINVAL (not an object) or RIPPLE_ENOMEM. */
int cw_load(const json_t *trace, cw_trace_t *t);
void cw_free(cw_trace_t *t);

#endif
