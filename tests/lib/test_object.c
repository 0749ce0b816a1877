/*
 * test_object.c - contexts on Kubernetes objects: reading, writing, and the
 * JSON Patch an admission webhook returns.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const char *pod =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\",\"namespace\":"
    "\"default\","
    "\"labels\":{\"app\":\"web\"},\"annotations\":{\"a/b\":\"keep\"}},"
    "\"spec\":{\"nodeName\":\"kwok-node-0\",\"priority\":0,\"overhead\":{\"cpu\":\"250m\"},"
    "\"weight\":0.1,\"big\":9007199254740993,\"tolerations\":[]},\"status\":{\"phase\":\"Running\"}"
    "}";

static ripple_ctx_t ctx_with(uint64_t k, uint32_t nanc) {
  ripple_ctx_t c;
  memset(&c, 0, sizeof c);
  c.cpid = test_cpid(k);
  for (uint32_t i = 0; i < nanc; i++) c.anc[i] = test_cpid(k * 100 + i + 1);
  c.nanc = nanc;
  return c;
}

static void annotation_keys(void **state) {
  (void)state;
  char key[RIPPLE_ANNOTATION_KEYMAX];
  assert_int_equal(ripple_annotation_key("Deployment", key, sizeof key), RIPPLE_OK);
  assert_string_equal(key, "cpid.ripple.dev/deployment");
  assert_int_equal(ripple_annotation_key("EndpointSlice", key, sizeof key), RIPPLE_OK);
  assert_string_equal(key, "cpid.ripple.dev/endpointslice");
  assert_int_equal(ripple_annotation_key("", key, sizeof key), RIPPLE_EINVAL);
  assert_int_equal(ripple_annotation_key("pods/status", key, sizeof key), RIPPLE_EINVAL);
  assert_int_equal(ripple_annotation_key("9lives", key, sizeof key), RIPPLE_EINVAL);
  char longkind[70];
  memset(longkind, 'A', 64);
  longkind[64] = '\0';
  assert_int_equal(ripple_annotation_key(longkind, key, sizeof key), RIPPLE_EINVAL);
  assert_int_equal(ripple_annotation_key("Pod", key, 10), RIPPLE_ERANGE);
}

static void set_then_get_keeps_everything_else(void **state) {
  (void)state;
  ripple_ctx_t c = ctx_with(1, 3), back;
  char *out = NULL;
  size_t len = 0;
  assert_int_equal(ripple_object_set_ctx(pod, strlen(pod), NULL, &c, &out, &len), RIPPLE_OK);
  assert_int_equal(len, strlen(out));
  assert_int_equal(ripple_object_get_ctx(out, len, NULL, 10, &back), RIPPLE_OK);
  assert_true(ripple_ctx_equal(&c, &back));

  /* Every other field is equal, and keys keep their order. */
  json_t *a = json_loads(pod, 0, NULL), *b = json_loads(out, 0, NULL);
  assert_non_null(a);
  assert_non_null(b);
  json_t *ann = json_object_get(json_object_get(b, "metadata"), "annotations");
  assert_non_null(json_object_get(ann, "cpid.ripple.dev/pod"));
  json_object_del(ann, "cpid.ripple.dev/pod");
  assert_true(json_equal(a, b));
  assert_non_null(strstr(out, "\"big\":9007199254740993")); /* integer beyond 2^53 exact */
  assert_true(strstr(out, "\"apiVersion\"") < strstr(out, "\"kind\""));
  assert_true(strstr(out, "\"spec\"") < strstr(out, "\"status\""));
  json_decref(a);
  json_decref(b);
  ripple_free(out);
}

static void get_absent_and_bad(void **state) {
  (void)state;
  ripple_ctx_t c;
  struct {
    const char *json, *kind;
    int rc;
  } cases[] = {
      {"{\"kind\":\"Pod\",\"metadata\":{}}", NULL, RIPPLE_ENOENT},
      {"{\"kind\":\"Pod\"}", NULL, RIPPLE_ENOENT},
      {"{\"kind\":\"Pod\",\"metadata\":{\"annotations\":null}}", NULL, RIPPLE_ENOENT},
      {"{\"metadata\":{\"annotations\":{}}}", NULL, RIPPLE_EJSON},   /* no kind */
      {"{\"metadata\":{\"annotations\":{}}}", "Pod", RIPPLE_ENOENT}, /* list item */
      {"{\"kind\":\"Pod\",\"metadata\":[]}", NULL, RIPPLE_EJSON},
      {"{\"kind\":\"Pod\",\"metadata\":{\"annotations\":\"x\"}}", NULL, RIPPLE_EJSON},
      {"{\"kind\":\"Pod\",\"metadata\":{\"annotations\":{\"cpid.ripple.dev/pod\":7}}}", NULL,
       RIPPLE_EBADCTX},
      {"{\"kind\":\"Pod\",\"metadata\":{\"annotations\":{\"cpid.ripple.dev/pod\":\"junk\"}}}", NULL,
       RIPPLE_EBADCTX},
      {"{\"kind\":\"Pod\",\"metadata\":{\"annotations\":{\"cpid.ripple.dev/pod\":\"7;x\"}}}", NULL,
       RIPPLE_EVERSION},
      {"{\"kind\":\"Pod\",", NULL, RIPPLE_EJSON},
      {"[1,2]", NULL, RIPPLE_EJSON},
      {"{\"kind\":\"Pod\",\"kind\":\"Node\"}", NULL, RIPPLE_EJSON}, /* duplicate keys */
      {"{\"kind\":\"pods/x\"}", NULL, RIPPLE_EJSON},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int rc = ripple_object_get_ctx(cases[i].json, strlen(cases[i].json), cases[i].kind, 10, &c);
    if (rc != cases[i].rc) fail_msg("case %zu: got %s", i, ripple_errname(rc));
  }
}

/* The Deployment controller copies Deployment annotations onto ReplicaSets: a
 * ReplicaSet carrying its Deployment's context still has its own. */
static void copied_annotations_do_not_collide(void **state) {
  (void)state;
  ripple_ctx_t dep = ctx_with(1, 0), rs = ctx_with(2, 0), got;
  char *with_dep = NULL, *with_both = NULL;
  const char *obj = "{\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-5d\"}}";
  assert_int_equal(ripple_object_set_ctx(obj, strlen(obj), "Deployment", &dep, &with_dep, NULL),
                   RIPPLE_OK);
  assert_int_equal(ripple_object_get_ctx(with_dep, strlen(with_dep), NULL, 10, &got),
                   RIPPLE_ENOENT);
  assert_int_equal(ripple_object_set_ctx(with_dep, strlen(with_dep), NULL, &rs, &with_both, NULL),
                   RIPPLE_OK);
  assert_int_equal(ripple_object_get_ctx(with_both, strlen(with_both), NULL, 10, &got), RIPPLE_OK);
  assert_true(ripple_ctx_equal(&got, &rs));
  assert_int_equal(ripple_object_get_ctx(with_both, strlen(with_both), "Deployment", 10, &got),
                   RIPPLE_OK);
  assert_true(ripple_ctx_equal(&got, &dep));
  ripple_free(with_dep);
  ripple_free(with_both);
}

static void set_creates_metadata(void **state) {
  (void)state;
  ripple_ctx_t c = ctx_with(3, 1), got;
  const char *docs[] = {"{\"kind\":\"ConfigMap\"}",
                        "{\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":null}}"};
  for (int i = 0; i < 2; i++) {
    char *out = NULL;
    assert_int_equal(ripple_object_set_ctx(docs[i], strlen(docs[i]), NULL, &c, &out, NULL),
                     RIPPLE_OK);
    assert_int_equal(ripple_object_get_ctx(out, strlen(out), NULL, 10, &got), RIPPLE_OK);
    assert_true(ripple_ctx_equal(&got, &c));
    ripple_free(out);
  }
  char *out = NULL;
  const char *bad = "{\"kind\":\"ConfigMap\",\"metadata\":3}";
  assert_int_equal(ripple_object_set_ctx(bad, strlen(bad), NULL, &c, &out, NULL), RIPPLE_EJSON);
  assert_null(out);
}

/* Apply an RFC 6902 patch made of "add" operations, as the API server would. */
static json_t *apply_patch(json_t *doc, const char *patch) {
  json_t *ops = json_loads(patch, 0, NULL);
  assert_true(json_is_array(ops));
  size_t i;
  json_t *op;
  json_array_foreach(ops, i, op) {
    assert_string_equal(json_string_value(json_object_get(op, "op")), "add");
    const char *path = json_string_value(json_object_get(op, "path"));
    assert_int_equal(path[0], '/');
    json_t *at = doc;
    char tok[128];
    const char *p = path + 1;
    for (;;) {
      size_t n = 0;
      while (*p && *p != '/') {
        if (p[0] == '~' && p[1] == '1')
          tok[n++] = '/', p += 2;
        else if (p[0] == '~' && p[1] == '0')
          tok[n++] = '~', p += 2;
        else
          tok[n++] = *p++;
      }
      tok[n] = '\0';
      if (!*p) break;
      at = json_object_get(at, tok);
      assert_true(json_is_object(at));
      p++;
    }
    json_object_set(at, tok, json_object_get(op, "value"));
  }
  json_decref(ops);
  return doc;
}

static void patch_sets_exactly_the_annotation(void **state) {
  (void)state;
  ripple_ctx_t c = ctx_with(4, 2), got;
  const char *docs[] = {pod, "{\"kind\":\"Pod\"}", "{\"kind\":\"Pod\",\"metadata\":{}}",
                        "{\"kind\":\"Pod\",\"metadata\":{\"annotations\":null}}"};
  for (int i = 0; i < 4; i++) {
    char *patch = NULL;
    int changed = -1;
    assert_int_equal(
        ripple_object_patch_ctx(docs[i], strlen(docs[i]), NULL, &c, &patch, NULL, &changed),
        RIPPLE_OK);
    assert_int_equal(changed, 1);
    json_t *doc = apply_patch(json_loads(docs[i], 0, NULL), patch);
    char *s = json_dumps(doc, JSON_COMPACT);
    assert_int_equal(ripple_object_get_ctx(s, strlen(s), NULL, 10, &got), RIPPLE_OK);
    assert_true(ripple_ctx_equal(&got, &c));
    /* Idempotent: the patched object needs no further patch. */
    char *again = NULL;
    assert_int_equal(ripple_object_patch_ctx(s, strlen(s), NULL, &c, &again, NULL, &changed),
                     RIPPLE_OK);
    assert_int_equal(changed, 0);
    assert_string_equal(again, "[]");
    /* And the patch changed nothing else. */
    json_t *orig = json_loads(docs[i], 0, NULL);
    json_t *meta = json_object_get(doc, "metadata");
    json_object_del(json_object_get(meta, "annotations"), "cpid.ripple.dev/pod");
    if (i == 0) assert_true(json_equal(orig, doc));
    json_decref(orig);
    free(s);
    json_decref(doc);
    ripple_free(patch);
    ripple_free(again);
  }
}

static void tracer_extract_counts_bad(void **state) {
  (void)state;
  capture_t *cap = capture_new(1);
  ripple_tracer_t *t = capture_tracer(cap, "c", 3);
  ripple_log_setup("test", RIPPLE_LOG_ERROR, NULL, NULL); /* keep the warning quiet */
  ripple_ctx_t c;
  const char *bad =
      "{\"kind\":\"Pod\",\"metadata\":{\"annotations\":{\"cpid.ripple.dev/pod\":\"1;nope\"}}}";
  const char *broken = "{\"kind\":";
  assert_int_equal(ripple_tracer_extract(t, bad, strlen(bad), NULL, &c), RIPPLE_ENOENT);
  assert_false(ripple_ctx_is_set(&c));
  assert_int_equal(ripple_tracer_extract(t, broken, strlen(broken), NULL, &c), RIPPLE_EJSON);
  assert_int_equal(ripple_tracer_extract_str(t, "2;x", 3, &c), RIPPLE_ENOENT);
  assert_int_equal(ripple_tracer_extract_str(t, NULL, 0, &c), RIPPLE_ENOENT);
  ripple_tracer_stats_t st;
  ripple_tracer_stats(t, &st);
  assert_int_equal(st.bad_ctx, 2);

  /* A good one is cut to the tracer's N. */
  ripple_ctx_t five = ctx_with(9, 5);
  char *obj = NULL;
  const char *empty = "{\"kind\":\"Pod\"}";
  assert_int_equal(ripple_object_set_ctx(empty, strlen(empty), NULL, &five, &obj, NULL), RIPPLE_OK);
  assert_int_equal(ripple_tracer_extract(t, obj, strlen(obj), NULL, &c), RIPPLE_OK);
  assert_int_equal(c.nanc, 3);
  ripple_free(obj);
  ripple_tracer_free(t);
  free(cap);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(annotation_keys),
      cmocka_unit_test(set_then_get_keeps_everything_else),
      cmocka_unit_test(get_absent_and_bad),
      cmocka_unit_test(copied_annotations_do_not_collide),
      cmocka_unit_test(set_creates_metadata),
      cmocka_unit_test(patch_sets_exactly_the_annotation),
      cmocka_unit_test(tracer_extract_counts_bad),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
