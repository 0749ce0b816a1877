/*
 * roots.c - new roots and the write's own context (roots.h): a person's
 * change, a controller's write with no traced source, a write whose cause
 * this replica cannot know; decide.c and deletes.c both start from here.
 */
#include <string.h>

#include "annotate.h"
#include "ripplex/logonce.h"
#include "roots.h"

ripple_objref_t wh_objref(const wh_review_t *r, const wh_decision_t *d) {
  return (ripple_objref_t){NULL, d->kind, *r->ns ? r->ns : NULL, *r->name ? r->name : NULL,
                           *d->uid ? d->uid : NULL};
}

int wh_own_ctx(wh_t *w, const json_t *obj, const char *kind, wh_decision_t *d, ripple_ctx_t *out) {
  int rc = obj ? wh_obj_ctx(obj, kind, ripple_tracer_max_ancestors(w->tracer), out) : RIPPLE_ENOENT;
  if (rc == RIPPLE_EBADCTX || rc == RIPPLE_EVERSION || rc == RIPPLE_EINVAL) {
    d->bad_annotation = 1;
    return RIPPLE_EBADCTX;
  }
  return rc;
}

int wh_decide_new_root(wh_t *w, const wh_review_t *r, wh_decision_t *d) {
  ripple_objref_t ref = wh_objref(r, d);
  memset(&d->ctx, 0, sizeof d->ctx);
  int rc = ripple_root(w->tracer, &ref, &d->ctx);
  if (rc != RIPPLE_OK) return rc;
  d->traced = 1;
  d->how = RIPPLE_MERGE_NEW;
  return RIPPLE_OK;
}

int wh_decide_unknown(wh_t *w, const wh_review_t *r, int64_t now, wh_decision_t *d) {
  int rc = wh_decide_new_root(w, r, d);
  if (rc != RIPPLE_OK) return rc;
  d->cause_unknown = 1;
  d->how = RIPPLE_MERGE_NEW;
  d->start_ns = now;
  return RIPPLE_OK;
}

void wh_ctx_refused(wh_t *w, wh_ctx_refusal_t why, const char *kind, int dry_run) {
  if (why <= WH_CTX_OK || why >= WH_CTX_REFUSAL_N || dry_run) return;
  atomic_fetch_add(&w->m.ctx_refused[why], 1);
  /* Once per reason: a hostile writer cannot flood the log; the counter
   * says how many. */
  switch (why) {
    case WH_CTX_UNSIGNED:
      RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "context_refused", "reason=unsigned kind=%s", kind);
      break;
    case WH_CTX_BAD_MAC:
      RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "context_refused", "reason=bad_mac kind=%s", kind);
      break;
    case WH_CTX_CPID_IN_USE:
      RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "context_refused", "reason=cpid_in_use kind=%s", kind);
      break;
    default:
      RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "context_refused", "reason=untrusted_writer kind=%s", kind);
      break;
  }
}

int wh_stored_ctx(wh_t *w, const json_t *obj, const char *kind, const char *ns, int dry_run,
                  wh_decision_t *d, ripple_ctx_t *out) {
  if (!obj) return RIPPLE_ENOENT;
  int rc = d ? wh_own_ctx(w, obj, kind, d, out)
             : wh_obj_ctx(obj, kind, ripple_tracer_max_ancestors(w->tracer), out);
  if (rc != RIPPLE_OK) return rc;
  wh_ctx_refusal_t why = wh_obj_ctx_check(&w->mac, obj, kind, ns);
  if (why == WH_CTX_OK) return RIPPLE_OK;
  wh_ctx_refused(w, why, kind, dry_run);
  memset(out, 0, sizeof *out);
  return RIPPLE_ENOENT;
}
