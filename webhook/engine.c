/*
 * engine.c - the webhook's engine (see wh.h): setup, and one request from
 * body to answer: decode (review.c), decide (decide.h), answer, then the
 * write's span (emit.h) or, for a binding whose Pod is not known yet, its
 * place in the queue (pending.h). The parts it calls never call back into
 * it (core.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <inttypes.h>
#include "ripplex/clock.h"
#include "ripplex/logonce.h"
#include "ripplex/sbuf.h"

#include "core.h"
#include "decide.h"
#include "emit.h"
#include "pending.h"
#include "traceparent.h"
#include "wh.h"

static int64_t tracer_clock(void *ud) {
  wh_t *w = ud;
  return w->o.clock_ns(w->o.hook_ud);
}

static int tracer_random(void *ud, void *buf, size_t len) {
  wh_t *w = ud;
  return w->o.random(w->o.hook_ud, buf, len);
}

int64_t wh_now(wh_t *w) { return wh_clock(w); }

int wh_new(const wh_opts_t *o, wh_t **out) {
  if (!o || !out || o->nexclude_ns > WH_EXCLUDE_MAX) return RIPPLE_EINVAL;
  wh_t *w = calloc(1, sizeof *w);
  if (!w) return RIPPLE_ENOMEM;
  w->o = *o;
  w->down = o->sink;
  int rc = RIPPLE_ENOMEM;
  for (size_t i = 0; i < o->nexclude_ns; i++)
    if (!(w->exclude_ns[i] = strdup(o->exclude_ns[i]))) goto fail;
  w->rules = o->rules;
  if (!w->rules) {
    if ((rc = ripple_rules_new(&w->own_rules)) != RIPPLE_OK) goto fail;
    w->rules = w->own_rules;
  }
  wh_metrics_init(&w->m);
  w->metrics_ok = 1;
  /* Objects' recent contexts (and Services' selectors) bridge the informers'
   * lag (milliseconds): 5 s.
   * A held context lasts as long as the change it names may still cause
   * writes (a slow rollout): an hour. Deletions are found by the deletes
   * they cause, which a namespace's or a large cascade's garbage collection
   * spreads over minutes: 10 min. */
  wh_memo_opts_t mo = {.causes = 1 << 16,
                       .recent = 1 << 14,
                       .held = 1 << 14,
                       .deleting = 1 << 13,
                       .services = 1 << 8,
                       .recent_ttl_ns = 5 * 1000000000LL,
                       .held_ttl_ns = 3600 * 1000000000LL,
                       .deleting_ttl_ns = 600 * 1000000000LL};
  if ((rc = wh_memo_new(&mo, &w->memo)) != RIPPLE_OK) goto fail;
  if ((rc = wh_pending_new(&w->pending)) != RIPPLE_OK) goto fail;
  /* People's roots are claimed as long as a held context lasts (an hour). */
  if ((rc = wh_claims_new(1 << 14, mo.held_ttl_ns, &w->claims)) != RIPPLE_OK) goto fail;
  if (o->context_key &&
      (rc = wh_ctxmac_set(&w->mac, o->context_key, o->context_key_len)) != RIPPLE_OK)
    goto fail;
  w->o.context_key = NULL; /* copied: the caller's may go */
  ripple_tracer_opts_t to = {
      .component = "ripple-webhook",
      .max_ancestors = o->max_ancestors,
      .sink = {wh_sink_mergelog, NULL, w},
      .clock_ns = o->clock_ns ? tracer_clock : NULL,
      .random = o->random ? tracer_random : NULL,
      .hook_ud = w,
  };
  if ((rc = ripple_tracer_new(&to, &w->tracer)) != RIPPLE_OK) goto fail;
  *out = w;
  return RIPPLE_OK;
fail:
  wh_free(w);
  return rc;
}

void wh_free(wh_t *w) {
  if (!w) return;
  ripple_tracer_free(w->tracer);
  wh_memo_free(w->memo);
  wh_pending_free(w->pending);
  wh_claims_free(w->claims);
  wh_ctxmac_clear(&w->mac);
  if (w->metrics_ok) wh_metrics_destroy(&w->m);
  ripple_rules_free(w->own_rules);
  for (size_t i = 0; i < WH_EXCLUDE_MAX; i++) free(w->exclude_ns[i]);
  free(w);
}

wh_metrics_t *wh_metrics(wh_t *w) { return &w->m; }
ripple_tracer_t *wh_tracer(wh_t *w) { return w->tracer; }

static int bad_request(wh_t *w, const char *msg, sbuf_t *out) {
  atomic_fetch_add(&w->m.bad_requests, 1);
  char q[300];
  ripple_log_quote(msg, q, sizeof q);
  RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "bad_request", "error=%s", q);
  sbuf_puts(out, "{\"error\":");
  sbuf_json_str(out, msg);
  sbuf_puts(out, "}");
  return 400;
}

static void count(wh_t *w, const wh_decision_t *d) {
  if (d->skip && !d->traced) atomic_fetch_add(&w->m.skipped, 1);
  if (d->patch) atomic_fetch_add(&w->m.patched, 1);
  if (d->bad_annotation) atomic_fetch_add(&w->m.bad_annotations, 1);
  if (d->spontaneous) atomic_fetch_add(&w->m.spontaneous, 1);
  if (d->cause_unknown) atomic_fetch_add(&w->m.cause_unknown, 1);
  if (d->tp_written) atomic_fetch_add(&w->m.tp_written, 1);
  if (d->tp_kept) atomic_fetch_add(&w->m.tp_kept, 1);
  if (d->tp_root) atomic_fetch_add(&w->m.tp_roots, 1);
  if (d->tp_invalid) atomic_fetch_add(&w->m.tp_invalid, 1);
  if (d->root)
    atomic_fetch_add(&w->m.roots, 1);
  else if (d->how == RIPPLE_MERGE_NEW)
    atomic_fetch_add(&w->m.merges, 1);
  else if (d->how == RIPPLE_MERGE_REUSED)
    atomic_fetch_add(&w->m.reused, 1);
}

static void log_decision(const wh_review_t *r, const wh_decision_t *d, int64_t ns) {
  if (d->traced) ripple_log_set_ctx(&d->ctx);
  char user[160];
  ripple_log_quote(r->user, user, sizeof user);
  ripple_log(RIPPLE_LOG_DEBUG, "admitted",
             "op=%s resource=%s%s%s ns=%s name=%s user=%s how=%s patched=%d skip=%s us=%lld",
             r->op_name, r->resource, *r->subresource ? "/" : "", r->subresource, r->ns, r->name,
             user, d->traced ? ripple_merge_kind_name(d->how) : "none", d->patch != NULL,
             d->skip ? d->skip : "-", (long long)(ns / 1000));
  if (d->traced) ripple_log_set_ctx(NULL);
}

int wh_handle(wh_t *w, const char *body, size_t len, sbuf_t *out) {
  return wh_handle_as(w, WH_DECIDER, body, len, out);
}

int wh_handle_as(wh_t *w, wh_certainty_t how, const char *body, size_t len, sbuf_t *out) {
  return wh_handle_call(w, how, NULL, body, len, out);
}

int wh_handle_call(wh_t *w, wh_certainty_t how, const char *apiserver_tp, const char *body,
                   size_t len, sbuf_t *out) {
  int64_t t0 = mono_ns();
  wh_review_t r;
  char err[256];
  if (wh_review_decode(body, len, &r, err, sizeof err) != RIPPLE_OK)
    return bad_request(w, err, out);
  /* Read by the span only (emit.c): never by wh_decide, the patch or the CPID. */
  wh_apiserver_tp_take(apiserver_tp, &r);
  wh_decision_t d;
  int rc = wh_decide(w, &r, how, wh_now(w), &d);
  if (rc != RIPPLE_OK) {
    atomic_fetch_add(&w->m.errors, 1);
    RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "decision_failed", "error=%s resource=%s", ripple_errname(rc),
                    r.resource);
    wh_decision_free(&d);
    d.traced = d.root = 0;
  }
  char warning[64] = "";
  if (d.root) {
    char id[RIPPLE_CPID_STRLEN + 1];
    ripple_cpid_format(&d.ctx.cpid, id);
    snprintf(warning, sizeof warning, "ripple: cpid %s", id);
  }
  char audit_span[17] = "", audit_cpid[RIPPLE_CPID_STRLEN + 1] = "";
  if ((d.traced || d.pending) && !r.dry_run) {
    d.span_id = wh_span_id(w);
    snprintf(audit_span, sizeof audit_span, "%016" PRIx64, d.span_id);
    if (d.traced) ripple_cpid_format(&d.ctx.cpid, audit_cpid);
  }
  wh_review_respond(out, r.uid, d.patch, d.patch_len, warning, audit_span, audit_cpid);
  if (d.traced && !r.dry_run) wh_emit_span(w, &r, &d, wh_now(w));
  if (d.pending && !r.dry_run) wh_pending_add(w, &r, &d, wh_now(w));
  count(w, &d);
  /* The time so far (the log line is not part of the answer's cost). */
  if (w->o.log_requests) log_decision(&r, &d, mono_ns() - t0);
  wh_metrics_answer(&w->m, r.resource, r.subresource, (int)r.op, d.patch, d.patch_len,
                    mono_ns() - t0);
  wh_decision_free(&d);
  wh_review_free(&r);
  atomic_fetch_add(&w->m.requests, 1);
  wh_metrics_observe(&w->m, mono_ns() - t0);
  return 200;
}
