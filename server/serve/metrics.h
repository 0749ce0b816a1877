/*
 * metrics.h - counters and latency histograms, exposed in Prometheus' text
 * format on GET /metrics. Updates are lock-free (atomics).
 */
#ifndef RIPPLE_SERVER_METRICS_H
#define RIPPLE_SERVER_METRICS_H

#include <stdatomic.h>
#include <stdint.h>

#include "ripplex/sbuf.h"

enum { ROUTE_INGEST_MERGELOGS, ROUTE_INGEST_SPANS, ROUTE_QUERY, ROUTE_LIST, ROUTE_OTHER, ROUTES };
#define HIST_BUCKETS 14

typedef struct metrics {
  atomic_uint_fast64_t accepted[2]; /* records stored, by kind */
  atomic_uint_fast64_t rejected[2]; /* requests refused with a 4xx, by kind */
  atomic_uint_fast64_t duplicate_mergelogs, deleted_vertices;
  atomic_uint_fast64_t hist[ROUTES][HIST_BUCKETS + 1];
  atomic_uint_fast64_t hist_sum_ns[ROUTES], hist_count[ROUTES];
} metrics_t;

void metrics_observe(metrics_t *m, int route, int64_t ns);
/* Append the exposition; gauges are passed in by the caller. */
typedef struct metrics_gauges {
  uint64_t vertices, edges, spans, graph_bytes, connections;
  int64_t storage_bytes;
  uint64_t commit_groups, rows_deleted, write_errors;
  uint64_t objects, objects_refused; /* the object index (objects.h) */
} metrics_gauges_t;
void metrics_write(const metrics_t *m, const metrics_gauges_t *g, sbuf_t *out);

#endif
