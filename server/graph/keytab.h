/*
 * keytab.h - a hash table from byte-string keys to values, for the server's
 * in-memory indexes (roots.h by uid, objects.h by kind/namespace/name).
 *
 * Open addressing with linear probing, at most half full, hashed with a
 * random seed so that no client can choose keys that collide. Entries are
 * only removed in bulk (keytab_sweep rebuilds the table), which is how the
 * indexes forget: after retention.
 *
 * Not thread-safe. Ownership: the table copies keys; values are the caller's,
 * freed through the free_val callbacks given to keytab_sweep/keytab_free.
 */
#ifndef RIPPLE_SERVER_KEYTAB_H
#define RIPPLE_SERVER_KEYTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct keytab_slot {
  char *key; /* NUL-terminated copy; NULL: an empty slot */
  uint32_t len;
  void *val;
} keytab_slot_t;

typedef struct keytab {
  keytab_slot_t *slot;
  size_t mask; /* slots - 1; 0 with no table yet */
  size_t n;    /* keys */
  size_t key_bytes;
  uint64_t seed;
} keytab_t;

/* The table's hash of n bytes under seed (a seeded SplitMix64 over 8-byte
 * words), and its mixer: for the server's other hash tables (stall.h). */
uint64_t keytab_hash(const char *s, size_t n, uint64_t seed);
uint64_t keytab_mix(uint64_t x);

/* An empty table (no allocation until the first put). */
void keytab_init(keytab_t *t);
/* Frees the keys and, with free_val, every value. */
void keytab_free(keytab_t *t, void (*free_val)(void *val));

/* The slot of key (n bytes), or NULL when absent. */
keytab_slot_t *keytab_get(const keytab_t *t, const char *key, size_t n);
/* The slot of key, added with val NULL when absent: RIPPLE_OK or
 * RIPPLE_ENOMEM. */
int keytab_put(keytab_t *t, const char *key, size_t n, keytab_slot_t **out);
/* Removes the keys whose value keep() refuses (freeing the value with
 * free_val) and shrinks the table to fit. Returns how many were removed. */
size_t keytab_sweep(keytab_t *t, int (*keep)(void *val), void (*free_val)(void *val));
/* Bytes held by the table and its keys (not the values). */
size_t keytab_memory(const keytab_t *t);

#endif
