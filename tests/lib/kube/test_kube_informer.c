/*
 * test_kube_informer.c - the parts of informers that need no cluster:
 * label selectors (parsing and matching) and the informer's indexed cache:
 * its indexes under adds, updates and deletes, the reads by name, owner and
 * labels (text) and of every object (trees), and the public reads' refusals.
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

/* Reads: the names of the objects whose text fn saw, from that text. */
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

/* The names a selector finds, as joined() gives them. */
static const char *selected(icache_t *c, const char *ns, const char *sel) {
  text_seen_t t = {0};
  size_t count = 99;
  assert_int_equal(icache_select_text(c, ns, sel, collect_text, &t, &count), RIPPLE_OK);
  assert_int_equal(count, (size_t)t.names.n);
  static char out[1024];
  snprintf(out, sizeof out, "%s", joined(&t.names));
  return out;
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
  text_seen_t t = {.want = b->json};
  assert_int_equal(icache_get_text(&c, "n1", "b", collect_text, &t), RIPPLE_OK);
  assert_string_equal(joined(&t.names), "n1/b ");
  assert_int_equal(icache_get_text(&c, "n2", "b", collect_text, &t), RIPPLE_ENOENT);
  t.want = NULL;
  assert_int_equal(icache_by_owner_text(&c, "owner-1", collect_text, &t), 2);
  assert_string_equal(joined(&t.names), "n1/b n2/d ");
  assert_string_equal(selected(&c, NULL, "app=web"), "n1/a n1/b ");
  assert_string_equal(selected(&c, "n1", "app in (web,db),tier!=back"), "n1/a ");
  assert_string_equal(selected(&c, NULL, "!tier"), "n2/d ");
  assert_string_equal(selected(&c, "n", ""), ""); /* "n" is no prefix of "n1" */
  size_t count = 7;
  assert_int_equal(icache_select_text(&c, NULL, "app in (", collect_text, &t, &count),
                   RIPPLE_EINVAL);
  assert_int_equal(count, 7);
  /* An update that changes labels and owners moves the object in the indexes. */
  krec_t *b2 = unit_rec(unit_obj("n1", "b", "ub", "2", "app=db"));
  cache_apply(&c, RIPPLE_KUBE_MODIFIED, b2);
  assert_string_equal(selected(&c, NULL, "app=web"), "n1/a ");
  assert_string_equal(selected(&c, NULL, "app=db"), "n1/b n2/d ");
  assert_int_equal(icache_by_owner_text(&c, "owner-1", collect_text, &t), 1);
  assert_string_equal(joined(&t.names), "n2/d ");
  t.want = b2->json; /* the cache serves the new state */
  assert_int_equal(icache_get_text(&c, "n1", "b", collect_text, &t), RIPPLE_OK);
  assert_string_equal(joined(&t.names), "n1/b ");
  /* Deletions empty the index sets. */
  cache_apply(&c, RIPPLE_KUBE_DELETED, d);
  cache_apply(&c, RIPPLE_KUBE_DELETED, a);
  size_t nl, no;
  icache_index_sizes(&c, &nl, &no);
  assert_int_equal(no, 0);
  assert_int_equal(nl, 1); /* app=db for n1/b */
  assert_int_equal(icache_size(&c), 1);
  assert_int_equal(icache_get_text(&c, "n2", "d", collect_text, &t), RIPPLE_ENOENT);
  krec_unref(a), krec_unref(b), krec_unref(b2), krec_unref(d);
  icache_free(&c);
}

/* Every object as a tree: the whole object each time, the reader's own. */
typedef struct trees {
  names_t names;
  json_t *seen; /* name -> the tree fn got, as it got it */
} trees_t;

static void collect_tree(void *ud, json_t *obj) {
  trees_t *t = ud;
  if (t->names.n < 16) wstore_key(obj, t->names.v[t->names.n++], sizeof t->names.v[0]);
  const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
  assert_non_null(name);
  json_object_set_new(t->seen, name, json_deep_copy(obj));
  /* Changing it changes nothing the next reader sees. */
  json_object_set_new(json_object_get(obj, "metadata"), "name", json_string("changed"));
}

static void cache_each(void **state) {
  (void)state;
  icache_t c;
  assert_int_equal(icache_init(&c), RIPPLE_OK);
  json_t *oa = unit_obj("n1", "a", "ua", "1", "app=web"),
         *og = unit_obj(NULL, "g", "ug", "1", NULL);
  krec_t *a = unit_rec(json_incref(oa)), *g = unit_rec(json_incref(og));
  cache_apply(&c, RIPPLE_KUBE_ADDED, a);
  cache_apply(&c, RIPPLE_KUBE_ADDED, g);
  for (int round = 0; round < 2; round++) {
    trees_t t = {.seen = json_object()};
    assert_int_equal(icache_each(&c, collect_tree, &t), 2);
    assert_string_equal(joined(&t.names), "g n1/a ");
    assert_true(json_equal(json_object_get(t.seen, "a"), oa));
    assert_true(json_equal(json_object_get(t.seen, "g"), og));
    json_decref(t.seen);
  }
  cache_apply(&c, RIPPLE_KUBE_DELETED, a);
  trees_t t = {.seen = json_object()};
  assert_int_equal(icache_each(&c, collect_tree, &t), 1);
  assert_string_equal(joined(&t.names), "g ");
  json_decref(t.seen);
  json_decref(oa), json_decref(og);
  krec_unref(a), krec_unref(g);
  icache_free(&c);
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
  /* The text is the record's own. */
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
  /* The indexes, cluster-scoped objects included. */
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

static void count_tree(void *ud, json_t *obj) {
  (void)obj;
  (*(int *)ud)++;
}

/* The public reads refuse what they cannot use without calling fn. */
static void informer_reads_args(void **state) {
  (void)state;
  text_seen_t t = {0};
  int trees = 0;
  assert_int_equal(ripple_kube_informer_get_text(NULL, "n", "a", collect_text, &t), RIPPLE_EINVAL);
  assert_int_equal(ripple_kube_informer_by_owner_text(NULL, "u", collect_text, &t), RIPPLE_EINVAL);
  assert_int_equal(ripple_kube_informer_select_text(NULL, "n", "", collect_text, &t),
                   RIPPLE_EINVAL);
  assert_int_equal(ripple_kube_informer_each(NULL, count_tree, &trees), RIPPLE_EINVAL);
  assert_int_equal(ripple_kube_informer_size(NULL), 0);
  assert_int_equal(ripple_kube_informer_wait_synced(NULL, 1), RIPPLE_EINVAL);
  ripple_kube_watch_stats_t st;
  memset(&st, 0xff, sizeof st);
  ripple_kube_informer_stats(NULL, &st);
  assert_int_equal(st.events + st.bookmarks + st.relists + st.reconnects + st.gone + st.bad_events,
                   0);
  assert_int_equal(t.names.n, 0);
  assert_int_equal(trees, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(selector_parse), cmocka_unit_test(selector_match),
      cmocka_unit_test(cache_indexes),  cmocka_unit_test(cache_text_reads),
      cmocka_unit_test(cache_each),     cmocka_unit_test(informer_reads_args),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
