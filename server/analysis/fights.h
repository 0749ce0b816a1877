/*
 * fights.h - "who keeps reverting this field?": two writers that set one
 * field of one object back and forth (docs/server.md, "Field fights").
 *
 * What a write changed comes from the watch agent's details (a change's field
 * diff: paths, and values that are only hashed here); who made it, and
 * under which CPID, from the webhook's span of that write. The two are
 * joined by the object's uid and the resourceVersion the write started from
 * (the span's resourceVersion attribute, the change's
 * previousResourceVersion), whichever comes second, among the spans that
 * could have made the change (fights.c says why there may be several).
 *
 * A reversal is a write by B that sets a field back to the value it had
 * before the write just before it, made by another writer A, within the
 * window (A: 3 -> 5, B: 5 -> 3). A fight is a run of reversals on one
 * object's field between the same two writers, each at most a window after
 * the one before, with at least one reversal each way (A undid B and B undid
 * A): one undo is a correction, both ways is two owners. It is counted once
 * per run (an episode); a reversal more than a window after the run's last
 * starts a new one.
 *
 * Bounded: fixed tables, the oldest entry evicted (spans and changes
 * waiting for their join, fields with their last writes, fights kept for
 * answers). Values are never kept: only 64-bit hashes, never served.
 * Fields under /status and metadata a server sets are not tracked.
 *
 * Ownership: a fights_t copies what it is given (cut to its fixed sizes).
 * Threads: every call may come from any thread (one mutex inside).
 */
#ifndef RIPPLE_SERVER_FIGHTS_H
#define RIPPLE_SERVER_FIGHTS_H

#include <stddef.h>
#include <stdint.h>

#include "ripple/ripple.h"
#include "ripplex/sbuf.h"

#define FIGHTS_WINDOW_NS (600 * 1000000000LL) /* the default window: 10 minutes */
#define FIGHTS_ABSENT 0                       /* the hash of an absent value */
#define FIGHTS_LIMIT_MAX 1000                 /* fights in one answer, at most */

typedef struct fights fights_t;

typedef struct fights_opts {
  int64_t window_ns; /* 0: FIGHTS_WINDOW_NS */
  size_t max_fields; /* fields tracked at once; 0: 4096 */
  size_t max_fights; /* fights kept for answers; 0: 1024 */
} fights_opts_t;

/* A write as the webhook's span names it. */
typedef struct fights_write {
  const char *uid, *rv;    /* the object's, and the version the write started from */
  const char *writer;      /* the span's service: a controller, or a person's user name */
  const char *user;        /* the span's user attribute, or NULL */
  const char *subresource; /* "status", "scale", ...; NULL or "": the object itself */
  ripple_cpid_t cpid;
  uint64_t span_id;
  int64_t time;
} fights_write_t;

/* One field a change changed: a JSON Pointer and the hashes of its values
 * (fights_hash; FIGHTS_ABSENT for an added or removed field). */
typedef struct fights_diff {
  const char *path;
  uint64_t old_hash, new_hash;
} fights_diff_t;

/* An update as the watch agent saw it (details). */
typedef struct fights_change {
  const char *uid, *kind, *ns, *name, *prev_rv;
  int64_t time;
  const fights_diff_t *diff;
  size_t ndiff;
} fights_change_t;

int fights_new(const fights_opts_t *o, fights_t **out);
void fights_free(fights_t *f);

/* Feed a write or a change; each returns how many fights it flagged (0 or
 * more). Incomplete input (no uid, no version) is ignored. */
int fights_add_write(fights_t *f, const fights_write_t *w);
int fights_add_change(fights_t *f, const fights_change_t *c);

/* A value's hash (its JSON text, as the details' canonical record writes
 * it); never FIGHTS_ABSENT. */
uint64_t fights_hash(const char *json, size_t len);
/* Is a field at this JSON Pointer tracked? (Not /status, not metadata the
 * API server sets.) */
int fights_tracked(const char *path);

/* Fights flagged since start (ripple_field_fights_total), and the window. */
uint64_t fights_total(fights_t *f);
int64_t fights_window(const fights_t *f);

/* GET /v1/fights: {"window_seconds", "fights": [...], "truncated"} of the
 * fights whose last reversal is at or after since (ns), newest first, at
 * most limit (1..FIGHTS_LIMIT_MAX); with uid, that object's only, plus
 * "fields": the last write known of each of its tracked fields. Returns
 * RIPPLE_OK or RIPPLE_ENOMEM. */
int fights_answer(fights_t *f, int64_t since, const char *uid, size_t limit, sbuf_t *out);

#endif
