/*
 * roots.c - see roots.h.
 *
 * Objects by uid in a keytab (keytab.h: seeded hashing, so that no client can
 * choose uids that collide). Each object keeps its roots in arrival order and
 * remembers whether
 * that is also time order. It nearly always is (a root is dated when it is
 * made), and then a query walks them from the end; an object whose roots came
 * out of order has a copy sorted per query until the next prune sorts it.
 * Sorting on every add instead would let a client that sends one object's
 * roots in reverse time order make ingest quadratic.
 */
#include "graph/roots.h"

#include <stdlib.h>
#include <string.h>

#include "graph/keytab.h"

typedef struct rent {
  int64_t time;
  uint64_t seq;
  ripple_cpid_t cpid;
} rent_t;

/* An object's roots: the value of its uid in the table. */
typedef struct obj {
  int sorted; /* e is in (time, seq) order */
  rent_t *e;
  uint32_t n, cap;
} obj_t;

struct roots {
  keytab_t t;
  size_t nent, bytes; /* bytes: the objects' lists */
};

static int rent_cmp(const void *a, const void *b) {
  const rent_t *x = a, *y = b;
  if (x->time != y->time) return x->time < y->time ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int roots_new(roots_t **out) {
  roots_t *r = calloc(1, sizeof *r);
  if (!r) return RIPPLE_ENOMEM;
  keytab_init(&r->t);
  *out = r;
  return RIPPLE_OK;
}

static void obj_free(void *val) {
  obj_t *o = val;
  if (o) free(o->e);
  free(o);
}

void roots_free(roots_t *r) {
  if (!r) return;
  keytab_free(&r->t, obj_free);
  free(r);
}

int roots_add(roots_t *r, const char *uid, size_t n, int64_t time_ns, uint64_t seq,
              const ripple_cpid_t *cpid) {
  keytab_slot_t *s;
  if (keytab_put(&r->t, uid, n, &s) != RIPPLE_OK) return RIPPLE_ENOMEM;
  if (!s->val) {
    obj_t *o = calloc(1, sizeof *o);
    if (!o) return RIPPLE_ENOMEM; /* the key stays with no roots: swept at the next prune */
    o->sorted = 1;
    s->val = o;
    r->bytes += sizeof *o;
  }
  obj_t *o = s->val;
  if (o->n == o->cap) {
    uint32_t cap = o->cap ? o->cap * 2 : 2;
    rent_t *e = realloc(o->e, cap * sizeof *e);
    if (!e) return RIPPLE_ENOMEM;
    r->bytes += (size_t)(cap - o->cap) * sizeof *e;
    o->e = e;
    o->cap = cap;
  }
  rent_t e = {time_ns, seq, *cpid};
  if (o->n && rent_cmp(&o->e[o->n - 1], &e) > 0) o->sorted = 0;
  o->e[o->n++] = e;
  r->nent++;
  return RIPPLE_OK;
}

long roots_find(const roots_t *r, const char *uid, roots_live_fn live, void *ud, uint64_t *seqs,
                size_t max) {
  const keytab_slot_t *s = keytab_get(&r->t, uid, strlen(uid));
  const obj_t *o = s ? s->val : NULL;
  if (!o || !o->n) return 0;
  const rent_t *e = o->e;
  rent_t *copy = NULL;
  if (!o->sorted) {
    if (!(copy = malloc(o->n * sizeof *copy))) return RIPPLE_ENOMEM;
    memcpy(copy, o->e, o->n * sizeof *copy);
    qsort(copy, o->n, sizeof *copy, rent_cmp);
    e = copy;
  }
  size_t k = 0;
  for (size_t i = o->n; i-- > 0 && k < max;)
    if (!live || live(ud, e[i].seq, &e[i].cpid)) seqs[k++] = e[i].seq;
  free(copy);
  return (long)k;
}

static int has_roots(void *val) { return val && ((const obj_t *)val)->n > 0; }

size_t roots_prune(roots_t *r, roots_live_fn live, void *ud) {
  size_t dropped = 0;
  for (size_t i = 0; r->t.slot && i <= r->t.mask; i++) {
    obj_t *o = r->t.slot[i].key ? r->t.slot[i].val : NULL;
    if (!o) continue;
    uint32_t k = 0;
    for (uint32_t j = 0; j < o->n; j++)
      if (live(ud, o->e[j].seq, &o->e[j].cpid)) o->e[k++] = o->e[j];
    dropped += o->n - k;
    o->n = k;
    if (!o->sorted) qsort(o->e, o->n, sizeof *o->e, rent_cmp);
    o->sorted = 1;
    if (k == 0) r->bytes -= sizeof *o + (size_t)o->cap * sizeof *o->e;
    if (k && o->cap > 2 * k + 8) { /* give back what retention freed */
      rent_t *e = realloc(o->e, k * sizeof *e);
      if (e) {
        r->bytes -= (size_t)(o->cap - k) * sizeof *e;
        o->e = e;
        o->cap = k;
      }
    }
  }
  r->nent -= dropped;
  /* Objects without roots leave the table, which may shrink. */
  keytab_sweep(&r->t, has_roots, obj_free);
  return dropped;
}

size_t roots_count(const roots_t *r) { return r->nent; }

size_t roots_memory(const roots_t *r) { return sizeof *r + keytab_memory(&r->t) + r->bytes; }
