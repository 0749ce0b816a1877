/*
 * metrics.c - see metrics.h. Names start with ripple_webhook_ so they never
 * collide with the trace server's when both are scraped.
 */
#include "metrics.h"

#include <inttypes.h>

/* Seconds; the target is p99 under 1 ms, so the buckets are fine below it. */
static const double bounds[WH_HIST_BUCKETS] = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                               0.005,   0.01,   0.025,   0.05,   0.1,   1};

void wh_metrics_observe(wh_metrics_t *m, int64_t ns) {
  double s = (double)ns / 1e9;
  int b = 0;
  while (b < WH_HIST_BUCKETS && s > bounds[b]) b++;
  atomic_fetch_add(&m->hist[b], 1);
  atomic_fetch_add(&m->hist_sum_ns, (uint64_t)(ns > 0 ? ns : 0));
  atomic_fetch_add(&m->hist_count, 1);
}

static void counter(sbuf_t *o, const char *name, const char *help, uint64_t v) {
  sbuf_printf(o, "# HELP %s %s\n# TYPE %s counter\n%s %" PRIu64 "\n", name, help, name, name, v);
}

static void gauge(sbuf_t *o, const char *name, const char *help, uint64_t v) {
  sbuf_printf(o, "# HELP %s %s\n# TYPE %s gauge\n%s %" PRIu64 "\n", name, help, name, name, v);
}

static void histogram(wh_metrics_t *m, sbuf_t *o) {
  const char *n = "ripple_webhook_request_duration_seconds";
  sbuf_printf(o, "# HELP %s Time from the request's body to the answer (decision included).\n", n);
  sbuf_printf(o, "# TYPE %s histogram\n", n);
  uint64_t cum = 0;
  for (int b = 0; b < WH_HIST_BUCKETS; b++) {
    cum += atomic_load(&m->hist[b]);
    sbuf_printf(o, "%s_bucket{le=\"%g\"} %" PRIu64 "\n", n, bounds[b], cum);
  }
  cum += atomic_load(&m->hist[WH_HIST_BUCKETS]);
  sbuf_printf(o, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n", n, cum);
  sbuf_printf(o, "%s_sum %.9f\n", n, (double)atomic_load(&m->hist_sum_ns) / 1e9);
  sbuf_printf(o, "%s_count %" PRIu64 "\n", n, (uint64_t)atomic_load(&m->hist_count));
}

void wh_metrics_write(wh_metrics_t *m, const wh_gauges_t *g, sbuf_t *o) {
  counter(o, "ripple_webhook_requests_total", "Admission requests answered.",
          atomic_load(&m->requests));
  counter(o, "ripple_webhook_bad_requests_total",
          "Request bodies refused (not an AdmissionReview).", atomic_load(&m->bad_requests));
  counter(o, "ripple_webhook_skipped_total", "Writes excluded or not traceable.",
          atomic_load(&m->skipped));
  counter(o, "ripple_webhook_patched_total", "Answers that set a context (JSON Patch).",
          atomic_load(&m->patched));
  counter(o, "ripple_webhook_roots_total", "Root changes (writes by people or CI).",
          atomic_load(&m->roots));
  counter(o, "ripple_webhook_merges_total", "Merges that made a new CPID (a mergelog).",
          atomic_load(&m->merges));
  counter(o, "ripple_webhook_reused_total", "Merges answered by an existing CPID.",
          atomic_load(&m->reused));
  counter(o, "ripple_webhook_bad_annotations_total",
          "Malformed context annotations on written objects, replaced.",
          atomic_load(&m->bad_annotations));
  counter(o, "ripple_webhook_related_bad_contexts_total",
          "Malformed contexts on related objects, treated as absent.", g->tracer_bad_ctx);
  counter(o, "ripple_webhook_spans_total", "Spans emitted.", atomic_load(&m->spans));
  counter(o, "ripple_webhook_errors_total", "Internal failures (the write was allowed unchanged).",
          atomic_load(&m->errors));
  counter(o, "ripple_webhook_shipper_enqueued_total", "Records queued for the trace server.",
          g->shipper_enqueued);
  counter(o, "ripple_webhook_shipper_sent_total", "Records the trace server acknowledged.",
          g->shipper_sent);
  counter(o, "ripple_webhook_shipper_dropped_total", "Records dropped: the queue was full.",
          g->shipper_dropped);
  counter(o, "ripple_webhook_shipper_rejected_total", "Records the trace server refused.",
          g->shipper_rejected);
  gauge(o, "ripple_webhook_shipper_queued", "Records waiting to be sent.", g->shipper_queued);
  gauge(o, "ripple_webhook_ready", "1 when every informer has synced.", (uint64_t)g->ready);
  gauge(o, "ripple_webhook_informers", "Informers running.", g->informers);
  gauge(o, "ripple_webhook_informer_objects", "Objects in the informers' caches.",
        g->informer_objects);
  histogram(m, o);
}
