/*
 * fuzz_watch.c - libFuzzer target for what a watch reads from the API server
 * (or from anything between it and us): the framing and decoding of watch
 * streams, the JSON parser under them, and the state and cache the events
 * update; plus label selectors, which come from users.
 *
 * The first byte holds options: bit 0 strips managedFields, bit 1 builds whole
 * objects (else only metadata), bits 2-7 pick the chunk size the stream is
 * cut into (so frames span chunks), the rest is the stream. Properties:
 *   - every line the parser accepts, jansson accepts with an equal value, and
 *     the other way round (so jparse, yajl with the checks that make it as
 *     strict as jansson, is a drop-in replacement for json_loadb);
 *   - every decoded event has a type, an object and, except ERROR, a name;
 *     frames = events + bad;
 *   - the store and the informer's cache agree after every event: same size,
 *     the same object under each key;
 *   - the input as a label selector either parses or fails with a message.
 */
#include <stdlib.h>
#include <string.h>

#include "watch_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct fz {
  wstore_t store;
  icache_t cache;
  uint64_t events;
} fz_t;

static void to_cache(void *ud, const wchange_t *ch) {
  fz_t *f = ud;
  if (!ch->rec || (ch->type == RIPPLE_KUBE_MODIFIED && !ch->old)) abort();
  if (icache_apply(&f->cache, ch) != RIPPLE_OK) abort();
  /* The record's text is JSON again, whatever was cut out of it. */
  json_t *t = krec_tree(ch->rec);
  if (!t) abort();
  json_decref(t);
}

static int on_event(void *ud, const wev_t *ev) {
  fz_t *f = ud;
  f->events++;
  if (!json_is_object(ev->obj)) abort();
  if (ev->type == WEV_ERROR) return 0;
  if (!ev->rv && ev->type == WEV_BOOKMARK) abort();
  if (ev->type == WEV_BOOKMARK) return 0;
  krec_t *rec;
  if (krec_make(ev->text, ev->text_len, ev->cut, ev->cut_len, ev->obj, &rec) != RIPPLE_OK) {
    /* Only a key too long for a record is refused. */
    char key[WSTORE_KEYMAX];
    if (wstore_key(ev->obj, key, sizeof key)) abort();
    return 0;
  }
  if (wstore_apply(&f->store, ev->type, rec, NULL, 0, to_cache, f) != RIPPLE_OK) abort();
  krec_unref(rec);
  if (wstore_size(&f->store) != icache_size(&f->cache)) abort();
  return 0;
}

/* jparse and jansson agree on one line. Lines with a raw NUL byte are left
 * out: jansson accepts "73\0" (a number followed by NUL, a quirk of its
 * lexer) while refusing "{}\0"; a raw NUL is invalid JSON and jparse always
 * refuses it. */
static void differential(const char *p, size_t n) {
  if (memchr(p, '\0', n)) {
    json_t *v = NULL;
    if (jparse(p, n, NULL, &v) == RIPPLE_OK) abort();
    return;
  }
  json_t *a = NULL;
  json_t *b = json_loadb(p, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
  int rc = jparse(p, n, NULL, &a);
  if ((rc == RIPPLE_OK) != (b != NULL)) abort();
  if (a && !json_equal(a, b)) abort();
  json_decref(a);
  json_decref(b);
}

static void check_cache(fz_t *f) {
  kmap_foreach(&f->store.objs, i) {
    const kslot_t *s = &f->store.objs.slots[i];
    if (kmap_get(&f->cache.objs, s->key) != s->val) abort();
  }
}

static void selector(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) return;
  memcpy(s, data, size);
  s[size] = '\0';
  ksel_t *sel = NULL;
  char err[256] = "";
  int rc = ksel_parse(s, &sel, err, sizeof err);
  if (rc == RIPPLE_OK) {
    json_t *labels = json_pack("{s:s, s:s}", "app", "web", "example.com/tier", "");
    (void)ksel_match(sel, labels);
    (void)ksel_match(sel, NULL);
    json_decref(labels);
    ksel_free(sel);
  } else if (rc != RIPPLE_EINVAL || !err[0]) {
    abort();
  }
  free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  int flags = (data[0] & 1 ? WDEC_STRIP : 0) | (data[0] & 2 ? WDEC_TREE : 0);
  size_t chunk = 1 + (data[0] >> 2);
  const char *p = (const char *)data + 1;
  size_t n = size - 1;
  for (size_t off = 0; off < n;) {
    const char *nl = memchr(p + off, '\n', n - off);
    size_t len = nl ? (size_t)(nl - (p + off)) : n - off;
    differential(p + off, len);
    off += len + 1;
  }
  fz_t f;
  wstore_init(&f.store);
  if (icache_init(&f.cache) != RIPPLE_OK) abort();
  f.events = 0;
  wdec_t d;
  wdec_init(&d, 4096, flags, on_event, &f);
  for (size_t off = 0; off < n; off += chunk)
    wdec_feed(&d, p + off, n - off < chunk ? n - off : chunk);
  wdec_end(&d);
  if (d.frames != f.events + d.bad) abort();
  check_cache(&f);
  wdec_free(&d);
  wstore_free(&f.store);
  icache_free(&f.cache);
  selector(data + 1, n);
  return 0;
}
