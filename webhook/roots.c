/*
 * roots.c - new roots and the write's own context (roots.h): a person's
 * change, a controller's write with no traced source, a write whose cause
 * this replica cannot know; decide.c and deletes.c both start from here.
 */
#include <string.h>

#include "annotate.h"
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
