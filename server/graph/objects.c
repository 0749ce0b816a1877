/*
 * objects.c - see objects.h.
 *
 * The key is "kind\0namespace\0name" (records cannot hold NUL, so it is
 * unambiguous). Each object keeps up to OBJECTS_KEEP CPIDs, unordered; a new
 * CPID replaces the one whose latest write is oldest. Answers sort the few
 * entries of the objects they return.
 */
#include "graph/objects.h"

#include <stdlib.h>
#include <string.h>

#include "graph/keytab.h"
#include "ripplex/cpid.h"

/* Most objects are written under one or two CPIDs (a Pod: its create and
 * its binding and status under the same one), so e grows by doubling up to
 * OBJECTS_KEEP. */
typedef struct object {
  obj_cpid_t *e;
  uint32_t n, cap;
  int64_t latest; /* the newest entry's time */
} object_t;

struct objects {
  keytab_t t;
  uint64_t refused;
  size_t bytes; /* the objects and their entries */
};

int objects_new(objects_t **out) {
  objects_t *o = calloc(1, sizeof *o);
  if (!o) return RIPPLE_ENOMEM;
  keytab_init(&o->t);
  *out = o;
  return RIPPLE_OK;
}

static void object_free(void *val) {
  object_t *ob = val;
  if (ob) free(ob->e);
  free(ob);
}

void objects_free(objects_t *o) {
  if (!o) return;
  keytab_free(&o->t, object_free);
  free(o);
}

/* "kind\0ns\0name" into buf (cap bytes); its length, or 0 when it does not fit. */
static size_t make_key(char *buf, size_t cap, const obj_name_t *k) {
  size_t n = k->kind_len + k->ns_len + k->name_len + 2;
  if (n > cap) return 0;
  char *p = buf;
  memcpy(p, k->kind, k->kind_len);
  p += k->kind_len;
  *p++ = '\0';
  memcpy(p, k->ns, k->ns_len);
  p += k->ns_len;
  *p++ = '\0';
  memcpy(p, k->name, k->name_len);
  return n;
}

static int note(objects_t *o, object_t *ob, const ripple_cpid_t *cpid, int64_t time_ns) {
  uint32_t oldest = 0;
  for (uint32_t i = 0; i < ob->n; i++) {
    if (cpid_eq(&ob->e[i].cpid, cpid)) {
      if (time_ns > ob->e[i].time) ob->e[i].time = time_ns;
      ob->e[i].writes++;
      if (time_ns > ob->latest) ob->latest = time_ns;
      return RIPPLE_OK;
    }
    if (ob->e[i].time < ob->e[oldest].time) oldest = i;
  }
  if (ob->n == ob->cap && ob->cap < OBJECTS_KEEP) {
    uint32_t cap = ob->cap ? ob->cap * 2 : 1;
    obj_cpid_t *e = realloc(ob->e, cap * sizeof *e);
    if (!e) return RIPPLE_ENOMEM;
    o->bytes += (cap - ob->cap) * sizeof *e;
    ob->e = e;
    ob->cap = cap;
  }
  obj_cpid_t e = {*cpid, time_ns, 1};
  if (ob->n < ob->cap)
    ob->e[ob->n++] = e;
  else if (time_ns > ob->e[oldest].time)
    ob->e[oldest] = e;
  else
    return RIPPLE_OK;
  if (ob->n == 1 || time_ns > ob->latest) ob->latest = time_ns;
  return RIPPLE_OK;
}

int objects_add(objects_t *o, const obj_name_t *k, const ripple_cpid_t *cpid, int64_t time_ns) {
  if (!k->kind_len || !k->name_len) return RIPPLE_OK;
  char key[3 * 4096 + 2];
  size_t n = make_key(key, sizeof key, k);
  if (!n) return RIPPLE_OK; /* longer than any record's strings can be */
  if (o->t.n >= OBJECTS_MAX && !keytab_get(&o->t, key, n)) {
    o->refused++;
    return RIPPLE_OK;
  }
  keytab_slot_t *s;
  if (keytab_put(&o->t, key, n, &s) != RIPPLE_OK) return RIPPLE_ENOMEM;
  if (!s->val) {
    if (!(s->val = calloc(1, sizeof(object_t)))) return RIPPLE_ENOMEM; /* swept at a prune */
    o->bytes += sizeof(object_t);
  }
  return note(o, s->val, cpid, time_ns);
}

static int by_time_desc(const void *a, const void *b) {
  const obj_cpid_t *x = a, *y = b;
  return x->time != y->time ? (x->time < y->time ? 1 : -1) : 0;
}

/* Fills f from the object in slot s (live CPIDs, newest first); 0 when it
 * has none. */
static int found(const keytab_slot_t *s, objects_live_fn live, void *ud, obj_found_t *f) {
  const object_t *ob = s->val;
  f->n = 0;
  if (!ob) return 0; /* its value could not be allocated */
  for (uint32_t i = 0; i < ob->n; i++)
    if (!live || live(ud, &ob->e[i].cpid)) f->cpid[f->n++] = ob->e[i];
  if (!f->n) return 0;
  qsort(f->cpid, f->n, sizeof *f->cpid, by_time_desc);
  f->kind = s->key;
  f->ns = f->kind + strlen(f->kind) + 1;
  f->name = f->ns + strlen(f->ns) + 1;
  return 1;
}

static int matches(const keytab_slot_t *s, const char *kind, const char *ns, const char *name) {
  const char *k = s->key, *n = k + strlen(k) + 1, *nm = n + strlen(n) + 1;
  return (!kind || !strcmp(kind, k)) && (!ns || !strcmp(ns, n)) && (!name || !strcmp(name, nm));
}

/* Insert f into out (k of max, newest object first), dropping the oldest
 * when full. */
static size_t keep_newest(obj_found_t *out, size_t k, size_t max, const obj_found_t *f) {
  size_t at = k;
  while (at > 0 && out[at - 1].cpid[0].time < f->cpid[0].time) at--;
  if (at >= max) return k;
  size_t n = k < max ? k + 1 : max;
  memmove(&out[at + 1], &out[at], (n - at - 1) * sizeof *out);
  out[at] = *f;
  return n;
}

long objects_find(const objects_t *o, const char *kind, const char *ns, const char *name,
                  objects_live_fn live, void *ud, obj_found_t *out, size_t max) {
  if (!max) return 0;
  if (kind && ns && name) {
    obj_name_t k = {kind, ns, name, strlen(kind), strlen(ns), strlen(name)};
    char key[3 * 4096 + 2];
    size_t n = make_key(key, sizeof key, &k);
    const keytab_slot_t *s = n ? keytab_get(&o->t, key, n) : NULL;
    return s && found(s, live, ud, &out[0]) ? 1 : 0;
  }
  obj_found_t f;
  size_t k = 0;
  for (size_t i = 0; o->t.slot && i <= o->t.mask; i++) {
    const keytab_slot_t *s = &o->t.slot[i];
    if (!s->key || !s->val || !matches(s, kind, ns, name)) continue;
    if (k == max && ((const object_t *)s->val)->latest <= out[k - 1].cpid[0].time) continue;
    if (found(s, live, ud, &f)) k = keep_newest(out, k, max, &f);
  }
  return (long)k;
}

static int has_cpids(void *val) { return val && ((const object_t *)val)->n > 0; }

size_t objects_prune(objects_t *o, objects_live_fn live, void *ud) {
  size_t dropped = 0;
  for (size_t i = 0; o->t.slot && i <= o->t.mask; i++) {
    object_t *ob = o->t.slot[i].key ? o->t.slot[i].val : NULL;
    if (!ob) continue;
    uint32_t k = 0;
    for (uint32_t j = 0; j < ob->n; j++)
      if (live(ud, &ob->e[j].cpid)) ob->e[k++] = ob->e[j];
    dropped += ob->n - k;
    ob->n = k;
    if (!k) o->bytes -= sizeof *ob + ob->cap * sizeof *ob->e;
    ob->latest = 0;
    for (uint32_t j = 0; j < k; j++)
      if (!j || ob->e[j].time > ob->latest) ob->latest = ob->e[j].time;
  }
  keytab_sweep(&o->t, has_cpids, object_free);
  return dropped;
}

size_t objects_count(const objects_t *o) { return o->t.n; }
uint64_t objects_refused(const objects_t *o) { return o->refused; }

size_t objects_memory(const objects_t *o) { return sizeof *o + keytab_memory(&o->t) + o->bytes; }
