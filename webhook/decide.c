/*
 * decide.c - the decision for one write: which context the object gets.
 *
 * First, where a context can go at all (the "carrier"): the object itself for
 * writes to a main resource or its status; for pods/binding the Binding,
 * under the Pod's key, because the API server copies a Binding's annotations
 * onto the Pod; a scale write keeps nothing but spec.replicas, so its context
 * is only remembered (memo.h) for the controller that reacts to it; deletes
 * and other subresources carry nothing; deletes get their cause's context in
 * their span (deletes.c).
 *
 * Then who wrote (users.c). A person's or CI's write is a root change: it
 * keeps the CPID its client put in the annotation in this very write, or gets
 * a fresh one, and either way a root mergelog goes out. A controller's write
 * merges the object's previous context with the contexts of the objects it
 * was caused by (sources.c) through ripple_merge, which reuses a CPID
 * whenever one descends from all the others: the answer is idempotent. A
 * controller's write with no traced source at all (a CronJob's tick, a
 * resync of an object nobody traced) starts a root of its own, marked
 * spontaneous.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "annotate.h"
#include "ctxmac.h"
#include "decide.h"
#include "deletes.h"
#include "emit.h"
#include "objtext.h"
#include "ripplex/cpid.h"
#include "ripplex/logonce.h"
#include "roots.h"
#include "sources.h"
#include "stamp.h"
#include "traceparent.h"

typedef enum carrier { CARRY_OBJECT, CARRY_BINDING, CARRY_REMEMBER, CARRY_NONE } carrier_t;

static const char *scale_parent(const char *resource) {
  static const char *const t[][2] = {{"deployments", "Deployment"},
                                     {"replicasets", "ReplicaSet"},
                                     {"statefulsets", "StatefulSet"},
                                     {"replicationcontrollers", "ReplicationController"}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (!strcmp(resource, t[i][0])) return t[i][1];
  return NULL;
}

static carrier_t carrier_of(const wh_review_t *r, const char **kind) {
  *kind = r->kind;
  if (r->op == WH_OP_DELETE || r->op == WH_OP_CONNECT) return CARRY_NONE;
  if (!*r->subresource || !strcmp(r->subresource, "status")) return CARRY_OBJECT;
  if (!strcmp(r->subresource, "binding") && !strcmp(r->resource, "pods") && !*r->group) {
    *kind = "Pod";
    return CARRY_BINDING;
  }
  if (!strcmp(r->subresource, "scale") && (*kind = scale_parent(r->resource))) {
    return CARRY_REMEMBER;
  }
  *kind = r->kind;
  return CARRY_NONE;
}

/* What can never matter, as the registration's matchConditions say too
 * (webhook/deploy/): a registration that sends them anyway costs a request,
 * never a trace. */
static const char *excluded(const wh_t *w, const wh_review_t *r) {
  /* The reviews of authentication.k8s.io and authorization.k8s.io are asked,
   * never stored; a custom resource may be called "reviews" too. */
  int review_group =
      !strcmp(r->group, "authentication.k8s.io") || !strcmp(r->group, "authorization.k8s.io");
  size_t n = strlen(r->resource);
  if (!strcmp(r->resource, "leases") || !strcmp(r->resource, "events") ||
      (review_group && n > 7 && !strcmp(r->resource + n - 7, "reviews")) ||
      (!strcmp(r->resource, "nodes") && !strcmp(r->subresource, "status")) ||
      (!strcmp(r->resource, "serviceaccounts") && !strcmp(r->subresource, "token")))
    return "excluded_resource";
  for (size_t i = 0; i < w->o.nexclude_ns; i++)
    if (*r->ns && !strcmp(r->ns, w->exclude_ns[i])) return "excluded_namespace";
  return NULL;
}

static void copy_meta(const json_t *obj, wh_decision_t *d) {
  const json_t *m = json_object_get(obj, "metadata");
  const char *uid = json_string_value(json_object_get(m, "uid"));
  const char *rv = json_string_value(json_object_get(m, "resourceVersion"));
  if (uid) snprintf(d->uid, sizeof d->uid, "%s", uid);
  if (rv) snprintf(d->rv, sizeof d->rv, "%s", rv);
  wh_owner_of(obj, d->owner, sizeof d->owner);
}

static int patch_object(const json_t *obj, const char *kind, wh_decision_t *d) {
  int changed = 0;
  int rc = wh_obj_patch(obj, kind, &d->ctx, &d->patch, &d->patch_len, &changed);
  if (rc == RIPPLE_OK) { /* the object's context is d->ctx now: its MAC goes beside it */
    d->mac = WH_MAC_SIGN;
    d->mac_ctx = d->ctx;
  }
  if (rc == RIPPLE_OK && !changed) {
    ripple_free(d->patch);
    d->patch = NULL;
    d->patch_len = 0;
  }
  d->wrote_ctx = rc == RIPPLE_OK && changed;
  return rc;
}

/* Where a write's context is held in the webhook's memory instead of the
 * object (memo.h): a scale's (it cannot carry one), and an update's of a
 * Deployment. The Deployment controller copies a Deployment's annotations
 * onto its current ReplicaSet and writes that ReplicaSet again whenever they
 * differ, so a context changed on a Deployment after its creation would cost
 * the cluster a write it would not have made; the lab counted two. A
 * Deployment's create still carries its context (no ReplicaSet exists yet). */
static int holds(const wh_review_t *r, carrier_t c, const wh_decision_t *d) {
  return c == CARRY_REMEMBER ||
         (c == CARRY_OBJECT && r->op == WH_OP_UPDATE && !strcmp(d->kind, "Deployment"));
}

/* A held object's annotation stays what it was, even when the client changed
 * it (kubectl ripple writes its root there): the context is held instead.
 * Its MAC too, as stored: a context put back is as trusted as it was. */
static int keep_annotation(wh_t *w, const wh_review_t *r, wh_decision_t *d) {
  ripple_ctx_t was, now_ctx;
  uint32_t max = ripple_tracer_max_ancestors(w->tracer);
  int orc = r->old ? wh_obj_ctx(r->old, d->kind, max, &was) : RIPPLE_ENOENT;
  int nrc = wh_obj_ctx(r->object, d->kind, max, &now_ctx);
  if (orc == RIPPLE_OK) {
    ripple_ctx_t keep = d->ctx;
    d->ctx = was;
    int rc = patch_object(r->object, d->kind, d);
    d->ctx = keep;
    d->wrote_ctx = 0; /* the stored context put back: not the write's */
    d->mac = WH_MAC_OLD;
    return rc;
  }
  if (orc == RIPPLE_ENOENT && nrc != RIPPLE_ENOENT) {
    d->mac = WH_MAC_DROP;
    return wh_obj_patch_remove(d->kind, &d->patch, &d->patch_len);
  }
  return RIPPLE_OK; /* a malformed stored value: left as it was */
}

/* Whether the write itself sets kind's MAC: present on a create, changed on
 * an update. A person's context with a MAC beside it was copied from an
 * object (kubectl ripple writes none). */
static int mac_by_client(const wh_review_t *r, const char *kind) {
  char key[WH_CTXMAC_KEYNAME_MAX];
  if (wh_ctxmac_keyname(kind, key, sizeof key) != RIPPLE_OK) return 0;
  const json_t *now =
      json_object_get(json_object_get(json_object_get(r->object, "metadata"), "annotations"), key);
  if (!now) return 0;
  const json_t *was =
      json_object_get(json_object_get(json_object_get(r->old, "metadata"), "annotations"), key);
  return !was || !json_equal(now, was);
}

/* Whether a person may have the CPID it set in this write (mac: a context
 * annotation, whose MAC is looked at too; else a traceparent's trace id).
 * A CPID is a person's to choose only while it names no one else's change:
 * not one this webhook issued or took before, unless this very user set it
 * (a conflict's retry, one change over several objects: kubectl ripple
 * apply) or this very object got it moments ago (kubectl ripple delete's
 * patch before its DELETE, a retry); and not a context copied from an object
 * (a MAC beside it). Any other gets a fresh root: a trace is evidence. */
static int cpid_free(wh_t *w, const wh_review_t *r, const wh_decision_t *d, const ripple_cpid_t *id,
                     int mac, int64_t now) {
  if (mac && w->mac.len &&
      (mac_by_client(r, d->kind) ||
       wh_obj_ctx_check(&w->mac, r->object, d->kind, r->ns) == WH_CTX_OK))
    return 0;
  if (wh_claims_by(w->claims, id, r->user ? r->user : "", now)) return 1;
  ripple_ctx_t just;
  if (*r->name &&
      wh_memo_recent_get(w->memo, d->kind, r->ns, r->name, d->uid, now, &just) == RIPPLE_OK &&
      just.nanc == 0 && cpid_eq(&just.cpid, id))
    return 1;
  return wh_memo_cause_get(w->memo, id) == 0;
}

static int decide_root(wh_t *w, const wh_review_t *r, carrier_t c, int64_t now, wh_decision_t *d) {
  ripple_ctx_t client, old;
  wh_traceparent_t tp;
  const json_t *obj = r->object;
  int crc = c == CARRY_REMEMBER ? RIPPLE_ENOENT : wh_own_ctx(w, obj, d->kind, d, &client);
  int orc = c == CARRY_OBJECT && r->old ? wh_own_ctx(w, r->old, d->kind, d, &old) : RIPPLE_ENOENT;
  /* Only a CPID set in this very write is the client's; one carried over
   * from the stored object belongs to an earlier change. */
  int by_client = crc == RIPPLE_OK && (orc != RIPPLE_OK || !cpid_eq(&client.cpid, &old.cpid));
  if (by_client && !cpid_free(w, r, d, &client.cpid, 1, now)) {
    wh_ctx_refused(w, WH_CTX_CPID_IN_USE, d->kind, r->dry_run);
    by_client = 0;
  }
  /* With --traceparent, a client's W3C trace id is its root CPID, unless
   * the client set ripple's own context too (kubectl ripple), which wins. */
  int from_tp = c == CARRY_OBJECT && wh_traceparent_client(w, r, d, &tp) == RIPPLE_OK;
  if (from_tp && !by_client && !cpid_free(w, r, d, &tp.trace_id, 0, now)) {
    wh_ctx_refused(w, WH_CTX_CPID_IN_USE, d->kind, r->dry_run);
    from_tp = 0;
  }
  if (by_client || from_tp) {
    memset(&d->ctx, 0, sizeof d->ctx);
    /* a root has no ancestors, whatever the client said */
    d->ctx.cpid = by_client ? client.cpid : tp.trace_id;
    /* Once per CPID: kube-apiserver admits a write again when its update
     * retries on a conflict, and two mergelogs of one CPID in one batch make
     * the trace server refuse the whole batch (the rest lost with it). */
    if (!r->dry_run && w->down.mergelog && !wh_memo_cause_get(w->memo, &d->ctx.cpid)) {
      ripple_objref_t ref = wh_objref(r, d);
      ripple_mergelog_t ml = {
          .cpid = d->ctx.cpid, .time_ns = now, .component = d->service, .object = &ref};
      w->down.mergelog(w->down.ud, &ml);
    }
    if (!r->dry_run) wh_claims_put(w->claims, &d->ctx.cpid, r->user ? r->user : "", now);
  } else {
    int rc = wh_decide_new_root(w, r, d);
    if (rc != RIPPLE_OK) return rc;
  }
  /* The write's span hangs under the client's span: one trace. */
  if (from_tp && cpid_eq(&d->ctx.cpid, &tp.trace_id)) {
    d->parent_id = tp.span_id;
    d->tp_root = 1;
  }
  d->root = d->traced = 1;
  d->how = RIPPLE_MERGE_NEW;
  d->start_ns = now;
  d->held = holds(r, c, d);
  if (c == CARRY_OBJECT && d->held) return keep_annotation(w, r, d);
  if (c == CARRY_OBJECT || c == CARRY_BINDING) return patch_object(obj, d->kind, d);
  return RIPPLE_OK;
}

/* A binding's Pod: what the engine reads of it is in its metadata (its
 * context, identity and owner), so a stand-in of it (objtext.c) will do. */
static void take_pod(void *ud, const char *json, size_t len) {
  json_t **pod = ud;
  json_decref(*pod);
  *pod = NULL;
  if (wh_text_standin(json, len, "Pod", pod) != RIPPLE_OK)
    RIPPLE_LOG_ONCE(RIPPLE_LOG_WARN, "related_unreadable", "kind=%s", "Pod");
}

/* The uid a Binding names: the scheduler sets its Pod's (may be ""). */
static const char *binding_uid(const wh_review_t *r) {
  const json_t *v = json_object_get(json_object_get(r->object, "metadata"), "uid");
  return json_is_string(v) ? json_string_value(v) : "";
}

/* The write's target: its object's previous context, or for a binding the
 * Pod's. For a binding *pod receives the Pod (a new reference), and
 * *unknown is set when neither memory nor the informer knows the Pod yet
 * (the scheduler binds within milliseconds of a create). */
static void target_of(wh_t *w, const wh_review_t *r, carrier_t c, int64_t now, wh_decision_t *d,
                      ripple_ctx_t *target, json_t **pod, int *unknown, int *stale) {
  memset(target, 0, sizeof *target);
  *pod = NULL;
  *unknown = *stale = 0;
  if (c == CARRY_BINDING) {
    const char *uid = binding_uid(r);
    snprintf(d->uid, sizeof d->uid, "%s", uid);
    if (wh_memo_recent_get(w->memo, "Pod", r->ns, r->name, uid, now, target) == RIPPLE_OK) return;
    wh_lookup_get(w, "Pod", r->ns, r->name, take_pod, pod);
    const char *puid =
        *pod ? json_string_value(json_object_get(json_object_get(*pod, "metadata"), "uid")) : NULL;
    if (*pod && *uid && (!puid || strcmp(puid, uid) != 0)) { /* an older Pod of that name */
      json_decref(*pod);
      *pod = NULL;
    }
    if (!*pod) {
      *unknown = 1;
      return;
    }
    copy_meta(*pod, d);
    if (wh_related_ctx(w, *pod, "Pod", now, target) != RIPPLE_OK) memset(target, 0, sizeof *target);
    return;
  }
  ripple_ctx_t old;
  int64_t gen;
  if (wh_memo_held_get(w->memo, d->uid, now, target, &gen) == RIPPLE_OK) {
    *stale = r->old && wh_gen_behind(r->old, gen);
    return;
  }
  /* The stored object's context counts only with its MAC (ctxmac.h). */
  if (wh_stored_ctx(w, r->old, d->kind, r->ns, r->dry_run, d, &old) == RIPPLE_OK) *target = old;
  *stale = r->old && wh_ctx_stale(r->old, d->kind);
}

/* When the write's cause was admitted: the latest of the merged changes for
 * a new CPID (newest() looked them up already), else the first write of the
 * CPID it keeps. */
static int64_t cause_time(wh_t *w, const wh_decision_t *d, int64_t sources_newest, int64_t now) {
  int64_t t =
      d->how == RIPPLE_MERGE_NEW ? sources_newest : wh_memo_cause_get(w->memo, &d->ctx.cpid);
  return t > 0 && t <= now ? t : now;
}

/* A Deployment's annotations are copied onto its ReplicaSet by the
 * Deployment controller, which writes the ReplicaSet again whenever the copy
 * differs: a context changed on a status write would cost a write. */
static int frozen(const wh_t *w, const wh_review_t *r, const wh_decision_t *d) {
  return !strcmp(d->kind, "Deployment") && !strcmp(r->subresource, "status") &&
         !w->o.deployment_status_ctx;
}

/* A CronJob's Job is caused by the clock, not by the CronJob's last change:
 * each run gets a CPID of its own, marked spontaneous, made from the
 * CronJob's (a mergelog with that one source), so the CronJob's trace holds
 * every run and a run's trace only its own Job and Pods. */
static int is_tick(const wh_review_t *r, const wh_decision_t *d) {
  return r->op == WH_OP_CREATE && !strcmp(d->kind, "Job") &&
         !strcmp(d->service, "cronjob-controller");
}

static int decide_tick(wh_t *w, const wh_review_t *r, const ripple_ctx_t *from, int64_t now,
                       wh_decision_t *d) {
  memset(&d->ctx, 0, sizeof d->ctx);
  int rc = ripple_cpid_generate(&d->ctx.cpid);
  if (rc != RIPPLE_OK) return rc;
  uint32_t max = ripple_tracer_max_ancestors(w->tracer);
  if (max > 0) d->ctx.anc[d->ctx.nanc++] = from->cpid;
  for (uint32_t i = 0; i < from->nanc && d->ctx.nanc < max; i++)
    d->ctx.anc[d->ctx.nanc++] = from->anc[i];
  if (!r->dry_run && w->down.mergelog) {
    ripple_objref_t ref = wh_objref(r, d);
    ripple_mergelog_t ml = {.cpid = d->ctx.cpid,
                            .sources = &from->cpid,
                            .nsources = 1,
                            .time_ns = now,
                            .component = d->service,
                            .object = &ref};
    w->down.mergelog(w->down.ud, &ml);
  }
  d->how = RIPPLE_MERGE_NEW;
  d->spontaneous = d->traced = 1;
  d->start_ns = now;
  return patch_object(r->object, d->kind, d);
}

/* A controller's write this replica cannot decide for sure (WH_UNCERTAIN):
 * a root of its own, on the object as any context is, so that the writes it
 * causes descend from a marked root rather than from the object's older
 * context. A held object keeps its annotation, as always. */
static int decide_uncertain(wh_t *w, const wh_review_t *r, carrier_t c, int64_t now,
                            wh_decision_t *d) {
  int rc = wh_decide_unknown(w, r, now, d);
  if (rc != RIPPLE_OK) return rc;
  d->held = holds(r, c, d);
  if (c == CARRY_OBJECT && d->held) return keep_annotation(w, r, d);
  return patch_object(r->object, d->kind, d);
}

/* A context the writer put in the write itself (one carried over from the
 * stored object is not new): a source of an instrumented controller named
 * by --trusted-writer. Any other could claim to descend from any change
 * (ctxmac.h): its write is decided as an uninstrumented controller's, and
 * the context it set replaced. 1 when one was ignored so; *mrc: how reading
 * it went. */
static int own_source(wh_t *w, const wh_review_t *r, carrier_t c, wh_decision_t *d,
                      const ripple_ctx_t *target, wh_sources_t *s, int *mrc) {
  ripple_ctx_t mine, old;
  *mrc = c != CARRY_REMEMBER ? wh_own_ctx(w, r->object, d->kind, d, &mine) : RIPPLE_ENOENT;
  int carried =
      c == CARRY_OBJECT && r->old &&
      wh_obj_ctx(r->old, d->kind, ripple_tracer_max_ancestors(w->tracer), &old) == RIPPLE_OK &&
      ripple_ctx_equal(&mine, &old);
  if (*mrc != RIPPLE_OK || carried || ripple_ctx_equal(&mine, target)) return 0;
  if (wh_users_trusted(w->o.users, r->user)) {
    s->ctx[s->n++] = mine;
    return 0;
  }
  wh_ctx_refused(w, WH_CTX_UNTRUSTED_WRITER, d->kind, r->dry_run);
  return 1;
}

/* What caused a controller's write, among what it merges (the object's own
 * context and its sources): the newest change, by when each was first
 * admitted here (memo.h causes), into out. The rest were carried along: the
 * object's earlier context, older changes of related objects (the Pods an
 * Endpoints update lists from earlier scales). A change's own cascade follows
 * these only (ripple.h, trigger), so the first of four scales of a Deployment
 * does not own the later three's Pods through the ReplicaSet's context. When
 * no time is known (a memory lost in a restart) it is 0: not known, every
 * source counts. A guess by time, not a proof: a slow Pod of an earlier scale
 * that becomes ready after a later scale is counted to the later one.
 * *sources_newest: the latest time of the sources alone (the target left
 * out), the span's start for a new CPID (cause_time). */
static size_t newest(wh_t *w, const ripple_ctx_t *target, const wh_sources_t *s, ripple_cpid_t *out,
                     int64_t *sources_newest) {
  int64_t best = 0;
  size_t n = 0;
  *sources_newest = 0;
  for (size_t i = 0; i <= s->n; i++) {
    const ripple_ctx_t *c = i < s->n ? &s->ctx[i] : target;
    if (!ripple_ctx_is_set(c)) continue;
    int64_t t = wh_memo_cause_get(w->memo, &c->cpid);
    if (i < s->n && t > *sources_newest) *sources_newest = t;
    if (t <= 0 || t < best) continue;
    if (t > best) n = 0;
    best = t;
    int seen = 0; /* the object's own context may be among its sources too */
    for (size_t k = 0; k < n && !seen; k++) seen = cpid_eq(&out[k], &c->cpid);
    if (!seen) out[n++] = c->cpid;
  }
  return n;
}

static int decide_controller(wh_t *w, const wh_review_t *r, carrier_t c, wh_certainty_t how,
                             int64_t now, wh_decision_t *d, wh_sources_t *s) {
  ripple_ctx_t target;
  json_t *pod;
  int unknown, stale;
  /* A held context is another replica's to know. */
  if (how == WH_UNCERTAIN && c == CARRY_OBJECT && holds(r, c, d))
    return decide_uncertain(w, r, c, now, d);
  target_of(w, r, c, now, d, &target, &pod, &unknown, &stale);
  json_decref(pod);
  /* The object's spec changed since its context was written, and nothing
   * here holds that change (a write no replica answered, or one made while
   * the guard had the webhook off). A status write reports on that very
   * change: what it follows from is not known. A Deployment's status write
   * changes no context (frozen), whatever it. */
  stale = stale && c == CARRY_OBJECT && !frozen(w, r, d) && !holds(r, c, d);
  if (stale && *r->subresource) return decide_uncertain(w, r, c, now, d);
  if (unknown) { /* its span is decided once the informer has the Pod */
    d->pending = 1;
    d->skip = "pending";
    return RIPPLE_OK;
  }
  s->n = s->skipped = 0;
  s->uncertain = 0;
  int mrc, forged = own_source(w, r, c, d, &target, s, &mrc);
  /* A binding is caused by its Pod alone: the owner's newer changes are not
   * the Pod's, so nothing else is gathered for it. */
  size_t own = s->n;
  if (c == CARRY_OBJECT && !frozen(w, r, d)) wh_sources_gather(w, r, r->object, d->kind, now, s);
  /* Related objects' contexts may be older than the decider's latest
   * decisions about them (its informers and memory are not this replica's). */
  if ((how == WH_UNCERTAIN && s->n > own) || s->uncertain) return decide_uncertain(w, r, c, now, d);
  /* A stale object's main resource written by a controller: the write
   * follows from what the controller read, its owner's latest change, which
   * is known here (held or remembered with its generation, or stamped
   * current); the object's older context is merged as what it was before.
   * Only the change nobody answered is missing, as it is from the trace
   * anyway. The ReplicaSet update of the first scale after a `helm upgrade`
   * of the webhook is such a write: the guard kept the webhook off for the
   * ReplicaSet's scales during the upgrade (docs/webhook.md). With no such
   * source the write's cause is not known. */
  if (stale && s->n == own) return decide_uncertain(w, r, c, now, d);
  if (c == CARRY_OBJECT && s->n == 1 && !ripple_ctx_is_set(&target) && is_tick(r, d))
    return decide_tick(w, r, &s->ctx[0], now, d);
  const ripple_ctx_t *ptr[WH_SOURCES_MAX];
  for (size_t i = 0; i < s->n; i++) ptr[i] = &s->ctx[i];
  ripple_objref_t ref = wh_objref(r, d);
  ripple_cpid_t trig[WH_SOURCES_MAX + 1];
  int64_t sources_newest;
  wh_sink_trigger(trig, newest(w, &target, s, trig, &sources_newest));
  int rc = ripple_merge(w->tracer, &target, ptr, s->n, &ref, &d->ctx, &d->how);
  wh_sink_trigger(NULL, 0);
  if (rc != RIPPLE_OK) return rc;
  if (d->how == RIPPLE_MERGE_NONE) {
    if (frozen(w, r, d)) {
      d->skip = "no_context";
      if (forged) return keep_annotation(w, r, d); /* what it set is put back */
      if (!d->bad_annotation) return RIPPLE_OK;
      d->mac = WH_MAC_DROP;
      return wh_obj_patch_remove(d->kind, &d->patch, &d->patch_len);
    }
    if ((rc = wh_decide_new_root(w, r, d)) != RIPPLE_OK) return rc;
    /* Nothing related known here may be the informers' lag behind writes
     * another replica decided: not "no source" for sure. */
    if (how == WH_UNCERTAIN)
      d->cause_unknown = 1;
    else
      d->spontaneous = 1;
  }
  d->traced = 1;
  d->start_ns = d->spontaneous || d->cause_unknown ? now : cause_time(w, d, sources_newest, now);
  d->held = holds(r, c, d);
  if (c == CARRY_OBJECT && d->held) return keep_annotation(w, r, d);
  if (c == CARRY_OBJECT) return patch_object(r->object, d->kind, d);
  /* A Binding's annotations are copied onto its Pod: one it carries is
   * replaced too, and a MAC it carries alone is taken off (mac_patch). */
  if (c == CARRY_BINDING && (!ripple_ctx_equal(&d->ctx, &target) || mrc != RIPPLE_ENOENT))
    return patch_object(r->object, d->kind, d);
  if (c == CARRY_BINDING) d->mac = WH_MAC_DROP;
  return RIPPLE_OK;
}

/* A scale's object, as the informers have it: its generation, when it is
 * the version the scale was made from (same resourceVersion). */
typedef struct scaled {
  const char *kind, *rv;
  int64_t gen;
} scaled_t;

static void take_scaled(void *ud, const char *json, size_t len) {
  scaled_t *s = ud;
  json_t *obj = wh_text_tree(json, len, s->kind);
  const char *rv =
      json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
  if (rv && s->rv && !strcmp(rv, s->rv)) s->gen = wh_generation(obj);
  json_decref(obj);
}

/* The generation a held context is about: the write's object's once stored;
 * for a scale, its object's (a Scale has no generation) as of the version
 * the scale was made from, plus one when the replicas change. The informer
 * may be a few milliseconds behind that version (the Deployment controller
 * writes status often): it is waited for, at most WH_SCALE_WAIT_MS, on a
 * person's scale only. 0 when not known: a later read then counts the held
 * context as behind, never as current. */
#define WH_SCALE_WAIT_MS 100
static int64_t held_generation(wh_t *w, const wh_review_t *r, carrier_t c, const wh_decision_t *d) {
  if (c != CARRY_REMEMBER) return wh_next_generation(r);
  const json_t *m = json_object_get(r->old, "metadata");
  scaled_t s = {d->kind, json_string_value(json_object_get(m, "resourceVersion")), 0};
  if (!s.rv) return 0;
  for (int waited = 0;; waited += 2) {
    wh_lookup_get(w, d->kind, r->ns, r->name, take_scaled, &s);
    if (s.gen || waited >= WH_SCALE_WAIT_MS || !w->o.text_lookup.get) break;
    nanosleep(&(struct timespec){0, 2000000}, NULL);
  }
  if (!s.gen) return 0;
  const json_t *now = json_object_get(json_object_get(r->object, "spec"), "replicas");
  const json_t *was = json_object_get(json_object_get(r->old, "spec"), "replicas");
  return s.gen + !json_equal(now, was);
}

/* The generation this context is about, beside it (stamp.c): on an object
 * that carries its context (now, or already: a write that kept it), for a
 * decision made for that object. Not where the context is held or frozen:
 * their annotation stays as it was written. */
static int stamp(wh_t *w, const wh_review_t *r, wh_decision_t *d) {
  ripple_ctx_t cur;
  if (!d->traced || d->held || frozen(w, r, d) || r->op == WH_OP_DELETE) return RIPPLE_OK;
  if (!d->wrote_ctx && wh_obj_ctx(r->object, d->kind, RIPPLE_ANC_MAX, &cur) != RIPPLE_OK)
    return RIPPLE_OK;
  return wh_stamp_patch(r, d, wh_stamp_want(r, d->kind));
}

/* The MAC beside the context the patch leaves on the object (ctxmac.h):
 * every context the webhook sets or keeps gets its own, one put back gets
 * the stored one, and a MAC nothing stands behind goes. */
static int mac_patch(wh_t *w, const wh_review_t *r, wh_decision_t *d) {
  if (!w->mac.len || d->mac == WH_MAC_LEAVE || !r->object) return RIPPLE_OK;
  char mac[WH_CTXMAC_LEN + 1], val[RIPPLE_CTX_STRMAX + 1];
  const char *want = NULL;
  size_t n = 0;
  int rc;
  if (d->mac == WH_MAC_SIGN) {
    if ((rc = ripple_ctx_encode(&d->mac_ctx, val, sizeof val, &n)) != RIPPLE_OK ||
        (rc = wh_ctxmac_sign(&w->mac, d->kind, r->ns, val, n, mac)) != RIPPLE_OK)
      return rc;
    want = mac;
  } else if (d->mac == WH_MAC_OLD) {
    char key[WH_CTXMAC_KEYNAME_MAX];
    if (wh_ctxmac_keyname(d->kind, key, sizeof key) != RIPPLE_OK) return RIPPLE_OK;
    const json_t *was =
        json_object_get(json_object_get(json_object_get(r->old, "metadata"), "annotations"), key);
    if (json_is_string(was) && json_string_length(was) == WH_CTXMAC_LEN) {
      memcpy(mac, json_string_value(was), WH_CTXMAC_LEN + 1);
      want = mac;
    }
  }
  return wh_obj_patch_mac(r->object, d->kind, want, &d->patch, &d->patch_len);
}

int wh_decide(wh_t *w, const wh_review_t *r, wh_certainty_t how, int64_t now, wh_decision_t *d) {
  memset(d, 0, sizeof *d);
  d->start_ns = now;
  if ((d->skip = excluded(w, r))) return RIPPLE_OK;
  const char *kind;
  carrier_t c = carrier_of(r, &kind);
  snprintf(d->kind, sizeof d->kind, "%s", kind);
  wh_actor_t actor = wh_users_classify(w->o.users, r->user, d->service, sizeof d->service);
  copy_meta(r->object ? r->object : r->old, d);
  if (r->op != WH_OP_DELETE &&
      (c == CARRY_NONE || (c == CARRY_REMEMBER && actor == WH_ACTOR_CONTROLLER))) {
    d->skip = "no_carrier";
    return RIPPLE_OK;
  }
  if (r->op != WH_OP_DELETE && !r->object) {
    d->skip = "no_object";
    return RIPPLE_OK;
  }
  wh_sink_scope(d->service, r->dry_run);
  int rc;
  if (r->op == WH_OP_DELETE) {
    rc = wh_decide_delete(w, r, actor, how, now, d);
  } else if (actor == WH_ACTOR_USER) {
    rc = decide_root(w, r, c, now, d);
  } else {
    static _Thread_local wh_sources_t s; /* 34 KiB: not on the connection's stack */
    rc = decide_controller(w, r, c, how, now, d, &s);
  }
  wh_sink_scope(NULL, 0);
  if (rc == RIPPLE_OK && d->wrote_ctx) rc = wh_traceparent_patch(w, r, d);
  if (rc == RIPPLE_OK && c == CARRY_OBJECT) rc = stamp(w, r, d);
  if (rc == RIPPLE_OK && (c == CARRY_OBJECT || c == CARRY_BINDING)) rc = mac_patch(w, r, d);
  if (rc != RIPPLE_OK || !d->traced || r->dry_run) return rc;
  /* A new CPID is first admitted now; a kept one keeps its earliest time. */
  wh_memo_cause_put(w->memo, &d->ctx.cpid, d->how == RIPPLE_MERGE_NEW ? now : d->start_ns);
  if (r->op == WH_OP_DELETE) return RIPPLE_OK;
  wh_memo_recent_put_gen(w->memo, d->kind, r->ns, r->name, d->uid, &d->ctx,
                         c == CARRY_OBJECT ? wh_next_generation(r) : 0, now);
  if (!*r->group && !strcmp(r->resource, "services") && !*r->subresource)
    wh_memo_service_put(w->memo, r->ns, r->name,
                        json_object_get(json_object_get(r->object, "spec"), "selector"), now);
  /* A held context is replaced by each decision, and one held before (a
   * scale's) follows the object's annotation once a write carries it. */
  ripple_ctx_t h;
  if (d->held || wh_memo_held_get(w->memo, d->uid, now, &h, NULL) == RIPPLE_OK)
    wh_memo_held_put(w->memo, d->uid, &d->ctx, held_generation(w, r, c, d), now);
  return RIPPLE_OK;
}

void wh_decision_free(wh_decision_t *d) {
  if (!d) return;
  ripple_free(d->patch);
  d->patch = NULL;
}
