/*
 * kmap.c - a hash map from strings to pointers, for the watch's state and the
 * informer's cache and indexes.
 *
 * Open addressing with linear probing and backward-shift deletion (no
 * tombstones, so a map that churns forever does not degrade). A slot is 24
 * bytes and the map does not copy keys: each key lives in the value it maps
 * to (an object record holds its own "namespace/name"), which keeps a cached
 * object's overhead small. Object names come from whoever may create objects
 * in the cluster, so the hash is seeded per process: nobody can choose names
 * that all land in one chain.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ripplex/rnd.h"
#include "watch_internal.h"

static uint64_t seed;
static void seed_init(void) {
  if (rnd_bytes(&seed, sizeof seed) != 0) seed = 0x9E3779B97F4A7C15ULL;
}

static uint64_t mix(uint64_t x) {
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  return x ^ (x >> 32);
}

uint64_t kmap_hash(const char *key, size_t len) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, seed_init);
  uint64_t h = seed ^ (len * 0x9E3779B97F4A7C15ULL), w;
  for (; len >= 8; key += 8, len -= 8) {
    memcpy(&w, key, 8);
    h = mix(h ^ w);
  }
  w = 0;
  memcpy(&w, key, len);
  return mix(h ^ w ^ ((uint64_t)len << 56));
}

void kmap_init(kmap_t *m) { memset(m, 0, sizeof *m); }

void kmap_free(kmap_t *m) {
  free(m->slots);
  memset(m, 0, sizeof *m);
}

static size_t find(const kmap_t *m, const char *key, size_t len, uint64_t h) {
  size_t mask = m->cap - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const kslot_t *s = &m->slots[i];
    if (!s->key || (s->hash == h && strncmp(s->key, key, len) == 0 && s->key[len] == '\0'))
      return i;
  }
}

void *kmap_get(const kmap_t *m, const char *key) {
  if (!m->n) return NULL;
  size_t len = strlen(key);
  uint64_t h = kmap_hash(key, len);
  const kslot_t *s = &m->slots[find(m, key, len, h)];
  return s->key ? s->val : NULL;
}

static int grow(kmap_t *m) {
  size_t cap = m->cap ? m->cap * 2 : 8;
  kslot_t *slots = calloc(cap, sizeof *slots);
  if (!slots) return RIPPLE_ENOMEM;
  for (size_t i = 0; i < m->cap; i++) {
    const kslot_t *s = &m->slots[i];
    if (!s->key) continue;
    size_t j = s->hash & (cap - 1);
    while (slots[j].key) j = (j + 1) & (cap - 1);
    slots[j] = *s;
  }
  free(m->slots);
  m->slots = slots;
  m->cap = cap;
  return RIPPLE_OK;
}

int kmap_put(kmap_t *m, const char *key, void *val, void **old) {
  if (old) *old = NULL;
  if ((m->n + 1) * 4 > m->cap * 3 && grow(m) != RIPPLE_OK) return RIPPLE_ENOMEM;
  size_t len = strlen(key);
  uint64_t h = kmap_hash(key, len);
  kslot_t *s = &m->slots[find(m, key, len, h)];
  if (s->key) {
    if (old) *old = s->val;
  } else {
    m->n++;
  }
  /* The key belongs to the value: a new value brings its own copy. */
  *s = (kslot_t){key, val, h};
  return RIPPLE_OK;
}

void *kmap_del(kmap_t *m, const char *key) {
  if (!m->n) return NULL;
  size_t len = strlen(key), mask = m->cap - 1;
  size_t i = find(m, key, len, kmap_hash(key, len));
  if (!m->slots[i].key) return NULL;
  void *val = m->slots[i].val;
  /* Backward shift: move later entries of the run into the hole when their
   * home slot is not between the hole and where they sit. */
  for (size_t j = (i + 1) & mask; m->slots[j].key; j = (j + 1) & mask) {
    size_t home = m->slots[j].hash & mask;
    if (((j - home) & mask) >= ((j - i) & mask)) {
      m->slots[i] = m->slots[j];
      i = j;
    }
  }
  m->slots[i] = (kslot_t){NULL, NULL, 0};
  m->n--;
  return val;
}
