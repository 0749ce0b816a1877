/*
 * test_wdiff.c - field diffs and snapshots of objects (watch/wdiff.h):
 * added, removed and changed fields, arrays that change length, type
 * changes, JSON Pointer escaping and the order of entries; what is never
 * stored (resourceVersion, managedFields, ripple's annotations, a Secret's
 * values, paths matched by redaction patterns); pattern checks; the limits;
 * and hostile nesting 10000 levels deep.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "wdiff.h"

static json_t *J(const char *text) {
  json_error_t e;
  json_t *v = json_loads(text, 0, &e);
  if (!v) fail_msg("bad test JSON at %d: %s\n%s", e.position, e.text, text);
  return v;
}

static char *text_of(const json_t *v) {
  char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
  assert_non_null(s);
  return s;
}

/* v is the JSON in `want` (key order aside; array order counts). */
static void assert_json(const json_t *v, const char *want) {
  json_t *w = J(want);
  if (!json_equal(v, w)) {
    char *got = text_of(v);
    fail_msg("got  %s\nwant %s", got, want);
  }
  json_decref(w);
}

static json_t *diff_lim(const char *old, const char *new_, const wdiff_redact_t *r,
                        const wdiff_limits_t *lim, int *truncated) {
  json_t *a = J(old), *b = J(new_), *out = NULL;
  int t = -1;
  assert_int_equal(wdiff_diff(a, b, r, lim, &out, &t), RIPPLE_OK);
  assert_true(json_is_array(out));
  assert_true(t == 0 || t == 1);
  if (truncated) *truncated = t;
  json_decref(a);
  json_decref(b);
  return out;
}

/* The diff from old to new is `want`, with no limit reached. */
static void check_diff(const char *old, const char *new_, const wdiff_redact_t *r,
                       const char *want) {
  int t;
  json_t *out = diff_lim(old, new_, r, NULL, &t);
  assert_json(out, want);
  assert_int_equal(t, 0);
  json_decref(out);
}

static json_t *snap_lim(const char *obj, const wdiff_redact_t *r, const wdiff_limits_t *lim,
                        int *truncated) {
  json_t *o = J(obj), *out = NULL;
  int t = -1;
  assert_int_equal(wdiff_snapshot(o, r, lim, &out, &t), RIPPLE_OK);
  assert_true(json_is_object(out));
  if (truncated) *truncated = t;
  json_decref(o);
  return out;
}

static void assert_absent(const json_t *v, const char *secret) {
  char *s = text_of(v);
  if (strstr(s, secret)) fail_msg("\"%s\" leaked into %s", secret, s);
  free(s);
}

/* ---- diffs ------------------------------------------------------------- */

static void test_identical(void **state) {
  (void)state;
  const char *o =
      "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":\"1\"}},"
      "\"data\":{\"k\":\"v\"},\"list\":[1,[2,{\"3\":null}]],\"f\":1.5,\"t\":true}";
  check_diff(o, o, NULL, "[]");
  /* Key order is not a change. */
  check_diff("{\"a\":1,\"b\":{\"c\":2,\"d\":3}}", "{\"b\":{\"d\":3,\"c\":2},\"a\":1}", NULL, "[]");
  check_diff("{}", "{}", NULL, "[]");
}

static void test_added_removed_changed(void **state) {
  (void)state;
  check_diff("{\"spec\":{\"replicas\":1,\"paused\":false,\"old\":\"x\"}}",
             "{\"spec\":{\"replicas\":3,\"paused\":false,\"new\":{\"a\":[1]}}}", NULL,
             "[{\"path\":\"/spec/new\",\"new\":{\"a\":[1]}},"
             "{\"path\":\"/spec/old\",\"old\":\"x\"},"
             "{\"path\":\"/spec/replicas\",\"old\":1,\"new\":3}]");
  /* A whole object added or removed is one entry. */
  check_diff("{\"a\":1}", "{\"a\":1,\"status\":{\"ready\":2,\"conditions\":[]}}", NULL,
             "[{\"path\":\"/status\",\"new\":{\"ready\":2,\"conditions\":[]}}]");
  check_diff("{\"status\":{\"ready\":2}}", "{}", NULL,
             "[{\"path\":\"/status\",\"old\":{\"ready\":2}}]");
  /* null is a value: set to null is a change, not a removal. */
  check_diff("{\"a\":1}", "{\"a\":null}", NULL, "[{\"path\":\"/a\",\"old\":1,\"new\":null}]");
  check_diff("{\"s\":\"\"}", "{\"s\":\"\\u00e9\\n\"}", NULL,
             "[{\"path\":\"/s\",\"old\":\"\",\"new\":\"\\u00e9\\n\"}]");
}

static void test_arrays(void **state) {
  (void)state;
  /* Element by element; the longer one's extra indexes are added or removed. */
  check_diff("{\"l\":[[1,2],[3]]}", "{\"l\":[[1,2,4],[5],[6]]}", NULL,
             "[{\"path\":\"/l/0/2\",\"new\":4},"
             "{\"path\":\"/l/1/0\",\"old\":3,\"new\":5},"
             "{\"path\":\"/l/2\",\"new\":[6]}]");
  check_diff("{\"l\":[[1,2,4],[5],[6]]}", "{\"l\":[[1,2],[3]]}", NULL,
             "[{\"path\":\"/l/0/2\",\"old\":4},"
             "{\"path\":\"/l/1/0\",\"old\":5,\"new\":3},"
             "{\"path\":\"/l/2\",\"old\":[6]}]");
  check_diff("{\"l\":[1,2,3]}", "{\"l\":[]}", NULL,
             "[{\"path\":\"/l/0\",\"old\":1},{\"path\":\"/l/1\",\"old\":2},"
             "{\"path\":\"/l/2\",\"old\":3}]");
  check_diff("{\"c\":[{\"name\":\"a\",\"image\":\"x:1\"},{\"name\":\"b\"}]}",
             "{\"c\":[{\"name\":\"a\",\"image\":\"x:2\"},{\"name\":\"b\"}]}", NULL,
             "[{\"path\":\"/c/0/image\",\"old\":\"x:1\",\"new\":\"x:2\"}]");
}

static void test_type_change(void **state) {
  (void)state;
  check_diff("{\"a\":{\"x\":1}}", "{\"a\":\"str\"}", NULL,
             "[{\"path\":\"/a\",\"old\":{\"x\":1},\"new\":\"str\"}]");
  check_diff("{\"a\":[1,2]}", "{\"a\":{\"0\":1,\"1\":2}}", NULL,
             "[{\"path\":\"/a\",\"old\":[1,2],\"new\":{\"0\":1,\"1\":2}}]");
  check_diff("{\"a\":1}", "{\"a\":1.0}", NULL, "[{\"path\":\"/a\",\"old\":1,\"new\":1.0}]");
  check_diff("{\"a\":true}", "{\"a\":false}", NULL,
             "[{\"path\":\"/a\",\"old\":true,\"new\":false}]");
  check_diff("{\"a\":null}", "{\"a\":{}}", NULL, "[{\"path\":\"/a\",\"old\":null,\"new\":{}}]");
  check_diff("{\"a\":[]}", "{\"a\":{}}", NULL, "[{\"path\":\"/a\",\"old\":[],\"new\":{}}]");
}

static void test_escaping(void **state) {
  (void)state;
  check_diff("{\"a/b\":1,\"m~n\":1,\"~/\":{\"/\":1},\"\":1}",
             "{\"a/b\":2,\"m~n\":2,\"~/\":{\"/\":2},\"\":2}", NULL,
             "[{\"path\":\"/\",\"old\":1,\"new\":2},"
             "{\"path\":\"/a~1b\",\"old\":1,\"new\":2},"
             "{\"path\":\"/m~0n\",\"old\":1,\"new\":2},"
             "{\"path\":\"/~0~1/~1\",\"old\":1,\"new\":2}]");
  check_diff("{\"labels\":{\"app.kubernetes.io/name\":\"a\"}}",
             "{\"labels\":{\"app.kubernetes.io/name\":\"b\"}}", NULL,
             "[{\"path\":\"/labels/app.kubernetes.io~1name\",\"old\":\"a\",\"new\":\"b\"}]");
}

static void test_order(void **state) {
  (void)state;
  /* Segment by segment: numbers first in numeric order, then byte order. So
   * /a/x comes before /a-b although "/a-b" < "/a/x" as strings. */
  check_diff(
      "{\"b\":1,\"a\":{\"x\":1},\"a-b\":1,\"10\":1,\"9\":1,"
      "\"arr\":[0,0,0,0,0,0,0,0,0,0,0,0]}",
      "{\"b\":2,\"a\":{\"x\":2},\"a-b\":2,\"10\":2,\"9\":2,"
      "\"arr\":[1,0,1,0,0,0,0,0,0,0,1,1]}",
      NULL,
      "[{\"path\":\"/9\",\"old\":1,\"new\":2},{\"path\":\"/10\",\"old\":1,\"new\":2},"
      "{\"path\":\"/a/x\",\"old\":1,\"new\":2},{\"path\":\"/a-b\",\"old\":1,\"new\":2},"
      "{\"path\":\"/arr/0\",\"old\":0,\"new\":1},{\"path\":\"/arr/2\",\"old\":0,\"new\":1},"
      "{\"path\":\"/arr/10\",\"old\":0,\"new\":1},{\"path\":\"/arr/11\",\"old\":0,\"new\":1},"
      "{\"path\":\"/b\",\"old\":1,\"new\":2}]");
}

static void test_metadata_filtered(void **state) {
  (void)state;
  const char *old =
      "{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"100\",\"generation\":1,"
      "\"managedFields\":[{\"manager\":\"kubectl\",\"fieldsV1\":{\"f:spec\":{}}}],"
      "\"annotations\":{\"cpid.ripple.dev/ctx\":\"1;aaaa\",\"keep\":\"a\","
      "\"cpid.ripple.dev-like\":\"x\"}},"
      "\"spec\":{\"resourceVersion\":\"1\"}}";
  const char *new_ =
      "{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"101\",\"generation\":2,"
      "\"managedFields\":[{\"manager\":\"ripple\",\"fieldsV1\":{}}],"
      "\"annotations\":{\"cpid.ripple.dev/ctx\":\"1;bbbb\",\"cpid.ripple.dev/more\":\"y\","
      "\"keep\":\"b\",\"cpid.ripple.dev-like\":\"z\"}},"
      "\"spec\":{\"resourceVersion\":\"2\"}}";
  check_diff(
      old, new_, NULL,
      "[{\"path\":\"/metadata/annotations/cpid.ripple.dev-like\",\"old\":\"x\",\"new\":\"z\"},"
      "{\"path\":\"/metadata/annotations/keep\",\"old\":\"a\",\"new\":\"b\"},"
      "{\"path\":\"/metadata/generation\",\"old\":1,\"new\":2},"
      "{\"path\":\"/spec/resourceVersion\",\"old\":\"1\",\"new\":\"2\"}]");
  /* Only those: a change there alone is no change. */
  check_diff("{\"metadata\":{\"resourceVersion\":\"1\",\"managedFields\":[]}}",
             "{\"metadata\":{\"resourceVersion\":\"2\"}}", NULL, "[]");
  /* metadata added whole carries none of them either. */
  check_diff("{}", new_, NULL,
             "[{\"path\":\"/metadata\",\"new\":{\"name\":\"a\",\"generation\":2,"
             "\"annotations\":{\"keep\":\"b\",\"cpid.ripple.dev-like\":\"z\"}}},"
             "{\"path\":\"/spec\",\"new\":{\"resourceVersion\":\"2\"}}]");
  json_t *s = snap_lim(old, NULL, NULL, NULL);
  assert_json(s,
              "{\"metadata\":{\"name\":\"a\",\"generation\":1,\"annotations\":{\"keep\":\"a\","
              "\"cpid.ripple.dev-like\":\"x\"}},\"spec\":{\"resourceVersion\":\"1\"}}");
  json_decref(s);
}

/* ---- Secrets ----------------------------------------------------------- */

static const char *secret_values[] = {
    "T0xEUEFTUw==", "TkVXUEFTUw==", "R09ORQ==", "QURERUQ=", "plain-old", "plain-new"};

static void assert_no_secret(const json_t *v) {
  for (size_t i = 0; i < sizeof secret_values / sizeof *secret_values; i++)
    assert_absent(v, secret_values[i]);
}

static void test_secret_diff(void **state) {
  (void)state;
  const char *old =
      "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"type\":\"Opaque\",\"metadata\":{\"name\":\"s\"}"
      ","
      "\"data\":{\"password\":\"T0xEUEFTUw==\",\"user\":\"YWRtaW4=\",\"gone\":\"R09ORQ==\"},"
      "\"stringData\":{\"x\":\"plain-old\"}}";
  const char *new_ =
      "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"type\":\"kubernetes.io/tls\","
      "\"metadata\":{\"name\":\"s\"},"
      "\"data\":{\"password\":\"TkVXUEFTUw==\",\"user\":\"YWRtaW4=\",\"added\":\"QURERUQ=\"},"
      "\"stringData\":{\"x\":\"plain-new\"}}";
  json_t *out = diff_lim(old, new_, NULL, NULL, NULL);
  assert_json(out,
              "[{\"path\":\"/data/added\",\"redacted\":true},"
              "{\"path\":\"/data/gone\",\"redacted\":true},"
              "{\"path\":\"/data/password\",\"redacted\":true},"
              "{\"path\":\"/stringData/x\",\"redacted\":true},"
              "{\"path\":\"/type\",\"old\":\"Opaque\",\"new\":\"kubernetes.io/tls\"}]");
  assert_no_secret(out);
  json_decref(out);
  /* data appearing whole: its keys, never its values. */
  out = diff_lim("{\"apiVersion\":\"v1\",\"kind\":\"Secret\"}", new_, NULL, NULL, NULL);
  assert_json(out,
              "[{\"path\":\"/data\",\"new\":{\"password\":\"(redacted)\",\"user\":\"(redacted)\","
              "\"added\":\"(redacted)\"}},"
              "{\"path\":\"/metadata\",\"new\":{\"name\":\"s\"}},"
              "{\"path\":\"/stringData\",\"new\":{\"x\":\"(redacted)\"}},"
              "{\"path\":\"/type\",\"new\":\"kubernetes.io/tls\"}]");
  assert_no_secret(out);
  json_decref(out);
  /* data that is not an object of keys is hidden whole. */
  check_diff("{\"kind\":\"Secret\",\"data\":{\"k\":\"T0xEUEFTUw==\"}}",
             "{\"kind\":\"Secret\",\"data\":\"TkVXUEFTUw==\"}", NULL,
             "[{\"path\":\"/data\",\"redacted\":true}]");
  check_diff("{\"kind\":\"Secret\",\"data\":[\"T0xEUEFTUw==\"]}",
             "{\"kind\":\"Secret\",\"data\":[\"TkVXUEFTUw==\"]}", NULL,
             "[{\"path\":\"/data\",\"redacted\":true}]");
  check_diff("{\"kind\":\"Secret\"}", "{\"kind\":\"Secret\",\"data\":\"TkVXUEFTUw==\"}", NULL,
             "[{\"path\":\"/data\",\"redacted\":true}]");
  /* Values nested in a key are hidden with the key. */
  check_diff("{\"kind\":\"Secret\",\"data\":{\"k\":{\"deep\":\"T0xEUEFTUw==\"}}}",
             "{\"kind\":\"Secret\",\"data\":{\"k\":{\"deep\":\"TkVXUEFTUw==\"}}}", NULL,
             "[{\"path\":\"/data/k\",\"redacted\":true}]");
  /* Either version being a Secret is enough: a kind changed by a hostile
   * writer does not reveal the old values. */
  out = diff_lim("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"data\":{\"k\":\"T0xEUEFTUw==\"}}",
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":{}}", NULL, NULL, NULL);
  assert_json(out,
              "[{\"path\":\"/data/k\",\"redacted\":true},"
              "{\"path\":\"/kind\",\"old\":\"Secret\",\"new\":\"ConfigMap\"}]");
  json_decref(out);
  /* Without apiVersion it is taken for one; another group's Secret is not. */
  check_diff("{\"kind\":\"Secret\",\"data\":{\"k\":\"a\"}}",
             "{\"kind\":\"Secret\",\"data\":{\"k\":\"b\"}}", NULL,
             "[{\"path\":\"/data/k\",\"redacted\":true}]");
  check_diff("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Secret\",\"data\":{\"k\":\"a\"}}",
             "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Secret\",\"data\":{\"k\":\"b\"}}", NULL,
             "[{\"path\":\"/data/k\",\"old\":\"a\",\"new\":\"b\"}]");
  /* kubectl apply's last-applied annotation holds the data too: redacted on a
   * Secret, shown on anything else. */
  check_diff(
      "{\"kind\":\"Secret\",\"metadata\":{\"annotations\":{\"kubectl.kubernetes.io/"
      "last-applied-configuration\":\"{\\\"data\\\":{\\\"k\\\":\\\"T0xEUEFTUw==\\\"}}\"}}}",
      "{\"kind\":\"Secret\",\"metadata\":{\"annotations\":{\"kubectl.kubernetes.io/"
      "last-applied-configuration\":\"{\\\"data\\\":{\\\"k\\\":\\\"TkVXUEFTUw==\\\"}}\"}}}",
      NULL,
      "[{\"path\":\"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration\","
      "\"redacted\":true}]");
  check_diff(
      "{\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{\"kubectl.kubernetes.io/"
      "last-applied-configuration\":\"a\"}}}",
      "{\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{\"kubectl.kubernetes.io/"
      "last-applied-configuration\":\"b\"}}}",
      NULL,
      "[{\"path\":\"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration\","
      "\"old\":\"a\",\"new\":\"b\"}]");
  /* A ConfigMap's data is shown. */
  check_diff("{\"kind\":\"ConfigMap\",\"data\":{\"k\":\"a\"}}",
             "{\"kind\":\"ConfigMap\",\"data\":{\"k\":\"b\"}}", NULL,
             "[{\"path\":\"/data/k\",\"old\":\"a\",\"new\":\"b\"}]");
}

static void test_secret_snapshot(void **state) {
  (void)state;
  const char *obj =
      "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"type\":\"Opaque\","
      "\"metadata\":{\"name\":\"s\",\"resourceVersion\":\"7\",\"managedFields\":[{}]},"
      "\"data\":{\"password\":\"T0xEUEFTUw==\",\"nested\":{\"a\":\"R09ORQ==\"}},"
      "\"stringData\":{\"x\":\"plain-old\"}}";
  int t = -1;
  json_t *s = snap_lim(obj, NULL, NULL, &t);
  assert_int_equal(t, 0);
  assert_json(s,
              "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"type\":\"Opaque\","
              "\"metadata\":{\"name\":\"s\"},"
              "\"data\":{\"password\":\"(redacted)\",\"nested\":\"(redacted)\"},"
              "\"stringData\":{\"x\":\"(redacted)\"}}");
  assert_no_secret(s);
  json_decref(s);
  s = snap_lim("{\"kind\":\"Secret\",\"data\":\"R09ORQ==\"}", NULL, NULL, NULL);
  assert_json(s, "{\"kind\":\"Secret\",\"data\":\"(redacted)\"}");
  json_decref(s);
}

/* ---- redaction patterns ------------------------------------------------ */

static void test_pattern_check(void **state) {
  (void)state;
  char err[256];
  const char *good[] = {"/spec", "/a/*/b", "/*", "/a~0b/~1c", "/0/1", "/metadata/labels/x.io~1y"};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++)
    assert_int_equal(wdiff_pattern_check(good[i], err, sizeof err), RIPPLE_OK);
  struct {
    const char *p, *why;
  } bad[] = {
      {"", "empty"},
      {"spec", "must start with \"/\""},
      {"/", "empty segment"},
      {"/a//b", "empty segment"},
      {"/a/", "empty segment"},
      {"/a~2", "\"~\" must be followed by 0"},
      {"/a~", "\"~\" must be followed by 0"},
      {"/a~/b", "\"~\" must be followed by 0"},
      {"/a*", "whole segment"},
      {"/*a/b", "whole segment"},
      {"/**", "whole segment"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    err[0] = '\0';
    assert_int_equal(wdiff_pattern_check(bad[i].p, err, sizeof err), RIPPLE_EINVAL);
    if (!strstr(err, bad[i].why)) fail_msg("pattern \"%s\": message \"%s\"", bad[i].p, err);
  }
  assert_int_equal(wdiff_pattern_check(NULL, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "empty"));
  assert_int_equal(wdiff_pattern_check("x", NULL, 0), RIPPLE_EINVAL);
  assert_int_equal(wdiff_pattern_check("x", err, 1), RIPPLE_EINVAL);
  assert_string_equal(err, "");
  /* 64 segments and 512 bytes are the most. */
  char p[1024] = "";
  for (int i = 0; i < 65; i++) memcpy(p + 2 * i, "/a", 3);
  p[128] = '\0';
  assert_int_equal(wdiff_pattern_check(p, err, sizeof err), RIPPLE_OK);
  p[128] = '/';
  assert_int_equal(wdiff_pattern_check(p, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "more than 64 segments"));
  memset(p, 'x', 512);
  p[0] = '/', p[512] = '\0';
  assert_int_equal(wdiff_pattern_check(p, err, sizeof err), RIPPLE_OK);
  p[512] = 'x', p[513] = '\0';
  assert_int_equal(wdiff_pattern_check(p, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "513 bytes; at most 512"));
}

static void test_patterns(void **state) {
  (void)state;
  wdiff_redact_t r = {.pattern = {"/spec/template/spec/containers/*/env/*/value", "/spec/secretRef",
                                  "/metadata/labels/x.io~1token", "/*/token", "/items/1"},
                      .n = 5};
  /* One entry per matched path, at the pattern's end, whatever changed below. */
  check_diff(
      "{\"spec\":{\"template\":{\"spec\":{\"containers\":["
      "{\"name\":\"app\",\"image\":\"a:1\",\"env\":[{\"name\":\"A\",\"value\":\"old-a\"},"
      "{\"name\":\"B\",\"value\":\"same\"}]},"
      "{\"name\":\"side\",\"env\":[{\"name\":\"C\",\"value\":{\"x\":\"c1\"}}]}]}}}}",
      "{\"spec\":{\"template\":{\"spec\":{\"containers\":["
      "{\"name\":\"app\",\"image\":\"a:2\",\"env\":[{\"name\":\"A\",\"value\":\"new-a\"},"
      "{\"name\":\"B\",\"value\":\"same\"}]},"
      "{\"name\":\"side\",\"env\":[{\"name\":\"C\",\"value\":{\"x\":\"c2\"}},"
      "{\"name\":\"D\",\"value\":\"new-d\"}]}]}}}}",
      &r,
      "[{\"path\":\"/spec/template/spec/containers/0/env/0/value\",\"redacted\":true},"
      "{\"path\":\"/spec/template/spec/containers/0/image\",\"old\":\"a:1\","
      "\"new\":\"a:2\"},"
      "{\"path\":\"/spec/template/spec/containers/1/env/0/value\",\"redacted\":true},"
      "{\"path\":\"/spec/template/spec/containers/1/env/1\","
      "\"new\":{\"name\":\"D\",\"value\":\"(redacted)\"}}]");
  check_diff("{\"spec\":{\"secretRef\":{\"a\":{\"b\":1},\"c\":[2]},\"x\":1}}",
             "{\"spec\":{\"secretRef\":{\"a\":{\"b\":2},\"c\":[3,4]},\"x\":1}}", &r,
             "[{\"path\":\"/spec/secretRef\",\"redacted\":true}]");
  check_diff("{\"spec\":{\"secretRef\":{\"a\":1}}}", "{\"spec\":{\"secretRef\":{\"a\":1}}}", &r,
             "[]");
  check_diff("{\"spec\":{\"secretRef\":\"s1\"}}", "{\"spec\":{}}", &r,
             "[{\"path\":\"/spec/secretRef\",\"redacted\":true}]");
  check_diff("{\"spec\":{}}", "{\"spec\":{\"secretRef\":{\"a\":1}}}", &r,
             "[{\"path\":\"/spec/secretRef\",\"redacted\":true}]");
  /* Escaped keys, "*" at the top, array indexes. */
  check_diff(
      "{\"metadata\":{\"labels\":{\"x.io/token\":\"t1\",\"x.io/other\":\"o1\"}},"
      "\"spec\":{\"token\":\"t1\"},\"status\":{\"token\":[1]},\"items\":[1,2,3]}",
      "{\"metadata\":{\"labels\":{\"x.io/token\":\"t2\",\"x.io/other\":\"o2\"}},"
      "\"spec\":{\"token\":\"t2\"},\"status\":{\"token\":[2]},\"items\":[2,3,4]}",
      &r,
      "[{\"path\":\"/items/0\",\"old\":1,\"new\":2},{\"path\":\"/items/1\",\"redacted\":true},"
      "{\"path\":\"/items/2\",\"old\":3,\"new\":4},"
      "{\"path\":\"/metadata/labels/x.io~1other\",\"old\":\"o1\",\"new\":\"o2\"},"
      "{\"path\":\"/metadata/labels/x.io~1token\",\"redacted\":true},"
      "{\"path\":\"/spec/token\",\"redacted\":true},"
      "{\"path\":\"/status/token\",\"redacted\":true}]");
  /* Snapshots show "(redacted)" where a pattern matched. */
  json_t *s = snap_lim(
      "{\"spec\":{\"secretRef\":{\"a\":1},\"token\":\"t\",\"keep\":1},"
      "\"items\":[1,{\"x\":2},3]}",
      &r, NULL, NULL);
  assert_json(s,
              "{\"spec\":{\"secretRef\":\"(redacted)\",\"token\":\"(redacted)\",\"keep\":1},"
              "\"items\":[1,\"(redacted)\",3]}");
  json_decref(s);
}

static void test_bad_arguments(void **state) {
  (void)state;
  json_t *o = J("{}"), *arr = J("[]"), *out = (json_t *)&out;
  int t = 7;
  assert_int_equal(wdiff_diff(NULL, o, NULL, NULL, &out, &t), RIPPLE_EINVAL);
  assert_int_equal(wdiff_diff(o, NULL, NULL, NULL, &out, &t), RIPPLE_EINVAL);
  assert_int_equal(wdiff_diff(o, arr, NULL, NULL, &out, &t), RIPPLE_EINVAL);
  assert_int_equal(wdiff_diff(arr, o, NULL, NULL, &out, &t), RIPPLE_EINVAL);
  assert_int_equal(wdiff_diff(o, o, NULL, NULL, NULL, &t), RIPPLE_EINVAL);
  assert_int_equal(wdiff_snapshot(arr, NULL, NULL, &out, &t), RIPPLE_EINVAL);
  assert_int_equal(wdiff_snapshot(NULL, NULL, NULL, &out, &t), RIPPLE_EINVAL);
  assert_int_equal(wdiff_snapshot(o, NULL, NULL, NULL, &t), RIPPLE_EINVAL);
  wdiff_redact_t r = {.pattern = {"/ok", "nope"}, .n = 2};
  assert_int_equal(wdiff_diff(o, o, &r, NULL, &out, &t), RIPPLE_EINVAL);
  assert_int_equal(wdiff_snapshot(o, &r, NULL, &out, &t), RIPPLE_EINVAL);
  r.pattern[1] = NULL;
  assert_int_equal(wdiff_diff(o, o, &r, NULL, &out, &t), RIPPLE_EINVAL);
  r.n = WDIFF_REDACT_MAX + 1;
  assert_int_equal(wdiff_diff(o, o, &r, NULL, &out, &t), RIPPLE_EINVAL);
  /* Outputs are written only on success. */
  assert_ptr_equal(out, (json_t *)&out);
  assert_int_equal(t, 7);
  /* All 64 patterns in use; truncated may be NULL. */
  for (size_t i = 0; i < WDIFF_REDACT_MAX; i++) r.pattern[i] = i == 63 ? "/last" : "/other";
  r.n = WDIFF_REDACT_MAX;
  json_t *b = J("{\"last\":1,\"x\":2}");
  assert_int_equal(wdiff_diff(o, b, &r, NULL, &out, NULL), RIPPLE_OK);
  assert_json(out, "[{\"path\":\"/last\",\"redacted\":true},{\"path\":\"/x\",\"new\":2}]");
  json_decref(out);
  assert_int_equal(wdiff_snapshot(b, &r, NULL, &out, NULL), RIPPLE_OK);
  assert_json(out, "{\"last\":\"(redacted)\",\"x\":2}");
  json_decref(out);
  json_decref(b);
  json_decref(o);
  json_decref(arr);
}

/* ---- limits ------------------------------------------------------------ */

static void test_max_changes(void **state) {
  (void)state;
  json_t *a = json_object(), *b = json_object(), *out;
  for (int i = 0; i < 300; i++) {
    char k[16];
    snprintf(k, sizeof k, "k%03d", i);
    json_object_set_new(a, k, json_integer(i));
    json_object_set_new(b, k, json_integer(i + 1));
  }
  int t = -1;
  assert_int_equal(wdiff_diff(a, b, NULL, NULL, &out, &t), RIPPLE_OK);
  assert_int_equal(json_array_size(out), 256);
  assert_int_equal(t, 1);
  /* The first ones in path order are kept. */
  assert_string_equal(json_string_value(json_object_get(json_array_get(out, 0), "path")), "/k000");
  assert_string_equal(json_string_value(json_object_get(json_array_get(out, 255), "path")),
                      "/k255");
  json_decref(out);
  wdiff_limits_t lim = {.max_changes = 300};
  assert_int_equal(wdiff_diff(a, b, NULL, &lim, &out, &t), RIPPLE_OK);
  assert_int_equal(json_array_size(out), 300);
  assert_int_equal(t, 0);
  json_decref(out);
  lim.max_changes = 299;
  assert_int_equal(wdiff_diff(a, b, NULL, &lim, &out, &t), RIPPLE_OK);
  assert_int_equal(json_array_size(out), 299);
  assert_int_equal(t, 1);
  json_decref(out);
  json_decref(a);
  json_decref(b);
  /* Array indexes are cut in numeric order too; redacted entries count. */
  wdiff_redact_t r = {.pattern = {"/l/1"}, .n = 1};
  lim.max_changes = 3;
  out = diff_lim("{\"l\":[0,0,0,0,0,0,0,0,0,0,0,0]}", "{\"l\":[1,1,1,1,1,1,1,1,1,1,1,1]}", &r, &lim,
                 &t);
  assert_json(out,
              "[{\"path\":\"/l/0\",\"old\":0,\"new\":1},{\"path\":\"/l/1\",\"redacted\":true},"
              "{\"path\":\"/l/2\",\"old\":0,\"new\":1}]");
  assert_int_equal(t, 1);
  json_decref(out);
}

static void test_max_value(void **state) {
  (void)state;
  char *big = malloc(3000), *doc = malloc(3100);
  memset(big, 'x', 2000);
  big[2000] = '\0';
  snprintf(doc, 3100, "{\"v\":\"%s\",\"w\":1}", big);
  /* 2002 bytes with the quotes: past the default 1024. */
  check_diff(doc, "{\"w\":1}", NULL, "[{\"path\":\"/v\",\"old\":{\"truncated\":2002}}]");
  wdiff_limits_t lim = {.max_value = 2002};
  json_t *out = diff_lim(doc, "{\"w\":1}", NULL, &lim, NULL);
  assert_string_equal(json_string_value(json_object_get(json_array_get(out, 0), "old")), big);
  json_decref(out);
  lim.max_value = 2001;
  out = diff_lim(doc, "{\"w\":1}", NULL, &lim, NULL);
  assert_json(out, "[{\"path\":\"/v\",\"old\":{\"truncated\":2002}}]");
  json_decref(out);
  /* A whole object added is cut as one value; the size is its compact text's. */
  const char *obj =
      "{\"s\":\"\\u00e9\\\"\\\\\\n\\t\\u0001\\u007f/\",\"r\":[1.5,-2,1e300,true,null],"
      "\"o\":{\"k\\n\":{}},\"e\":[]}";
  json_t *v = J(obj);
  char *vt = text_of(v);
  char want[128];
  snprintf(want, sizeof want, "[{\"path\":\"/a\",\"new\":{\"truncated\":%zu}}]", strlen(vt));
  char *with = malloc(strlen(obj) + 16);
  sprintf(with, "{\"a\":%s}", obj);
  lim.max_value = strlen(vt) - 1;
  out = diff_lim("{}", with, NULL, &lim, NULL);
  assert_json(out, want);
  json_decref(out);
  lim.max_value = strlen(vt);
  out = diff_lim("{}", with, NULL, &lim, NULL);
  assert_true(json_equal(json_object_get(json_array_get(out, 0), "new"), v));
  json_decref(out);
  /* Every leaf cut, to check each scalar's size. */
  lim.max_value = 1;
  json_t *s = snap_lim(obj, NULL, &lim, NULL);
  const char *key;
  json_t *x;
  json_object_foreach(v, key, x) {
    if (!json_is_array(x)) continue;
    for (size_t i = 0; i < json_array_size(x); i++) {
      char *xt = text_of(json_array_get(x, i));
      json_t *got = json_array_get(json_object_get(s, key), i);
      if (strlen(xt) > 1)
        assert_int_equal(json_integer_value(json_object_get(got, "truncated")), strlen(xt));
      free(xt);
    }
  }
  char *st = text_of(json_object_get(v, "s"));
  assert_int_equal(json_integer_value(json_object_get(json_object_get(s, "s"), "truncated")),
                   strlen(st));
  free(st);
  json_decref(s);
  json_decref(v);
  free(vt);
  free(with);
  free(big);
  free(doc);
}

static void test_snapshot_limits(void **state) {
  (void)state;
  json_t *o =
      J("{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"big\",\"resourceVersion\":\"3\","
        "\"managedFields\":[{\"m\":1}],\"annotations\":{\"cpid.ripple.dev/ctx\":\"1;x\"}},"
        "\"data\":{}}");
  json_t *data = json_object_get(o, "data"), *out;
  char k[16], val[1001];
  memset(val, 'v', 1000);
  val[1000] = '\0';
  for (int i = 0; i < 100; i++) {
    snprintf(k, sizeof k, "key%d", i);
    json_object_set_new(data, k, json_string(val));
  }
  int t = -1;
  assert_int_equal(wdiff_snapshot(o, NULL, NULL, &out, &t), RIPPLE_OK);
  assert_int_equal(t, 1);
  assert_json(out, "{\"metadata\":{\"name\":\"big\",\"annotations\":{}}}");
  json_decref(out);
  wdiff_limits_t lim = {.max_snapshot = 200000};
  assert_int_equal(wdiff_snapshot(o, NULL, &lim, &out, &t), RIPPLE_OK);
  assert_int_equal(t, 0);
  assert_int_equal(json_object_size(json_object_get(out, "data")), 100);
  assert_null(json_object_get(json_object_get(out, "metadata"), "managedFields"));
  json_decref(out);
  /* Leaves longer than max_value are cut, so the same object fits. */
  lim = (wdiff_limits_t){.max_value = 100};
  assert_int_equal(wdiff_snapshot(o, NULL, &lim, &out, &t), RIPPLE_OK);
  assert_int_equal(t, 0);
  assert_int_equal(json_integer_value(json_object_get(
                       json_object_get(json_object_get(out, "data"), "key7"), "truncated")),
                   1002);
  json_decref(out);
  /* Without metadata, what is left is empty. */
  json_object_del(o, "metadata");
  assert_int_equal(wdiff_snapshot(o, NULL, NULL, &out, &t), RIPPLE_OK);
  assert_int_equal(t, 1);
  assert_json(out, "{}");
  json_decref(out);
  json_decref(o);
}

/* ---- hostile nesting --------------------------------------------------- */

#define DEEP 10000

/* n levels of {"a": ...} (or [...]) around leaf. */
static json_t *chain(int n, json_t *leaf, int arrays) {
  json_t *v = leaf;
  for (int i = 0; i < n; i++) {
    json_t *c = arrays ? json_array() : json_object();
    if (arrays)
      json_array_append_new(c, v);
    else
      json_object_set_new(c, "a", v);
    v = c;
  }
  return v;
}

/* Freed from the top, one level at a time: jansson's free recurses. */
static void free_chain(json_t *v) {
  while (v) {
    json_t *c = NULL;
    if (json_is_object(v) && json_object_size(v) == 1)
      c = json_object_iter_value(json_object_iter(v));
    if (json_is_array(v) && json_array_size(v) == 1) c = json_array_get(v, 0);
    if (!json_is_object(c) && !json_is_array(c)) c = NULL;
    json_incref(c);
    json_decref(v);
    v = c;
  }
}

static void free_deep(json_t *d) {
  json_t *spec = json_incref(json_object_get(d, "spec"));
  json_decref(d);
  free_chain(spec);
}

static json_t *deep_doc(int n, int leaf, int arrays) {
  json_t *d = json_object();
  json_object_set_new(d, "kind", json_string("Deep"));
  json_object_set_new(d, "spec", chain(n, json_integer(leaf), arrays));
  return d;
}

/* From level 1 of a chain to level 64. */
static json_t *down(json_t *v, int arrays) {
  for (int i = 0; i < 63; i++) v = arrays ? json_array_get(v, 0) : json_object_get(v, "a");
  return v;
}

static void check_deep(int arrays) {
  json_t *a = deep_doc(DEEP, 1, arrays), *b = deep_doc(DEEP, 2, arrays),
         *c = deep_doc(DEEP, 1, arrays);
  json_t *out;
  /* One entry 64 levels down; below, the levels left are too deep to copy:
   * /spec is level 1, so level 64 holds DEEP - 63 levels of 6 (or 2) bytes. */
  assert_int_equal(wdiff_diff(a, b, NULL, NULL, &out, NULL), RIPPLE_OK);
  assert_int_equal(json_array_size(out), 1);
  json_t *e = json_array_get(out, 0);
  char want[512] = "/spec";
  for (int i = 0; i < 63; i++) memcpy(want + 5 + 2 * i, arrays ? "/0" : "/a", 3);
  assert_string_equal(json_string_value(json_object_get(e, "path")), want);
  json_int_t size = (json_int_t)(DEEP - 63) * (arrays ? 2 : 6) + 1;
  assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "old"), "truncated")),
                   size);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "new"), "truncated")),
                   size);
  json_decref(out);
  /* Equal however deep. */
  assert_int_equal(wdiff_diff(a, c, NULL, NULL, &out, NULL), RIPPLE_OK);
  assert_int_equal(json_array_size(out), 0);
  json_decref(out);
  /* Deep against shallow: one entry at the top, its old value copied down
   * to level 64 like everything else, and cut there. */
  json_t *s = J("{\"kind\":\"Deep\",\"spec\":5}");
  assert_int_equal(wdiff_diff(a, s, NULL, NULL, &out, NULL), RIPPLE_OK);
  assert_int_equal(json_array_size(out), 1);
  e = json_array_get(out, 0);
  assert_string_equal(json_string_value(json_object_get(e, "path")), "/spec");
  assert_int_equal(json_integer_value(json_object_get(e, "new")), 5);
  assert_int_equal(
      json_integer_value(json_object_get(down(json_object_get(e, "old"), arrays), "truncated")),
      size);
  json_decref(out);
  json_decref(s);
  /* A snapshot copies 64 levels and cuts what is below. */
  int t = -1;
  assert_int_equal(wdiff_snapshot(a, NULL, NULL, &out, &t), RIPPLE_OK);
  assert_int_equal(t, 0);
  assert_int_equal(
      json_integer_value(json_object_get(down(json_object_get(out, "spec"), arrays), "truncated")),
      size);
  json_decref(out);
  free_deep(a);
  free_deep(b);
  free_deep(c);
}

static void test_deep(void **state) {
  (void)state;
  check_deep(0);
  check_deep(1);
  /* A value below level 64 that nests shallowly is copied whole. */
  json_t *a = deep_doc(70, 1, 0), *b = deep_doc(70, 2, 0), *out;
  assert_int_equal(wdiff_diff(a, b, NULL, NULL, &out, NULL), RIPPLE_OK);
  assert_int_equal(json_array_size(out), 1);
  json_t *e = json_array_get(out, 0), *want = chain(7, json_integer(1), 0);
  assert_true(json_equal(json_object_get(e, "old"), want));
  assert_int_equal(strlen(json_string_value(json_object_get(e, "path"))), 5 + 63 * 2);
  json_decref(want);
  json_decref(out);
  json_decref(a);
  json_decref(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_identical),
      cmocka_unit_test(test_added_removed_changed),
      cmocka_unit_test(test_arrays),
      cmocka_unit_test(test_type_change),
      cmocka_unit_test(test_escaping),
      cmocka_unit_test(test_order),
      cmocka_unit_test(test_metadata_filtered),
      cmocka_unit_test(test_secret_diff),
      cmocka_unit_test(test_secret_snapshot),
      cmocka_unit_test(test_pattern_check),
      cmocka_unit_test(test_patterns),
      cmocka_unit_test(test_bad_arguments),
      cmocka_unit_test(test_max_changes),
      cmocka_unit_test(test_max_value),
      cmocka_unit_test(test_snapshot_limits),
      cmocka_unit_test(test_deep),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
