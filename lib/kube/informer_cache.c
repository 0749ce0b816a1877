/*
 * informer_cache.c - an informer's local cache: objects by namespace/name,
 * with indexes by owner uid and by label, readable from any thread.
 *
 * One writer (the informer's watch thread) and many readers, so a rwlock.
 * The cache holds the watch's records (watch_store.c): the objects' JSON text
 * and the fields the indexes need, shared by reference count with the watch's
 * own state, so caching an object costs a few hash slots on top of the text.
 * A read takes references under the read lock and hands out the records'
 * text after releasing it, so readers never hold the writer up for long; the
 * text is immutable and the read's reference keeps it alive: no tree, no
 * copy. Only icache_each builds trees (outside the lock too), each the
 * reader's own: nobody can change what another one sees.
 *
 * An index is a map from the index value ("app=web", an owner's uid) to the
 * set of records that have it, so adding or removing an object is a few hash
 * operations, not a scan, and a selector with a key=value requirement looks
 * at the objects that carry that label only.
 */
#include <stdlib.h>
#include <string.h>

#include "watch_internal.h"

/* A set of records under one index value; its key is the value itself. */
typedef struct kset {
  kmap_t recs; /* cache key -> krec_t (no reference: objs holds it) */
  char key[];
} kset_t;

int icache_init(icache_t *c) {
  memset(c, 0, sizeof *c);
  kmap_init(&c->objs);
  kmap_init(&c->owners);
  kmap_init(&c->labels);
  return pthread_rwlock_init(&c->lock, NULL) == 0 ? RIPPLE_OK : RIPPLE_ESYS;
}

static void free_index(kmap_t *index) {
  kmap_foreach(index, i) {
    kset_t *set = index->slots[i].val;
    kmap_free(&set->recs);
    free(set);
  }
  kmap_free(index);
}

void icache_free(icache_t *c) {
  kmap_foreach(&c->objs, i) krec_unref(c->objs.slots[i].val);
  kmap_free(&c->objs);
  free_index(&c->owners);
  free_index(&c->labels);
  pthread_rwlock_destroy(&c->lock);
}

/* ---- indexes ----------------------------------------------------------------------- */

static void set_add(kmap_t *index, const char *ikey, krec_t *rec) {
  kset_t *set = kmap_get(index, ikey);
  if (!set) {
    size_t n = strlen(ikey) + 1;
    if (!(set = malloc(sizeof *set + n))) return;
    kmap_init(&set->recs);
    memcpy(set->key, ikey, n);
    if (kmap_put(index, set->key, set, NULL) != RIPPLE_OK) {
      free(set);
      return;
    }
  }
  kmap_put(&set->recs, rec->key, rec, NULL);
}

static void set_del(kmap_t *index, const char *ikey, const char *key) {
  kset_t *set = kmap_get(index, ikey);
  if (!set) return;
  kmap_del(&set->recs, key);
  if (set->recs.n) return;
  kmap_del(index, set->key);
  kmap_free(&set->recs);
  free(set);
}

/* "label=value" ('=' cannot occur in a label key). */
static const char *label_key(const char *k, const char *v, char *buf, size_t cap, char **heap) {
  size_t kl = strlen(k), vl = strlen(v), n = kl + 1 + vl + 1;
  char *p = n <= cap ? buf : (*heap = malloc(n));
  if (!p) return NULL;
  memcpy(p, k, kl + 1);
  p[kl] = '=';
  memcpy(p + kl + 1, v, vl + 1);
  return p;
}

static void index_rec(icache_t *c, krec_t *rec, int add) {
  const char *p = rec->owners;
  for (uint32_t i = 0; i < rec->nowners; i++, p += strlen(p) + 1) {
    if (add)
      set_add(&c->owners, p, rec);
    else
      set_del(&c->owners, p, rec->key);
  }
  p = rec->labels;
  for (uint32_t i = 0; i < rec->nlabels; i++) {
    const char *v = p + strlen(p) + 1;
    char buf[512], *heap = NULL;
    const char *ik = label_key(p, v, buf, sizeof buf, &heap);
    if (ik && add)
      set_add(&c->labels, ik, rec);
    else if (ik)
      set_del(&c->labels, ik, rec->key);
    free(heap);
    p = v + strlen(v) + 1;
  }
}

int icache_apply(icache_t *c, const wchange_t *ch) {
  int rc = RIPPLE_OK;
  krec_t *rec = ch->rec;
  pthread_rwlock_wrlock(&c->lock);
  krec_t *old = kmap_get(&c->objs, rec->key);
  /* Unindex what the cache holds, not what the change says was there. */
  if (old) index_rec(c, old, 0);
  if (ch->type == RIPPLE_KUBE_DELETED) {
    kmap_del(&c->objs, rec->key);
  } else if (kmap_put(&c->objs, rec->key, rec, NULL) == RIPPLE_OK) {
    krec_ref(rec); /* the map's */
    index_rec(c, rec, 1);
  } else {
    kmap_del(&c->objs, rec->key);
    rc = RIPPLE_ENOMEM;
  }
  pthread_rwlock_unlock(&c->lock);
  krec_unref(old);
  return rc;
}

/* ---- reads ------------------------------------------------------------------------ */

typedef struct snap {
  krec_t **v;
  size_t n, cap;
} snap_t;

static void snap_add(snap_t *s, krec_t *r) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    krec_t **v = realloc(s->v, cap * sizeof(krec_t *));
    if (!v) return; /* out of memory: the reader sees fewer objects */
    s->v = v, s->cap = cap;
  }
  s->v[s->n++] = krec_ref(r);
}

/* Hand each snapshotted object (outside the lock) to fn as its text, and
 * release it. Returns how many there were (without fn: only counts). */
static size_t snap_run(snap_t *s, icache_text_fn fn, void *ud) {
  for (size_t i = 0; i < s->n; i++) {
    if (fn) fn(ud, s->v[i]->json, s->v[i]->len);
    krec_unref(s->v[i]);
  }
  free(s->v);
  return s->n;
}

/* The record under ns/name with a reference taken, or NULL. */
static krec_t *get_rec(icache_t *c, const char *ns, const char *name) {
  if (!name || !*name) return NULL;
  char key[WSTORE_KEYMAX];
  int n = ns && *ns ? snprintf(key, sizeof key, "%s/%s", ns, name)
                    : snprintf(key, sizeof key, "%s", name);
  if (n < 0 || (size_t)n >= sizeof key) return NULL;
  pthread_rwlock_rdlock(&c->lock);
  krec_t *r = krec_ref(kmap_get(&c->objs, key));
  pthread_rwlock_unlock(&c->lock);
  return r;
}

int icache_get_text(icache_t *c, const char *ns, const char *name, icache_text_fn fn, void *ud) {
  krec_t *r = get_rec(c, ns, name);
  if (!r) return RIPPLE_ENOENT;
  fn(ud, r->json, r->len);
  krec_unref(r);
  return RIPPLE_OK;
}

static void snap_owned(icache_t *c, const char *uid, snap_t *s) {
  pthread_rwlock_rdlock(&c->lock);
  kset_t *set = kmap_get(&c->owners, uid ? uid : "");
  if (set) kmap_foreach(&set->recs, i) snap_add(s, set->recs.slots[i].val);
  pthread_rwlock_unlock(&c->lock);
}

size_t icache_by_owner_text(icache_t *c, const char *uid, icache_text_fn fn, void *ud) {
  snap_t s = {0};
  snap_owned(c, uid, &s);
  return snap_run(&s, fn, ud);
}

static int in_ns(const krec_t *r, const char *ns, size_t nslen) {
  return !nslen || (strncmp(r->key, ns, nslen) == 0 && r->key[nslen] == '/');
}

/* Snapshot the objects in ns matching selector. */
static int snap_selected(icache_t *c, const char *ns, const char *selector, snap_t *s) {
  ksel_t *sel;
  int rc = ksel_parse(selector ? selector : "", &sel, NULL, 0);
  if (rc != RIPPLE_OK) return rc;
  size_t nslen = ns ? strlen(ns) : 0;
  const char *k, *v;
  char buf[512], *heap = NULL;
  pthread_rwlock_rdlock(&c->lock);
  /* With a key=value requirement, only that label's set can match. */
  const kmap_t *cand = &c->objs;
  if (ksel_equality(sel, &k, &v)) {
    const char *ik = label_key(k, v, buf, sizeof buf, &heap);
    kset_t *set = ik ? kmap_get(&c->labels, ik) : NULL;
    cand = set ? &set->recs : NULL;
  }
  if (cand) {
    kmap_foreach(cand, i) {
      krec_t *r = cand->slots[i].val;
      if (in_ns(r, ns, nslen) && ksel_match_packed(sel, r->labels, r->nlabels)) snap_add(s, r);
    }
  }
  pthread_rwlock_unlock(&c->lock);
  free(heap);
  ksel_free(sel);
  return RIPPLE_OK;
}

int icache_select_text(icache_t *c, const char *ns, const char *selector, icache_text_fn fn,
                       void *ud, size_t *count) {
  snap_t s = {0};
  int rc = snap_selected(c, ns, selector, &s);
  if (rc != RIPPLE_OK) return rc;
  size_t n = snap_run(&s, fn, ud);
  if (count) *count = n;
  return RIPPLE_OK;
}

/* Trees are built outside the lock, one at a time: each is the reader's own
 * for the call. Without fn, count. */
size_t icache_each(icache_t *c, void (*fn)(void *ud, json_t *obj), void *ud) {
  snap_t s = {0};
  pthread_rwlock_rdlock(&c->lock);
  kmap_foreach(&c->objs, i) snap_add(&s, c->objs.slots[i].val);
  pthread_rwlock_unlock(&c->lock);
  size_t n = 0;
  for (size_t i = 0; i < s.n; i++) {
    json_t *t = fn ? krec_tree(s.v[i]) : NULL;
    if (t || !fn) n++;
    if (t) fn(ud, t);
    json_decref(t);
    krec_unref(s.v[i]);
  }
  free(s.v);
  return n;
}

size_t icache_size(icache_t *c) {
  pthread_rwlock_rdlock(&c->lock);
  size_t n = c->objs.n;
  pthread_rwlock_unlock(&c->lock);
  return n;
}

void icache_index_sizes(icache_t *c, size_t *labels, size_t *owners) {
  pthread_rwlock_rdlock(&c->lock);
  *labels = c->labels.n;
  *owners = c->owners.n;
  pthread_rwlock_unlock(&c->lock);
}
