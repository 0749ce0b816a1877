/*
 * watch_store.c - object records, and the last known state of every object a
 * watch follows.
 *
 * A watch event carries only the new state; consumers want the old one too
 * (what changed?), and after a 410 the watch must tell what happened while it
 * could not see: the difference between what it knew and a fresh list. Both
 * need the last state of each object, kept here by namespace/name. An object
 * deleted and created again under the same name has another uid; that is a
 * deletion and an addition, not a modification, so uids are compared too.
 * resourceVersions are compared for equality only, as the API conventions
 * require (they are opaque, not numbers to order).
 *
 * A record is one allocation: the object's JSON text followed by its key,
 * uid, resourceVersion, labels and owners' uids, so that a cached Pod costs
 * about its JSON size and replacing it costs one free.
 */
#include <stdlib.h>
#include <string.h>

#include "watch_internal.h"

/* ---- records ----------------------------------------------------------------------- */

static const char *str_or_empty(const json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

size_t wstore_key(const json_t *obj, char *buf, size_t cap) {
  const json_t *md = json_object_get(obj, "metadata");
  const char *name = json_string_value(json_object_get(md, "name"));
  const char *ns = json_string_value(json_object_get(md, "namespace"));
  if (!name || !*name) return 0;
  size_t nl = ns ? strlen(ns) : 0, ml = strlen(name);
  size_t len = nl ? nl + 1 + ml : ml;
  if (len >= cap) return 0;
  char *p = buf;
  if (nl) {
    memcpy(p, ns, nl + 1);
    p[nl] = '/';
    p += nl + 1;
  }
  memcpy(p, name, ml + 1);
  return len;
}

/* Copy text without the member [cut, cut+cutlen) and the comma that
 * separated it from a neighbour, so the result is still JSON. */
static size_t copy_cut(char *dst, const char *text, size_t len, const char *cut, size_t cutlen) {
  if (!cut) {
    memcpy(dst, text, len);
    return len;
  }
  const char *a = cut, *b = cut + cutlen, *end = text + len, *q = b;
  while (q < end && (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t')) q++;
  if (q < end && *q == ',') {
    b = q + 1;
  } else {
    const char *r = a;
    while (r > text && (r[-1] == ' ' || r[-1] == '\n' || r[-1] == '\r' || r[-1] == '\t')) r--;
    if (r > text && r[-1] == ',') a = r - 1;
  }
  memcpy(dst, text, (size_t)(a - text));
  memcpy(dst + (a - text), b, (size_t)(end - b));
  return (size_t)(a - text) + (size_t)(end - b);
}

static char *put_str(char *p, const char *s) {
  size_t n = strlen(s) + 1;
  memcpy(p, s, n);
  return p + n;
}

int krec_make(const char *text, size_t len, const char *cut, size_t cutlen, const json_t *obj,
              krec_t **out) {
  const json_t *md = json_object_get(obj, "metadata");
  char key[WSTORE_KEYMAX];
  size_t keylen = wstore_key(obj, key, sizeof key);
  if (!keylen || len > UINT32_MAX) return RIPPLE_EINVAL;
  if (cut && (cut < text || cut + cutlen > text + len)) cut = NULL;
  const char *uid = str_or_empty(md, "uid"), *rv = str_or_empty(md, "resourceVersion");
  size_t extra = keylen + strlen(uid) + strlen(rv) + 3, nlabels = 0, nowners = 0;
  const char *k;
  json_t *v, *labels = json_object_get(md, "labels"),
             *refs = json_object_get(md, "ownerReferences");
  json_object_foreach(labels, k, v) {
    if (json_is_string(v)) extra += strlen(k) + json_string_length(v) + 2, nlabels++;
  }
  size_t i;
  json_array_foreach(refs, i, v) {
    const char *u = json_string_value(json_object_get(v, "uid"));
    if (u) extra += strlen(u) + 1, nowners++;
  }
  if (nlabels > UINT32_MAX / 2 || nowners > UINT32_MAX / 2) return RIPPLE_EINVAL;
  krec_t *r = malloc(sizeof *r + (cut ? len - cutlen : len) + 1 + extra);
  if (!r) return RIPPLE_ENOMEM;
  atomic_init(&r->refs, 1);
  size_t n = copy_cut(r->json, text, len, cut, cutlen);
  r->json[n] = '\0';
  r->len = (uint32_t)n;
  char *p = r->json + n + 1;
  r->key = p, p = put_str(p, key);
  r->uid = p, p = put_str(p, uid);
  r->rv = p, p = put_str(p, rv);
  r->labels = p, r->nlabels = (uint32_t)nlabels;
  json_object_foreach(labels, k, v) {
    if (json_is_string(v)) p = put_str(put_str(p, k), json_string_value(v));
  }
  r->owners = p, r->nowners = (uint32_t)nowners;
  json_array_foreach(refs, i, v) {
    const char *u = json_string_value(json_object_get(v, "uid"));
    if (u) p = put_str(p, u);
  }
  *out = r;
  return RIPPLE_OK;
}

int krec_from_tree(const json_t *obj, int strip, krec_t **out) {
  json_t *o = strip ? wdec_strip((json_t *)obj) : json_incref((json_t *)obj);
  char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
  int rc = text ? krec_make(text, strlen(text), NULL, 0, o, out) : RIPPLE_ENOMEM;
  free(text);
  json_decref(o);
  return rc;
}

json_t *krec_tree(const krec_t *r) {
  json_t *t = NULL;
  return jparse(r->json, r->len, NULL, &t) == RIPPLE_OK ? t : NULL;
}

krec_t *krec_ref(krec_t *r) {
  if (r) atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
  return r;
}

void krec_unref(krec_t *r) {
  if (r && atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1) free(r);
}

/* ---- the store ---------------------------------------------------------------------- */

void wstore_init(wstore_t *s) { kmap_init(&s->objs); }

void wstore_clear(wstore_t *s) {
  kmap_foreach(&s->objs, i) krec_unref(s->objs.slots[i].val);
  kmap_free(&s->objs);
}

void wstore_free(wstore_t *s) { wstore_clear(s); }

size_t wstore_size(const wstore_t *s) { return s->objs.n; }

krec_t *wstore_get(const wstore_t *s, const char *key) { return kmap_get(&s->objs, key); }

int wstore_put(wstore_t *s, krec_t *rec) {
  void *old;
  if (kmap_put(&s->objs, rec->key, rec, &old) != RIPPLE_OK) return RIPPLE_ENOMEM;
  krec_ref(rec); /* the map's */
  krec_unref(old);
  return RIPPLE_OK;
}

int wstore_load(wstore_t *s, const json_t *arr, int strip) {
  size_t i;
  json_t *obj;
  if (!json_is_array(arr)) return RIPPLE_EINVAL;
  json_array_foreach(arr, i, obj) {
    krec_t *r;
    int rc = krec_from_tree(obj, strip, &r);
    if (rc == RIPPLE_OK) rc = wstore_put(s, r), krec_unref(r);
    if (rc != RIPPLE_OK) return rc;
  }
  return RIPPLE_OK;
}

/* Two states of one name are one object unless both have uids that differ. */
static int same_object(const krec_t *a, const krec_t *b) {
  return !*a->uid || !*b->uid || strcmp(a->uid, b->uid) == 0;
}

static int changed(const krec_t *a, const krec_t *b) {
  if (*a->rv && *b->rv) return strcmp(a->rv, b->rv) != 0;
  return a->len != b->len || memcmp(a->json, b->json, a->len) != 0;
}

static void emit(wstore_emit_fn fn, void *ud, ripple_kube_event_type_t type, krec_t *rec,
                 krec_t *old, json_t *obj, int64_t now, int relist) {
  wchange_t ch = {type, relist, now, rec, old, obj};
  fn(ud, &ch);
}

int wstore_apply(wstore_t *s, wev_type_t t, krec_t *rec, json_t *obj, int64_t now,
                 wstore_emit_fn fn, void *ud) {
  void *prev = NULL;
  if (t == WEV_DELETED) {
    krec_t *old = kmap_del(&s->objs, rec->key);
    emit(fn, ud, RIPPLE_KUBE_DELETED, rec, old, obj, now, 0);
    krec_unref(old);
    return RIPPLE_OK;
  }
  if (kmap_put(&s->objs, rec->key, rec, &prev) != RIPPLE_OK) return RIPPLE_ENOMEM;
  krec_ref(rec); /* the map's */
  krec_t *old = prev;
  if (old && !same_object(old, rec)) {
    /* A missed deletion: the name now belongs to another object. */
    emit(fn, ud, RIPPLE_KUBE_DELETED, old, old, NULL, now, 0);
    emit(fn, ud, RIPPLE_KUBE_ADDED, rec, NULL, obj, now, 0);
  } else {
    emit(fn, ud, old ? RIPPLE_KUBE_MODIFIED : RIPPLE_KUBE_ADDED, rec, old, obj, now, 0);
  }
  krec_unref(old);
  return RIPPLE_OK;
}

int wstore_replace(wstore_t *s, wstore_t *fresh, int relist, int64_t now, wstore_emit_fn fn,
                   void *ud) {
  /* Deletions first, so a consumer never holds two objects under one name. */
  kmap_foreach(&s->objs, i) {
    krec_t *old = s->objs.slots[i].val, *rec = kmap_get(&fresh->objs, old->key);
    if (!rec || !same_object(old, rec))
      emit(fn, ud, RIPPLE_KUBE_DELETED, old, old, NULL, now, relist);
  }
  kmap_foreach(&fresh->objs, i) {
    krec_t *rec = fresh->objs.slots[i].val, *old = kmap_get(&s->objs, rec->key);
    if (!old || !same_object(old, rec))
      emit(fn, ud, RIPPLE_KUBE_ADDED, rec, NULL, NULL, now, relist);
    else if (changed(old, rec))
      emit(fn, ud, RIPPLE_KUBE_MODIFIED, rec, old, NULL, now, relist);
  }
  wstore_clear(s);
  s->objs = fresh->objs;
  kmap_init(&fresh->objs);
  return RIPPLE_OK;
}
