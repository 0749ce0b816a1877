/*
 * metrics.c - ripple-guard's /metrics in the Prometheus text format
 * (guard.h); the names are in docs/guard.md.
 */
#include "guard.h"
#include "ripplex/sbuf.h"

static void counter(sbuf_t *b, const char *name, const char *help, uint64_t v) {
  sbuf_printf(b, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name,
              (unsigned long long)v);
}

static void gauge(sbuf_t *b, const char *name, const char *help, double v) {
  sbuf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n%s %.6f\n", name, help, name, name, v);
}

void guard_metrics_write(guard_metrics_t *m, sbuf_t *b) {
  counter(b, "ripple_guard_probes_total", "Probes sent to the webhook.", atomic_load(&m->probes));
  counter(b, "ripple_guard_probe_failures_total",
          "Probes that failed (timeout, refused, non-200, not an AdmissionReview).",
          atomic_load(&m->probe_failures));
  counter(b, "ripple_guard_disabled_total",
          "Times the webhook was taken out of the write path (registration patched).",
          atomic_load(&m->disabled));
  counter(b, "ripple_guard_restored_total",
          "Times the webhook was put back into the write path (registration patched).",
          atomic_load(&m->restored));
  counter(b, "ripple_guard_kube_errors_total",
          "Failed reads or patches of the registration (retried with backoff).",
          atomic_load(&m->kube_errors));
  gauge(b, "ripple_guard_webhook_disabled",
        "1 while the registration carries the guard's condition (the webhook is not called).",
        atomic_load(&m->webhook_disabled));
  gauge(b, "ripple_guard_last_probe_ok", "1 if the last probe succeeded.",
        atomic_load(&m->last_ok));
  gauge(b, "ripple_guard_last_probe_seconds", "How long the last probe took.",
        (double)atomic_load(&m->last_probe_us) / 1e6);
}
