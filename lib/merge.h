/*
 * merge.h - the pure merge decision, separated from the tracer so tests and
 * the simulation can drive it without clocks, random numbers or sinks.
 */
#ifndef RIPPLE_MERGE_H
#define RIPPLE_MERGE_H

#include "ripple/ripple.h"

typedef struct merge_result {
  ripple_merge_kind_t how;
  ripple_ctx_t out;       /* for RIPPLE_MERGE_NEW the caller sets out.cpid */
  ripple_cpid_t *sources; /* caller's buffer of at least m entries */
  size_t nsources;        /* distinct input CPIDs, input order */
  int cycle;              /* the inputs' ancestor lists contradicted each other */
} merge_result_t;

/* c[0..m) are set contexts; c[0] is the target's when has_target. */
int merge_decide(const ripple_ctx_t *const *c, size_t m, int has_target, uint32_t n,
                 merge_result_t *res);
void merge_init_seed(uint64_t seed);

#endif
