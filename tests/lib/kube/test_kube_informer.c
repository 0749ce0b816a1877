/*
 * test_kube_informer.c - the parts of informers that need no cluster:
 * label selectors (parsing and matching) and the informer's indexed cache,
 * its tree and text reads.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_unit.h"
#include "testutil.h"
#include "watch_internal.h"

/* ---- selectors ---------------------------------------------------------------------- */

static void selector_parse(void **state) {
  (void)state;
  static const char *good[] = {
      "",
      "app",
      "!app",
      "app=web",
      "app==web",
      "app!=web",
      "app=",
      "app in (a,b)",
      "app notin (a, b )",
      " app in () ",
      "a in (x,),b",
      "example.com/app=web,tier!=db,!legacy",
      "a.b-c_d=v.1-2_3",
      "k in (a,,b)",
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    ksel_t *s = NULL;
    char err[200] = "";
    if (ksel_parse(good[i], &s, err, sizeof err) != RIPPLE_OK) fail_msg("%s: %s", good[i], err);
    ksel_free(s);
  }
  static const char *bad[] = {
      ",",
      "app,",
      "=web",
      "app=web=x",
      "app in a",
      "app in (a",
      "app in (a b)",
      "!app=web",
      "app > 3",
      "app gt 3",
      "-app=x",
      "app=-x",
      "Example.com/app=x",
      "a/=x",
      "/a=x",
      "app=(x)",
      "app web",
      "app=a b",
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=x",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ksel_t *s = NULL;
    char err[200] = "";
    if (ksel_parse(bad[i], &s, err, sizeof err) != RIPPLE_EINVAL) fail_msg("accepted %s", bad[i]);
    assert_non_null(strstr(err, "label selector"));
  }
}

static int sel_matches(const char *sel, const char *labels_json) {
  ksel_t *s;
  if (ksel_parse(sel, &s, NULL, 0) != RIPPLE_OK) fail_msg("parse %s", sel);
  json_t *l = labels_json ? json_loads(labels_json, 0, NULL) : NULL;
  int m = ksel_match(s, l);
  json_decref(l);
  ksel_free(s);
  return m;
}

static void selector_match(void **state) {
  (void)state;
  const char *web = "{\"app\":\"web\",\"tier\":\"front\",\"empty\":\"\"}";
  assert_true(sel_matches("", NULL));
  assert_true(sel_matches("app=web", web));
  assert_true(sel_matches("app==web,tier=front", web));
  assert_false(sel_matches("app=web,tier=back", web));
  assert_false(sel_matches("app=web", NULL));
  assert_true(sel_matches("app!=db", web));
  assert_true(sel_matches("app!=db", NULL)); /* != also matches without the label */
  assert_false(sel_matches("app!=web", web));
  assert_true(sel_matches("tier in (back,front)", web));
  assert_false(sel_matches("tier in (back)", web));
  assert_true(sel_matches("tier notin (back)", web));
  assert_true(sel_matches("missing notin (x)", web));
  assert_false(sel_matches("tier notin (front,x)", web));
  assert_true(sel_matches("app", web));
  assert_false(sel_matches("!app", web));
  assert_true(sel_matches("!missing", web));
  assert_true(sel_matches("empty=", web));
  assert_true(sel_matches("empty in ()", web));
  assert_true(sel_matches("empty", web));
  assert_false(sel_matches("missing", web));
}

/* ---- the informer's cache -------------------------------------------------------------- */

typedef struct names {
  char v[16][WSTORE_KEYMAX];
  int n;
} names_t;

static void collect_names(void *ud, json_t *obj) {
  names_t *n = ud;
  if (n->n < 16) wstore_key(obj, n->v[n->n++], sizeof n->v[0]);
}

/* The names collected, sorted, space-separated. */
static const char *joined(names_t *n) {
  static char out[1024];
  qsort(n->v, (size_t)n->n, sizeof n->v[0], unit_cmp_str);
  size_t len = 0;
  for (int i = 0; i < n->n; i++)
    len += (size_t)snprintf(out + len, sizeof out - len, "%s ", n->v[i]);
  out[len] = '\0';
  n->n = 0;
  return out;
}

static void cache_apply(icache_t *c, ripple_kube_event_type_t t, krec_t *r) {
  wchange_t ch = {t, 0, 0, r, NULL, NULL};
  assert_int_equal(icache_apply(c, &ch), RIPPLE_OK);
}

static json_t *with_owner(json_t *obj, const char *uid) {
  json_object_set_new(json_object_get(obj, "metadata"), "ownerReferences",
                      json_pack("[{s:s, s:s}]", "uid", uid, "kind", "ReplicaSet"));
  return obj;
}

static void cache_indexes(void **state) {
  (void)state;
  icache_t c;
  assert_int_equal(icache_init(&c), RIPPLE_OK);
  krec_t *a = unit_rec(unit_obj("n1", "a", "ua", "1", "app=web,tier=front"));
  krec_t *b = unit_rec(with_owner(unit_obj("n1", "b", "ub", "1", "app=web,tier=back"), "owner-1"));
  krec_t *d = unit_rec(with_owner(unit_obj("n2", "d", "ud", "1", "app=db"), "owner-1"));
  cache_apply(&c, RIPPLE_KUBE_ADDED, a);
  cache_apply(&c, RIPPLE_KUBE_ADDED, b);
  cache_apply(&c, RIPPLE_KUBE_ADDED, d);
  assert_int_equal(icache_size(&c), 3);
  json_t *got = icache_get(&c, "n1", "b"), *want = krec_tree(b);
  assert_true(json_equal(got, want));
  json_decref(got), json_decref(want);
  assert_null(icache_get(&c, "n2", "b"));
  names_t n = {0};
  size_t count = 0;
  assert_int_equal(icache_by_owner(&c, "owner-1", collect_names, &n), 2);
  assert_string_equal(joined(&n), "n1/b n2/d ");
  assert_int_equal(icache_select(&c, NULL, "app=web", collect_names, &n, &count), RIPPLE_OK);
  assert_int_equal(count, 2);
  assert_string_equal(joined(&n), "n1/a n1/b ");
  icache_select(&c, "n1", "app in (web,db),tier!=back", collect_names, &n, &count);
  assert_string_equal(joined(&n), "n1/a ");
  icache_select(&c, NULL, "!tier", collect_names, &n, &count);
  assert_string_equal(joined(&n), "n2/d ");
  icache_select(&c, "n", "", collect_names, &n, &count); /* "n" is no prefix of "n1" */
  assert_int_equal(count, 0);
  assert_int_equal(icache_select(&c, NULL, "app in (", NULL, NULL, &count), RIPPLE_EINVAL);
  /* An update that changes labels and owners moves the object in the indexes. */
  krec_t *b2 = unit_rec(unit_obj("n1", "b", "ub", "2", "app=db"));
  cache_apply(&c, RIPPLE_KUBE_MODIFIED, b2);
  icache_select(&c, NULL, "app=web", NULL, NULL, &count);
  assert_int_equal(count, 1);
  icache_select(&c, NULL, "app=db", collect_names, &n, &count);
  assert_string_equal(joined(&n), "n1/b n2/d ");
  assert_int_equal(icache_by_owner(&c, "owner-1", NULL, NULL), 1);
  /* Deletions empty the index sets. */
  cache_apply(&c, RIPPLE_KUBE_DELETED, d);
  cache_apply(&c, RIPPLE_KUBE_DELETED, a);
  size_t nl, no;
  icache_index_sizes(&c, &nl, &no);
  assert_int_equal(no, 0);
  assert_int_equal(nl, 1); /* app=db for n1/b */
  assert_int_equal(icache_each(&c, NULL, NULL), 1);
  krec_unref(a), krec_unref(b), krec_unref(b2), krec_unref(d);
  icache_free(&c);
}

/* Text reads: the names of the objects whose text fn saw, from that text. */
typedef struct text_seen {
  names_t names;
  icache_t *cache;  /* when set: the object is deleted from it during the call */
  const char *want; /* when set: the text must be exactly this */
} text_seen_t;

static void collect_text(void *ud, const char *json, size_t len) {
  text_seen_t *t = ud;
  assert_int_equal(json[len], '\0');
  assert_int_equal(strlen(json), len);
  if (t->want) assert_string_equal(json, t->want);
  json_error_t je;
  json_t *obj = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
  if (!obj) fail_msg("the text is not JSON: %s", je.text);
  if (t->cache) {
    /* The read holds the record: the text must outlive its removal (ASan). */
    krec_t *r = unit_rec(json_incref(obj));
    cache_apply(t->cache, RIPPLE_KUBE_DELETED, r);
    krec_unref(r);
    json_t *again = json_loadb(json, len, 0, NULL);
    assert_true(json_equal(obj, again));
    json_decref(again);
  }
  if (t->names.n < 16) wstore_key(obj, t->names.v[t->names.n++], sizeof t->names.v[0]);
  json_decref(obj);
}

static void cache_text_reads(void **state) {
  (void)state;
  icache_t c;
  assert_int_equal(icache_init(&c), RIPPLE_OK);
  krec_t *a = unit_rec(unit_obj("n1", "a", "ua", "1", "app=web,tier=front"));
  krec_t *b = unit_rec(with_owner(unit_obj("n1", "b", "ub", "1", "app=web,tier=back"), "owner-1"));
  krec_t *d = unit_rec(with_owner(unit_obj("n2", "d", "ud", "1", "app=db"), "owner-1"));
  krec_t *g = unit_rec(unit_obj(NULL, "g", "ug", "1", "app=web")); /* cluster-scoped */
  cache_apply(&c, RIPPLE_KUBE_ADDED, a);
  cache_apply(&c, RIPPLE_KUBE_ADDED, b);
  cache_apply(&c, RIPPLE_KUBE_ADDED, d);
  cache_apply(&c, RIPPLE_KUBE_ADDED, g);
  /* The text is the record's, and the same object a tree read builds. */
  text_seen_t t = {.want = b->json};
  assert_int_equal(icache_get_text(&c, "n1", "b", collect_text, &t), RIPPLE_OK);
  assert_string_equal(joined(&t.names), "n1/b ");
  t.want = g->json;
  assert_int_equal(icache_get_text(&c, NULL, "g", collect_text, &t), RIPPLE_OK);
  assert_int_equal(icache_get_text(&c, "", "g", collect_text, &t), RIPPLE_OK);
  assert_string_equal(joined(&t.names), "g g ");
  t.want = NULL;
  assert_int_equal(icache_get_text(&c, "n2", "b", collect_text, &t), RIPPLE_ENOENT);
  assert_int_equal(icache_get_text(&c, "n1", "", collect_text, &t), RIPPLE_ENOENT);
  assert_int_equal(icache_get_text(&c, "n1", NULL, collect_text, &t), RIPPLE_ENOENT);
  assert_int_equal(t.names.n, 0);
  /* Indexes as for tree reads. */
  assert_int_equal(icache_by_owner_text(&c, "owner-1", collect_text, &t), 2);
  assert_string_equal(joined(&t.names), "n1/b n2/d ");
  assert_int_equal(icache_by_owner_text(&c, "owner-2", collect_text, &t), 0);
  size_t count = 99;
  assert_int_equal(icache_select_text(&c, NULL, "app=web", collect_text, &t, &count), RIPPLE_OK);
  assert_int_equal(count, 3);
  assert_string_equal(joined(&t.names), "g n1/a n1/b ");
  assert_int_equal(
      icache_select_text(&c, "n1", "app in (web,db),tier!=back", collect_text, &t, &count),
      RIPPLE_OK);
  assert_int_equal(count, 1);
  assert_string_equal(joined(&t.names), "n1/a ");
  assert_int_equal(icache_select_text(&c, NULL, "app in (", collect_text, &t, &count),
                   RIPPLE_EINVAL);
  assert_int_equal(t.names.n, 0);
  /* The callback runs outside the lock and the text outlives the object's
   * removal from the cache while the callback holds it. */
  t.cache = &c;
  assert_int_equal(icache_by_owner_text(&c, "owner-1", collect_text, &t), 2);
  assert_string_equal(joined(&t.names), "n1/b n2/d ");
  assert_int_equal(icache_get_text(&c, "n1", "a", collect_text, &t), RIPPLE_OK);
  assert_string_equal(joined(&t.names), "n1/a ");
  assert_int_equal(icache_size(&c), 1);
  assert_int_equal(icache_by_owner_text(&c, "owner-1", collect_text, &t), 0);
  krec_unref(a), krec_unref(b), krec_unref(d), krec_unref(g);
  icache_free(&c);
}

/* The public text reads refuse what they cannot use without touching it. */
static void informer_text_reads_args(void **state) {
  (void)state;
  text_seen_t t = {0};
  size_t count = 7;
  assert_int_equal(ripple_kube_informer_get_text(NULL, "n", "a", collect_text, &t), RIPPLE_EINVAL);
  assert_int_equal(ripple_kube_informer_by_owner_text(NULL, "u", collect_text, &t), 0);
  assert_int_equal(ripple_kube_informer_select_text(NULL, "n", "", collect_text, &t, &count),
                   RIPPLE_EINVAL);
  assert_int_equal(count, 7);
  assert_int_equal(t.names.n, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(selector_parse),
      cmocka_unit_test(selector_match),
      cmocka_unit_test(cache_indexes),
      cmocka_unit_test(cache_text_reads),
      cmocka_unit_test(informer_text_reads_args),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
