/*
 * stall_learn.h - what the stall detector learns (stall_int.h): hop kinds,
 * how often and how soon other hop kinds follow their writes, and the
 * expectations that come out of it. Built on stall_tab.h.
 */
#ifndef RIPPLE_SERVER_STALL_LEARN_H
#define RIPPLE_SERVER_STALL_LEARN_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/stall_int.h"

/* Called by kinds_refresh for a hop kind that had expectations and has none
 * any more: the window above it (stall.c) is done with the matured writes
 * of that kind still waiting on one. A callback, so that learning never
 * calls up into the window. */
typedef void (*kind_dropped_fn)(stall_t *s, hkind_t *k);

void kinds_init(stall_t *s);
void kinds_free(stall_t *s);
/* The id of hop kind (service, name), added when new; STALL_NIL when there
 * is no room (max_kinds) or memory. */
uint32_t kind_intern(stall_t *s, const char *service, const char *name);
/* Learn from a write that matured. */
void kind_learn(stall_t *s, const went_t *w);
/* Recompute the expectations of the hop kinds that learned something. */
void kinds_refresh(stall_t *s, kind_dropped_fn dropped);
/* What is known now of kb (or anything) following ka: writes of ka learned
 * from, the share followed, the p99 delay. */
void kind_now(const stall_t *s, uint32_t ka, uint32_t kb, uint32_t *samples, double *share,
              int64_t *p99);
/* The first delay of a follower of kind kb after w, -1: none. */
int64_t went_followed(const went_t *w, uint32_t kb);
/* Did e's next hop follow w within e's wait? */
int went_met(const went_t *w, const expect_t *e);
/* Bytes held by the hop kinds: their table, pairs, histograms and
 * expectations (not their interned names: stall_index_memory). */
size_t kinds_memory(const stall_t *s);

#endif
