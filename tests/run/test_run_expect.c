/*
 * test_run_expect.c - a cascade kept as a test, without a cluster: the
 * expect: section of a scenario read and refused when malformed, the
 * comparison of a replay's hops with it (ok, missing, extra, count, over
 * budget), and kubectl ripple export-test's scenario from a recorded trace
 * (tests/run/fixtures/trace-scale.json: a Deployment scaled from 2 to 4 as
 * the trace server answers it), which ripple run must accept and which must
 * pass against the very trace it came from.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expect.h"
#include "testutil.h"

#define FIXTURE RIPPLE_TEST_SOURCE_DIR "/fixtures/trace-scale.json"

/* The fixture's trace; with_details 0 leaves the watch's details out. */
static void load_trace(kr_trace_t *t, int with_details) {
  json_t *in = json_load_file(FIXTURE, 0, NULL);
  assert_non_null(in);
  kr_answers_t a = {json_incref(json_array_get(in, 0)), json_incref(json_array_get(in, 1)),
                    json_incref(json_array_get(in, 2)),
                    with_details ? json_incref(json_array_get(in, 3)) : NULL, NULL};
  json_decref(in);
  char err[256];
  assert_int_equal(kr_trace_build(&a, t, err, sizeof err), RIPPLE_OK);
  kr_answers_free(&a);
}

static char *export_text(const kr_trace_t *t, const kr_export_opts_t *o) {
  char *text = NULL, err[256];
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  assert_int_equal(kr_export_scenario(t, o, f, err, sizeof err), RIPPLE_OK);
  fclose(f);
  return text;
}

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

static void test_hops(void **state) {
  (void)state;
  kr_trace_t t;
  load_trace(&t, 1);
  kr_xhop_t *h = NULL;
  size_t n = 0;
  assert_int_equal(kr_xhops(&t, &h, &n), RIPPLE_OK);
  assert_int_equal(n, 5); /* rs update, pod creates, bindings, pod status, deployment status */
  assert_string_equal(h[2].writer, "kube-scheduler");
  assert_string_equal(h[2].write, "create pods/binding");
  assert_string_equal(h[2].kind, "Pod");
  assert_int_equal(h[2].count, 2);
  assert_int_equal(h[2].last_ns, 160000000LL); /* from the change */
  assert_int_equal(h[2].max_cause_ns, 110000000LL);
  assert_int_equal(kr_xroot(&t), 0);
  free(h);
  kr_trace_free(&t);
}

static void test_export_scale(void **state) {
  (void)state;
  kr_trace_t t;
  load_trace(&t, 1);
  kr_export_opts_t o = {KR_EXPORT_MARGIN, KR_EXPORT_FLOOR_NS, "at http://x (--server)"};
  char *text = export_text(&t, &o);
  assert_non_null(strstr(text, "name: scale-web\n"));
  assert_non_null(strstr(text, "  namespace: \"demo\"\n  from: 2\n  to: 4\n"));
  assert_non_null(strstr(text, "scale: {resource: \"deployments\", name: \"web\", replicas: ${from}}"));
  assert_non_null(strstr(text, "until: \"status.readyReplicas == ${from}\""));
  assert_non_null(strstr(text, "    scale: {resource: \"deployments\", name: \"web\", replicas: ${to}}"));
  /* 160 ms * 2 + 1 s; exact for bindings, a range for status updates */
  assert_non_null(strstr(text, "{writer: \"kube-scheduler\", write: \"create pods/binding\", "
                               "kind: \"Pod\", count: 2, budget_ms: 1320}"));
  assert_non_null(strstr(text, "write: \"update pods/status\", kind: \"Pod\", min: 1, max: 6, "
                               "budget_ms: 1640}"));
  assert_null(strstr(text, "FILL IN"));
  /* ripple run takes it, and it passes against the trace it came from */
  xp_t x;
  char err[512];
  int rc = load_expect(text, NULL, &x, err, sizeof err);
  if (rc != RIPPLE_OK) fail_msg("%s\n%s", err, text);
  assert_int_equal(x.n, 5);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(x.change, "scale"),
                                                      "replicas")),
                   4);
  kr_xhop_t *h = NULL;
  size_t n = 0;
  assert_int_equal(kr_xhops(&t, &h, &n), RIPPLE_OK);
  xp_row_t *rows = NULL;
  size_t nrows = 0;
  assert_int_equal(xp_compare(&x, h, n, &rows, &nrows), 0);
  assert_int_equal(nrows, 5);
  free(rows);
  free(h);
  xp_free(&x);
  /* A wider margin, a bigger budget. */
  assert_int_equal(kr_export_margin_parse("3+500ms", &o), RIPPLE_OK);
  free(text);
  text = export_text(&t, &o);
  assert_non_null(strstr(text, "count: 2, budget_ms: 980}")); /* 160 * 3 + 500 */
  free(text);
  kr_trace_free(&t);
}

/* Without the watch's details the change cannot be known: the scenario says
 * what to fill in, and ripple run refuses it until the patch is set. */
static void test_export_unknown(void **state) {
  (void)state;
  kr_trace_t t;
  load_trace(&t, 0);
  kr_export_opts_t o = {KR_EXPORT_MARGIN, KR_EXPORT_FLOOR_NS, NULL};
  char *text = export_text(&t, &o);
  assert_non_null(strstr(text, "# FILL IN: the change itself"));
  assert_non_null(strstr(text, "patch: ${patch}}"));
  xp_t x;
  char err[512];
  assert_int_equal(load_expect(text, NULL, &x, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "${patch}: no such parameter"));
  const char *sets[] = {"patch={\"spec\":{\"replicas\":4}}", NULL};
  assert_int_equal(load_expect(text, sets, &x, err, sizeof err), RIPPLE_OK);
  xp_free(&x);
  free(text);
  kr_trace_free(&t);
}

static void test_margin_parse(void **state) {
  (void)state;
  kr_export_opts_t o = {KR_EXPORT_MARGIN, KR_EXPORT_FLOOR_NS, NULL};
  assert_int_equal(kr_export_margin_parse("1.5", &o), RIPPLE_OK);
  assert_true(o.margin == 1.5 && o.floor_ns == KR_EXPORT_FLOOR_NS);
  assert_int_equal(kr_export_budget_ms(&o, 1000000), 1002); /* 1.5 ms rounded up + 1000 */
  static const char *const badv[] = {"", "0", "-1", "x", "2+", "2+x", "nan", "inf", "2s", NULL};
  for (const char *const *b = badv; *b; b++)
    assert_int_equal(kr_export_margin_parse(*b, &o), RIPPLE_EINVAL);
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
static size_t compare(xp_t *x, const kr_xhop_t *seen, size_t n, xp_row_t **rows, size_t *nrows) {
  char err[256];
  xp_free(x);
  assert_int_equal(load_expect(expect_yaml, NULL, x, err, sizeof err), RIPPLE_OK);
  return xp_compare(x, seen, n, rows, nrows);
}

static void test_compare(void **state) {
  (void)state;
  kr_xhop_t ok[] = {{"rs", "create pods", "Pod", 2, 900000000LL, 0},
                    {"sched", "create pods/binding", "Pod", 2, 1500000000LL, 0},
                    {"kwok", "update pods/status", "Pod", 3, 2500000000LL, 0}};
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
  kr_xhop_t bad[] = {{"rs", "create pods", "Pod", 3, 900000000LL, 0},
                     {"sched", "create pods/binding", "Pod", 2, 2000000001LL, 0},
                     {"kwok", "update pods/status", "Pod", 1, 1, 0},
                     {"hpa", "update deployments/scale", "Deployment", 1, 5, 0}};
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
  if (!strstr(errs, "hop differs: create pods by rs (Pod): count 3, expected 2")) fail_msg("%s", errs);
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
    if (!strstr(err, bads[i][1])) fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err, bads[i][1]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hops),         cmocka_unit_test(test_export_scale),
      cmocka_unit_test(test_export_unknown), cmocka_unit_test(test_margin_parse),
      cmocka_unit_test(test_compare),      cmocka_unit_test(test_parse_refuses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
