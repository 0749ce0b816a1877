/*
 * metrics.h - the webhook's counters and its latency histogram, exposed in
 * Prometheus' text format on GET /metrics. Updates are lock-free atomics.
 */
#ifndef RIPPLE_WEBHOOK_METRICS_H
#define RIPPLE_WEBHOOK_METRICS_H

#include <stdatomic.h>
#include <stdint.h>

#include "internal.h"

#define WH_HIST_BUCKETS 12

typedef struct wh_metrics {
  atomic_uint_fast64_t requests;        /* admission requests answered (200) */
  atomic_uint_fast64_t bad_requests;    /* bodies refused with a 4xx */
  atomic_uint_fast64_t skipped;         /* excluded or untraceable writes */
  atomic_uint_fast64_t patched;         /* answers that carried a patch */
  atomic_uint_fast64_t roots;           /* root changes (users' writes) */
  atomic_uint_fast64_t merges;          /* merges that made a new CPID */
  atomic_uint_fast64_t reused;          /* merges answered by an existing CPID */
  atomic_uint_fast64_t bad_annotations; /* malformed own annotations replaced */
  atomic_uint_fast64_t spans;           /* spans emitted */
  atomic_uint_fast64_t errors;          /* internal failures (answered allowed, unpatched) */
  atomic_uint_fast64_t hist[WH_HIST_BUCKETS + 1];
  atomic_uint_fast64_t hist_sum_ns, hist_count;
} wh_metrics_t;

/* Gauges and counters owned by others, read when /metrics is asked. */
typedef struct wh_gauges {
  uint64_t shipper_enqueued, shipper_sent, shipper_dropped, shipper_rejected, shipper_queued;
  uint64_t tracer_bad_ctx;
  int ready; /* informers synced */
  uint64_t informers, informer_objects;
} wh_gauges_t;

void wh_metrics_observe(wh_metrics_t *m, int64_t ns);
void wh_metrics_write(wh_metrics_t *m, const wh_gauges_t *g, sbuf_t *out);

#endif
