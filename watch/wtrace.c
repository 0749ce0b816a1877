/*
 * wtrace.c - changes as spans (wtrace.h). The span's CPID is the one the
 * object carries: the change it records was caused by that CPID's cascade.
 * Objects without a context are not sent: a span needs a CPID, and the
 * record in the output has the change anyway.
 */
#include "wtrace.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "wrec.h"

struct wtrace {
  ripple_shipper_t *sh;
  atomic_uint_fast64_t detail_errors;
};

int wtrace_new(const char *url, const char *token, const char *ca_file, wtrace_t **out) {
  wtrace_t *t = calloc(1, sizeof *t);
  if (!t) return RIPPLE_ENOMEM;
  ripple_shipper_opts_t o = {.url = url, .bearer_token = token, .ca_file = ca_file};
  int rc = ripple_shipper_new(&o, &t->sh);
  if (rc != RIPPLE_OK) {
    free(t);
    return rc;
  }
  *out = t;
  return RIPPLE_OK;
}

void wtrace_change(wtrace_t *t, const ripple_kube_event_t *ev, const char *resource) {
  ripple_ctx_t ctx;
  if (ripple_object_get_ctx(ev->obj_text, ev->obj_len, NULL, RIPPLE_ANC_MAX, &ctx) != RIPPLE_OK)
    return; /* no context: nothing to attach the span to */
  char ns[256] = "";
  const char *slash = strchr(ev->key, '/');
  if (slash) snprintf(ns, sizeof ns, "%.*s", (int)(slash - ev->key), ev->key);
  char name[300];
  snprintf(name, sizeof name, "%s %s", wrec_op(ev->type), resource);
  ripple_attr_t attrs[] = {
      {"object", slash ? slash + 1 : ev->key}, {"namespace", ns}, {"uid", ev->uid}, {"rv", ev->rv}};
  ripple_span_rec_t sp = {.cpid = ctx.cpid,
                          .service = "ripple-watch",
                          .name = name,
                          .start_ns = ev->time_ns,
                          .end_ns = ev->time_ns,
                          .attrs = attrs,
                          .nattrs = sizeof attrs / sizeof attrs[0]};
  while (sp.span_id == 0)
    if (getrandom(&sp.span_id, sizeof sp.span_id, 0) != (ssize_t)sizeof sp.span_id) return;
  /* A full queue drops the span and counts it (the shipper logs it). */
  (void)ripple_shipper_enqueue_span(t->sh, &sp);
}

void wtrace_detail(wtrace_t *t, const ripple_kube_event_t *ev, const wdetail_res_t *res,
                   const wdiff_redact_t *redact) {
  char *json = NULL;
  size_t len = 0;
  int rc = wdetail_format(ev, res, redact, &json, &len);
  if (rc == RIPPLE_OK)
    (void)ripple_shipper_enqueue_detail(t->sh, json, len); /* a full queue counts the drop */
  else if (rc != RIPPLE_ENOENT && atomic_fetch_add(&t->detail_errors, 1) == 0)
    ripple_log(RIPPLE_LOG_WARN, "detail_failed", "err=%s key=%s", ripple_errname(rc), ev->key);
  free(json);
}

uint64_t wtrace_detail_errors(const wtrace_t *t) { return atomic_load(&t->detail_errors); }

void wtrace_free(wtrace_t *t, uint32_t timeout_ms) {
  if (!t) return;
  ripple_shipper_free(t->sh, timeout_ms);
  free(t);
}
