/*
 * test_run.c - ripple run's parts that need no cluster: scenarios with parameters and repetitions,
 * the checks that refuse a bad step before anything runs, and the process sampler.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"
#include "testutil.h"

static const char *write_file(const char *dir, const char *name, const char *text) {
  const char *path = test_path(dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return path;
}

static const char *scenario =
    "name: demo\n"
    "parameters: {N: 3, app: web}\n"
    "repetitions: 2\n"
    "steps:\n"
    "  - apply: m.yaml\n"
    "  - scale: {resource: deployments.apps, name: \"${app}\", replicas: ${N}}\n"
    "  - wait: {resource: pods, selector: app=${app}, until: count == ${N}, timeout: 1m}\n"
    "  - patch: {resource: deployments.apps, name: x, patch: {metadata: {labels: {run: "
    "\"${run}\"}}}}\n"
    "  - sleep: 10ms\n"
    "teardown:\n"
    "  - delete: {resource: deployments.apps, name: \"${app}\", ignoreNotFound: true}\n";

/* Parameter values are text as written: a real in its shortest form. */
static void test_param_values(void **state) {
  (void)state;
  char dir[] = "/tmp/ripple-run-unit-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const char *path = write_file(dir, "p.yaml",
                                "name: p\nparameters: {rate: 0.1, big: 1e3, yes: true}\n"
                                "steps:\n  - sleep: 10ms\n");
  scn_t s;
  char err[512] = "";
  assert_int_equal(scn_load(path, &s, err, sizeof err), RIPPLE_OK);
  assert_string_equal(json_string_value(json_object_get(s.params, "rate")), "0.1");
  assert_string_equal(json_string_value(json_object_get(s.params, "big")), "1000");
  assert_string_equal(json_string_value(json_object_get(s.params, "yes")), "true");
  scn_free(&s);
  path = write_file(dir, "n.yaml", "name: n\nparameters: {x: ~}\nsteps:\n  - sleep: 10ms\n");
  assert_int_equal(scn_load(path, &s, err, sizeof err), RIPPLE_EINVAL);
  test_rmtree(dir);
}

static void test_scenario_params_and_runs(void **state) {
  (void)state;
  char dir[] = "/tmp/ripple-run-unit-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const char *path = write_file(dir, "s.yaml", scenario);
  write_file(dir, "m.yaml", "kind: Deployment\nspec: {replicas: ${N}}\nnote: $${literal}\n");
  scn_t s;
  char err[512] = "";
  assert_int_equal(scn_load(path, &s, err, sizeof err), RIPPLE_OK);
  assert_string_equal(s.name, "demo");
  assert_int_equal(s.repetitions, 2);
  assert_string_equal(json_string_value(json_object_get(s.params, "N")), "3");
  assert_int_equal(scn_set(&s, "N=7", err, sizeof err), RIPPLE_OK);
  assert_int_equal(scn_set(&s, "run=1", err, sizeof err), RIPPLE_EINVAL); /* reserved */
  assert_int_equal(scn_set(&s, "no-equals", err, sizeof err), RIPPLE_EINVAL);
  json_t *doc = NULL;
  assert_int_equal(scn_expand(&s, 2, &doc, err, sizeof err), RIPPLE_OK);
  json_t *steps = json_object_get(doc, "steps");
  assert_int_equal(json_array_size(steps), 5);
  json_t *scale = json_object_get(json_array_get(steps, 1), "scale");
  assert_int_equal(json_integer_value(json_object_get(scale, "replicas")), 7);
  const char *run = json_string_value(json_object_get(
      json_object_get(
          json_object_get(
              json_object_get(json_object_get(json_array_get(steps, 3), "patch"), "patch"),
              "metadata"),
          "labels"),
      "run"));
  assert_string_equal(run, "2");
  char what[256];
  step_describe(json_array_get(steps, 1), what, sizeof what);
  assert_string_equal(what, "scale deployments.apps/web to 7");
  step_describe(json_array_get(steps, 2), what, sizeof what);
  assert_string_equal(what, "wait pods app=web until count == 7");
  json_decref(doc);
  char *text = NULL;
  size_t len = 0;
  assert_int_equal(scn_read_file(&s, 1, "m.yaml", &text, &len, err, sizeof err), RIPPLE_OK);
  assert_string_equal(text, "kind: Deployment\nspec: {replicas: 7}\nnote: ${literal}\n");
  free(text);
  assert_int_equal(scn_read_file(&s, 1, "missing.yaml", &text, &len, err, sizeof err), RIPPLE_ESYS);
  assert_non_null(strstr(err, "missing.yaml"));
  scn_free(&s);
  test_rmtree(dir);
}

static void test_substitution_errors(void **state) {
  (void)state;
  char dir[] = "/tmp/ripple-run-unit-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const char *path = write_file(dir, "s.yaml", "name: x\nsteps: [{sleep: \"${T}\"}]\n");
  scn_t s;
  char err[512] = "";
  assert_int_equal(scn_load(path, &s, err, sizeof err), RIPPLE_OK);
  json_t *doc = NULL;
  assert_int_equal(scn_expand(&s, 1, &doc, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "${T}: no such parameter"));
  assert_int_equal(scn_set(&s, "T=1s", err, sizeof err), RIPPLE_OK);
  assert_int_equal(scn_expand(&s, 1, &doc, err, sizeof err), RIPPLE_OK);
  json_decref(doc);
  char *out = NULL;
  assert_int_equal(scn_subst(&s, 1, "a ${ b", 6, &out, err, sizeof err), RIPPLE_EINVAL);
  assert_int_equal(scn_subst(&s, 1, "${9x}", 5, &out, err, sizeof err), RIPPLE_EINVAL);
  assert_int_equal(scn_subst(&s, 4, "$T ${run}$$", 11, &out, err, sizeof err), RIPPLE_OK);
  assert_string_equal(out, "$T 4$");
  free(out);
  scn_free(&s);
  /* Files that are not scenarios. */
  const char *bad[] = {"steps: []\n", "name: x\nrepetitions: 0\nsteps: []\n",
                       "name: x\nparameters: [a]\nsteps: []\n", "- a\n- b\n",
                       "name: x\nparameters: {run: 1}\nsteps: []\n"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    path = write_file(dir, "bad.yaml", bad[i]);
    assert_int_not_equal(scn_load(path, &s, err, sizeof err), RIPPLE_OK);
    assert_true(strlen(err) > 0);
    scn_free(&s);
  }
  assert_int_equal(scn_load(test_path(dir, "nope.yaml"), &s, err, sizeof err), RIPPLE_ESYS);
  scn_free(&s);
  test_rmtree(dir);
}

static void test_step_checks(void **state) {
  (void)state;
  const char *ok[] = {
      "{\"apply\": \"f.yaml\"}",
      "{\"apply\": {\"manifest\": \"kind: X\"}}",
      "{\"scale\": {\"resource\": \"deploy\", \"name\": \"a\", \"replicas\": \"4\"}}",
      "{\"delete\": {\"resource\": \"pods\", \"name\": \"a\"}}",
      "{\"delete\": \"f.yaml\"}",
      "{\"wait\": {\"resource\": \"pods\", \"until\": \"deleted\"}}",
      "{\"sleep\": \"250ms\"}",
      "{\"patch\": {\"resource\": \"x\", \"name\": \"a\", \"type\": \"json\", \"patch\": []}}"};
  const char *bad[] = {
      "{\"apply\": 3}",
      "{\"scale\": {\"resource\": \"deploy\", \"name\": \"a\"}}",
      "{\"scale\": {\"resource\": \"deploy\", \"name\": \"a\", \"replicas\": -1}}",
      "{\"wait\": {\"resource\": \"pods\"}}",
      "{\"wait\": {\"resource\": \"p\", \"name\": \"a\", \"selector\": \"b\", \"until\": \"x\"}}",
      "{\"wait\": {\"resource\": \"pods\", \"until\": \"deleted\", \"timeout\": \"soon\"}}",
      "{\"sleep\": \"forever\"}",
      "{\"explode\": {}}",
      "{\"sleep\": \"1s\", \"apply\": \"f\"}",
      "{\"patch\": {\"resource\": \"x\", \"name\": \"a\", \"type\": \"yaml\", \"patch\": {}}}",
      "[]",
      "{\"delete\": {\"resource\": \"pods\"}}"};
  char err[256];
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    json_t *s = json_loads(ok[i], 0, NULL);
    assert_int_equal(step_check(s, err, sizeof err), RIPPLE_OK);
    json_decref(s);
  }
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    json_t *s = json_loads(bad[i], 0, NULL);
    assert_non_null(s);
    err[0] = '\0';
    assert_int_equal(step_check(s, err, sizeof err), RIPPLE_EINVAL);
    assert_true(strlen(err) > 0);
    json_decref(s);
  }
}

static void test_sampler(void **state) {
  (void)state;
  proc_sample_t s;
  assert_int_equal(procstat_read(getpid(), &s), RIPPLE_OK);
  assert_true(s.rss_kib > 0);
  assert_true(s.cpu_s >= 0);
  assert_int_equal(procstat_read(0x7ffffff0, &s), RIPPLE_ENOENT);
  char dir[] = "/tmp/ripple-run-unit-XXXXXX";
  assert_non_null(mkdtemp(dir));
  sampler_t *smp = NULL;
  assert_int_equal(sampler_start(test_path(dir, "r.csv"), 10000000LL, &smp), RIPPLE_OK);
  assert_int_equal(sampler_add(smp, "self", getpid()), RIPPLE_OK);
  double x = 1; /* something to measure, used below so it is not optimised away */
  for (int i = 0; i < 20000000; i++) x = x * 1.0000001 + 1.0;
  assert_true(x > 1);
  usleep(50000);
  json_t *sum = NULL;
  sampler_stop(smp, &sum);
  json_t *self = json_object_get(sum, "self");
  assert_non_null(self);
  assert_true(json_integer_value(json_object_get(self, "samples")) >= 2);
  assert_true(json_integer_value(json_object_get(self, "rss_max_kib")) > 0);
  json_decref(sum);
  FILE *f = fopen(test_path(dir, "r.csv"), "r");
  char line[256];
  assert_non_null(fgets(line, sizeof line, f));
  assert_string_equal(line, "time_ns,process,pid,cpu_s,rss_kib\n");
  assert_non_null(fgets(line, sizeof line, f));
  assert_non_null(strstr(line, ",self,"));
  fclose(f);
  test_rmtree(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_param_values),
      cmocka_unit_test(test_scenario_params_and_runs),
      cmocka_unit_test(test_substitution_errors),
      cmocka_unit_test(test_step_checks),
      cmocka_unit_test(test_sampler),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
