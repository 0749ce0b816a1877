/*
 * test_webhook_text.c - related objects read from their text (objtext.c):
 * the member scan, and stand-ins that must tell the relation rules and the
 * context reader exactly what the whole object's tree tells them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate.h"
#include "objtext.h"
#include "ripple/rules.h"
#include "testutil.h"

static const char *span_str(wh_span_t s, char *buf, size_t cap) {
  if (!s.p) return "(absent)";
  snprintf(buf, cap, "%.*s", (int)s.n, s.p);
  return buf;
}

static void fields_basics(void **state) {
  (void)state;
  const char *keys[] = {"metadata", "kind", "x/y", "missing"};
  wh_span_t f[4];
  char b[256];
  /* Braces, brackets, colons and escaped quotes inside strings are skipped;
   * the first of two equal names counts; an escaped name is decoded. */
  const char *t =
      " { \"spec\" : {\"a\":\"}]\\\"{\",\"b\":[1,{\"c\":[]}],\"d\":-1.5e3,\"e\":null},"
      "\"ki\\u006ed\":\"Pod\", \"metadata\":{\"name\":\"p\"},\"metadata\":{\"name\":\"q\"},"
      "\"x\\/y\":true } ";
  assert_int_equal(wh_text_fields(t, strlen(t), keys, 4, f), RIPPLE_OK);
  assert_string_equal(span_str(f[0], b, sizeof b), "{\"name\":\"p\"}");
  assert_string_equal(span_str(f[1], b, sizeof b), "\"Pod\"");
  assert_string_equal(span_str(f[2], b, sizeof b), "true");
  assert_null(f[3].p);
  assert_int_equal(wh_text_fields("{}", 2, keys, 4, f), RIPPLE_OK);
  assert_null(f[0].p);
  /* Not an object, or broken: refused, and the spans say nothing. */
  static const char *const bad[] = {
      "",         "[]",         "\"metadata\"", "{\"a\"}",           "{\"a\":}", "{\"a\":1,}",
      "{\"a\":1", "{\"a\":\"x", "{a:1}",        "{\"a\":1 \"b\":2}", "{\"a\":]}"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    f[0] = (wh_span_t){"x", 1};
    assert_int_equal(wh_text_fields(bad[i], strlen(bad[i]), keys, 4, f), RIPPLE_EJSON);
    assert_null(f[0].p);
  }
}

#define POD                                                                                    \
  "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\",\"generateName\":" \
  "\"web-\",\"namespace\":\"d\",\"uid\":\"pu\",\"resourceVersion\":\"42\",\"labels\":{"        \
  "\"app\":\"web\"},\"annotations\":{\"other\":\"x\",\"cpid.ripple.dev/pod\":\"1;"             \
  "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60\"},\"ownerReferences\":[{\"kind\":\"ReplicaSet\","     \
  "\"name\":\"rs\",\"uid\":\"ru\",\"controller\":true}]},\"spec\":{\"nodeName\":\"n1\","       \
  "\"containers\":[{\"name\":\"app\"}]},\"status\":{\"phase\":\"Running\"}}"

static void standin_keeps_what_is_read(void **state) {
  (void)state;
  json_t *s;
  assert_int_equal(wh_text_standin(POD, strlen(POD), "Pod", &s), RIPPLE_OK);
  json_t *want = json_loads(
      "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web-1\",\"namespace\":"
      "\"d\",\"uid\":\"pu\",\"resourceVersion\":\"42\",\"labels\":{\"app\":\"web\"},"
      "\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"uid\":\"ru\","
      "\"controller\":true}],\"annotations\":{\"cpid.ripple.dev/pod\":\"1;"
      "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60\"}}}",
      0, NULL);
  assert_true(json_equal(s, want));
  json_decref(s);
  json_decref(want);
  /* A list item has no kind: it gets the one asked for. No metadata, or
   * metadata of another type: none in the stand-in either. */
  const char *item = "{\"metadata\":{\"name\":\"a\"}}";
  assert_int_equal(wh_text_standin(item, strlen(item), "ReplicaSet", &s), RIPPLE_OK);
  assert_string_equal(json_string_value(json_object_get(s, "apiVersion")), "apps/v1");
  assert_string_equal(json_string_value(json_object_get(s, "kind")), "ReplicaSet");
  json_decref(s);
  assert_int_equal(wh_text_standin("{\"metadata\":null}", 17, "Pod", &s), RIPPLE_OK);
  assert_null(json_object_get(s, "metadata"));
  json_decref(s);
  /* Every prefix of a real object is refused or read, never read past (the
   * buffer has exactly the prefix's bytes: ASan). */
  size_t n = strlen(POD);
  for (size_t i = 0; i < n; i++) {
    char *p = malloc(i ? i : 1);
    memcpy(p, POD, i);
    s = NULL;
    int rc = wh_text_standin(p, i, "Pod", &s);
    assert_true(rc == RIPPLE_EJSON || (rc == RIPPLE_OK && s));
    json_decref(s);
    free(p);
  }
  assert_int_equal(wh_text_standin(POD, n, "no such kind!", &s), RIPPLE_EINVAL);
}

/* ---- stand-ins against whole trees, on random objects --------------------- */

static uint64_t rnd_state;
static uint32_t rnd(uint32_t n) {
  rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)(rnd_state >> 33) % n;
}

static const char *const words[] = {"web",
                                    "db",
                                    "a\"b",
                                    "c\\d",
                                    "}{][",
                                    "x/y",
                                    "\xc3\xa9t\xc3\xa9",
                                    "",
                                    "1;3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60"};
enum { NWORDS = sizeof words / sizeof words[0] };
static const char *word(void) { return words[rnd(NWORDS)]; }

static const char *const ctxs[] = {
    "1;3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60",
    "1;0c9d2b1a-1111-4222-8333-444455556666;3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60",
    "garbage",
    "2;3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60",
};

static json_t *junk(int depth) {
  switch (rnd(depth > 2 ? 4 : 6)) {
    case 0: return json_string(word());
    case 1: return json_integer((json_int_t)rnd(1000) - 500);
    case 2: return rnd(2) ? json_true() : json_null();
    case 3: return json_real(1.5);
    case 4: {
      json_t *a = json_array();
      for (uint32_t i = rnd(3); i; i--) json_array_append_new(a, junk(depth + 1));
      return a;
    }
    default: {
      json_t *o = json_object();
      for (uint32_t i = rnd(3); i; i--) json_object_set_new(o, word(), junk(depth + 1));
      return o;
    }
  }
}

static json_t *random_meta(void) {
  json_t *md = json_object();
  const char *order[] = {"name",   "namespace",       "uid",         "resourceVersion",
                         "labels", "ownerReferences", "annotations", "finalizers"};
  for (int i = 0; i < 8; i++) {
    if (rnd(5) == 0) continue;
    const char *k = order[rnd(8)];
    json_t *v;
    if (!strcmp(k, "labels")) {
      v = json_object();
      json_object_set_new(v, "app", json_string(rnd(2) ? "web" : word()));
      for (uint32_t j = rnd(3); j; j--) json_object_set_new(v, word(), json_string(word()));
    } else if (!strcmp(k, "ownerReferences")) {
      v = json_array();
      for (uint32_t j = rnd(3); j; j--)
        json_array_append_new(
            v, json_pack("{s:s,s:s,s:s,s:b}", "kind", "ReplicaSet", "name", "rs", "uid",
                         rnd(2) ? "ru" : word(), "controller", (int)rnd(2)));
    } else if (!strcmp(k, "annotations")) {
      v = json_object();
      json_object_set_new(v, word(), json_string(word()));
      uint32_t c = rnd(6);
      if (c < 4) json_object_set_new(v, "cpid.ripple.dev/pod", json_string(ctxs[c]));
      if (c == 4) json_object_set_new(v, "cpid.ripple.dev/pod", json_integer(7));
    } else if (!strcmp(k, "namespace")) {
      v = json_string(rnd(3) ? "d" : word());
    } else {
      v = rnd(8) ? json_string(word()) : junk(1);
    }
    json_object_set_new(md, k, v);
  }
  return md;
}

static char *random_text(void) {
  json_t *o = json_object();
  for (int i = 0; i < 5; i++) {
    switch (rnd(5)) {
      case 0: json_object_set_new(o, "apiVersion", json_string("v1")); break;
      case 1: json_object_set_new(o, "kind", json_string("Pod")); break;
      case 2: json_object_set_new(o, "metadata", rnd(10) ? random_meta() : junk(1)); break;
      default: json_object_set_new(o, rnd(2) ? "spec" : "status", junk(0)); break;
    }
  }
  size_t flags = rnd(2) ? JSON_COMPACT : JSON_INDENT(rnd(3));
  if (rnd(2)) flags |= JSON_ENSURE_ASCII;
  char *s = json_dumps(o, flags);
  json_decref(o);
  /* Sometimes a member name the scan must decode. */
  char *at = rnd(2) ? strstr(s, "\"labels\"") : NULL;
  if (at) {
    char *t = malloc(strlen(s) + 8);
    sprintf(t, "%.*s\"lab\\u0065ls\"%s", (int)(at - s), s, at + 8);
    free(s);
    s = t;
  }
  return s;
}

static void same_member(const json_t *a, const json_t *b, const char *key, const char *text) {
  const json_t *va = json_object_get(json_object_get(a, "metadata"), key);
  const json_t *vb = json_object_get(json_object_get(b, "metadata"), key);
  if (!(va == vb || json_equal(va, vb))) fail_msg("metadata.%s differs for %s", key, text);
}

static void standin_equals_tree_random(void **state) {
  (void)state;
  /* Fixed, so runs repeat; RIPPLE_TEST_SEED explores others. */
  const char *env = getenv("RIPPLE_TEST_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 10) : 20261122;
  rnd_state = seed;
  ripple_rules_t *rules;
  assert_int_equal(ripple_rules_new(&rules), RIPPLE_OK);
  json_t *svc = json_loads(
      "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"w\",\"namespace\":"
      "\"d\",\"uid\":\"su\"},\"spec\":{\"selector\":{\"app\":\"web\"}}}",
      0, NULL);
  json_t *rs = json_loads(
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\","
      "\"namespace\":\"d\",\"uid\":\"ru\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":"
      "\"web\"}}}}",
      0, NULL);
  int related = 0, ctxs_read = 0, idents = 0;
  for (int i = 0; i < 3000; i++) {
    char *text = random_text();
    json_t *tree = wh_text_tree(text, strlen(text), "Pod"), *s = NULL;
    if (!tree) fail_msg("seed %llu: not JSON: %s", (unsigned long long)seed, text);
    if (wh_text_standin(text, strlen(text), "Pod", &s) != RIPPLE_OK)
      fail_msg("seed %llu: no stand-in for %s", (unsigned long long)seed, text);
    /* The stand-in's kind is the one asked for, as the informer's is. */
    json_object_set_new(tree, "kind", json_string("Pod"));
    json_object_set_new(tree, "apiVersion", json_string("v1"));
    const char *keys[] = {"name",   "namespace",      "uid", "resourceVersion",
                          "labels", "ownerReferences"};
    for (size_t k = 0; k < 6; k++) same_member(s, tree, keys[k], text);
    for (int up = 0; up < 2; up++) {
      const json_t *from = up ? svc : rs;
      int a = ripple_rules_relates(rules, from, s, NULL),
          b = ripple_rules_relates(rules, from, tree, NULL);
      if (a != b) fail_msg("seed %llu: relation differs for %s", (unsigned long long)seed, text);
      related += a;
    }
    ripple_ctx_t ca, cb;
    int ra = wh_obj_ctx(s, "Pod", 10, &ca), rb = wh_obj_ctx(tree, "Pod", 10, &cb);
    if (ra != rb || (ra == RIPPLE_OK && !ripple_ctx_equal(&ca, &cb)))
      fail_msg("seed %llu: context differs (%d, %d) for %s", (unsigned long long)seed, ra, rb,
               text);
    ctxs_read += ra == RIPPLE_OK;
    /* The identity read from text alone, when it can be, is the tree's. */
    wh_ident_t id;
    if (wh_text_ident(text, strlen(text), "Pod", &id) == RIPPLE_OK) {
      const json_t *md = json_object_get(tree, "metadata");
      const json_t *v = json_object_get(json_object_get(md, "annotations"), "cpid.ripple.dev/pod");
      const char *name = json_string_value(json_object_get(md, "name"));
      const char *ns = json_string_value(json_object_get(md, "namespace"));
      const char *uid = json_string_value(json_object_get(md, "uid"));
      if (strcmp(id.name, name ? name : "") != 0 || strcmp(id.ns, ns ? ns : "") != 0 ||
          strcmp(id.uid, uid ? uid : "") != 0 ||
          (id.ctx ? !json_is_string(v) || json_string_length(v) != id.ctx_len ||
                        memcmp(json_string_value(v), id.ctx, id.ctx_len) != 0
                  : json_is_string(v)))
        fail_msg("seed %llu: identity differs for %s", (unsigned long long)seed, text);
      idents++;
    }
    json_decref(s);
    json_decref(tree);
    free(text);
  }
  /* The objects were varied enough to mean something. */
  assert_true(related > 100);
  assert_true(ctxs_read > 100);
  assert_true(idents > 100);
  json_decref(svc);
  json_decref(rs);
  ripple_rules_free(rules);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fields_basics),
      cmocka_unit_test(standin_keeps_what_is_read),
      cmocka_unit_test(standin_equals_tree_random),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
