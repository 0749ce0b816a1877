/*
 * watch_internal.h - the parts of watches and informers that need no API
 * server, shared with the unit tests, the fuzz target and the benchmark:
 * a JSON parser for event frames on yajl (jparse.c), a string-keyed hash map
 * (kmap.c), the framing and decoding of a watch stream (watch_decode.c),
 * object records and the last known state of every object with the
 * differences a relist finds (watch_store.c), label selectors (selector.c)
 * and the informer's indexed cache (informer_cache.c). Not installed.
 *
 * Objects at rest (in a watch's state, in an informer's cache) are records:
 * the object's compact JSON text as the server sent it, plus the few fields
 * the state and the indexes use. A jansson tree of a 5 KiB Pod takes 70 KiB
 * in about 700 allocations, and replacing one costs more than decoding it
 * (freeing touches every cold node); the text takes 5 KiB in one. A tree is
 * built when a consumer asks for one: for a callback, or a cache read.
 */
#ifndef RIPPLE_KUBE_WATCH_INTERNAL_H
#define RIPPLE_KUBE_WATCH_INTERNAL_H

#include <pthread.h>

#include "kube_internal.h"
#include "ripplex/sbuf.h"

/* ---- JSON (jparse.c) ---------------------------------------------------------- */

/* Paths are NULL-terminated lists of object keys from the root. */
typedef struct jparse_opts {
  const char *const *drop; /* this member is checked but not built */
  /* Build only along this path and everything below its end; off the path,
   * scalars are built and containers only checked. NULL: build everything. */
  const char *const *only;
  const char *const *span; /* report where this value is in the input */
} jparse_opts_t;

typedef struct jparse_spans {
  const char *span; /* the value at opts.span, or NULL */
  size_t span_len;
  const char *drop; /* the member at opts.drop, "key": value, or NULL */
  size_t drop_len;
} jparse_spans_t;

/* Parse one JSON value from p[0..n), whitespace around it allowed; yajl lexes,
 * the values are built directly. Accepts what json_loadb(JSON_DECODE_ANY |
 * JSON_ALLOW_NUL) accepts and builds equal values (when nothing is dropped or
 * left out), faster. out may be NULL to check only; sp is written only on
 * success. RIPPLE_EJSON for malformed input, RIPPLE_ENOMEM. */
int jparse_ex(const char *p, size_t n, const jparse_opts_t *o, json_t **out, jparse_spans_t *sp);
/* jparse_ex with only a drop path (may be NULL). */
int jparse(const char *p, size_t n, const char *const *drop, json_t **out);

/* ---- hash map (kmap.c) ------------------------------------------------------------ */

typedef struct kslot {
  const char *key; /* owned by val; NULL: empty */
  void *val;
  uint64_t hash;
} kslot_t;

typedef struct kmap {
  kslot_t *slots;
  size_t cap, n;
} kmap_t;

/* i names a declaration: it cannot be parenthesised. */
/* NOLINTBEGIN(bugprone-macro-parentheses) */
#define kmap_foreach(m, i)              \
  for (size_t i = 0; i < (m)->cap; i++) \
    if ((m)->slots[i].key)
/* NOLINTEND(bugprone-macro-parentheses) */

uint64_t kmap_hash(const char *key, size_t len);
void kmap_init(kmap_t *m);
void kmap_free(kmap_t *m); /* the slots; values are the caller's */
void *kmap_get(const kmap_t *m, const char *key);
/* Map key (which must live as long as the entry, e.g. inside val) to val;
 * *old (may be NULL) gets the value replaced, if any. */
int kmap_put(kmap_t *m, const char *key, void *val, void **old);
/* Remove key; returns its value or NULL. */
void *kmap_del(kmap_t *m, const char *key);

/* ---- object records (watch_store.c) ------------------------------------------------ */

#define WSTORE_KEYMAX 512

/* One state of one object, immutable and shared by reference count. */
typedef struct krec {
  atomic_uint refs;
  uint32_t len;         /* of json */
  uint32_t nlabels;     /* pairs in labels */
  uint32_t nowners;     /* uids in owners */
  const char *key;      /* "namespace/name", or "name" when cluster-scoped */
  const char *uid, *rv; /* "" when absent */
  const char *labels;   /* "key\0value\0" nlabels times */
  const char *owners;   /* "uid\0" nowners times (metadata.ownerReferences) */
  char json[];          /* the object's JSON text, NUL-terminated; then the strings */
} krec_t;

/* A record from an object's text and its tree (at least its metadata).
 * cut: a member of text to leave out (managedFields), or NULL. RIPPLE_EINVAL
 * for an object without metadata.name, or a key longer than WSTORE_KEYMAX. */
int krec_make(const char *text, size_t len, const char *cut, size_t cutlen, const json_t *obj,
              krec_t **out);
/* A record of a tree (from a list), serialised; strip leaves managedFields out. */
int krec_from_tree(const json_t *obj, int strip, krec_t **out);
/* A new tree of the record's object, or NULL when out of memory. */
json_t *krec_tree(const krec_t *r);
krec_t *krec_ref(krec_t *r);
void krec_unref(krec_t *r);

/* The key of an object; 0 if it has no metadata.name (or the key is too long). */
size_t wstore_key(const json_t *obj, char *buf, size_t cap);

/* ---- framing and decoding (watch_decode.c) -------------------------------------- */

typedef enum wev_type {
  WEV_ADDED,
  WEV_MODIFIED,
  WEV_DELETED,
  WEV_BOOKMARK,
  WEV_ERROR, /* an ERROR event, or a bare Status (the body of a refused request) */
} wev_type_t;

/* One decoded event. Pointers are borrowed from the frame and its document. */
typedef struct wev {
  wev_type_t type;
  /* The object: all of it with WDEC_TREE, else apiVersion, kind and metadata
   * (without managedFields). For ERROR the Status. */
  json_t *obj;
  const char *text; /* the object's JSON text in the frame (not for ERROR) */
  size_t text_len;
  const char *cut; /* with WDEC_STRIP: the managedFields member in text, or NULL */
  size_t cut_len;
  const char *rv;      /* the object's metadata.resourceVersion (NULL for ERROR) */
  long code;           /* ERROR: Status.code, 0 if absent */
  const char *reason;  /* ERROR: Status.reason, "" if absent */
  const char *message; /* ERROR: Status.message, "" if absent */
} wev_t;

enum {
  WDEC_STRIP = 1, /* leave metadata.managedFields out of objects */
  WDEC_TREE = 2,  /* build whole objects, not only their metadata */
};

/* Called for each event; a nonzero return stops the feed and is returned. */
typedef int (*wdec_fn)(void *ud, const wev_t *ev);

#define WDEC_MAX_FRAME (64u << 20) /* far above etcd's 1.5 MiB object limit */

typedef struct wdec {
  sbuf_t part;      /* the start of a frame split across chunks */
  size_t max_frame; /* longer frames are dropped and counted as bad */
  int overlong;     /* dropping the rest of an overlong frame */
  int flags;        /* WDEC_* */
  wdec_fn fn;
  void *ud;
  uint64_t frames, bad; /* frames seen; frames refused (malformed, unknown, too long) */
  char why[96];         /* why the last bad frame was refused */
} wdec_t;

void wdec_init(wdec_t *d, size_t max_frame, int flags, wdec_fn fn, void *ud);
/* Bytes as they arrive, in chunks of any size. Frames end with '\n' (the API
 * server writes one JSON document per line). */
int wdec_feed(wdec_t *d, const char *p, size_t n);
/* The stream ended: a last frame without its newline is decoded too. */
int wdec_end(wdec_t *d);
/* Forget a partial frame (a new connection starts). */
void wdec_reset(wdec_t *d);
void wdec_free(wdec_t *d);

/* Decode one frame (no newline). On success *root is the document (release it
 * with json_decref) and ev points into it; RIPPLE_EJSON with *why set for a
 * frame that is not JSON or not a watch event. Pure: no state. */
int wdec_frame(const char *p, size_t n, int flags, json_t **root, wev_t *ev, const char **why);

/* The object without metadata.managedFields (a shallow copy sharing
 * everything else), for objects that did not come through the decoder. */
json_t *wdec_strip(json_t *obj);

/* ---- last known state (watch_store.c) ------------------------------------------- */

/* What happened to one object, as a consumer should see it. */
typedef struct wchange {
  ripple_kube_event_type_t type;
  int relist;
  int64_t time_ns;
  krec_t *rec; /* the state now; for DELETED the last state */
  krec_t *old; /* the state before, or NULL */
  json_t *obj; /* rec as a tree when the decoder built one, else NULL */
} wchange_t;

typedef void (*wstore_emit_fn)(void *ud, const wchange_t *ch);

/* Records by key. */
typedef struct wstore {
  kmap_t objs;
} wstore_t;

void wstore_init(wstore_t *s);
void wstore_free(wstore_t *s);
void wstore_clear(wstore_t *s);
size_t wstore_size(const wstore_t *s);
krec_t *wstore_get(const wstore_t *s, const char *key); /* borrowed */
/* Remember rec (a reference is taken). */
int wstore_put(wstore_t *s, krec_t *rec);
/* Add the objects of a JSON array (watch opts "known"). */
int wstore_load(wstore_t *s, const json_t *arr, int strip);
/* Apply one watch event and emit what it means to a consumer. The type comes
 * from what the store knew: an ADDED for a known object is a MODIFIED with
 * its old state, a MODIFIED for an unknown one an ADDED, a name now held by
 * another uid a DELETED and an ADDED; a DELETED of an unknown object is still
 * emitted (old NULL). obj: rec as a tree, or NULL. */
int wstore_apply(wstore_t *s, wev_type_t t, krec_t *rec, json_t *obj, int64_t now,
                 wstore_emit_fn fn, void *ud);
/* Replace the state with a fresh list and emit the differences: DELETED for
 * what vanished, DELETED then ADDED for a name reused by another uid, ADDED
 * for what is new, MODIFIED for a changed resourceVersion. fresh is emptied. */
int wstore_replace(wstore_t *s, wstore_t *fresh, int relist, int64_t now, wstore_emit_fn fn,
                   void *ud);

/* ---- label selectors (selector.c) ------------------------------------------------ */

typedef struct ksel ksel_t;

/* Parse "app=web,tier!=db,env in (a,b),x notin (c),k,!k" (also "=="). An
 * empty selector matches everything. On failure err says what is wrong
 * where; RIPPLE_EINVAL. */
int ksel_parse(const char *s, ksel_t **out, char *err, size_t errcap);
/* labels: a JSON object of string values, or NULL (no labels). */
int ksel_match(const ksel_t *sel, const json_t *labels);
/* The same on n packed pairs "key\0value\0..." (a record's labels). */
int ksel_match_packed(const ksel_t *sel, const char *labels, size_t n);
/* For an index: the first requirement key=value, if there is one. */
int ksel_equality(const ksel_t *sel, const char **key, const char **value);
void ksel_free(ksel_t *sel);

/* ---- the informer's cache (informer_cache.c) ---------------------------------------- */

typedef struct icache {
  pthread_rwlock_t lock;
  kmap_t objs;   /* key -> krec_t */
  kmap_t owners; /* owner uid -> kset (key -> krec_t) */
  kmap_t labels; /* "label=value" -> kset */
} icache_t;

int icache_init(icache_t *c);
void icache_free(icache_t *c);
/* Apply a change under the write lock. */
int icache_apply(icache_t *c, const wchange_t *ch);
/* Every object as a tree, built after the read lock is released; fn gets new
 * references it must not keep without json_incref. */
size_t icache_each(icache_t *c, void (*fn)(void *ud, json_t *obj), void *ud);
/* Reads as text: fn gets a record's JSON text (NUL-terminated at
 * json[len]), valid during the call; no tree is built. icache_get_text is
 * RIPPLE_ENOENT when nothing is cached under ns/name. */
typedef void (*icache_text_fn)(void *ud, const char *json, size_t len);
int icache_get_text(icache_t *c, const char *ns, const char *name, icache_text_fn fn, void *ud);
size_t icache_by_owner_text(icache_t *c, const char *uid, icache_text_fn fn, void *ud);
int icache_select_text(icache_t *c, const char *ns, const char *selector, icache_text_fn fn,
                       void *ud, size_t *count);
size_t icache_size(icache_t *c);
/* Number of label index entries and owner index entries (for tests). */
void icache_index_sizes(icache_t *c, size_t *labels, size_t *owners);

/* ---- the watch machinery (watch.c) ------------------------------------------------- */

/* A watch whose changes go to change() (if not NULL) as records instead of
 * to h->event as trees; trees: decode whole objects (else only metadata, and
 * ch->obj is NULL). The informer uses this. */
int kube_watch_start(ripple_kube_client_t *c, const ripple_kube_resource_t *r,
                     const ripple_kube_watch_opts_t *o, const ripple_kube_watch_handlers_t *h,
                     wstore_emit_fn change, int trees, ripple_kube_watch_t **out);

#endif
