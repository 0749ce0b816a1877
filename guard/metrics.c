/*
 * metrics.c - ripple-guard's /metrics in the Prometheus text format
 * (guard.h); the names are in docs/guard.md.
 */
#include "guard.h"
#include "ripplex/prom.h"
#include "ripplex/sbuf.h"

/* A webhook registered by Service, probed endpoint by endpoint. No label per
 * endpoint: Pod IPs come and go, and a series per IP would grow without end;
 * the guard's log names the endpoint that fails. */
static void endpoint_metrics(guard_metrics_t *m, sbuf_t *b) {
  prom_counter(b, "ripple_guard_endpoint_probes_total",
               "Probes sent to single endpoints of a webhook registered by Service.",
               atomic_load(&m->ep_probes));
  prom_counter(b, "ripple_guard_endpoint_probe_failures_total",
               "Probes of single endpoints that failed.", atomic_load(&m->ep_probe_failures));
  prom_counter(b, "ripple_guard_partial_rounds_total",
               "Rounds that counted as good although some endpoint failed.",
               atomic_load(&m->partial_rounds));
  prom_counter(b, "ripple_guard_endpointslice_errors_total",
               "Malformed EndpointSlices and endpoints skipped (counted at every read).",
               atomic_load(&m->slice_errors));
  prom_gauge(b, "ripple_guard_endpoints",
             "Ready endpoints probed in the last round (0 when probed by URL).",
             (double)atomic_load(&m->endpoints));
  prom_gauge(b, "ripple_guard_endpoints_answering", "Endpoints that answered in the last round.",
             (double)atomic_load(&m->endpoints_answering));
}

void guard_metrics_write(guard_metrics_t *m, sbuf_t *b) {
  prom_counter(b, "ripple_guard_probes_total",
               "Probes of the webhook (one per webhook and round, by URL or its endpoints).",
               atomic_load(&m->probes));
  prom_counter(b, "ripple_guard_probe_failures_total",
               "Probes of the webhook that failed (timeout, refused, non-200, not an "
               "AdmissionReview; by endpoints: none answered).",
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
  prom_gauge(b, "ripple_guard_last_probe_seconds",
             "How long the last probe took (by endpoints: the slowest of the round).",
             (double)atomic_load(&m->last_probe_us) / 1e6);
  endpoint_metrics(m, b);
}
