/*
 * test_run_lab.c - ripple run on the lab, end to end: the real ripple-run
 * binary runs a known scenario (a Deployment of 3 Pods, scaled to 5, then
 * deleted) with the real ripple-watch recording, and the test checks what an
 * operator would: the run directory holds every parameter and every step's
 * outcome, the agent recorded exactly the changes the scenario causes (by
 * kind and op), and `ripple analyze`'s hops on that directory form the
 * expected chain, with the expected number of instances per hop.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "testutil.h"

static const char *scenario =
    "name: lab-chain\n"
    "parameters: {N: 3, M: 5}\n"
    "repetitions: 1\n"
    "watch: {resources: [deployments.apps, replicasets.apps, pods]}\n"
    "steps:\n"
    "  - apply:\n"
    "      manifest: |\n"
    "        apiVersion: apps/v1\n"
    "        kind: Deployment\n"
    "        metadata: {name: chain}\n"
    "        spec:\n"
    "          replicas: ${N}\n"
    "          selector: {matchLabels: {app: chain}}\n"
    "          template:\n"
    "            metadata: {labels: {app: chain}}\n"
    "            spec: {containers: [{name: c, image: ripple.invalid/noop:1}]}\n"
    "  - wait: {resource: deployments.apps, name: chain, until: status.readyReplicas == ${N}, "
    "timeout: 2m}\n"
    "  - scale: {resource: deployments.apps, name: chain, replicas: ${M}}\n"
    "  - wait: {resource: pods, selector: app=chain, until: condition Ready, timeout: 2m}\n"
    "  - wait: {resource: pods, selector: app=chain, until: count == ${M}, timeout: 2m}\n"
    "  - delete: {resource: deployments.apps, name: chain}\n"
    "  - wait: {resource: pods, selector: app=chain, until: deleted, timeout: 2m}\n";

static json_t *load_json(const char *path) {
  json_error_t e;
  json_t *j = json_load_file(path, 0, &e);
  if (!j) fprintf(stderr, "%s: %s\n", path, e.text);
  return j;
}

/* Non-relist records by "<resource> <op>". */
static json_t *count_records(const char *path) {
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  json_t *counts = json_object();
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    json_t *r = json_loads(line, 0, NULL);
    assert_non_null(r);
    assert_false(json_is_true(json_object_get(r, "relist")));
    char key[128];
    snprintf(key, sizeof key, "%s %s", json_string_value(json_object_get(r, "resource")),
             json_string_value(json_object_get(r, "op")));
    json_int_t n = json_integer_value(json_object_get(counts, key));
    json_object_set_new(counts, key, json_integer(n + 1));
    json_decref(r);
  }
  free(line);
  fclose(f);
  return counts;
}

/* How many of a hop ripple-analyze's JSON summary counted (0: none). */
static json_int_t hop_count(json_t *summary, const char *name) {
  return json_integer_value(
      json_object_get(json_object_get(json_object_get(summary, "hops"), name), "count"));
}

static void print_file(const char *path) {
  FILE *f = fopen(path, "r");
  char buf[4096];
  size_t n;
  while (f && (n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, stderr);
  if (f) fclose(f);
}

/* The binary ctest names in $env, run with argv[1..] = a, b; its output in
 * out. Exit status 0, or the test fails with the output shown. */
static void run_bin(const char *env, const char *a, const char *b, const char *c, const char *out,
                    const char *also_show) {
  const char *bin = getenv(env);
  if (!bin) {
    fail_msg("%s is not set (ctest sets it)", env);
    return;
  }
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) dup2(fd, STDOUT_FILENO), dup2(fd, STDERR_FILENO);
    execl(bin, bin, a, b, c, (char *)NULL);
    _exit(127);
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    print_file(out);
    if (also_show) print_file(also_show);
    fail_msg("%s failed", bin);
  }
}

/* ripple-run --out DIR/run DIR/s.yaml, its output in DIR/out.txt. */
static void run_scenario(const char *dir) {
  char out[256], rundir[256], scn[256];
  snprintf(out, sizeof out, "%s/out.txt", dir);
  snprintf(rundir, sizeof rundir, "%s/run", dir);
  snprintf(scn, sizeof scn, "%s/s.yaml", dir);
  run_bin("RIPPLE_RUN_BIN", "--out", rundir, scn, out, test_path(rundir, "agent.txt"));
}

static void test_known_chain(void **state) {
  (void)state;
  char dir[] = "/tmp/ripple-run-lab-XXXXXX";
  assert_non_null(mkdtemp(dir));
  FILE *f = fopen(test_path(dir, "s.yaml"), "w");
  fputs(scenario, f);
  fclose(f);
  run_scenario(dir);

  char rundir[128];
  snprintf(rundir, sizeof rundir, "%s/run", dir);
  json_t *params = load_json(test_path(rundir, "params.json"));
  assert_string_equal(
      json_string_value(json_object_get(json_object_get(params, "parameters"), "M")), "5");
  assert_non_null(json_object_get(json_object_get(params, "parameters"), "namespace"));
  json_decref(params);
  json_t *run = load_json(test_path(rundir, "run.json"));
  assert_string_equal(json_string_value(json_object_get(run, "status")), "ok");
  assert_int_equal(json_array_size(json_object_get(run, "steps")), 7);
  assert_non_null(json_object_get(json_object_get(run, "resources"), "ripple-watch"));
  json_decref(run);

  /* Exactly the changes the scenario makes, by kind and op. */
  json_t *c = count_records(test_path(rundir, "changes.jsonl"));
  assert_int_equal(json_integer_value(json_object_get(c, "deployments.apps add")), 1);
  assert_int_equal(json_integer_value(json_object_get(c, "deployments.apps delete")), 1);
  assert_int_equal(json_integer_value(json_object_get(c, "replicasets.apps add")), 1);
  assert_int_equal(json_integer_value(json_object_get(c, "replicasets.apps delete")), 1);
  assert_int_equal(json_integer_value(json_object_get(c, "pods add")), 5);
  assert_int_equal(json_integer_value(json_object_get(c, "pods delete")), 5);
  /* Every Pod is at least scheduled, then Running and Ready (KWOK: one update). */
  assert_true(json_integer_value(json_object_get(c, "pods update")) >= 10);
  json_decref(c);

  /* The real ripple-analyze on the run directory: the chain Deployment ->
   * ReplicaSet -> Pods. */
  char summary_path[256], analyze_out[256];
  snprintf(summary_path, sizeof summary_path, "%s/hops.json", dir);
  snprintf(analyze_out, sizeof analyze_out, "%s/analyze.txt", dir);
  run_bin("RIPPLE_ANALYZE_BIN", "--json", summary_path, rundir, analyze_out, NULL);
  json_t *res = load_json(summary_path);
  assert_non_null(res);
  assert_int_equal(hop_count(res, "deployment-add->replicaset-add"), 1);
  assert_int_equal(hop_count(res, "replicaset-add->pod-add"), 3);
  assert_int_equal(hop_count(res, "replicaset-update->pod-add"), 2);
  assert_int_equal(hop_count(res, "replicaset-delete->pod-delete"), 5);
  assert_int_equal(hop_count(res, "pod-add->scheduled"), 5);
  assert_int_equal(hop_count(res, "pod-scheduled->running"), 5);
  assert_int_equal(hop_count(res, "pod-running->ready"), 5);
  assert_int_equal(hop_count(res, "e2e:deployment-change->last-pod-ready"), 2);
  assert_int_equal(hop_count(res, "e2e:deployment-delete->last-pod-delete"), 1);
  json_decref(res);
  test_rmtree(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_known_chain)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
