/*
 * objects.c - indexes a change log by object: records per uid in time order,
 * the controlling-owner links (checked against the relation rules, so the
 * analyzer and the webhook agree on what belongs to what), and the times a
 * Pod was seen to be scheduled, Running and Ready.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "objects.h"
#include "ripple/ripple.h"

static size_t hash_str(const char *s) {
  size_t h = 1469598103934665603u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
  return h;
}

aobj_t *aindex_find(const aindex_t *ix, const char *uid) {
  if (!uid || !ix->nslots) return NULL;
  for (size_t i = hash_str(uid) & (ix->nslots - 1);; i = (i + 1) & (ix->nslots - 1)) {
    size_t s = ix->slots[i];
    if (s == SIZE_MAX) return NULL;
    if (ix->objs[s].uid && !strcmp(ix->objs[s].uid, uid)) return &ix->objs[s];
  }
}

/* cl_parse_line() refuses records without uid, kind or name; the fallbacks
 * only keep a hand-built log from crashing the index. */
static aobj_t *aindex_get(aindex_t *ix, const cl_record_t *r) {
  const char *uid = r->uid ? r->uid : "";
  size_t i = hash_str(uid) & (ix->nslots - 1);
  for (; ix->slots[i] != SIZE_MAX; i = (i + 1) & (ix->nslots - 1))
    if (ix->objs[ix->slots[i]].uid && !strcmp(ix->objs[ix->slots[i]].uid, uid))
      return &ix->objs[ix->slots[i]];
  ix->slots[i] = ix->n;
  aobj_t *o = &ix->objs[ix->n++];
  *o = (aobj_t){.uid = uid,
                .kind = r->kind ? r->kind : "",
                .ns = r->ns ? r->ns : "",
                .name = r->name ? r->name : ""};
  return o;
}

static int push(void *arrp, size_t *n, size_t *cap, const void *item, size_t size) {
  void **arr = arrp;
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 4;
    void *grown = realloc(*arr, c * size);
    if (!grown) return RIPPLE_ENOMEM;
    *arr = grown;
    *cap = c;
  }
  memcpy((char *)*arr + *n * size, item, size);
  (*n)++;
  return RIPPLE_OK;
}

static bool has_condition(const json_t *obj, const char *type) {
  const json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
  size_t i;
  const json_t *c;
  json_array_foreach(conds, i, c) {
    const char *t = json_string_value(json_object_get(c, "type"));
    const char *s = json_string_value(json_object_get(c, "status"));
    if (t && s && !strcmp(t, type) && !strcmp(s, "True")) return true;
  }
  return false;
}

static bool pod_scheduled(const json_t *o) {
  const char *node = ripple_rules_field(o, "spec.nodeName");
  return (node && *node) || has_condition(o, "PodScheduled");
}

static bool pod_running(const json_t *o) {
  const char *phase = ripple_rules_field(o, "status.phase");
  return phase && !strcmp(phase, "Running");
}

static bool pod_ready(const json_t *o) { return has_condition(o, "Ready"); }

/* The first record in which a state holds, if that is when it came about:
 * not a relist, and either the object's add or after a record without it. */
static const cl_record_t *first_with(const aobj_t *o, bool (*state)(const json_t *)) {
  for (size_t i = 0; i < o->nrec; i++) {
    const cl_record_t *r = o->recs[i];
    if (r->op == CL_DELETE || !state(r->object)) continue;
    if (r->relist || (i == 0 && r->op != CL_ADD)) return NULL;
    return r;
  }
  return NULL;
}

static void observe(aobj_t *o) {
  for (size_t i = 0; i < o->nrec; i++) {
    const cl_record_t *r = o->recs[i];
    o->last = r->object;
    if (r->relist) continue;
    if (r->op == CL_ADD && !o->add) o->add = r;
    if (r->op == CL_DELETE) o->del = r;
  }
  if (!o->kind || strcmp(o->kind, "Pod") != 0) return;
  o->sched = first_with(o, pod_scheduled);
  o->running = first_with(o, pod_running);
  o->ready = first_with(o, pod_ready);
}

static int link_parents(aindex_t *ix, const ripple_rules_t *rules) {
  for (size_t i = 0; i < ix->n; i++) {
    aobj_t *o = &ix->objs[i];
    aobj_t *p = aindex_find(ix, ripple_rules_controller_uid(o->last));
    if (!p || p == o || !ripple_rules_relates(rules, p->last, o->last, NULL)) continue;
    o->parent = p;
    // NOLINTNEXTLINE(bugprone-sizeof-expression): the elements are pointers
    int rc = push(&p->kids, &p->nkids, &p->capkids, &o, sizeof o);
    if (rc != RIPPLE_OK) return rc;
  }
  return RIPPLE_OK;
}

int aindex_build(aindex_t *ix, const cl_log_t *log, const ripple_rules_t *rules) {
  memset(ix, 0, sizeof *ix);
  ix->nslots = 16;
  while (ix->nslots < 2 * log->n) ix->nslots *= 2;
  ix->slots = malloc(ix->nslots * sizeof *ix->slots);
  ix->objs = calloc(log->n ? log->n : 1, sizeof *ix->objs);
  if (!ix->slots || !ix->objs) {
    aindex_free(ix);
    return RIPPLE_ENOMEM;
  }
  memset(ix->slots, 0xff, ix->nslots * sizeof *ix->slots);
  for (size_t i = 0; i < log->n; i++) {
    aobj_t *o = aindex_get(ix, &log->r[i]);
    const cl_record_t *r = &log->r[i];
    // NOLINTNEXTLINE(bugprone-sizeof-expression): the elements are pointers
    if (push(&o->recs, &o->nrec, &o->caprec, &r, sizeof r) != RIPPLE_OK) {
      aindex_free(ix);
      return RIPPLE_ENOMEM;
    }
  }
  for (size_t i = 0; i < ix->n; i++) observe(&ix->objs[i]);
  int rc = link_parents(ix, rules);
  if (rc != RIPPLE_OK) aindex_free(ix);
  return rc;
}

void aindex_free(aindex_t *ix) {
  for (size_t i = 0; ix->objs && i < ix->n; i++) {
    free(ix->objs[i].recs);
    free(ix->objs[i].kids);
  }
  free(ix->objs);
  free(ix->slots);
  memset(ix, 0, sizeof *ix);
}

int64_t aobj_int(const json_t *obj, const char *a, const char *b) {
  const json_t *v = json_object_get(json_object_get(obj, a), b);
  return json_is_integer(v) ? json_integer_value(v) : -1;
}
