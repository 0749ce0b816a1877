/*
 * hops.c - per-hop propagation times from a change log: for each change that
 * a controller reacts to, the time from when the watch saw the cause to when
 * it saw the effect (docs/analyze.md lists the hops and how each is matched).
 * All times are watch arrival times, so every hop is measured with the same
 * clock and the same observer delay on both ends.
 */
#include <stdlib.h>
#include <string.h>

#include "objects.h"
#include "ripple/ripple.h"

static const char *const hop_names[HOP_COUNT] = {
    [HOP_DEPLOY_ADD_RS_ADD] = "deployment-add->replicaset-add",
    [HOP_DEPLOY_UPDATE_RS_UPDATE] = "deployment-update->replicaset-update",
    [HOP_RS_ADD_POD_ADD] = "replicaset-add->pod-add",
    [HOP_RS_UPDATE_POD_ADD] = "replicaset-update->pod-add",
    [HOP_RS_DELETE_POD_DELETE] = "replicaset-delete->pod-delete",
    [HOP_POD_ADD_SCHEDULED] = "pod-add->scheduled",
    [HOP_POD_SCHEDULED_RUNNING] = "pod-scheduled->running",
    [HOP_POD_RUNNING_READY] = "pod-running->ready",
    [HOP_POD_READY_ENDPOINTS] = "pod-ready->endpoints",
    [HOP_POD_READY_SLICE] = "pod-ready->endpointslice",
    [HOP_E2E_DEPLOY_READY] = "e2e:deployment-change->last-pod-ready",
    [HOP_E2E_DEPLOY_DELETE] = "e2e:deployment-delete->last-pod-delete",
};

const char *hop_name(hop_id_t h) { return h < HOP_COUNT ? hop_names[h] : "?"; }

/* An effect's notification can arrive before its cause's: each resource
 * comes on a watch of its own, and the API server does not order deliveries
 * across watches. emit() is only called for pairs the rules relate, so such a
 * hop is real and counted, with a duration of 0 (hop_inst_t's to_t). */
static int emit(hop_result_t *res, hop_id_t h, const cl_record_t *from, const cl_record_t *to) {
  if (!from || !to) return RIPPLE_OK;
  if (res->n == res->cap) {
    size_t cap = res->cap ? res->cap * 2 : 256;
    hop_inst_t *grown = realloc(res->v, cap * sizeof *grown);
    if (!grown) return RIPPLE_ENOMEM;
    res->v = grown;
    res->cap = cap;
  }
  res->v[res->n++] = (hop_inst_t){h, from->t, to->t < from->t ? from->t : to->t, from, to};
  return RIPPLE_OK;
}

/* The object a record's change started from: its old state, else the
 * previous record of the same object. */
static const json_t *before(const aobj_t *o, size_t i) {
  if (o->recs[i]->old) return o->recs[i]->old;
  return i ? o->recs[i - 1]->object : NULL;
}

/* A ReplicaSet change that asks for more Pods: its add, or an update that
 * raised spec.replicas. */
static bool rs_grows(const aobj_t *rs, size_t i) {
  const cl_record_t *r = rs->recs[i];
  if (r->relist) return false;
  if (r->op == CL_ADD) return true;
  const json_t *prev = before(rs, i);
  return r->op == CL_UPDATE && prev &&
         aobj_int(r->object, "spec", "replicas") > aobj_int(prev, "spec", "replicas");
}

/* A Deployment change a controller acts on: its add, or a spec change
 * (metadata.generation went up; status updates leave it alone). */
static bool deploy_changes(const aobj_t *d, size_t i) {
  const cl_record_t *r = d->recs[i];
  if (r->relist) return false;
  if (r->op == CL_ADD) return true;
  const json_t *prev = before(d, i);
  return r->op == CL_UPDATE && prev &&
         aobj_int(r->object, "metadata", "generation") > aobj_int(prev, "metadata", "generation");
}

static int pod_from_rs(hop_result_t *res, const aobj_t *pod) {
  const aobj_t *rs = pod->parent;
  if (!rs || strcmp(rs->kind, "ReplicaSet") != 0) return RIPPLE_OK;
  int rc = RIPPLE_OK;
  if (pod->add) {
    const cl_record_t *cause = NULL;
    for (size_t i = 0; i < rs->nrec && rs->recs[i]->t <= pod->add->t; i++)
      if (rs_grows(rs, i)) cause = rs->recs[i];
    if (cause)
      rc = emit(res, cause->op == CL_ADD ? HOP_RS_ADD_POD_ADD : HOP_RS_UPDATE_POD_ADD, cause,
                pod->add);
  }
  if (rc == RIPPLE_OK && pod->del && rs->del && rs->del->t <= pod->del->t)
    rc = emit(res, HOP_RS_DELETE_POD_DELETE, rs->del, pod->del);
  return rc;
}

/* Whether an Endpoints or EndpointSlice object lists ip as a ready address. */
static bool lists_ip(const json_t *obj, const char *kind, const char *ip) {
  bool slice = !strcmp(kind, "EndpointSlice");
  const json_t *groups = json_object_get(obj, slice ? "endpoints" : "subsets");
  size_t i, j;
  const json_t *g, *a;
  json_array_foreach(groups, i, g) {
    const json_t *cond = json_object_get(json_object_get(g, "conditions"), "ready");
    if (slice && json_is_false(cond)) continue;
    json_array_foreach(json_object_get(g, "addresses"), j, a) {
      const char *v = slice ? json_string_value(a) : json_string_value(json_object_get(a, "ip"));
      if (v && !strcmp(v, ip)) return true;
    }
  }
  return false;
}

/* If the log knows the Service behind an Endpoints object, the rules must
 * agree that the Service selects the Pod; an IP reused by another Pod is
 * then not mistaken for this one. */
static bool service_agrees(const aindex_t *ix, const ripple_rules_t *rules, const cl_record_t *ep,
                           const aobj_t *pod) {
  const char *svc = ep->name;
  if (!strcmp(ep->kind, "EndpointSlice")) {
    const json_t *labels = json_object_get(json_object_get(ep->object, "metadata"), "labels");
    svc = json_string_value(json_object_get(labels, "kubernetes.io/service-name"));
    if (!svc) return true;
  }
  for (size_t i = 0; i < ix->n; i++) {
    const aobj_t *o = &ix->objs[i];
    if (!strcmp(o->kind, "Service") && !strcmp(o->ns, ep->ns) && !strcmp(o->name, svc))
      return ripple_rules_relates(rules, o->last, pod->last, NULL);
  }
  return true;
}

static int pod_endpoints(hop_result_t *res, const cl_log_t *log, const aindex_t *ix,
                         const ripple_rules_t *rules, const aobj_t *pod) {
  const char *ip = pod->ready ? ripple_rules_field(pod->ready->object, "status.podIP") : NULL;
  if (!ip || !*ip) return RIPPLE_OK;
  bool seen_ep = false, seen_slice = false;
  /* The log is sorted. The Endpoints and the slice come on watches of their
   * own and can be seen before the Pod's Ready (emit: counted as 0), so the
   * search starts at the Pod's Running record, before which no address can
   * list it as ready; a loaded agent saw that on the real node. */
  const cl_record_t *from = pod->running && pod->running < pod->ready ? pod->running : pod->ready;
  for (size_t i = (size_t)(from - log->r); i < log->n && !(seen_ep && seen_slice); i++) {
    const cl_record_t *r = &log->r[i];
    bool slice = !strcmp(r->kind, "EndpointSlice");
    if (r->relist || r->op == CL_DELETE || strcmp(r->ns, pod->ns) != 0) continue;
    if (!(slice ? !seen_slice : !seen_ep && !strcmp(r->kind, "Endpoints"))) continue;
    if (!lists_ip(r->object, r->kind, ip) || !service_agrees(ix, rules, r, pod)) continue;
    int rc = emit(res, slice ? HOP_POD_READY_SLICE : HOP_POD_READY_ENDPOINTS, pod->ready, r);
    if (rc != RIPPLE_OK) return rc;
    if (slice)
      seen_slice = true;
    else
      seen_ep = true;
  }
  return RIPPLE_OK;
}

static int pod_hops(hop_result_t *res, const cl_log_t *log, const aindex_t *ix,
                    const ripple_rules_t *rules, const aobj_t *pod) {
  int rc = pod_from_rs(res, pod);
  if (rc == RIPPLE_OK) rc = emit(res, HOP_POD_ADD_SCHEDULED, pod->add, pod->sched);
  if (rc == RIPPLE_OK) rc = emit(res, HOP_POD_SCHEDULED_RUNNING, pod->sched, pod->running);
  if (rc == RIPPLE_OK) rc = emit(res, HOP_POD_RUNNING_READY, pod->running, pod->ready);
  if (rc == RIPPLE_OK) rc = pod_endpoints(res, log, ix, rules, pod);
  return rc;
}

/* The first ReplicaSet change in [t0, t1) of the Deployment's ReplicaSets
 * (only adds when the cause was the Deployment's add). */
static const cl_record_t *first_rs_change(const aobj_t *d, int64_t t0, int64_t t1, bool adds) {
  const cl_record_t *best = NULL;
  for (size_t k = 0; k < d->nkids; k++) {
    const aobj_t *rs = d->kids[k];
    for (size_t i = 0; i < rs->nrec; i++) {
      const cl_record_t *r = rs->recs[i];
      /* Nothing of a Deployment precedes its add: a ReplicaSet add that
       * arrived before it was caused by it all the same. */
      if (r->relist || (!adds && r->t < t0) || r->t >= t1 || r->op == CL_DELETE) continue;
      if (adds && r->op != CL_ADD) continue;
      if (!best || r->t < best->t) best = r;
      break;
    }
  }
  return best;
}

/* The last Pod to become Ready among those added in [t0, t1); NULL unless
 * every one of them did. */
static const cl_record_t *last_ready(const aobj_t *d, int64_t t0, int64_t t1) {
  const cl_record_t *last = NULL;
  for (size_t k = 0; k < d->nkids; k++) {
    for (size_t p = 0; p < d->kids[k]->nkids; p++) {
      const aobj_t *pod = d->kids[k]->kids[p];
      if (!pod->add || pod->add->t < t0 || pod->add->t >= t1) continue;
      if (!pod->ready) return NULL;
      if (!last || pod->ready->t > last->t) last = pod->ready;
    }
  }
  return last;
}

static const cl_record_t *last_delete(const aobj_t *d, int64_t t0) {
  const cl_record_t *last = NULL;
  for (size_t k = 0; k < d->nkids; k++) {
    for (size_t p = 0; p < d->kids[k]->nkids; p++) {
      const cl_record_t *del = d->kids[k]->kids[p]->del;
      if (del && del->t >= t0 && (!last || del->t > last->t)) last = del;
    }
  }
  return last;
}

static int deploy_hops(hop_result_t *res, const aobj_t *d) {
  int rc = RIPPLE_OK;
  for (size_t i = 0; i < d->nrec && rc == RIPPLE_OK; i++) {
    if (!deploy_changes(d, i)) continue;
    const cl_record_t *cause = d->recs[i];
    int64_t t1 = INT64_MAX;
    for (size_t j = i + 1; j < d->nrec; j++) {
      if (deploy_changes(d, j) || d->recs[j]->op == CL_DELETE) {
        t1 = d->recs[j]->t;
        break;
      }
    }
    bool add = cause->op == CL_ADD;
    rc = emit(res, add ? HOP_DEPLOY_ADD_RS_ADD : HOP_DEPLOY_UPDATE_RS_UPDATE, cause,
              first_rs_change(d, cause->t, t1, add));
    if (rc == RIPPLE_OK) rc = emit(res, HOP_E2E_DEPLOY_READY, cause, last_ready(d, cause->t, t1));
  }
  if (rc == RIPPLE_OK && d->del)
    rc = emit(res, HOP_E2E_DEPLOY_DELETE, d->del, last_delete(d, d->del->t));
  return rc;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

int64_t hop_percentile(const int64_t *sorted, size_t n, unsigned p) {
  if (!n) return 0;
  size_t rank = (size_t)(((unsigned long long)p * n + 99) / 100); /* ceil(p*n/100) */
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return sorted[rank - 1];
}

static int compute_stats(hop_result_t *res) {
  int64_t *vals = malloc((res->n ? res->n : 1) * sizeof *vals);
  if (!vals) return RIPPLE_ENOMEM;
  for (int h = 0; h < HOP_COUNT; h++) {
    size_t n = 0;
    for (size_t i = 0; i < res->n; i++)
      if (res->v[i].hop == (hop_id_t)h) vals[n++] = res->v[i].end - res->v[i].start;
    if (n) qsort(vals, n, sizeof *vals, cmp_i64);
    hop_stats_t *s = &res->stats[h];
    *s = (hop_stats_t){n,
                       n ? vals[0] : 0,
                       hop_percentile(vals, n, 50),
                       hop_percentile(vals, n, 90),
                       hop_percentile(vals, n, 99),
                       n ? vals[n - 1] : 0};
  }
  free(vals);
  return RIPPLE_OK;
}

int hops_compute(const cl_log_t *log, const ripple_rules_t *rules, hop_result_t *out) {
  if (!log || !rules || !out) return RIPPLE_EINVAL;
  aindex_t ix;
  int rc = aindex_build(&ix, log, rules);
  if (rc != RIPPLE_OK) return rc;
  hop_result_t res = {0};
  for (size_t i = 0; i < ix.n && rc == RIPPLE_OK; i++) {
    const aobj_t *o = &ix.objs[i];
    if (!strcmp(o->kind, "Pod"))
      rc = pod_hops(&res, log, &ix, rules, o);
    else if (!strcmp(o->kind, "Deployment"))
      rc = deploy_hops(&res, o);
  }
  if (rc == RIPPLE_OK) rc = compute_stats(&res);
  aindex_free(&ix);
  if (rc != RIPPLE_OK) {
    free(res.v);
    return rc;
  }
  *out = res;
  return RIPPLE_OK;
}

void hops_free(hop_result_t *res) {
  free(res->v);
  memset(res, 0, sizeof *res);
}
