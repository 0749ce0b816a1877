/*
 * roots.c - see roots.h.
 *
 * Open addressing over objects (one slot per uid, linear probing, at most half
 * full), hashed with a random seed so that no client can choose uids that
 * collide. Each object keeps its roots in arrival order and remembers whether
 * that is also time order. It nearly always is (a root is dated when it is
 * made), and then a query walks them from the end; an object whose roots came
 * out of order has a copy sorted per query until the next prune sorts it.
 * Sorting on every add instead would let a client that sends one object's
 * roots in reverse time order make ingest quadratic.
 */
#include "roots.h"

#include <stdlib.h>
#include <string.h>

#include "ripplex/rnd.h"

typedef struct rent {
  int64_t time;
  uint64_t seq;
  ripple_cpid_t cpid;
} rent_t;

typedef struct obj {
  char *uid; /* NUL-terminated; NULL: an empty slot */
  uint32_t len;
  int sorted; /* e is in (time, seq) order */
  rent_t *e;
  uint32_t n, cap;
} obj_t;

struct roots {
  obj_t *slot;
  size_t mask; /* slots - 1; 0 with no table yet */
  size_t nobj, nent, bytes;
  uint64_t seed;
};

static uint64_t mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static uint64_t uid_hash(const char *s, size_t n, uint64_t seed) {
  uint64_t h = mix(seed ^ n);
  while (n) {
    uint64_t w = 0;
    size_t k = n < 8 ? n : 8;
    memcpy(&w, s, k);
    h = mix(h ^ w) + 0x9e3779b97f4a7c15ULL;
    s += k;
    n -= k;
  }
  return h;
}

static int rent_cmp(const void *a, const void *b) {
  const rent_t *x = a, *y = b;
  if (x->time != y->time) return x->time < y->time ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int roots_new(roots_t **out) {
  roots_t *r = calloc(1, sizeof *r);
  if (!r) return RIPPLE_ENOMEM;
  r->seed = 0x2545f4914f6cdd1dULL;
  (void)rnd_bytes(&r->seed, sizeof r->seed); /* without it, a fixed seed still works */
  r->bytes = sizeof *r;
  *out = r;
  return RIPPLE_OK;
}

static void obj_free(obj_t *o) {
  free(o->uid);
  free(o->e);
}

void roots_free(roots_t *r) {
  if (!r) return;
  for (size_t i = 0; r->slot && i <= r->mask; i++) obj_free(&r->slot[i]);
  free(r->slot);
  free(r);
}

/* The slot of uid, or the empty slot where it would go. */
static obj_t *probe(const roots_t *r, const char *uid, size_t n) {
  size_t h = (size_t)uid_hash(uid, n, r->seed) & r->mask;
  for (; r->slot[h].uid; h = (h + 1) & r->mask)
    if (r->slot[h].len == n && memcmp(r->slot[h].uid, uid, n) == 0) break;
  return &r->slot[h];
}

/* A table of `cap` slots holding the objects of the old one that have roots;
 * the others are freed. */
static int rehash(roots_t *r, size_t cap) {
  obj_t *slot = calloc(cap, sizeof *slot), *old = r->slot;
  if (!slot) return RIPPLE_ENOMEM;
  size_t oldcap = old ? r->mask + 1 : 0;
  r->slot = slot;
  r->mask = cap - 1;
  r->nobj = 0;
  r->bytes = r->bytes - oldcap * sizeof *slot + cap * sizeof *slot;
  for (size_t i = 0; i < oldcap; i++) {
    obj_t *o = &old[i];
    if (!o->uid) continue;
    if (o->n == 0) {
      r->bytes -= o->len + 1 + (size_t)o->cap * sizeof *o->e;
      obj_free(o);
      continue;
    }
    *probe(r, o->uid, o->len) = *o;
    r->nobj++;
  }
  free(old);
  return RIPPLE_OK;
}

int roots_add(roots_t *r, const char *uid, size_t n, int64_t time_ns, uint64_t seq,
              const ripple_cpid_t *cpid) {
  if ((r->nobj + 1) * 2 > (r->slot ? r->mask + 1 : 0) &&
      rehash(r, r->slot ? (r->mask + 1) * 2 : 64) != RIPPLE_OK)
    return RIPPLE_ENOMEM;
  obj_t *o = probe(r, uid, n);
  if (!o->uid) {
    if (!(o->uid = malloc(n + 1))) return RIPPLE_ENOMEM;
    memcpy(o->uid, uid, n);
    o->uid[n] = '\0';
    o->len = (uint32_t)n;
    o->sorted = 1;
    r->nobj++;
    r->bytes += n + 1;
  }
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
  if (!r->slot) return 0;
  const obj_t *o = probe(r, uid, strlen(uid));
  if (!o->uid || !o->n) return 0;
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

size_t roots_prune(roots_t *r, roots_live_fn live, void *ud) {
  size_t dropped = 0, empty = 0;
  for (size_t i = 0; r->slot && i <= r->mask; i++) {
    obj_t *o = &r->slot[i];
    if (!o->uid) continue;
    uint32_t k = 0;
    for (uint32_t j = 0; j < o->n; j++)
      if (live(ud, o->e[j].seq, &o->e[j].cpid)) o->e[k++] = o->e[j];
    dropped += o->n - k;
    o->n = k;
    if (!o->sorted) qsort(o->e, o->n, sizeof *o->e, rent_cmp);
    o->sorted = 1;
    if (k == 0) empty++;
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
  if (empty) { /* objects without roots leave the table, which may shrink */
    size_t cap = 64;
    while (cap < (r->nobj - empty) * 2) cap *= 2;
    (void)rehash(r, cap); /* out of memory: they stay, harmless, until the next prune */
  }
  return dropped;
}

size_t roots_count(const roots_t *r) { return r->nent; }

size_t roots_memory(const roots_t *r) { return r->bytes; }
