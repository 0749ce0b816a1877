/*
 * stall_tab.c - the small tables the stall detector keeps its names in
 * (stall_tab.h): open addressing with backward-shift deletion, and
 * interned strings on it.
 */
#include "analysis/stall_tab.h"

#include <stdlib.h>
#include <string.h>

#include "graph/keytab.h"

uint64_t stall_mix(uint64_t x) { return keytab_mix(x); }

/* ---- hash table ------------------------------------------------------------ */

static int htab_grow(htab_t *t) {
  size_t cap = t->slot ? (t->mask + 1) * 2 : 16;
  hslot_t *slot = calloc(cap, sizeof *slot);
  if (!slot) return RIPPLE_ENOMEM;
  for (size_t i = 0; t->slot && i <= t->mask; i++) {
    if (!t->slot[i].p) continue;
    size_t j = t->slot[i].h & (cap - 1);
    while (slot[j].p) j = (j + 1) & (cap - 1);
    slot[j] = t->slot[i];
  }
  free(t->slot);
  t->slot = slot;
  t->mask = cap - 1;
  return RIPPLE_OK;
}

void *htab_find(const htab_t *t, uint64_t h, htab_eq_fn eq, const void *key) {
  if (!t->slot) return NULL;
  for (size_t i = h & t->mask; t->slot[i].p; i = (i + 1) & t->mask)
    if (t->slot[i].h == h && eq(t->slot[i].p, key)) return t->slot[i].p;
  return NULL;
}

int htab_add(htab_t *t, uint64_t h, void *p) {
  if ((t->n + 1) * 2 > (t->slot ? t->mask + 1 : 0) && htab_grow(t) != RIPPLE_OK)
    return RIPPLE_ENOMEM;
  if (!t->slot) return RIPPLE_ENOMEM; /* grow made one; said for the analyzer */
  size_t i = h & t->mask;
  while (t->slot[i].p) i = (i + 1) & t->mask;
  t->slot[i].p = p;
  t->slot[i].h = h;
  t->n++;
  return RIPPLE_OK;
}

void htab_del(htab_t *t, uint64_t h, const void *p) {
  if (!t->slot) return;
  size_t i = h & t->mask;
  while (t->slot[i].p != p) {
    if (!t->slot[i].p) return;
    i = (i + 1) & t->mask;
  }
  /* Backward shift: a later item of the run moves into the hole when its home
   * is not between the hole and itself. */
  for (size_t j = (i + 1) & t->mask; t->slot[j].p; j = (j + 1) & t->mask) {
    size_t home = t->slot[j].h & t->mask;
    if (((j - home) & t->mask) >= ((j - i) & t->mask)) {
      t->slot[i] = t->slot[j];
      i = j;
    }
  }
  t->slot[i].p = NULL;
  t->slot[i].h = 0;
  t->n--;
}

size_t htab_memory(const htab_t *t) { return t->slot ? (t->mask + 1) * sizeof *t->slot : 0; }

/* ---- strings --------------------------------------------------------------- */

typedef struct skey {
  const char *p;
  size_t n;
} skey_t;

static int str_eq(const void *item, const void *key) {
  const sstr_t *x = item;
  const skey_t *k = key;
  return x->len == k->n && memcmp(x->s, k->p, k->n) == 0;
}

static uint64_t str_hash(const stall_t *s, const char *p, size_t n) {
  return keytab_hash(p, n, s->seed);
}

int str_find(const stall_t *s, const char *p, size_t n, sstr_t **out) {
  *out = NULL;
  if (!n) return 1;
  skey_t k = {p, n};
  *out = htab_find(&s->strs, str_hash(s, p, n), str_eq, &k);
  return *out != NULL;
}

int str_ref(stall_t *s, const char *p, sstr_t **out) {
  size_t n = strlen(p);
  sstr_t *x;
  if (str_find(s, p, n, &x)) {
    if (x) x->refs++;
    *out = x;
    return RIPPLE_OK;
  }
  if (n > UINT32_MAX || !(x = malloc(sizeof *x + n + 1))) return RIPPLE_ENOMEM;
  x->h = str_hash(s, p, n);
  x->refs = 1;
  x->len = (uint32_t)n;
  memcpy(x->s, p, n + 1);
  if (htab_add(&s->strs, x->h, x) != RIPPLE_OK) {
    free(x);
    return RIPPLE_ENOMEM;
  }
  *out = x;
  return RIPPLE_OK;
}

void str_unref(stall_t *s, sstr_t *x) {
  if (!x || --x->refs) return;
  htab_del(&s->strs, x->h, x);
  free(x);
}
