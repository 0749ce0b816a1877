/*
 * metrics.c - ripple-guard's /metrics in the Prometheus text format
 * (guard.h); the names are in docs/guard.md.
 */
#include "guard.h"
#include "ripplex/prom.h"
#include "ripplex/sbuf.h"

void guard_metrics_write(guard_metrics_t *m, sbuf_t *b) {
  prom_counter(b, "ripple_guard_probes_total", "Probes sent to the webhook.",
               atomic_load(&m->probes));
  prom_counter(b, "ripple_guard_probe_failures_total",
               "Probes that failed (timeout, refused, non-200, not an AdmissionReview).",
               atomic_load(&m->probe_failures));
  prom_counter(b, "ripple_guard_disabled_total",
               "Times the webhook was taken out of the write path (registration patched).",
               atomic_load(&m->disabled));
  prom_counter(b, "ripple_guard_restored_total",
               "Times the webhook was put back into the write path (registration patched).",
               atomic_load(&m->restored));
  prom_counter(b, "ripple_guard_kube_errors_total",
               "Failed reads or patches of the registration (retried with backoff).",
               atomic_load(&m->kube_errors));
  prom_counter(
      b, "ripple_guard_ca_bundle_set_total",
      "Times every webhook's caBundle was set to --ca-bundle's file (registration patched).",
      atomic_load(&m->ca_bundle_set));
  prom_counter(b, "ripple_guard_ca_bundle_errors_total",
               "Reads of --ca-bundle's file that failed or found no PEM certificate.",
               atomic_load(&m->ca_bundle_errors));
  prom_gauge(b, "ripple_guard_ca_bundle_synced",
             "1 while every webhook's caBundle equals --ca-bundle's file (always 1 without it).",
             (double)atomic_load(&m->ca_bundle_synced));
  prom_gauge(b, "ripple_guard_webhook_disabled",
             "1 while the registration carries the guard's condition (the webhook is not called).",
             (double)atomic_load(&m->webhook_disabled));
  prom_gauge(b, "ripple_guard_last_probe_ok", "1 if the last probe succeeded.",
             (double)atomic_load(&m->last_ok));
  prom_gauge(b, "ripple_guard_last_probe_seconds", "How long the last probe took.",
             (double)atomic_load(&m->last_probe_us) / 1e6);
}
