/*
 * test_run_expect.c - an expected cascade without a cluster: the expect:
 * section of a scenario read and refused when malformed, the hops of a
 * trace as kubectl-ripple's `trace -o json` writes it, and their comparison
 * (ok, missing, extra, count, over budget). The fixtures are a scenario
 * kubectl ripple export-test wrote from a recorded scale and that scale's
 * trace as `trace -o json` (tests/kubectl/test_kubectl_export.c checks
 * they are what kubectl-ripple writes): the one must pass against the other.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expect.h"
#include "testutil.h"

#define FIXTURES RIPPLE_TEST_SOURCE_DIR "/fixtures/"

/* The scenario text as ripple run reads it: loaded, expanded for run 1,
 * its expect: parsed. */
static int load_expect(const char *text, const char *const *sets, xp_t *x, char *err, size_t cap) {
  char dir[] = "/tmp/ripple-run-expect-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const char *path = test_path(dir, "s.yaml");
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  scn_t s;
  json_t *doc = NULL;
  int rc = scn_load(path, &s, err, cap);
  for (size_t i = 0; rc == RIPPLE_OK && sets && sets[i]; i++) rc = scn_set(&s, sets[i], err, cap);
  if (rc == RIPPLE_OK) rc = scn_expand(&s, 1, &doc, err, cap);
  if (rc == RIPPLE_OK) rc = xp_parse(json_object_get(doc, "expect"), x, err, cap);
  json_decref(doc);
  scn_free(&s);
  unlink(path);
  rmdir(dir);
  return rc;
}

static xp_seen_t *tree_hops(size_t *n) {
  json_t *tree = json_load_file(FIXTURES "trace-scale.tree.json", 0, NULL);
  assert_non_null(tree);
  xp_seen_t *h = NULL;
  char err[256];
  assert_int_equal(xp_seen_from_trace(tree, &h, n, err, sizeof err), RIPPLE_OK);
  json_decref(tree);
  return h;
}

/* The trace's hops as export-test counts them. */
static void test_trace_hops(void **state) {
  (void)state;
  size_t n = 0;
  xp_seen_t *h = tree_hops(&n);
  assert_int_equal(n, 5); /* rs update, pod creates, bindings, pod status, deployment status */
  assert_string_equal(h[2].writer, "kube-scheduler");
  assert_string_equal(h[2].write, "create pods/binding");
  assert_string_equal(h[2].kind, "Pod");
  assert_int_equal(h[2].count, 2);
  assert_int_equal(h[2].last_ns, 160000000LL); /* from the change */
  free(h);
  static const char *const bad[] = {
      "{}",
      "{\"tree\": 3}",
      "{\"tree\": [{\"component\": \"a\"}]}",
      ("{\"tree\": [{\"component\": \"a\", \"write\": \"w\", \"kind\": \"K\", "
       "\"cause\": 5, \"at_ns\": 1, \"children\": []}]}"),
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    json_t *j = json_loads(bad[i], 0, NULL);
    char err[256];
    assert_int_equal(xp_seen_from_trace(j, &h, &n, err, sizeof err), RIPPLE_EJSON);
    json_decref(j);
  }
}

/* export-test's scenario, read as ripple run reads it, passes against the
 * trace it came from. */
static void test_exported_passes(void **state) {
  (void)state;
  FILE *f = fopen(FIXTURES "scale-web.yaml", "r");
  assert_non_null(f);
  char text[16384];
  size_t len = fread(text, 1, sizeof text - 1, f);
  text[len] = '\0';
  fclose(f);
  xp_t x;
  char err[512];
  int rc = load_expect(text, NULL, &x, err, sizeof err);
  if (rc != RIPPLE_OK) fail_msg("%s\n%s", err, text);
  assert_int_equal(x.n, 5);
  assert_int_equal(
      json_integer_value(json_object_get(json_object_get(x.change, "scale"), "replicas")), 4);
  size_t n = 0;
  xp_seen_t *h = tree_hops(&n);
  xp_row_t *rows = NULL;
  size_t nrows = 0;
  assert_int_equal(xp_compare(&x, h, n, &rows, &nrows), 0);
  assert_int_equal(nrows, 5);
  /* and fails without the bindings */
  free(rows);
  h[2] = h[--n];
  assert_int_equal(xp_compare(&x, h, n, &rows, &nrows), 1);
  assert_int_equal(rows[2].verdict, XP_MISSING);
  assert_string_equal(rows[2].write, "create pods/binding");
  free(rows);
  free(h);
  xp_free(&x);
}

/* Without the watch's details export-test cannot know the change: ripple run
 * refuses the scenario until the patch is set. */
static void test_exported_unknown(void **state) {
  (void)state;
  FILE *f = fopen(FIXTURES "change-web.yaml", "r");
  assert_non_null(f);
  char text[16384];
  size_t len = fread(text, 1, sizeof text - 1, f);
  text[len] = '\0';
  fclose(f);
  xp_t x;
  char err[512];
  assert_int_equal(load_expect(text, NULL, &x, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "${patch}: no such parameter"));
  const char *sets[] = {"patch={\"spec\":{\"replicas\":4}}", NULL};
  assert_int_equal(load_expect(text, sets, &x, err, sizeof err), RIPPLE_OK);
  const json_t *p = json_object_get(json_object_get(x.change, "patch"), "patch");
  assert_int_equal(json_integer_value(json_object_get(json_object_get(p, "spec"), "replicas")), 4);
  xp_free(&x);
}

/* The shipped example is a scenario ripple run takes. */
static void test_shipped_example(void **state) {
  (void)state;
  scn_t s;
  json_t *doc = NULL;
  xp_t x;
  char err[512];
  assert_int_equal(
      scn_load(RIPPLE_TEST_SOURCE_DIR "/../../scenarios/expect-scale.yaml", &s, err, sizeof err),
      RIPPLE_OK);
  assert_int_equal(scn_expand(&s, 1, &doc, err, sizeof err), RIPPLE_OK);
  int rc = xp_parse(json_object_get(doc, "expect"), &x, err, sizeof err);
  if (rc != RIPPLE_OK) fail_msg("%s", err);
  assert_int_equal(x.n, 6);
  assert_string_equal(x.hops[2].write, "create pods/binding");
  xp_free(&x);
  json_decref(doc);
  scn_free(&s);
}

/* ---- the comparison ------------------------------------------------------------------ */

static const char *const expect_yaml =
    "name: t\n"
    "steps: []\n"
    "expect:\n"
    "  change: {scale: {resource: deployments, name: web, replicas: 4}}\n"
    "  hops:\n"
    "    - {writer: rs, write: create pods, kind: Pod, count: 2, budget_ms: 1000}\n"
    "    - {writer: sched, write: create pods/binding, kind: Pod, count: 2, budget_ms: 2000}\n"
    "    - {writer: kwok, write: update pods/status, min: 1, max: 4}\n";

/* The rows borrow the expectation's strings: x is freed by the caller. */
static size_t compare(xp_t *x, const xp_seen_t *seen, size_t n, xp_row_t **rows, size_t *nrows) {
  char err[256];
  xp_free(x);
  assert_int_equal(load_expect(expect_yaml, NULL, x, err, sizeof err), RIPPLE_OK);
  return xp_compare(x, seen, n, rows, nrows);
}

static void test_compare(void **state) {
  (void)state;
  xp_seen_t ok[] = {{"rs", "create pods", "Pod", 2, 900000000LL},
                    {"sched", "create pods/binding", "Pod", 2, 1500000000LL},
                    {"kwok", "update pods/status", "Pod", 3, 2500000000LL}};
  xp_row_t *r = NULL;
  size_t n = 0;
  xp_t x = {0};
  assert_int_equal(compare(&x, ok, 3, &r, &n), 0);
  assert_int_equal(n, 3);
  free(r);
  /* The scheduler stopped: no bindings, and the Pods' status never written. */
  assert_int_equal(compare(&x, ok, 1, &r, &n), 2);
  assert_int_equal(r[1].verdict, XP_MISSING);
  assert_string_equal(r[1].write, "create pods/binding");
  assert_int_equal(r[2].verdict, XP_MISSING);
  free(r);
  /* Slowed: bindings late; one Pod too many; an extra writer. */
  xp_seen_t bad[] = {{"rs", "create pods", "Pod", 3, 900000000LL},
                     {"sched", "create pods/binding", "Pod", 2, 2000000001LL},
                     {"kwok", "update pods/status", "Pod", 1, 1},
                     {"hpa", "update deployments/scale", "Deployment", 1, 5}};
  assert_int_equal(compare(&x, bad, 4, &r, &n), 3);
  assert_int_equal(n, 4);
  assert_int_equal(r[0].verdict, XP_COUNT);
  assert_int_equal(r[1].verdict, XP_SLOW);
  assert_int_equal(r[2].verdict, XP_OK);
  assert_int_equal(r[3].verdict, XP_EXTRA);
  assert_string_equal(r[3].writer, "hpa");
  char *out = NULL, *errs = NULL;
  size_t ol = 0, el = 0;
  FILE *f = open_memstream(&out, &ol), *e = open_memstream(&errs, &el);
  xp_render(f, e, r, n);
  fclose(f);
  fclose(e);
  assert_non_null(strstr(errs, "hop differs: create pods/binding by sched (Pod): over budget"));
  if (!strstr(errs, "hop differs: create pods by rs (Pod): count 3, expected 2"))
    fail_msg("%s", errs);
  assert_non_null(strstr(errs, "hop differs: update deployments/scale by hpa (Deployment): extra"));
  if (!strstr(errs, "count 3, expected 2")) fail_msg("%s", errs);
  assert_null(strstr(errs, "kwok"));
  free(out);
  free(errs);
  free(r);
  xp_free(&x);
}

static void test_parse_refuses(void **state) {
  (void)state;
  static const char *const bads[][2] = {
      {"  hops: []\n", "'change' is missing"},
      {"  change: {sleep: 1s}\n  hops: []\n", "scale, patch, apply or delete"},
      {"  change: {scale: {resource: d, name: w, replicas: 1}}\n", "'hops' must be a list"},
      {"  change: {scale: {resource: d, name: w, replicas: 1}}\n  hops: [{writer: a}]\n",
       "needs 'writer' and 'write'"},
      {"  change: {scale: {resource: d, name: w, replicas: 1}}\n"
       "  hops: [{writer: a, write: b, count: 2, min: 1}]\n",
       "'count'"},
      {"  change: {scale: {resource: d, name: w, replicas: 1}}\n"
       "  hops: [{writer: a, write: b, min: 3, max: 2}]\n",
       "min <= max"},
      {"  change: {scale: {resource: d, name: w, replicas: 1}}\n"
       "  hops: [{writer: a, write: b, budget_ms: -1}]\n",
       "'budget_ms'"},
      {"  change: {scale: {resource: d, name: w, replicas: 1}}\n"
       "  hops: [{writer: a, write: b}, {writer: a, write: b}]\n",
       "the same writer"},
      {"  change: {scale: {resource: d, name: w, replicas: 1}}\n  hops: []\n  extra: maybe\n",
       "'extra'"},
      {"  change: {scale: {resource: d, name: w, replicas: 1}}\n  hops: []\n  timeout: soon\n",
       "'timeout'"},
  };
  for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
    char text[1024], err[512] = "";
    snprintf(text, sizeof text, "name: t\nsteps: []\nexpect:\n%s", bads[i][0]);
    xp_t x;
    assert_int_equal(load_expect(text, NULL, &x, err, sizeof err), RIPPLE_EINVAL);
    if (!strstr(err, bads[i][1]))
      fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err, bads[i][1]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_trace_hops),       cmocka_unit_test(test_exported_passes),
      cmocka_unit_test(test_compare),          cmocka_unit_test(test_parse_refuses),
      cmocka_unit_test(test_exported_unknown), cmocka_unit_test(test_shipped_example),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
