/*
 * hops.h - per-hop statistics across many cascades of one kind of change
 * (GET /v1/hops): the roots (people's changes, as GET /v1/roots finds them,
 * graph/search.h) in a time range whose root write matches, each one's
 * cascade read (the same answer /trace gives, graph/trace.h) and grouped
 * into hops (ripplex/hops.h), the hops' write times added up across them.
 *
 * Bounded: at most `limit` roots, and no further root is read once
 * HOPS_SPANS_MAX spans have been (the answer says "truncated").
 *
 * Owns nothing: answers are JSON documents appended to out; hops_answer
 * returns the HTTP status to answer with.
 */
#ifndef RIPPLE_SERVER_HOPS_H
#define RIPPLE_SERVER_HOPS_H

#include <stddef.h>
#include <stdint.h>

#include "graph/core.h"
#include "graph/graph.h"
#include "ripplex/sbuf.h"

#define HOPS_LIMIT_MAX 500     /* roots one answer adds up */
#define HOPS_SPANS_MAX 200000  /* spans one answer reads, all roots together */
#define HOPS_EXAMINED_MAX 5000 /* roots one answer looks at, matching or not */

typedef struct hops_query {
  int64_t since, until;                 /* INT64_MIN, 0: no bound */
  const char *kind, *write, *component; /* NULL: any */
  size_t limit;                         /* roots, 1 to HOPS_LIMIT_MAX */
  size_t cpid_limit;                    /* most CPIDs one cascade walks */
  graph_scope_t scope;
} hops_query_t;

/* {"scope", "roots": {"count", "truncated"}, "spans", "truncated",
 *  "hops": [{"component", "write", "kind", "cascades", "writes", "p50_ms",
 *            "p90_ms", "p99_ms", "max_ms"}...]}, slowest p50 first.
 * 200, 500 (no memory) or 503. */
int hops_answer(core_t *c, const hops_query_t *q, sbuf_t *out);

#endif
