/*
 * keytab.c - see keytab.h.
 */
#include "graph/keytab.h"

#include <stdlib.h>
#include <string.h>

#include "ripple/ripple.h"
#include "ripplex/rnd.h"

uint64_t keytab_mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t keytab_hash(const char *s, size_t n, uint64_t seed) {
  uint64_t h = keytab_mix(seed ^ n);
  while (n) {
    uint64_t w = 0;
    size_t k = n < 8 ? n : 8;
    memcpy(&w, s, k);
    h = keytab_mix(h ^ w) + 0x9e3779b97f4a7c15ULL;
    s += k;
    n -= k;
  }
  return h;
}

void keytab_init(keytab_t *t) {
  memset(t, 0, sizeof *t);
  t->seed = 0x2545f4914f6cdd1dULL;
  (void)rnd_bytes(&t->seed, sizeof t->seed); /* without it, a fixed seed still works */
}

void keytab_free(keytab_t *t, void (*free_val)(void *val)) {
  for (size_t i = 0; t->slot && i <= t->mask; i++) {
    if (!t->slot[i].key) continue;
    free(t->slot[i].key);
    if (free_val) free_val(t->slot[i].val);
  }
  free(t->slot);
  memset(t, 0, sizeof *t);
}

/* The slot of key, or the empty slot where it would go. */
static keytab_slot_t *probe(keytab_slot_t *slot, size_t mask, uint64_t seed, const char *key,
                            size_t n) {
  size_t h = (size_t)keytab_hash(key, n, seed) & mask;
  for (; slot[h].key; h = (h + 1) & mask)
    if (slot[h].len == n && memcmp(slot[h].key, key, n) == 0) break;
  return &slot[h];
}

keytab_slot_t *keytab_get(const keytab_t *t, const char *key, size_t n) {
  if (!t->slot) return NULL;
  keytab_slot_t *s = probe(t->slot, t->mask, t->seed, key, n);
  return s->key ? s : NULL;
}

/* Moves every occupied slot into a table of cap slots. */
static int rehash(keytab_t *t, size_t cap) {
  keytab_slot_t *slot = calloc(cap, sizeof *slot);
  if (!slot) return RIPPLE_ENOMEM;
  for (size_t i = 0; t->slot && i <= t->mask; i++)
    if (t->slot[i].key) *probe(slot, cap - 1, t->seed, t->slot[i].key, t->slot[i].len) = t->slot[i];
  free(t->slot);
  t->slot = slot;
  t->mask = cap - 1;
  return RIPPLE_OK;
}

int keytab_put(keytab_t *t, const char *key, size_t n, keytab_slot_t **out) {
  /* Grow first (even for a key that is there), so that one probe finds the
   * key or the slot for it. */
  if ((t->n + 1) * 2 > (t->slot ? t->mask + 1 : 0) &&
      rehash(t, t->slot ? (t->mask + 1) * 2 : 64) != RIPPLE_OK)
    return RIPPLE_ENOMEM;
  keytab_slot_t *s = probe(t->slot, t->mask, t->seed, key, n);
  if (!s->key) {
    if (!(s->key = malloc(n + 1))) return RIPPLE_ENOMEM;
    memcpy(s->key, key, n);
    s->key[n] = '\0';
    s->len = (uint32_t)n;
    s->val = NULL;
    t->n++;
    t->key_bytes += n + 1;
  }
  *out = s;
  return RIPPLE_OK;
}

size_t keytab_sweep(keytab_t *t, int (*keep)(void *val), void (*free_val)(void *val)) {
  size_t removed = 0;
  for (size_t i = 0; t->slot && i <= t->mask; i++) {
    keytab_slot_t *s = &t->slot[i];
    if (!s->key || keep(s->val)) continue;
    t->key_bytes -= s->len + 1;
    free(s->key);
    if (free_val) free_val(s->val);
    s->key = NULL;
    removed++;
  }
  if (!removed) return 0;
  t->n -= removed;
  /* Emptied slots break probe chains: rebuild, smaller when it can be. */
  size_t cap = 64;
  while (cap < t->n * 2) cap *= 2;
  if (rehash(t, cap) != RIPPLE_OK && rehash(t, t->mask + 1) != RIPPLE_OK) {
    /* Out of memory twice: re-insert in place is impossible; keep going with
     * a table whose chains may miss keys until the next sweep. Rare enough to
     * accept: the indexes only lose lookups, never data. */
  }
  return removed;
}

size_t keytab_memory(const keytab_t *t) {
  return sizeof *t + (t->slot ? (t->mask + 1) * sizeof *t->slot : 0) + t->key_bytes;
}
