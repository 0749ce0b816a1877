/*
 * roots.h - the roots index: an object's root mergelogs, by its uid.
 *
 * A root mergelog (no sources) that names an object uid is a change a person
 * made to that object; GET /v1/objects/{uid}/roots lists them, newest first.
 * The store keeps them in an append-only table (cheap: rows go at its end);
 * this index, in memory and rebuilt from that table at start, finds them by
 * uid. An index in SQLite keyed by uid would take random pages on every
 * commit: bench_ingest measured it at a fifth of the mergelog rate.
 *
 * Entries are not removed one by one: the server asks the graph whether each
 * entry's row is still the mergelog of its CPID, when answering and when it
 * prunes after retention (roots_prune). Not thread-safe by itself: the server
 * guards it with the graph's lock. Memory: about 40 bytes per root plus the
 * uid once per object (roots_memory()).
 */
#ifndef RIPPLE_SERVER_ROOTS_H
#define RIPPLE_SERVER_ROOTS_H

#include <stddef.h>
#include <stdint.h>

#include "ripple/ripple.h"

typedef struct roots roots_t;

/* Is the root stored at row seq, for cpid, still there? */
typedef int (*roots_live_fn)(void *ud, uint64_t seq, const ripple_cpid_t *cpid);

/* An empty index: RIPPLE_OK, or RIPPLE_ENOMEM. */
int roots_new(roots_t **out);
void roots_free(roots_t *r);

/* Add the root of object uid (n bytes) stored at row seq. RIPPLE_ENOMEM or
 * RIPPLE_OK. */
int roots_add(roots_t *r, const char *uid, size_t n, int64_t time_ns, uint64_t seq,
              const ripple_cpid_t *cpid);

/* The rows of uid's roots for which live answers 1, newest first (time, then
 * seq), at most max of them, into seqs; returns how many. RIPPLE_ENOMEM (< 0)
 * when out of memory. */
long roots_find(const roots_t *r, const char *uid, roots_live_fn live, void *ud, uint64_t *seqs,
                size_t max);

/* Drop the entries for which live answers 0 (after retention). Returns how
 * many were dropped. */
size_t roots_prune(roots_t *r, roots_live_fn live, void *ud);

size_t roots_count(const roots_t *r);
size_t roots_memory(const roots_t *r);

#endif
