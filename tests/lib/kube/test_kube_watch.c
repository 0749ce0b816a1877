/*
 * test_kube_watch.c - the parts of watches and informers that need no
 * cluster: the JSON parser (against jansson's), the framing of a watch stream
 * cut at every possible place, each event type, bad frames skipped and
 * counted, and the last-known-state store and the differences a relist
 * finds. Selectors and the informer's cache: test_kube_informer.c.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_unit.h"
#include "ripplex/sbuf.h"
#include "testutil.h"
#include "watch_internal.h"

/* ---- helpers ---------------------------------------------------------------------- */

static char *event_line(const char *type, json_t *obj) {
  json_t *ev = json_pack("{s:s, s:O}", "type", type, "object", obj);
  char *s = json_dumps(ev, JSON_COMPACT);
  json_decref(ev);
  return s;
}

typedef struct seen {
  char log[8192]; /* "TYPE name rv code;" per event */
  int n;
  int stop_after; /* return 1 after this many events (0: never) */
} seen_t;

static int record(void *ud, const wev_t *ev) {
  seen_t *s = ud;
  static const char *names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};
  const char *name =
      json_string_value(json_object_get(json_object_get(ev->obj, "metadata"), "name"));
  size_t len = strlen(s->log);
  snprintf(s->log + len, sizeof s->log - len, "%s %s %s %ld;", names[ev->type], name ? name : "-",
           ev->rv ? ev->rv : "-", ev->code);
  s->n++;
  return s->stop_after && s->n >= s->stop_after;
}

/* A stream with every event type, blank keep-alive lines, a bad line. */
static char *sample_stream(void) {
  json_t *a = unit_obj("ns", "a", "u1", "10", "app=web");
  json_t *b = unit_obj("ns", "b", "u2", "11", NULL);
  json_t *a2 = unit_obj("ns", "a", "u1", "12", "app=web");
  json_t *bm = json_pack("{s:{s:s}}", "metadata", "resourceVersion", "13");
  json_t *gone =
      json_pack("{s:s, s:s, s:s, s:s, s:i}", "kind", "Status", "status", "Failure", "message",
                "too old resource version: 5 (13)", "reason", "Expired", "code", 410);
  char *l[6] = {event_line("ADDED", a),   event_line("ADDED", b),     event_line("MODIFIED", a2),
                event_line("DELETED", b), event_line("BOOKMARK", bm), event_line("ERROR", gone)};
  sbuf_t s;
  sbuf_init(&s);
  sbuf_printf(&s, "%s\n\n%s\n{not json}\n", l[0], l[1]);
  for (int i = 2; i < 6; i++) sbuf_printf(&s, "%s\n", l[i]);
  for (int i = 0; i < 6; i++) free(l[i]);
  json_decref(a), json_decref(b), json_decref(a2), json_decref(bm), json_decref(gone);
  assert_false(s.oom);
  return s.p;
}

static const char *sample_expect =
    "ADDED a 10 0;ADDED b 11 0;MODIFIED a 12 0;DELETED b 11 0;BOOKMARK - 13 0;ERROR - - 410;";

/* ---- framing ------------------------------------------------------------------------ */

static void framing_every_split(void **state) {
  (void)state;
  char *s = sample_stream();
  size_t n = strlen(s);
  for (size_t cut = 0; cut <= n; cut++) {
    seen_t seen = {0};
    wdec_t d;
    wdec_init(&d, 0, WDEC_TREE, record, &seen);
    assert_int_equal(wdec_feed(&d, s, cut), 0);
    assert_int_equal(wdec_feed(&d, s + cut, n - cut), 0);
    assert_int_equal(wdec_end(&d), 0);
    if (strcmp(seen.log, sample_expect) != 0) fail_msg("cut at %zu: %s", cut, seen.log);
    assert_int_equal(d.bad, 1);
    assert_int_equal(d.frames, 7);
    wdec_free(&d);
  }
  free(s);
}

static void framing_random_chunks(void **state) {
  (void)state;
  char *s = sample_stream();
  size_t n = strlen(s);
  uint64_t seed = 0x5eed1234u;
  for (int round = 0; round < 500; round++) {
    uint64_t rng = seed + (uint64_t)round;
    seen_t seen = {0};
    wdec_t d;
    wdec_init(&d, 0, WDEC_TREE, record, &seen);
    for (size_t off = 0; off < n;) {
      rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
      size_t k = 1 + (size_t)((rng >> 33) % 97);
      if (k > n - off) k = n - off;
      wdec_feed(&d, s + off, k);
      off += k;
    }
    wdec_end(&d);
    if (strcmp(seen.log, sample_expect) != 0)
      fail_msg("seed %llu round %d: %s", (unsigned long long)seed, round, seen.log);
    wdec_free(&d);
  }
  free(s);
}

static void framing_byte_by_byte_and_stop(void **state) {
  (void)state;
  char *s = sample_stream();
  seen_t seen = {0};
  wdec_t d;
  wdec_init(&d, 0, WDEC_TREE, record, &seen);
  for (size_t i = 0; s[i]; i++) wdec_feed(&d, s + i, 1);
  assert_string_equal(seen.log, sample_expect);
  wdec_free(&d);
  /* A nonzero return from the callback stops the feed at once. */
  seen_t two = {.stop_after = 2};
  wdec_init(&d, 0, 0, record, &two); /* metadata only */
  assert_int_equal(wdec_feed(&d, s, strlen(s)), 1);
  assert_string_equal(two.log, "ADDED a 10 0;ADDED b 11 0;");
  wdec_free(&d);
  free(s);
}

static void bare_status_without_newline(void **state) {
  (void)state;
  /* The body of an HTTP 410: a Status, no newline. */
  const char *body =
      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
      "\"message\":\"resourceVersion too old\",\"reason\":\"Gone\",\"code\":410}";
  seen_t seen = {0};
  wdec_t d;
  wdec_init(&d, 0, WDEC_TREE, record, &seen);
  wdec_feed(&d, body, 40);
  wdec_feed(&d, body + 40, strlen(body) - 40);
  assert_int_equal(seen.n, 0);
  wdec_end(&d);
  assert_string_equal(seen.log, "ERROR - - 410;");
  wdec_free(&d);
}

static void event_fields(void **state) {
  (void)state;
  json_t *root;
  wev_t ev;
  const char *why = NULL;
  const char *err =
      "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\","
      "\"message\":\"too old resource version: 1 (2)\"}}";
  assert_int_equal(wdec_frame(err, strlen(err), 0, &root, &ev, &why), RIPPLE_OK);
  assert_int_equal(ev.type, WEV_ERROR);
  assert_int_equal(ev.code, 410);
  assert_string_equal(ev.reason, "Expired");
  assert_string_equal(ev.message, "too old resource version: 1 (2)");
  assert_null(ev.rv);
  json_decref(root);
  const char *bm =
      "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":"
      "\"77\","
      "\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}}";
  assert_int_equal(wdec_frame(bm, strlen(bm), 0, &root, &ev, &why), RIPPLE_OK);
  assert_int_equal(ev.type, WEV_BOOKMARK);
  assert_string_equal(ev.rv, "77");
  json_decref(root);
}

static void bad_frames_skipped_and_counted(void **state) {
  (void)state;
  static const char *bad[] = {
      "not json",
      "[1,2]",
      "{\"object\":{\"metadata\":{\"name\":\"x\"}}}",
      "{\"type\":7,\"object\":{}}",
      "{\"type\":\"ADDED\"}",
      "{\"type\":\"ADDED\",\"object\":[]}",
      "{\"type\":\"RENAMED\",\"object\":{\"metadata\":{\"name\":\"x\"}}}",
      "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{}}}",
      "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"\"}}}",
      "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"\xff\"}}}",
      "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"x\"}}} trailing",
      "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"x\"}}",
  };
  const char *good = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"ok\"}}}\n";
  seen_t seen = {0};
  wdec_t d;
  wdec_init(&d, 0, WDEC_TREE, record, &seen);
  size_t nbad = sizeof bad / sizeof bad[0];
  for (size_t i = 0; i < nbad; i++) {
    wdec_feed(&d, bad[i], strlen(bad[i]));
    wdec_feed(&d, "\n", 1);
    wdec_feed(&d, good, strlen(good));
  }
  assert_int_equal(d.bad, nbad);
  assert_int_equal(seen.n, (int)nbad);
  assert_true(d.why[0] != '\0');
  wdec_free(&d);
}

static void overlong_frame_dropped(void **state) {
  (void)state;
  const char *good = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"ok\"}}}\n";
  char big[300];
  memset(big, 'x', sizeof big);
  for (int split = 0; split < 2; split++) {
    seen_t seen = {0};
    wdec_t d;
    wdec_init(&d, 100, WDEC_TREE, record, &seen);
    wdec_feed(&d, good, strlen(good));
    if (split) { /* the long frame spans chunks */
      for (size_t i = 0; i < sizeof big; i += 30) wdec_feed(&d, big + i, 30);
    } else {
      wdec_feed(&d, big, sizeof big);
    }
    wdec_feed(&d, "\n", 1);
    wdec_feed(&d, good, strlen(good));
    assert_int_equal(seen.n, 2);
    assert_int_equal(d.bad, 1);
    assert_string_equal(d.why, "frame longer than the limit");
    wdec_free(&d);
  }
}

/* ---- the JSON parser against jansson ---------------------------------------------- */

static void jparse_matches_jansson(void **state) {
  (void)state;
  static const char *docs[] = {
      "{}",
      "[]",
      " {\"a\" : [1, -2, 3.5, -0.25e3, 1E2, 0, -0, true, false, null]} ",
      "{\"s\":\"tab\\there \\\"q\\\" \\\\ \\/ \\b\\f\\n\\r\\u00e9\\u20ac\\ud83d\\ude00\"}",
      "{\"utf8\":\"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80\",\"\xc3\xa9\":1}",
      "{\"nul\":\"a\\u0000b\"}",
      "{\"dup\":1,\"dup\":2}",
      "{\"big\":9223372036854775807}",
      "{\"neg\":-9223372036854775808}",
      "{\"deep\":[[[[[[{\"x\":[{}]}]]]]]]}",
      "{\"long\":\"abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz\"}",
      "\"top\"",
      "42",
      "{\"e\":\"\\u0041\\u00410\"}",
      "{\"tiny\":1e-400}",
  };
  for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
    json_t *a = NULL, *b = json_loads(docs[i], JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    assert_non_null(b);
    if (jparse(docs[i], strlen(docs[i]), NULL, &a) != RIPPLE_OK) fail_msg("refused %s", docs[i]);
    if (!json_equal(a, b)) fail_msg("differs from jansson: %s", docs[i]);
    json_decref(a), json_decref(b);
  }
  static const char *bad[] = {
      "",
      " ",
      "{",
      "}",
      "[1,]",
      "{\"a\":1,}",
      "{\"a\" 1}",
      "{a:1}",
      "01",
      "-",
      "1.",
      ".5",
      "1e",
      "+1",
      "tru",
      "nul",
      "\"\\x\"",
      "\"\\u12\"",
      "\"\\ud800\"",
      "\"\\udc00\"",
      "\"\\ud800\\u0041\"",
      "\"a\tb\"",
      "\"\xc0\xaf\"",
      "\"\xed\xa0\x80\"",
      "\"\xf4\x90\x80\x80\"",
      "\"\xe2\x82\"",
      "{\"a\\u0000\":1}",
      "9223372036854775808",
      "-9223372036854775809",
      "1e400",
      "[1] [2]",
      "{\"a\":1}}",
      "\"unterminated",
      /* Where yajl, under jparse, is more lenient than jansson. */
      "\v1",
      "[1]\f",
      "\"\\ud800x\"",
      "\"\\udc00\\ud800\"",
      "\"\xc0\x80\"",
      "138\"dfal",
      "{} tru",
      "1 -",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    json_t *a = NULL, *b = json_loads(bad[i], JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (b) fail_msg("jansson accepts %s", bad[i]);
    if (jparse(bad[i], strlen(bad[i]), NULL, &a) != RIPPLE_EJSON) fail_msg("accepted %s", bad[i]);
  }
  /* Nesting deeper than jansson's limit (2048) is refused. */
  char deep[5000];
  memset(deep, '[', 2049);
  memset(deep + 2049, ']', 2049);
  json_t *v = NULL;
  assert_int_equal(jparse(deep, 4098, NULL, &v), RIPPLE_EJSON);
  assert_int_equal(jparse(deep + 1, 4096, NULL, &v), RIPPLE_OK);
  json_decref(v);
}

static void strip_managed_fields(void **state) {
  (void)state;
  const char *ev =
      "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p\",\"managedFields\":[{"
      "\"manager\":\"kubectl\",\"fieldsV1\":{\"f:spec\":{}}}],\"labels\":{\"a\":\"b\"}},"
      "\"managedFields\":\"not this one\"}}";
  json_t *root;
  wev_t w;
  const char *why;
  assert_int_equal(wdec_frame(ev, strlen(ev), WDEC_STRIP | WDEC_TREE, &root, &w, &why), RIPPLE_OK);
  json_t *want = json_loads(ev, 0, NULL);
  json_object_del(json_object_get(json_object_get(want, "object"), "metadata"), "managedFields");
  assert_true(json_equal(root, want));
  /* The record's text is cut the same way. */
  krec_t *rec;
  assert_int_equal(krec_make(w.text, w.text_len, w.cut, w.cut_len, w.obj, &rec), RIPPLE_OK);
  json_t *back = krec_tree(rec);
  assert_true(json_equal(back, json_object_get(want, "object")));
  json_decref(back);
  krec_unref(rec);
  /* Same through wdec_strip, for objects from a list; the original is kept. */
  json_t *full = json_loads(ev, 0, NULL), *obj = json_object_get(full, "object");
  json_t *s = wdec_strip(obj);
  assert_true(json_equal(s, json_object_get(want, "object")));
  assert_non_null(json_object_get(json_object_get(obj, "metadata"), "managedFields"));
  json_decref(s), json_decref(full), json_decref(want), json_decref(root);
  /* A malformed managedFields is still malformed. */
  const char *bad =
      "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p\",\"managedFields\":[}}}";
  assert_int_equal(wdec_frame(bad, strlen(bad), WDEC_STRIP, &root, &w, &why), RIPPLE_EJSON);
}

/* Without WDEC_TREE only the metadata is built; the text is the object's. */
static void metadata_only(void **state) {
  (void)state;
  const char *ev =
      "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
      "\"managedFields\":[{\"manager\":\"m\"}],\"labels\":{\"a\":\"b\"}},\"spec\":{\"x\":[1,{}]},"
      "\"n\":7}}";
  json_t *root;
  wev_t w;
  const char *why;
  assert_int_equal(wdec_frame(ev, strlen(ev), 0, &root, &w, &why), RIPPLE_OK);
  assert_null(json_object_get(w.obj, "spec"));
  assert_int_equal(json_integer_value(json_object_get(w.obj, "n")), 7);
  assert_string_equal(json_string_value(json_object_get(w.obj, "kind")), "Pod");
  assert_null(json_object_get(json_object_get(w.obj, "metadata"), "managedFields"));
  assert_null(w.cut);
  const char *start = strstr(ev, "{\"kind\"");
  assert_ptr_equal(w.text, start);
  assert_int_equal(w.text_len, strlen(start) - 1);
  json_decref(root);
  /* A malformed spec is still malformed. */
  const char *bad = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p\"},\"spec\":[1,]}}";
  assert_int_equal(wdec_frame(bad, strlen(bad), 0, &root, &w, &why), RIPPLE_EJSON);
}

/* Cutting a member keeps JSON valid wherever the member is. */
static void record_cut(void **state) {
  (void)state;
  static const char *texts[] = {
      "{\"metadata\":{\"managedFields\":[1],\"name\":\"a\"}}",
      "{\"metadata\":{\"name\":\"a\", \"managedFields\" : [1] , \"uid\":\"u\"}}",
      "{\"metadata\":{\"name\":\"a\",\"managedFields\":[1]}}",
  };
  static const char *const drop[] = {"metadata", "managedFields", NULL};
  for (size_t i = 0; i < 3; i++) {
    json_t *obj;
    jparse_opts_t o = {drop, NULL, NULL};
    jparse_spans_t sp = {NULL, 0, NULL, 0};
    assert_int_equal(jparse_ex(texts[i], strlen(texts[i]), &o, &obj, &sp), RIPPLE_OK);
    assert_non_null(sp.drop);
    krec_t *r;
    assert_int_equal(krec_make(texts[i], strlen(texts[i]), sp.drop, sp.drop_len, obj, &r),
                     RIPPLE_OK);
    json_t *back = krec_tree(r);
    if (!json_equal(back, obj)) fail_msg("cut %zu gave %s", i, r->json);
    json_decref(back), json_decref(obj);
    krec_unref(r);
  }
  /* Labels and owners are packed after the text. */
  json_t *o = json_pack("{s:{s:s, s:s, s:s, s:{s:s, s:s}, s:[{s:s}, {s:s}]}}", "metadata", "name",
                        "n", "namespace", "ns", "uid", "u", "labels", "a", "1", "b", "",
                        "ownerReferences", "uid", "o1", "uid", "o2");
  krec_t *r;
  assert_int_equal(krec_from_tree(o, 0, &r), RIPPLE_OK);
  assert_string_equal(r->key, "ns/n");
  assert_string_equal(r->uid, "u");
  assert_string_equal(r->rv, "");
  assert_int_equal(r->nlabels, 2);
  assert_memory_equal(r->labels,
                      "a\0"
                      "1\0"
                      "b\0",
                      6);
  assert_int_equal(r->nowners, 2);
  assert_memory_equal(r->owners, "o1\0o2\0", 6);
  krec_unref(r);
  json_decref(o);
}

static void kmap_against_model(void **state) {
  (void)state;
  enum { N = 300 };
  static char keys[N][16];
  int present[N] = {0};
  kmap_t m;
  kmap_init(&m);
  uint64_t seed = 0xC0FFEEu, rng = seed;
  for (int i = 0; i < N; i++) snprintf(keys[i], sizeof keys[i], "k%d", i);
  for (int step = 0; step < 20000; step++) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    int k = (int)((rng >> 33) % N), op = (int)((rng >> 20) % 3);
    if (op < 2) {
      void *old;
      assert_int_equal(kmap_put(&m, keys[k], keys[k], &old), RIPPLE_OK);
      if ((old != NULL) != present[k])
        fail_msg("seed %llu step %d put", (unsigned long long)seed, step);
      present[k] = 1;
    } else {
      void *v = kmap_del(&m, keys[k]);
      if ((v != NULL) != present[k])
        fail_msg("seed %llu step %d del", (unsigned long long)seed, step);
      present[k] = 0;
    }
    if (step % 97 == 0) {
      size_t n = 0;
      for (int i = 0; i < N; i++) {
        if ((kmap_get(&m, keys[i]) == keys[i]) != present[i])
          fail_msg("seed %llu step %d get %d", (unsigned long long)seed, step, i);
        n += (size_t)present[i];
      }
      assert_int_equal(m.n, n);
    }
  }
  kmap_free(&m);
}

/* ---- the store ------------------------------------------------------------------------ */

/* Events as "TYPE key rv<-oldrv[ relist]" strings, sorted when asked (a
 * relist reports in no particular order). */
typedef struct evlog {
  char ev[32][64];
  int n;
} evlog_t;

static void log_change(void *ud, const wchange_t *ch) {
  evlog_t *l = ud;
  static const char *names[] = {"ADDED", "MODIFIED", "DELETED"};
  if (l->n == 32) fail_msg("too many events");
  snprintf(l->ev[l->n++], sizeof l->ev[0], "%s %s %s<-%s%s", names[ch->type], ch->rec->key,
           ch->rec->rv, ch->old ? ch->old->rv : "-", ch->relist ? " relist" : "");
}

static void expect(evlog_t *l, int sorted, const char *const *want, int n) {
  if (sorted) qsort(l->ev, (size_t)l->n, sizeof l->ev[0], unit_cmp_str);
  assert_int_equal(l->n, n);
  for (int i = 0; i < n; i++)
    if (strcmp(l->ev[i], want[i]) != 0) fail_msg("event %d: %s, want %s", i, l->ev[i], want[i]);
}

static void store_apply_gives_old(void **state) {
  (void)state;
  wstore_t st;
  wstore_init(&st);
  evlog_t l = {0};
  krec_t *o[6] = {unit_rec(unit_obj("ns", "a", "u1", "1", NULL)),
                  unit_rec(unit_obj("ns", "a", "u1", "2", NULL)),
                  unit_rec(unit_obj("ns", "a", "u1", "3", NULL)),
                  unit_rec(unit_obj(NULL, "cluster", "u9", "4", NULL)),
                  unit_rec(unit_obj("ns", "a", "u2", "5", NULL)),
                  unit_rec(unit_obj("ns", "gone", "u3", "6", NULL))};
  wstore_apply(&st, WEV_ADDED, o[0], NULL, 0, log_change, &l);
  wstore_apply(&st, WEV_MODIFIED, o[1], NULL, 0, log_change, &l);
  wstore_apply(&st, WEV_ADDED, o[2], NULL, 0, log_change, &l);    /* known: a MODIFIED */
  wstore_apply(&st, WEV_MODIFIED, o[3], NULL, 0, log_change, &l); /* unknown: an ADDED */
  wstore_apply(&st, WEV_ADDED, o[4], NULL, 0, log_change, &l);    /* another uid */
  wstore_apply(&st, WEV_DELETED, o[4], NULL, 0, log_change, &l);
  wstore_apply(&st, WEV_DELETED, o[5], NULL, 0, log_change, &l); /* never seen: reported */
  static const char *const want[] = {
      "ADDED ns/a 1<--",   "MODIFIED ns/a 2<-1", "MODIFIED ns/a 3<-2", "ADDED cluster 4<--",
      "DELETED ns/a 3<-3", "ADDED ns/a 5<--",    "DELETED ns/a 5<-5",  "DELETED ns/gone 6<--"};
  expect(&l, 0, want, 8);
  assert_int_equal(wstore_size(&st), 1);
  assert_non_null(wstore_get(&st, "cluster"));
  for (int i = 0; i < 6; i++) krec_unref(o[i]);
  json_t *nameless = json_pack("{s:{}}", "metadata");
  krec_t *r;
  assert_int_equal(krec_from_tree(nameless, 0, &r), RIPPLE_EINVAL);
  json_decref(nameless);
  wstore_free(&st);
}

static void store_relist_differences(void **state) {
  (void)state;
  wstore_t st, fresh;
  wstore_init(&st), wstore_init(&fresh);
  json_t *known = json_pack("[o,o,o,o]", unit_obj("ns", "same", "u1", "1", NULL),
                            unit_obj("ns", "changed", "u2", "1", NULL),
                            unit_obj("ns", "replaced", "u3", "1", NULL),
                            unit_obj("ns", "vanished", "u4", "1", NULL));
  assert_int_equal(wstore_load(&st, known, 0), RIPPLE_OK);
  json_t *now = json_pack("[o,o,o,o]", unit_obj("ns", "same", "u1", "1", NULL),
                          unit_obj("ns", "changed", "u2", "7", NULL),
                          unit_obj("ns", "replaced", "u5", "8", NULL),
                          unit_obj("ns", "new", "u6", "9", NULL));
  wstore_load(&fresh, now, 0);
  evlog_t l = {0};
  assert_int_equal(wstore_replace(&st, &fresh, 1, 0, log_change, &l), RIPPLE_OK);
  /* Deletions come first. */
  assert_non_null(strstr(l.ev[0], "DELETED"));
  assert_non_null(strstr(l.ev[1], "DELETED"));
  static const char *const want[] = {"ADDED ns/new 9<-- relist", "ADDED ns/replaced 8<-- relist",
                                     "DELETED ns/replaced 1<-1 relist",
                                     "DELETED ns/vanished 1<-1 relist",
                                     "MODIFIED ns/changed 7<-1 relist"};
  expect(&l, 1, want, 5);
  assert_int_equal(wstore_size(&st), 4);
  assert_int_equal(wstore_size(&fresh), 0);
  /* Nothing changed: nothing to say. */
  wstore_load(&fresh, now, 0);
  evlog_t none = {0};
  wstore_replace(&st, &fresh, 1, 0, log_change, &none);
  assert_int_equal(none.n, 0);
  json_decref(known), json_decref(now);
  wstore_free(&st), wstore_free(&fresh);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(framing_every_split),
      cmocka_unit_test(framing_random_chunks),
      cmocka_unit_test(framing_byte_by_byte_and_stop),
      cmocka_unit_test(bare_status_without_newline),
      cmocka_unit_test(event_fields),
      cmocka_unit_test(bad_frames_skipped_and_counted),
      cmocka_unit_test(overlong_frame_dropped),
      cmocka_unit_test(jparse_matches_jansson),
      cmocka_unit_test(strip_managed_fields),
      cmocka_unit_test(metadata_only),
      cmocka_unit_test(record_cut),
      cmocka_unit_test(kmap_against_model),
      cmocka_unit_test(store_apply_gives_old),
      cmocka_unit_test(store_relist_differences),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
