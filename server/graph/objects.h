/*
 * objects.h - the object index: which CPIDs wrote an object lately.
 *
 * "What happened to deployment demo/web?" starts from the object, not from a
 * CPID. Every stored record that names an object (a mergelog's object, a
 * span's kind/namespace/name attributes) adds its CPID under the object's
 * (kind, namespace, name); GET /v1/objects answers from here.
 *
 * Bounded: an object keeps its OBJECTS_KEEP most recent CPIDs (older ones
 * are forgotten as newer ones come), and at most OBJECTS_MAX objects are
 * indexed (later ones are counted, not indexed). Entries whose CPID retention
 * removed are skipped when answering and dropped by objects_prune, with their
 * object when none is left. Durable by being rebuilt at start from the
 * records' object columns (store.h).
 *
 * Not thread-safe by itself: the server guards it with the graph's lock.
 * Ownership: the index copies the names it is given; obj_found_t points into
 * the index and is valid until the next change to it.
 */
#ifndef RIPPLE_SERVER_OBJECTS_H
#define RIPPLE_SERVER_OBJECTS_H

#include <stddef.h>
#include <stdint.h>

#include "ripple/ripple.h"

#define OBJECTS_KEEP 16
#define OBJECTS_MAX (1u << 22)

typedef struct objects objects_t;

/* An object's name; strings of the given lengths, not NUL-terminated, no NUL
 * inside. ns is empty for a cluster-scoped object. */
typedef struct obj_name {
  const char *kind, *ns, *name;
  size_t kind_len, ns_len, name_len;
} obj_name_t;

/* One CPID that wrote the object: its latest write's time and how many. */
typedef struct obj_cpid {
  ripple_cpid_t cpid;
  int64_t time;
  uint32_t writes;
} obj_cpid_t;

/* An object found, with its live CPIDs newest first. */
typedef struct obj_found {
  const char *kind, *ns, *name; /* NUL-terminated, inside the index */
  obj_cpid_t cpid[OBJECTS_KEEP];
  size_t n;
} obj_found_t;

/* Is this CPID still stored? */
typedef int (*objects_live_fn)(void *ud, const ripple_cpid_t *cpid);

/* An empty index: RIPPLE_OK, or RIPPLE_ENOMEM. */
int objects_new(objects_t **out);
void objects_free(objects_t *o);

/* Note that cpid wrote object k at time_ns. RIPPLE_OK (also when k has no
 * kind or no name, which is not indexed, or when the index is full),
 * RIPPLE_ENOMEM. */
int objects_add(objects_t *o, const obj_name_t *k, const ripple_cpid_t *cpid, int64_t time_ns);

/* The objects matching kind, ns and name (NULL: any; a name with kind and ns
 * is one lookup, anything else a scan), most recently written first, at most
 * max of them, into out; only CPIDs for which live answers 1, and only
 * objects with at least one. Returns how many, or RIPPLE_ENOMEM (< 0). */
long objects_find(const objects_t *o, const char *kind, const char *ns, const char *name,
                  objects_live_fn live, void *ud, obj_found_t *out, size_t max);

/* Drop the CPIDs for which live answers 0, and objects left with none.
 * Returns how many CPIDs were dropped. */
size_t objects_prune(objects_t *o, objects_live_fn live, void *ud);

size_t objects_count(const objects_t *o);
uint64_t objects_refused(const objects_t *o); /* objects not indexed: the index was full */
size_t objects_memory(const objects_t *o);

#endif
