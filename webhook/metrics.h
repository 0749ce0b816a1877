/*
 * metrics.h - the webhook's counters, its latency histogram and the hop
 * histograms, exposed in Prometheus' text format on GET /metrics. Counter
 * updates are lock-free atomics; a hop series is found under a mutex.
 *
 * ripple_hop_seconds{component,write}: for each write a controller made
 * because of a traced change, the time from the admission of that change to
 * the write's admission, so an operator can alert on a slow controller
 * without opening a trace. Series are created on first use, at most
 * WH_HOP_SERIES (then counted under component="other",write="other").
 */
#ifndef RIPPLE_WEBHOOK_METRICS_H
#define RIPPLE_WEBHOOK_METRICS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ripplex/sbuf.h"

#define WH_HIST_BUCKETS 12
#define WH_HOP_BUCKETS 14
#define WH_HOP_SERIES 256
/* Write kinds counted apart (metrics.c's table, the last one "other") and
 * the operations (wh_op_t's order: CREATE, UPDATE, DELETE, CONNECT). */
#define WH_WRITE_KINDS 48
#define WH_WRITE_OPS 4

typedef struct wh_hop_series {
  char component[64], write[96]; /* "" component: a free slot */
  atomic_uint_fast64_t b[WH_HOP_BUCKETS + 1];
  atomic_uint_fast64_t sum_ns, count;
} wh_hop_series_t;

/* One write kind's answers (resource[/subresource] and operation): what its
 * patches cost kube-apiserver (each one a JSON Patch applied and the object
 * decoded and validated again) and the webhook's own time on it. */
typedef struct wh_write_series {
  atomic_uint_fast64_t answers, patched, ops, bytes, ns;
} wh_write_series_t;

typedef struct wh_metrics {
  atomic_uint_fast64_t requests;         /* admission requests answered (200) */
  atomic_uint_fast64_t bad_requests;     /* bodies refused with a 4xx */
  atomic_uint_fast64_t skipped;          /* excluded or untraceable writes */
  atomic_uint_fast64_t patched;          /* answers that carried a patch */
  atomic_uint_fast64_t roots;            /* root changes (users' writes) */
  atomic_uint_fast64_t merges;           /* merges that made a new CPID */
  atomic_uint_fast64_t reused;           /* merges answered by an existing CPID */
  atomic_uint_fast64_t bad_annotations;  /* malformed own annotations replaced */
  atomic_uint_fast64_t spans;            /* spans emitted */
  atomic_uint_fast64_t errors;           /* internal failures (answered allowed, unpatched) */
  atomic_uint_fast64_t spontaneous;      /* controllers' writes with no traced source: roots */
  atomic_uint_fast64_t cause_unknown;    /* writes decided uncertain: roots marked cause unknown */
  atomic_uint_fast64_t forwarded;        /* reviews this replica forwarded to the decider */
  atomic_uint_fast64_t forward_failed;   /* ... that it could not, and decided uncertain */
  atomic_uint_fast64_t deletes_caused;   /* deletes whose span carries their cause's context */
  atomic_uint_fast64_t pending_resolved; /* bindings whose span waited for their Pod */
  atomic_uint_fast64_t pending_dropped;  /* ... and never found it (or the queue was full) */
  atomic_uint_fast64_t tp_written;       /* --traceparent: patches that set one */
  atomic_uint_fast64_t tp_kept;          /* ... writes whose own (or owner's copy) was kept */
  atomic_uint_fast64_t tp_roots;         /* ... roots under a client's span */
  atomic_uint_fast64_t tp_invalid;       /* ... people's malformed ones, ignored */
  atomic_uint_fast64_t as_tp;            /* API server traceparent headers taken (http.c) */
  atomic_uint_fast64_t as_tp_invalid;    /* ... malformed or repeated ones, ignored */
  /* Contexts not trusted, by wh_ctx_refusal_t (ctxmac.h; slot 0 unused). */
  atomic_uint_fast64_t ctx_refused[8];
  atomic_uint_fast64_t owner_kinds_refused; /* owners of kinds not followed (owners.h) */
  atomic_uint_fast64_t unauthenticated;     /* /mutate refused: no trusted client (http.c) */
  atomic_uint_fast64_t truncated;           /* span attributes cut to the server's limits */
  atomic_uint_fast64_t hist[WH_HIST_BUCKETS + 1];
  atomic_uint_fast64_t hist_sum_ns, hist_count;
  wh_write_series_t writes[WH_WRITE_KINDS][WH_WRITE_OPS];
  pthread_mutex_t hop_mu; /* taken to find or add a series */
  wh_hop_series_t hops[WH_HOP_SERIES];
} wh_metrics_t;

/* Gauges and counters owned by others, read when /metrics is asked. */
typedef struct wh_gauges {
  uint64_t shipper_enqueued, shipper_sent, shipper_dropped, shipper_rejected, shipper_queued;
  uint64_t tracer_bad_ctx;
  int ready;   /* informers synced */
  int decider; /* -1: one replica, no Lease; 1: this replica decides (wh_route_deciding) */
  uint64_t informers, informer_objects;
} wh_gauges_t;

void wh_metrics_init(wh_metrics_t *m);
void wh_metrics_destroy(wh_metrics_t *m);
void wh_metrics_observe(wh_metrics_t *m, int64_t ns);
/* One hop of component's write ("update pods/status") that took ns. */
void wh_metrics_hop(wh_metrics_t *m, const char *component, const char *write, int64_t ns);
/* One answer to a write of resource/subresource ("" none) with operation op
 * (a wh_op_t; others are not counted): its JSON Patch of patch_len bytes
 * (NULL: none), ns from the body to the answer. A resource not in the
 * table is counted as "other", so a hostile review cannot grow the set. */
void wh_metrics_answer(wh_metrics_t *m, const char *resource, const char *subresource, int op,
                       const char *patch, size_t patch_len, int64_t ns);
void wh_metrics_write(wh_metrics_t *m, const wh_gauges_t *g, sbuf_t *out);

#endif
