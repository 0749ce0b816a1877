/*
 * metrics.c - see metrics.h. Names start with ripple_webhook_ so they never
 * collide with the trace server's when both are scraped.
 */
#include "metrics.h"

#include <stdio.h>
#include <string.h>

#include "ctxmac.h"
#include "ripplex/prom.h"
#include "ripplex/sbuf.h"

/* Seconds; the target is p99 under 1 ms, so the buckets are fine below it. */
static const double bounds[WH_HIST_BUCKETS] = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                               0.005,   0.01,   0.025,   0.05,   0.1,   1};

/* Hops range from milliseconds (a controller's next write) to minutes (a
 * CronJob's, a slow rollout's). */
static const double hop_bounds[WH_HOP_BUCKETS] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                  0.25,  0.5,    1,     2.5,  5,     10,   60};

/* The write kinds counted apart: the workloads' resources and what a scale
 * of them writes, the objects their controllers make, and the rest of the
 * built-in kinds people write most. Anything else (custom resources
 * included) is "other", the last slot. */
static const char *const write_kinds[] = {
    "pods",
    "pods/status",
    "pods/binding",
    "pods/eviction",
    "pods/ephemeralcontainers",
    "bindings",
    "replicasets",
    "replicasets/status",
    "replicasets/scale",
    "deployments",
    "deployments/status",
    "deployments/scale",
    "statefulsets",
    "statefulsets/status",
    "statefulsets/scale",
    "daemonsets",
    "daemonsets/status",
    "replicationcontrollers",
    "replicationcontrollers/status",
    "replicationcontrollers/scale",
    "controllerrevisions",
    "jobs",
    "jobs/status",
    "cronjobs",
    "cronjobs/status",
    "services",
    "services/status",
    "endpoints",
    "endpointslices",
    "configmaps",
    "secrets",
    "serviceaccounts",
    "namespaces",
    "namespaces/status",
    "namespaces/finalize",
    "nodes",
    "nodes/status",
    "persistentvolumeclaims",
    "persistentvolumeclaims/status",
    "persistentvolumes",
    "horizontalpodautoscalers",
    "horizontalpodautoscalers/status",
    "poddisruptionbudgets",
    "poddisruptionbudgets/status",
    "ingresses",
    "networkpolicies",
    "resourcequotas",
};
_Static_assert(sizeof write_kinds / sizeof write_kinds[0] == WH_WRITE_KINDS - 1,
               "one slot per write kind and one for \"other\"");
static const char *const write_ops[WH_WRITE_OPS] = {"CREATE", "UPDATE", "DELETE", "CONNECT"};

/* The slot of resource[/subresource]: compared in place, no copy. */
static size_t write_kind(const char *resource, const char *sub) {
  size_t rn = strlen(resource);
  for (size_t i = 0; i < WH_WRITE_KINDS - 1; i++) {
    const char *k = write_kinds[i];
    if (strncmp(k, resource, rn) != 0) continue;
    if (*sub ? k[rn] == '/' && !strcmp(k + rn + 1, sub) : k[rn] == '\0') return i;
  }
  return WH_WRITE_KINDS - 1;
}

/* Operations in a JSON Patch of ours: each is one object with an "op". */
static uint64_t patch_ops(const char *p, size_t len) {
  uint64_t n = 0;
  for (const char *s = p, *end = p + len; (s = memchr(s, '{', (size_t)(end - s))); s++)
    if ((size_t)(end - s) > 5 && !memcmp(s, "{\"op\":", 6)) n++;
  return n;
}

void wh_metrics_answer(wh_metrics_t *m, const char *resource, const char *subresource, int op,
                       const char *patch, size_t patch_len, int64_t ns) {
  if (op < 0 || op >= WH_WRITE_OPS) return;
  wh_write_series_t *s =
      &m->writes[write_kind(resource ? resource : "", subresource ? subresource : "")][op];
  atomic_fetch_add(&s->answers, 1);
  atomic_fetch_add(&s->ns, (uint64_t)(ns > 0 ? ns : 0));
  if (!patch || !patch_len) return;
  atomic_fetch_add(&s->patched, 1);
  atomic_fetch_add(&s->bytes, patch_len);
  atomic_fetch_add(&s->ops, patch_ops(patch, patch_len));
}

/* ripple_webhook_write_*{resource,operation}: only the kinds answered. */
static void writes(wh_metrics_t *m, sbuf_t *o) {
  static const struct {
    const char *name, *type, *help;
  } fam[] = {
      {"ripple_webhook_write_answers_total", "counter", "Answers to writes of this kind."},
      {"ripple_webhook_write_patched_total", "counter", "Answers that carried a JSON Patch."},
      {"ripple_webhook_write_unpatched_total", "counter",
       "Answers with no patch (nothing on the object to change)."},
      {"ripple_webhook_write_patch_ops_total", "counter", "Operations in those patches."},
      {"ripple_webhook_write_patch_bytes_total", "counter",
       "Bytes of those patches (JSON, before base64)."},
      {"ripple_webhook_write_seconds_total", "counter",
       "The webhook's time on these answers, body to answer."},
  };
  for (size_t f = 0; f < sizeof fam / sizeof fam[0]; f++) {
    prom_family(o, fam[f].name, fam[f].type, fam[f].help);
    for (size_t k = 0; k < WH_WRITE_KINDS; k++)
      for (size_t op = 0; op < WH_WRITE_OPS; op++) {
        wh_write_series_t *s = &m->writes[k][op];
        uint64_t answers = atomic_load(&s->answers), patched = atomic_load(&s->patched);
        if (!answers) continue;
        char labels[96];
        snprintf(labels, sizeof labels, "resource=\"%s\",operation=\"%s\"",
                 k < WH_WRITE_KINDS - 1 ? write_kinds[k] : "other", write_ops[op]);
        if (f == 5) {
          prom_sample_d(o, fam[f].name, labels, (double)atomic_load(&s->ns) / 1e9);
          continue;
        }
        uint64_t v[] = {answers, patched, answers >= patched ? answers - patched : 0,
                        atomic_load(&s->ops), atomic_load(&s->bytes)};
        prom_sample_u(o, fam[f].name, labels, v[f]);
      }
  }
}

void wh_metrics_init(wh_metrics_t *m) { pthread_mutex_init(&m->hop_mu, NULL); }
void wh_metrics_destroy(wh_metrics_t *m) { pthread_mutex_destroy(&m->hop_mu); }

/* The series of (component, write); the last slot is "other" for all the
 * rest once the table is full, so a hostile writer cannot grow it. */
static wh_hop_series_t *hop_series(wh_metrics_t *m, const char *component, const char *write) {
  wh_hop_series_t *s = NULL;
  pthread_mutex_lock(&m->hop_mu);
  for (size_t i = 0; i < WH_HOP_SERIES - 1 && !s; i++) {
    wh_hop_series_t *c = &m->hops[i];
    if (!c->component[0]) {
      snprintf(c->component, sizeof c->component, "%s", component);
      snprintf(c->write, sizeof c->write, "%s", write);
      s = c;
    } else if (!strncmp(c->component, component, sizeof c->component - 1) &&
               !strncmp(c->write, write, sizeof c->write - 1)) {
      s = c;
    }
  }
  if (!s) {
    s = &m->hops[WH_HOP_SERIES - 1];
    if (!s->component[0]) {
      snprintf(s->component, sizeof s->component, "other");
      snprintf(s->write, sizeof s->write, "other");
    }
  }
  pthread_mutex_unlock(&m->hop_mu);
  return s;
}

void wh_metrics_hop(wh_metrics_t *m, const char *component, const char *write, int64_t ns) {
  if (!component || !*component || !write || ns < 0) return;
  wh_hop_series_t *s = hop_series(m, component, write);
  double sec = (double)ns / 1e9;
  int b = 0;
  while (b < WH_HOP_BUCKETS && sec > hop_bounds[b]) b++;
  atomic_fetch_add(&s->b[b], 1);
  atomic_fetch_add(&s->sum_ns, (uint64_t)ns);
  atomic_fetch_add(&s->count, 1);
}

void wh_metrics_observe(wh_metrics_t *m, int64_t ns) {
  size_t b = prom_bucket(bounds, WH_HIST_BUCKETS, (double)ns / 1e9);
  atomic_fetch_add(&m->hist[b], 1);
  atomic_fetch_add(&m->hist_sum_ns, (uint64_t)(ns > 0 ? ns : 0));
  atomic_fetch_add(&m->hist_count, 1);
}

static void histogram(wh_metrics_t *m, sbuf_t *o) {
  const char *n = "ripple_webhook_request_duration_seconds";
  prom_family(o, n, "histogram", "Time from the request's body to the answer (decision included).");
  uint64_t counts[WH_HIST_BUCKETS + 1];
  for (int b = 0; b <= WH_HIST_BUCKETS; b++) counts[b] = atomic_load(&m->hist[b]);
  prom_histogram(o, n, NULL,
                 &(prom_hist_t){.bounds = bounds,
                                .nbounds = WH_HIST_BUCKETS,
                                .counts = counts,
                                .sum = (double)atomic_load(&m->hist_sum_ns) / 1e9,
                                .count = atomic_load(&m->hist_count)});
}

/* ripple_webhook_contexts_refused_total{reason}: contexts the webhook did
 * not take (ctxmac.h): stored ones without a valid MAC, people's CPIDs of
 * another trace, controllers' own contexts from writers not trusted. */
static void refused(wh_metrics_t *m, sbuf_t *o) {
  const char *n = "ripple_webhook_contexts_refused_total";
  prom_family(o, n, "counter",
              "Contexts not trusted: stored without a valid MAC, a person's CPID of another "
              "trace, a context set by a writer not named by --trusted-writer.");
  for (int r = 1; r < WH_CTX_REFUSAL_N; r++)
    sbuf_printf(o, "%s{reason=\"%s\"} %llu\n", n, wh_ctx_refusal_name((wh_ctx_refusal_t)r),
                (unsigned long long)atomic_load(&m->ctx_refused[r]));
}

static void hop_labels(sbuf_t *o, const wh_hop_series_t *s) {
  sbuf_puts(o, "component=\"");
  prom_label_value(o, s->component);
  sbuf_puts(o, "\",write=\"");
  prom_label_value(o, s->write);
  sbuf_puts(o, "\"");
}

static void hops(wh_metrics_t *m, sbuf_t *o) {
  const char *n = "ripple_hop_seconds";
  prom_family(o, n, "histogram",
              "Time from a traced change's admission to a controller's write it caused.");
  sbuf_t labels;
  sbuf_init(&labels);
  for (size_t i = 0; i < WH_HOP_SERIES; i++) {
    wh_hop_series_t *s = &m->hops[i];
    pthread_mutex_lock(&m->hop_mu);
    int used = s->component[0] != '\0';
    pthread_mutex_unlock(&m->hop_mu);
    if (!used) continue;
    uint64_t counts[WH_HOP_BUCKETS + 1];
    for (int b = 0; b <= WH_HOP_BUCKETS; b++) counts[b] = atomic_load(&s->b[b]);
    labels.len = 0;
    hop_labels(&labels, s);
    sbuf_putc(&labels, '\0');
    if (labels.oom) break;
    prom_histogram(o, n, labels.p,
                   &(prom_hist_t){.bounds = hop_bounds,
                                  .nbounds = WH_HOP_BUCKETS,
                                  .counts = counts,
                                  .sum = (double)atomic_load(&s->sum_ns) / 1e9,
                                  .count = atomic_load(&s->count)});
  }
  sbuf_free(&labels);
}

void wh_metrics_write(wh_metrics_t *m, const wh_gauges_t *g, sbuf_t *o) {
  prom_counter(o, "ripple_webhook_requests_total", "Admission requests answered.",
               atomic_load(&m->requests));
  prom_counter(o, "ripple_webhook_bad_requests_total",
               "Request bodies refused (not an AdmissionReview).", atomic_load(&m->bad_requests));
  prom_counter(o, "ripple_webhook_skipped_total", "Writes excluded or not traceable.",
               atomic_load(&m->skipped));
  prom_counter(o, "ripple_webhook_patched_total", "Answers that set a context (JSON Patch).",
               atomic_load(&m->patched));
  prom_counter(o, "ripple_webhook_roots_total", "Root changes (writes by people or CI).",
               atomic_load(&m->roots));
  prom_counter(o, "ripple_webhook_merges_total", "Merges that made a new CPID (a mergelog).",
               atomic_load(&m->merges));
  prom_counter(o, "ripple_webhook_reused_total", "Merges answered by an existing CPID.",
               atomic_load(&m->reused));
  prom_counter(o, "ripple_webhook_bad_annotations_total",
               "Malformed context annotations on written objects, replaced.",
               atomic_load(&m->bad_annotations));
  prom_counter(o, "ripple_webhook_related_bad_contexts_total",
               "Malformed contexts on related objects, treated as absent.", g->tracer_bad_ctx);
  prom_counter(o, "ripple_webhook_spans_total", "Spans emitted.", atomic_load(&m->spans));
  prom_counter(o, "ripple_webhook_errors_total",
               "Internal failures (the write was allowed unchanged).", atomic_load(&m->errors));
  prom_counter(o, "ripple_webhook_spontaneous_total",
               "Controllers' writes with no traced source, made roots of their own.",
               atomic_load(&m->spontaneous));
  prom_counter(o, "ripple_webhook_cause_unknown_total",
               "Controllers' writes whose cause this replica could not know for sure (the "
               "decider unreachable): roots of their own, marked causeUnknown.",
               atomic_load(&m->cause_unknown));
  prom_counter(o, "ripple_webhook_forwarded_total",
               "Reviews forwarded to the replica that decides (the Lease's holder).",
               atomic_load(&m->forwarded));
  prom_counter(o, "ripple_webhook_forward_failed_total",
               "Reviews that could not be forwarded to the decider, decided here as uncertain.",
               atomic_load(&m->forward_failed));
  prom_counter(o, "ripple_webhook_owner_kinds_refused_total",
               "Controlling owners of a kind not followed (neither built in nor --owner-kind): "
               "no informer started.",
               atomic_load(&m->owner_kinds_refused));
  prom_counter(o, "ripple_webhook_unauthenticated_total",
               "POST /mutate refused before its body: no client certificate of --client-ca "
               "(or not a --client-name) and no peer token.",
               atomic_load(&m->unauthenticated));
  prom_counter(o, "ripple_webhook_attributes_truncated_total",
               "Span attributes cut to the trace server's limits (marked truncated).",
               atomic_load(&m->truncated));
  prom_counter(o, "ripple_webhook_deletes_caused_total",
               "Deletes traced under their cause's context (owner, namespace, deletion).",
               atomic_load(&m->deletes_caused));
  prom_counter(o, "ripple_webhook_pending_resolved_total",
               "Bindings whose span waited until the informer had their Pod.",
               atomic_load(&m->pending_resolved));
  prom_counter(o, "ripple_webhook_pending_dropped_total",
               "Bindings whose Pod never reached the informer in time (span not sent).",
               atomic_load(&m->pending_dropped));
  prom_counter(o, "ripple_webhook_traceparents_written_total",
               "Patches that set tracing.k8s.io/traceparent (--traceparent).",
               atomic_load(&m->tp_written));
  prom_counter(o, "ripple_webhook_traceparents_kept_total",
               "Writes whose own traceparent (or their owner's copy) was left as it was.",
               atomic_load(&m->tp_kept));
  prom_counter(o, "ripple_webhook_traceparent_roots_total",
               "Root changes whose CPID is a client's trace id, under the client's span.",
               atomic_load(&m->tp_roots));
  prom_counter(o, "ripple_webhook_traceparents_invalid_total",
               "Traceparents people's writes set that were malformed or no CPID (ignored).",
               atomic_load(&m->tp_invalid));
  prom_counter(o, "ripple_webhook_apiserver_traceparents_total",
               "Admission calls whose traceparent header (kube-apiserver's tracing) was taken.",
               atomic_load(&m->as_tp));
  prom_counter(o, "ripple_webhook_apiserver_traceparents_invalid_total",
               "Admission calls with a malformed or repeated traceparent header (ignored).",
               atomic_load(&m->as_tp_invalid));
  prom_counter(o, "ripple_webhook_shipper_enqueued_total", "Records queued for the trace server.",
               g->shipper_enqueued);
  prom_counter(o, "ripple_webhook_shipper_sent_total", "Records the trace server acknowledged.",
               g->shipper_sent);
  prom_counter(o, "ripple_webhook_shipper_dropped_total", "Records dropped: the queue was full.",
               g->shipper_dropped);
  prom_counter(o, "ripple_webhook_shipper_rejected_total", "Records the trace server refused.",
               g->shipper_rejected);
  prom_gauge(o, "ripple_webhook_shipper_queued", "Records waiting to be sent.",
             (double)g->shipper_queued);
  prom_gauge(o, "ripple_webhook_ready", "1 when every informer has synced.", g->ready ? 1 : 0);
  if (g->decider >= 0)
    prom_gauge(o, "ripple_webhook_decider",
               "1 when this replica decides: it holds the Lease and has settled.", g->decider);
  prom_gauge(o, "ripple_webhook_informers", "Informers running.", (double)g->informers);
  prom_gauge(o, "ripple_webhook_informer_objects", "Objects in the informers' caches.",
             (double)g->informer_objects);
  refused(m, o);
  writes(m, o);
  histogram(m, o);
  hops(m, o);
}
