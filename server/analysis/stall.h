/*
 * stall.h - stalled cascades: which change did not go on when it usually does.
 *
 * A hop kind is (service, span name): "replicaset-controller" "create pods".
 * The detector learns, from the spans it is fed, what usually follows a write
 * of each hop kind, and how soon; a write whose usual next hop has not come
 * within `multiple` times that hop's p99 delay is a stall (docs/server.md,
 * "Stalled cascades").
 *
 * "B follows A" when all of these hold:
 *  - lineage: B's CPID is A's, or descends from it (the caller's
 *    related callback answers from the merge graph);
 *  - B was admitted after A (B.end > A.end);
 *  - objects: B writes A's object (same kind, namespace and name); or A's
 *    object owns B's (B.owner is "A.kind/A.name", same namespace); or B's
 *    object owns A's (A.owner is "B.kind/B.name") and B writes a
 *    subresource (a status reporting up the chain: a spec write of the owner
 *    comes from a change above it, even when merges make its CPID descend);
 *    or A is a create whose
 *    name was not known at admission (generateName) and B writes an object
 *    of the same kind, namespace and owner: each such B is matched to the
 *    oldest anonymous create of that hop kind not yet followed by B's kind.
 *  - B is not of A's own hop kind: a status written again is the same step
 *    repeated, not a next hop; on A's object it supersedes A.
 * The delay of a follower is B.end - A.end; only a hop kind's first follower
 * of each kind after A counts.
 *
 * Learning: a write matures `horizon` after it was admitted; then its hop
 * kind's count goes up, and for each hop kind that followed it, that pair's
 * count and delay histogram. Two expectations come out of it:
 *  - a specific next hop KB of KA: followed(KA, KB) / count(KA) >= min_share
 *    and followed(KA, KB) >= min_samples (a Pod's create is followed by its
 *    binding);
 *  - any next hop: (writes of KA followed by anything) / count(KA) >= min_share,
 *    with at least min_samples of them (a ReplicaSet's update is followed by
 *    creates or deletes of Pods, neither one "usually").
 * A write of KA stalls on an expectation when nothing that satisfies it has
 * followed after max(min_wait, multiple * p99 of its delay). A stall ends
 * when something that satisfies it follows (resolved, late), when A's object
 * is deleted or written again by an unrelated change (superseded), or after
 * ttl (expired). Nothing is flagged for a hop kind with too few samples: the
 * detector prefers missing a stall to inventing one.
 *
 * Replay: feed stored spans in admission order calling stall_tick with each
 * span's end first; the state is then what it would have been live.
 *
 * Memory: the detector copies what it keeps; strings passed in are borrowed
 * for the call. Bounded: at most max_window writes waiting to mature or to be
 * followed (the oldest leave first, counted), max_stalls stalls, max_kinds
 * hop kinds. Threads: calls must be serialised by the caller (the server
 * calls under the mutex of its stalls_t, stalls.h), except that stall_each
 * may run concurrently with other stall_each calls. related() is called
 * from stall_add only.
 */
#ifndef RIPPLE_SERVER_STALL_H
#define RIPPLE_SERVER_STALL_H

#include <stddef.h>
#include <stdint.h>

#include "ripple/ripple.h"

typedef struct stall stall_t;

typedef struct stall_opts {
  double multiple;      /* [3] times the p99 delay */
  double min_share;     /* [0.9] */
  uint32_t min_samples; /* [10] */
  int64_t min_wait_ns;  /* [5 s] never flag earlier than this */
  int64_t horizon_ns;   /* [10 min] a write matures (is learned from) this late */
  int64_t ttl_ns;       /* [24 h] a stall not ended by then is dropped */
  size_t max_window;    /* [200000] */
  size_t max_stalls;    /* [10000] */
  size_t max_kinds;     /* [4096] */
} stall_opts_t;

/* One span as the detector sees it. Strings are NUL-terminated, "" when
 * absent. operation: "CREATE", "UPDATE", "DELETE", "CONNECT" or "". */
typedef struct stall_span {
  ripple_cpid_t cpid;
  uint64_t span_id;
  int64_t start, end; /* ns; end is the admission */
  const char *service, *name;
  const char *kind, *ns, *obj, *owner, *operation;
} stall_span_t;

/* 1 when desc is anc or descends from it in the merge graph. */
typedef int (*stall_related_fn)(void *ud, const ripple_cpid_t *anc, const ripple_cpid_t *desc);

int stall_new(const stall_opts_t *o, stall_related_fn related, void *ud, stall_t **out);
void stall_free(stall_t *s);

/* Feed one span; spans come roughly in admission order (a late one is still
 * matched, against what is still in the window). */
void stall_add(stall_t *s, const stall_span_t *sp);
/* Advance the clock: mature, flag, expire. now in ns. */
void stall_tick(stall_t *s, int64_t now);

typedef struct stall_info {
  ripple_cpid_t cpid; /* the stalled write's CPID */
  uint64_t span_id;
  const char *service, *name;  /* its hop kind */
  const char *kind, *ns, *obj; /* its object ("" name: a generateName create) */
  const char *owner;
  const char *expect_service, *expect_name; /* "" and "": any next hop */
  int64_t admitted_ns;                      /* A.end */
  int64_t flagged_ns;                       /* when it became a stall */
  int64_t p99_ns;                           /* of the expected hop's delay */
  uint32_t samples;                         /* writes of the hop kind learned from */
  double share;                             /* how often the expected hop followed */
} stall_info_t;

/* Current stalls, oldest first; strings valid during the callback. Returns
 * how many were passed to fn (fn returns nonzero to stop). */
typedef int (*stall_each_fn)(void *ud, const stall_info_t *st);
size_t stall_each(stall_t *s, stall_each_fn fn, void *ud);

typedef struct stall_stats {
  uint64_t flagged, resolved, superseded, expired, evicted, matured;
  size_t active, window, kinds;
} stall_stats_t;
void stall_stats(stall_t *s, stall_stats_t *out);

/* Bytes the detector holds: its window of writes (the slab's chunks, never
 * given back), index lists, interned strings, hop kinds and stalls, hash
 * tables' empty slots included, malloc's own overhead not. Walks the
 * window: for benchmarks and tests, not for every request. */
size_t stall_memory(const stall_t *s);

/* The learned model, for the API: fn once per expectation (KA -> KB, or
 * KA -> any with expect "" ""), with its share, samples and p99. */
typedef void (*stall_model_fn)(void *ud, const char *service, const char *name,
                               const char *expect_service, const char *expect_name, double share,
                               uint32_t samples, int64_t p99_ns);
void stall_model(stall_t *s, stall_model_fn fn, void *ud);

#endif
