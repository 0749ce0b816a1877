/*
 * deletes.c - whose change a delete belongs to.
 *
 * A delete carries nothing (the object goes away), so what the trace needs
 * is its span, under the CPID of the change that caused it, with the deleted
 * object's own last CPID kept as the attribute lastCpid. The cause is, in
 * this order:
 *   - for a person's or CI's delete, the delete itself: a root change (the
 *     root its client gave the object in a write just before, if any);
 *   - the change already deleting this object (a Pod deleted gracefully is
 *     deleted again by its kubelet);
 *   - the deletion of its namespace (the namespace controller empties it);
 *   - the deletion of its controlling owner (the garbage collector's
 *     cascade), or else the owner's current context (a ReplicaSet scaled
 *     down by a rollout deletes its Pods);
 *   - else the object's own last context, or, when it had none, a
 *     spontaneous root.
 * Each decided delete is remembered by the object's uid (memo.h), so the
 * deletes that follow from it find it, and the object's recent entry is
 * forgotten, so a new object of the same name never inherits its context.
 * A delete of a collection (name "", no old object) finds its cause only in
 * its namespace's deletion.
 *
 * One delete never reaches a webhook: kube-apiserver deletes a Service's
 * Endpoints (same namespace and name) itself, once the Service is gone, in
 * the Service storage's AfterDelete hook (kubernetes
 * pkg/registry/core/service/storage/storage.go, REST.afterDelete:
 * r.endpoints.Delete with rest.ValidateAllObjectFunc), inside the Service's
 * DELETE: no admission, no audit event. The endpoints controller's own
 * delete then finds nothing (404 before admission), and so does the
 * namespace controller's collection delete of endpoints when the Services
 * went first (it visits resources in discovery's map order). So the
 * Service's DELETE writes that span too (service_endpoints below).
 */
#include <stdio.h>
#include <string.h>

#include "deletes.h"
#include "emit.h"
#include "objtext.h"
#include "roots.h"
#include "sources.h"

static const char *meta(const json_t *obj, const char *key) {
  const json_t *v = json_object_get(json_object_get(obj, "metadata"), key);
  return json_is_string(v) ? json_string_value(v) : "";
}

/* A controller's delete: the cause as the file's comment lists it. */
static int controller_cause(wh_t *w, const wh_review_t *r, const wh_decision_t *d, int64_t now,
                            ripple_ctx_t *out) {
  const json_t *old = r->old;
  if (old && wh_memo_deleting_get(w->memo, d->kind, r->name, d->uid, now, out) == RIPPLE_OK)
    return RIPPLE_OK;
  if (*r->ns && wh_memo_deleting_get(w->memo, "Namespace", r->ns, NULL, now, out) == RIPPLE_OK)
    return RIPPLE_OK;
  if (!old) return RIPPLE_ENOENT;
  char owner_uid[64] = "";
  ripple_ctx_t cur;
  int orc = wh_owner_ctx(w, old, r->ns, now, owner_uid, sizeof owner_uid, &cur);
  if (*owner_uid && wh_memo_deleting_get(w->memo, "", NULL, owner_uid, now, out) == RIPPLE_OK)
    return RIPPLE_OK;
  if (orc == RIPPLE_OK) {
    *out = cur;
    return RIPPLE_OK;
  }
  return RIPPLE_ENOENT;
}

/* Whether this DELETE removes the Service at once, and with it its Endpoints:
 * not when it waits for finalizers (its own, or the garbage collector's for
 * a Foreground or Orphan delete); the API server deletes the Endpoints when
 * an update clears the last one, and that is not traced. */
static int goes_at_once(const wh_review_t *r) {
  const json_t *m = json_object_get(r->old, "metadata");
  if (json_object_get(m, "deletionTimestamp") || json_array_size(json_object_get(m, "finalizers")))
    return 0;
  const json_t *opts = json_object_get(json_object_get(r->doc, "request"), "options");
  const char *pp = json_string_value(json_object_get(opts, "propagationPolicy"));
  if (pp && (!strcmp(pp, "Foreground") || !strcmp(pp, "Orphan"))) return 0;
  return !json_is_true(json_object_get(opts, "orphanDependents"));
}

static void take_standin(void *ud, const char *json, size_t len) {
  json_t **o = ud;
  json_decref(*o);
  if (wh_text_standin(json, len, "Endpoints", o) != RIPPLE_OK) *o = NULL;
}

/* The Service's DELETE d was decided: the span of kube-apiserver's own
 * delete of its Endpoints (the file's comment), under the same cause, with
 * the Endpoints' last context as lastCpid. Nothing when no Endpoints of that
 * name is known, or its delete was admitted already (the namespace
 * controller's or the endpoints controller's came first). The Endpoints is
 * remembered as deleting, so an endpoints controller's delete that still
 * reaches admission (it raced the API server's and will get a 404) is
 * under the same cause. */
static void service_endpoints(wh_t *w, const wh_review_t *r, const wh_decision_t *d, int64_t now) {
  if (*r->group || strcmp(r->resource, "services") != 0 || *r->subresource || !r->old ||
      !*r->name || !goes_at_once(r))
    return;
  wh_decision_t e = {0};
  ripple_ctx_t last, seen;
  int has_last = 0;
  json_t *ep = NULL;
  wh_lookup_get(w, "Endpoints", r->ns, r->name, take_standin, &ep);
  if (ep) {
    snprintf(e.uid, sizeof e.uid, "%s", meta(ep, "uid"));
    snprintf(e.rv, sizeof e.rv, "%s", meta(ep, "resourceVersion"));
    has_last = wh_related_ctx(w, ep, "Endpoints", now, &last) == RIPPLE_OK;
    json_decref(ep);
    if (wh_memo_deleting_get(w->memo, "Endpoints", r->name, e.uid, now, &seen) == RIPPLE_OK) return;
  } else if (wh_memo_recent_get(w->memo, "Endpoints", r->ns, r->name, NULL, now, &last) ==
             RIPPLE_OK) {
    has_last = 1; /* written moments ago, not in the informer yet */
  } else {
    return;
  }
  static const char user[] = "system:apiserver";
  wh_review_t er = *r;
  er.kind = "Endpoints";
  er.resource = "endpoints";
  er.user = user;
  er.object = er.old = NULL;
  snprintf(e.kind, sizeof e.kind, "Endpoints");
  wh_users_classify(w->o.users, user, e.service, sizeof e.service);
  e.traced = 1;
  e.ctx = d->ctx;
  e.how = RIPPLE_MERGE_UNCHANGED;
  e.start_ns = d->start_ns;
  e.has_last = has_last;
  if (has_last) e.last = last.cpid;
  wh_emit_span(w, &er, &e, wh_clock(w));
  wh_memo_deleting_put(w->memo, "Endpoints", r->name, e.uid, &d->ctx, now);
  wh_memo_recent_forget(w->memo, "Endpoints", r->ns, r->name);
}

int wh_decide_delete(wh_t *w, const wh_review_t *r, wh_actor_t actor, wh_certainty_t how,
                     int64_t now, wh_decision_t *d) {
  ripple_ctx_t last, cause;
  /* The deleted object's context counts only with its MAC (ctxmac.h). */
  if (wh_stored_ctx(w, r->old, d->kind, r->ns, r->dry_run, d, &last) == RIPPLE_OK) {
    d->has_last = 1;
    d->last = last.cpid;
  }
  int rc;
  ripple_ctx_t just;
  if (actor == WH_ACTOR_USER && r->old &&
      wh_memo_recent_get(w->memo, d->kind, r->ns, r->name, d->uid, now, &just) == RIPPLE_OK &&
      just.nanc == 0) {
    /* A root given to this very object moments ago: kubectl ripple delete
     * writes its CPID in a patch just before the DELETE, which carries none. */
    d->ctx = just;
    d->how = RIPPLE_MERGE_UNCHANGED;
    d->root = d->traced = 1;
  } else if (actor == WH_ACTOR_USER) {
    if ((rc = wh_decide_new_root(w, r, d)) != RIPPLE_OK) return rc;
    d->root = 1;
  } else if (how == WH_UNCERTAIN) {
    /* The deletion that caused it may be another replica's to know. */
    if ((rc = wh_decide_unknown(w, r, now, d)) != RIPPLE_OK) return rc;
  } else if (controller_cause(w, r, d, now, &cause) == RIPPLE_OK) {
    if (!r->dry_run) atomic_fetch_add(&w->m.deletes_caused, 1);
    d->ctx = cause;
    d->how = RIPPLE_MERGE_UNCHANGED;
    d->traced = 1;
    int64_t t = wh_memo_cause_get(w->memo, &cause.cpid);
    if (t > 0 && t <= now) d->start_ns = t;
  } else if (d->has_last) {
    d->ctx = last;
    d->how = RIPPLE_MERGE_UNCHANGED;
    d->traced = 1;
  } else {
    if ((rc = wh_decide_new_root(w, r, d)) != RIPPLE_OK) return rc;
    d->spontaneous = 1;
  }
  if (r->dry_run) return RIPPLE_OK;
  const char *uid = r->old ? meta(r->old, "uid") : "";
  wh_memo_deleting_put(w->memo, d->kind, r->name, uid, &d->ctx, now);
  wh_memo_recent_forget(w->memo, d->kind, r->ns, r->name);
  if (!*r->group && !strcmp(r->resource, "services"))
    wh_memo_service_forget(w->memo, r->ns, r->name);
  service_endpoints(w, r, d, now);
  return RIPPLE_OK;
}
