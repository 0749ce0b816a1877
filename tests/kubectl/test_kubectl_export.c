/*
 * test_kubectl_export.c - `kubectl ripple export-test` without a cluster:
 * the hops of a recorded trace (tests/kubectl/fixtures/trace-scale.json, a
 * Deployment scaled from 2 to 4 as the trace server answers it), the
 * scenario written from it (the change rebuilt from the watch's details,
 * the resets, counts and budgets), what it says without details, the margin
 * flag and the command line.
 *
 * The scenario and the trace as `trace -o json` shows it are also the
 * fixtures of ripple run's test (tests/run/fixtures/scale-web.yaml,
 * trace-scale.tree.json), which checks that the one passes against the
 * other: this test checks they are what kubectl-ripple writes today
 * (RIPPLE_FIXTURES_WRITE=1 rewrites them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ripplex/yjson.h"
#include "testutil.h"
#include "xtest.h"

#define FIXTURE RIPPLE_TEST_SOURCE_DIR "/fixtures/trace-scale.json"
#define RUN_FIXTURES RIPPLE_TEST_SOURCE_DIR "/../run/fixtures/"

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

/* Through a temporary file, not open_memstream: gcc -O2 takes the stream's
 * hold on a local's address for a dangling pointer (-Wdangling-pointer). */
static char *export_text(const kr_trace_t *t, const kr_export_opts_t *o) {
  char err[256];
  FILE *f = tmpfile();
  assert_non_null(f);
  assert_int_equal(kr_export_scenario(t, o, f, err, sizeof err), RIPPLE_OK);
  long n = ftell(f);
  assert_true(n >= 0);
  rewind(f);
  char *text = malloc((size_t)n + 1);
  assert_non_null(text);
  assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
  text[n] = '\0';
  fclose(f);
  return text;
}

/* The text without its comment lines (the header has the time). */
static char *uncommented(const char *text) {
  char *o = malloc(strlen(text) + 1), *q = o;
  assert_non_null(o);
  for (const char *p = text; *p;) {
    const char *eol = strchr(p, '\n');
    size_t n = eol ? (size_t)(eol - p) + 1 : strlen(p);
    if (*p != '#') memcpy(q, p, n), q += n;
    p += n;
  }
  *q = '\0';
  return o;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot read %s", path);
  char *buf = calloc(1, 1 << 16);
  assert_non_null(buf);
  size_t n = fread(buf, 1, (1 << 16) - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
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
  assert_non_null(
      strstr(text, "scale: {resource: \"deployments\", name: \"web\", replicas: ${from}}"));
  assert_non_null(strstr(text, "until: \"status.readyReplicas == ${from}\""));
  assert_non_null(
      strstr(text, "    scale: {resource: \"deployments\", name: \"web\", replicas: ${to}}"));
  /* 160 ms * 2 + 1 s; exact for bindings, a range for status updates */
  assert_non_null(strstr(text,
                         "{writer: \"kube-scheduler\", write: \"create pods/binding\", "
                         "kind: \"Pod\", count: 2, budget_ms: 1320}"));
  assert_non_null(strstr(text,
                         "write: \"update pods/status\", kind: \"Pod\", min: 1, max: 6, "
                         "budget_ms: 1640}"));
  assert_null(strstr(text, "FILL IN"));
  /* ripple run's fixtures are what is written today */
  char *mine = uncommented(text), *tree_text = NULL;
  json_t *tree = kr_trace_json(&t);
  assert_non_null(tree);
  if (getenv("RIPPLE_FIXTURES_WRITE")) {
    FILE *f = fopen(RUN_FIXTURES "scale-web.yaml", "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(json_dump_file(tree, RUN_FIXTURES "trace-scale.tree.json", JSON_INDENT(1)), 0);
  }
  char *theirs_text = slurp(RUN_FIXTURES "scale-web.yaml"), *theirs = uncommented(theirs_text);
  assert_string_equal(mine, theirs);
  json_t *tree_fixture = json_load_file(RUN_FIXTURES "trace-scale.tree.json", 0, NULL);
  assert_non_null(tree_fixture);
  /* the start is the change's time; the rest must be the same */
  assert_true(json_equal(tree, tree_fixture));
  json_decref(tree_fixture);
  json_decref(tree);
  free(tree_text);
  free(mine);
  free(theirs);
  free(theirs_text);
  /* A wider margin, a bigger budget. */
  assert_int_equal(kr_export_margin_parse("3+500ms", &o), RIPPLE_OK);
  free(text);
  text = export_text(&t, &o);
  assert_non_null(strstr(text, "count: 2, budget_ms: 980}")); /* 160 * 3 + 500 */
  free(text);
  kr_trace_free(&t);
}

static void test_export_unknown(void **state) {
  (void)state;
  kr_trace_t t;
  load_trace(&t, 0);
  kr_export_opts_t o = {KR_EXPORT_MARGIN, KR_EXPORT_FLOOR_NS, NULL};
  char *text = export_text(&t, &o);
  assert_non_null(strstr(text, "# FILL IN: the change itself"));
  assert_non_null(strstr(text, "patch: ${patch}}"));
  assert_non_null(strstr(text,
                         "steps:   # before the change, every repetition: the object as it "
                         "was\n  - sleep: 0s\n"));
  /* ripple run's fixture (it refuses it until the patch is set) */
  if (getenv("RIPPLE_FIXTURES_WRITE")) {
    FILE *f = fopen(RUN_FIXTURES "change-web.yaml", "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
  }
  char *theirs_text = slurp(RUN_FIXTURES "change-web.yaml"), *theirs = uncommented(theirs_text);
  char *mine = uncommented(text);
  assert_string_equal(mine, theirs);
  free(mine);
  free(theirs);
  free(theirs_text);
  free(text);
  kr_trace_free(&t);
}

/* A writer's name is anybody's text (the webhook ships up to 1024 bytes): it
 * stays one YAML string, whole, with "$" doubled for ripple run. */
static void test_export_hostile_names(void **state) {
  (void)state;
  json_t *in = json_load_file(FIXTURE, 0, NULL);
  assert_non_null(in);
  char name[1025];
  for (size_t i = 0; i < 1024; i++) name[i] = "a\"$\n{}:#"[i % 8];
  name[1024] = '\0';
  json_t *span = json_array_get(json_object_get(json_array_get(in, 2), "spans"), 4);
  json_object_set_new(span, "service", json_string(name));
  kr_answers_t a = {json_incref(json_array_get(in, 0)), json_incref(json_array_get(in, 1)),
                    json_incref(json_array_get(in, 2)), NULL, NULL};
  json_decref(in);
  kr_trace_t t;
  char err[256];
  assert_int_equal(kr_trace_build(&a, &t, err, sizeof err), RIPPLE_OK);
  kr_answers_free(&a);
  kr_export_opts_t o = {KR_EXPORT_MARGIN, KR_EXPORT_FLOOR_NS, "at\nhttp://x"};
  char *text = export_text(&t, &o);
  /* ripple run substitutes the parameter first (${patch}: the change is not known) */
  char *p = strstr(text, "${patch}");
  assert_non_null(p);
  for (size_t k = 0; k < 8; k++) p[k] = "{}      "[k]; /* as long as "${patch}" */
  json_t *docs = NULL;
  if (yjson_parse(text, strlen(text), &docs, err, sizeof err) != RIPPLE_OK)
    fail_msg("%s\n%s", err, text);
  json_t *hops = json_object_get(json_object_get(json_array_get(docs, 0), "expect"), "hops");
  char doubled[2100];
  size_t n = 0;
  for (const char *c = name; *c; c++) {
    if (*c == '$') doubled[n++] = '$';
    doubled[n++] = *c;
  }
  doubled[n] = '\0';
  int found = 0;
  size_t i;
  json_t *h;
  json_array_foreach(hops, i, h) {
    found += !strcmp(json_string_value(json_object_get(h, "writer")), doubled);
  }
  assert_int_equal(found, 1);
  json_decref(docs);
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

static void test_args(void **state) {
  (void)state;
  kr_args_t a;
  char err[256];
  char *ok[] = {
      "kubectl-ripple", "export-test", "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60", "-o", "t.yaml",
      "--margin=3+2s",  NULL};
  assert_int_equal(kr_args_parse(6, ok, &a, err, sizeof err), RIPPLE_OK);
  assert_int_equal(a.cmd, KR_CMD_EXPORT_TEST);
  assert_string_equal(a.cpid, "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60");
  assert_string_equal(a.output, "t.yaml");
  assert_string_equal(a.margin, "3+2s");
  char *no_cpid[] = {"kubectl-ripple", "export-test", NULL};
  assert_int_equal(kr_args_parse(2, no_cpid, &a, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "export-test needs a CPID"));
  char *trace_file[] = {"kubectl-ripple", "trace", "x", "-o", "t.yaml", NULL};
  assert_int_equal(kr_args_parse(5, trace_file, &a, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "-o must be json"));
  char *trace_margin[] = {"kubectl-ripple", "trace", "x", "--margin", "2", NULL};
  assert_int_equal(kr_args_parse(5, trace_margin, &a, err, sizeof err), RIPPLE_EINVAL);
  char *json[] = {"kubectl-ripple", "trace", "x", "-ojson", NULL};
  assert_int_equal(kr_args_parse(4, json, &a, err, sizeof err), RIPPLE_OK);
  assert_true(a.json);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hops),           cmocka_unit_test(test_export_scale),
      cmocka_unit_test(test_export_unknown), cmocka_unit_test(test_margin_parse),
      cmocka_unit_test(test_args),           cmocka_unit_test(test_export_hostile_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
