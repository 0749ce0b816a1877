/*
 * ripplex/hops.h - one trace's writes grouped into hops, each with every
 * write's time: what GET /v1/hops (per-hop statistics across many cascades
 * of a kind of change) adds up, and compare.c's grouping of one side.
 *
 * A hop is every write of one component, write (verb and resource) and
 * object kind ("kube-scheduler", "create pods/binding", "Pod"); what a write
 * took is the time from the write it waited for (its predecessor,
 * ripplex/critpath.h) to its own answer.
 *
 * Memory: hops_group allocates the groups and their times; hops_free
 * releases them. The strings point into the trace, a jansson value the
 * caller keeps alive as long as it reads them.
 */
#ifndef RIPPLEX_HOPS_H
#define RIPPLEX_HOPS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hop_group {
  const char *component, *write, *kind;
  size_t n;            /* its writes */
  const int64_t *took; /* each write's time (ns), ascending */
} hop_group_t;

typedef struct hop_groups {
  hop_group_t *g; /* by component, write, kind */
  size_t n;
  size_t writes;     /* the trace's readable writes, all groups together */
  int64_t total;     /* from its earliest write's end to its last's (ns) */
  const char *first; /* the write of the trace's earliest write (a root's
                      * cascade: the person's change), NULL without writes */
  int64_t *took_;    /* private: every group's times */
} hop_groups_t;

/* trace (as the server's /trace answers it) grouped into hops, into *out.
 * RIPPLE_OK, RIPPLE_EINVAL (not an object) or RIPPLE_ENOMEM; *out is empty
 * (and needs no hops_free) unless RIPPLE_OK. */
int hops_group(const json_t *trace, hop_groups_t *out);
void hops_free(hop_groups_t *h);

/* The nearest-rank pct-th percentile (1 to 100) of n ascending times; 0
 * when n is 0. */
int64_t hops_percentile(const int64_t *sorted, size_t n, unsigned pct);

#endif
