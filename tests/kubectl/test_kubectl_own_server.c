/*
 * test_kubectl_own_server.c - `kubectl ripple trace` shows a change's own
 * cascade by default and everything reachable with --reachable (or
 * --scope reachable), against the real ripple-server (on a free loopback
 * port, over a temporary database, given records by HTTP; no cluster). The
 * records are two scales of one Deployment as the webhook sends them: the
 * second scale's ReplicaSet update merges the first one's context, naming
 * the person's change as its trigger. Also the text's scope line and its
 * dashboard deep link, the flags' refusals, and hops (GET /v1/hops).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "http_client.h"
#include "testutil.h"

#define R0 "00000001-0000-4000-8000-000000000000" /* the ReplicaSet's first context */
#define P1 "00000011-0000-4000-8000-000000000000" /* the first scale */
#define N1 "00000021-0000-4000-8000-000000000000" /* its ReplicaSet update */
#define P2 "00000012-0000-4000-8000-000000000000"
#define N2 "00000022-0000-4000-8000-000000000000"
#define PODS 3

typedef struct rig {
  char dir[64], base[64];
  pid_t pid;
} rig_t;

static const char *bin(const char *var) {
  const char *p = getenv(var);
  if (!p || !*p) fail_msg("$%s is not set (run through ctest)", var);
  return p;
}

/* ripple-server on a free port (test_server_start), without the dashboard. */
static void server_start(rig_t *r) {
  static const char *const more[] = {"--no-web", NULL};
  r->pid = test_server_start(r->dir, more, r->base, sizeof r->base);
}

static void post(const rig_t *r, const char *path, const char *body) {
  if (!hc_post_ok(r->base, path, body)) fail_msg("POST %s was not accepted", path);
}

/* Scale k: the person's root p, the ReplicaSet update n = [p, prev]
 * triggered by p, and PODS Pods whose contexts come from n, a span each. */
static void scale(const rig_t *r, int k, const char *p, const char *n, const char *prev) {
  char body[4096];
  int len = snprintf(body, sizeof body,
                     "[{\"cpid\":\"%s\",\"sources\":[],\"time\":\"2026-11-22T00:0%d:00Z\","
                     "\"component\":\"kubernetes-admin\"},"
                     "{\"cpid\":\"%s\",\"sources\":[\"%s\",\"%s\"],\"trigger\":[\"%s\"],"
                     "\"time\":\"2026-11-22T00:0%d:01Z\",\"component\":\"deployment-controller\"}",
                     p, k, n, p, prev, p, k);
  char spans[4096];
  int slen = 0;
  for (int i = 0; i < PODS; i++) {
    len += snprintf(body + len, sizeof body - (size_t)len,
                    ",{\"cpid\":\"%08x-0000-4000-8000-000000000000\",\"sources\":[\"%s\"],"
                    "\"time\":\"2026-11-22T00:0%d:02Z\",\"component\":\"replicaset-controller\"}",
                    100 * k + i, n, k);
    slen += snprintf(spans + slen, sizeof spans - (size_t)slen,
                     "%s{\"cpid\":\"%08x-0000-4000-8000-000000000000\",\"span_id\":\"%016x\","
                     "\"service\":\"replicaset-controller\",\"name\":\"create pods\",\"start\":"
                     "\"2026-11-22T00:0%d:03Z\",\"end\":\"2026-11-22T00:0%d:04Z\",\"attributes\":"
                     "{\"kind\":\"Pod\",\"namespace\":\"demo\",\"name\":\"web-%d-%d\",\"user\":"
                     "\"replicaset-controller\",\"operation\":\"CREATE\"}}",
                     i ? "," : "[", 100 * k + i, 100 * k + i + 1, k, k, k, i);
  }
  snprintf(body + len, sizeof body - (size_t)len, "]");
  snprintf(spans + slen, sizeof spans - (size_t)slen, "]");
  post(r, "/v1/mergelogs", body);
  post(r, "/v1/spans", spans);
}

static int setup(void **state) {
  rig_t *r = calloc(1, sizeof *r);
  assert_non_null(r);
  snprintf(r->dir, sizeof r->dir, "/tmp/ripple-test-XXXXXX");
  assert_non_null(mkdtemp(r->dir));
  server_start(r);
  post(r, "/v1/mergelogs",
       "[{\"cpid\":\"" R0 "\",\"sources\":[],\"time\":\"2026-11-22T00:00:00Z\"}]");
  scale(r, 1, P1, N1, R0);
  scale(r, 2, P2, N2, N1);
  *state = r;
  return 0;
}

static int teardown(void **state) {
  rig_t *r = *state;
  int st;
  kill(r->pid, SIGTERM);
  waitpid(r->pid, &st, 0);
  test_rmtree(r->dir);
  free(r);
  return 0;
}

/* kubectl-ripple's stdout and stderr for args; its exit status in *status. */
static char *run(const char *args, int *status) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "NO_COLOR=1 '%s' %s 2>&1", bin("RIPPLE_KUBECTL_BIN"), args);
  FILE *p = popen(cmd, "r");  // NOLINT(cert-env33-c)
  assert_non_null(p);
  static char out[65536];
  size_t n = fread(out, 1, sizeof out - 1, p);
  out[n] = '\0';
  int st = pclose(p);
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

/* `trace P1 <flags> -o json`: its scope, CPIDs and writes. */
static void expect_json(const rig_t *r, const char *flags, const char *scope, long cpids,
                        long writes) {
  char args[256];
  int st;
  snprintf(args, sizeof args, "trace " P1 " --server %s -o json %s", r->base, flags);
  char *out = run(args, &st);
  if (st != 0) fail_msg("kubectl-ripple %s: status %d:\n%s", args, st, out);
  json_t *j = json_loads(out, 0, NULL);
  if (!j) fail_msg("not JSON: %s", out);
  assert_string_equal(json_string_value(json_object_get(j, "scope")), scope);
  assert_int_equal(json_integer_value(json_object_get(j, "cpids")), cpids);
  assert_int_equal(json_integer_value(json_object_get(j, "writes")), writes);
  json_decref(j);
}

static void test_trace_own_and_reachable(void **state) {
  rig_t *r = *state;
  /* Own: P1, N1 and its Pods' contexts; only the first scale's writes. */
  expect_json(r, "", "own", 2 + PODS, PODS);
  expect_json(r, "--scope own", "own", 2 + PODS, PODS);
  /* Everything reachable: the second scale rides on N1. */
  expect_json(r, "--reachable", "reachable", 1 + 2 * (1 + PODS), 2 * PODS);
  expect_json(r, "--scope=reachable", "reachable", 1 + 2 * (1 + PODS), 2 * PODS);
}

static void test_trace_text(void **state) {
  rig_t *r = *state;
  char args[256], want[256];
  int st;
  snprintf(args, sizeof args, "trace " P1 " --server %s", r->base);
  char *out = run(args, &st);
  assert_int_equal(st, 0);
  assert_non_null(strstr(out, "the change's own cascade"));
  assert_null(strstr(out, "web-2-0")); /* the second scale's Pods are not its own */
  assert_non_null(strstr(out, "web-1-0"));
  snprintf(args, sizeof args, "trace " P1 " --server %s --reachable", r->base);
  out = run(args, &st);
  assert_int_equal(st, 0);
  assert_non_null(strstr(out, "everything reachable"));
  assert_non_null(strstr(out, "web-2-0"));
  snprintf(want, sizeof want, "dashboard: %s/#/trace/" P1 "?scope=reachable\n", r->base);
  assert_non_null(strstr(out, want));
}

static void test_flags_refused(void **state) {
  (void)state;
  int st;
  char *out = run("trace " P1 " --server http://127.0.0.1:9 --scope mine", &st);
  assert_int_equal(st, 2);
  assert_non_null(strstr(out, "--scope must be own"));
  out = run("scale deploy/web --replicas=2 --reachable", &st);
  assert_int_equal(st, 2);
  assert_non_null(
      strstr(out, "--reachable and --scope are for trace, last, diff, hops and dashboard"));
  out = run("scale deploy/web --replicas=2 --critical-path", &st);
  assert_int_equal(st, 2);
  assert_non_null(strstr(out, "--critical-path is for trace and last"));
  out = run("diff " P1, &st);
  assert_int_equal(st, 2);
  assert_non_null(strstr(out, "diff needs two CPIDs"));
}

/* --critical-path and diff, computed by ripplex from the same traces: the
 * first scale's path ends at one of its own Pods' creates; the two scales
 * compared make the same writes. */
static void test_critical_path_and_diff(void **state) {
  rig_t *r = *state;
  char args[256];
  int st;
  snprintf(args, sizeof args, "trace " P1 " --server %s --critical-path -o json", r->base);
  char *out = run(args, &st);
  if (st != 0) fail_msg("kubectl-ripple %s: status %d:\n%s", args, st, out);
  json_t *j = json_loads(out, 0, NULL);
  if (!j) fail_msg("not JSON: %s", out);
  const json_t *hops = json_object_get(j, "hops");
  assert_true(json_array_size(hops) >= 1);
  const json_t *last = json_array_get(hops, json_array_size(hops) - 1);
  assert_string_equal(json_string_value(json_object_get(last, "write")), "create pods");
  assert_int_equal(strncmp(json_string_value(json_object_get(last, "name")), "web-1-", 6), 0);
  assert_string_equal(json_string_value(json_object_get(j, "scope")), "own");
  json_decref(j);
  snprintf(args, sizeof args, "trace " P1 " --server %s --critical-path", r->base);
  out = run(args, &st);
  assert_int_equal(st, 0);
  assert_non_null(strstr(out, "critical path of " P1));

  snprintf(args, sizeof args, "diff " P1 " " P2 " --server %s -o json", r->base);
  out = run(args, &st);
  if (st != 0) fail_msg("kubectl-ripple %s: status %d:\n%s", args, st, out);
  j = json_loads(out, 0, NULL);
  if (!j) fail_msg("not JSON: %s", out);
  const json_t *h = json_array_get(json_object_get(j, "hops"), 0);
  assert_string_equal(json_string_value(json_object_get(h, "write")), "create pods");
  assert_string_equal(json_string_value(json_object_get(h, "change")), "same");
  assert_int_equal(json_integer_value(json_object_get(json_object_get(h, "a"), "count")), PODS);
  assert_string_equal(json_string_value(json_object_get(json_object_get(j, "b"), "cpid")), P2);
  json_decref(j);
  snprintf(args, sizeof args, "diff " P1 " " P2 " --server %s", r->base);
  out = run(args, &st);
  assert_int_equal(st, 0);
  assert_non_null(strstr(out, "create pods"));
}

/* hops: GET /v1/hops as a table, or its answer with -o json. The records
 * are days old: --since 1h finds none of them, --since 3650d all. */
static void test_hops(void **state) {
  rig_t *r = *state;
  char args[256];
  int st;
  snprintf(args, sizeof args, "hops --server %s --since 3650d --write \"create pods\" -o json",
           r->base);
  char *out = run(args, &st);
  if (st != 0) fail_msg("kubectl-ripple %s: status %d:\n%s", args, st, out);
  json_t *j = json_loads(out, 0, NULL);
  if (!j) fail_msg("not JSON: %s", out);
  /* Each scale's own cascade: its Pods' creates (R0 has no writes). */
  assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "roots"), "count")), 2);
  const json_t *h = json_array_get(json_object_get(j, "hops"), 0);
  assert_string_equal(json_string_value(json_object_get(h, "write")), "create pods");
  assert_int_equal(json_integer_value(json_object_get(h, "cascades")), 2);
  assert_int_equal(json_integer_value(json_object_get(h, "writes")), 2 * PODS);
  json_decref(j);
  snprintf(args, sizeof args, "hops --server %s --since 1h -o json", r->base);
  out = run(args, &st);
  assert_int_equal(st, 0);
  j = json_loads(out, 0, NULL);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "roots"), "count")), 0);
  json_decref(j);
  snprintf(args, sizeof args, "hops --server %s", r->base);
  out = run(args, &st);
  assert_int_equal(st, 0);
  assert_non_null(strstr(out, "3 changes (own cascades)"));
  assert_non_null(strstr(out, "replicaset-controller"));
  out = run("hops --since yesterday", &st);
  assert_int_equal(st, 2);
  assert_non_null(strstr(out, "--since must be a duration"));
  out = run("trace " P1 " --kind Deployment", &st);
  assert_int_equal(st, 2);
  assert_non_null(strstr(out, "hops' flags"));
}

#define P3 "00000013-0000-4000-8000-000000000000" /* a change of two writes, with details */

/* The person's update of a Deployment (version 10, answered at .000) and
 * the deployment controller's status write (answered at .100); the watch
 * agent saw the first at .020, the API server received the second at .090. */
static void post_with_details(const rig_t *r) {
  post(r, "/v1/mergelogs",
       "[{\"cpid\":\"" P3 "\",\"sources\":[],\"time\":\"2026-11-22T00:05:00Z\"}]");
  post(r, "/v1/spans",
       "[{\"cpid\":\"" P3
       "\",\"span_id\":\"00000000000003a1\",\"service\":\"kubernetes-admin\","
       "\"name\":\"update deployments\",\"start\":\"2026-11-22T00:05:00Z\",\"end\":"
       "\"2026-11-22T00:05:00.000Z\",\"attributes\":{\"kind\":\"Deployment\",\"namespace\":"
       "\"demo\",\"name\":\"api\",\"uid\":\"dep-3\",\"resourceVersion\":\"10\","
       "\"operation\":\"UPDATE\"}},"
       "{\"cpid\":\"" P3
       "\",\"span_id\":\"00000000000003a2\",\"service\":\"deployment-controller\","
       "\"name\":\"update deployments/status\",\"start\":\"2026-11-22T00:05:00.090Z\","
       "\"end\":\"2026-11-22T00:05:00.100Z\",\"attributes\":{\"kind\":\"Deployment\","
       "\"namespace\":\"demo\",\"name\":\"api\",\"uid\":\"dep-3\",\"resourceVersion\":"
       "\"11\",\"operation\":\"UPDATE\"}}]");
  post(r, "/v1/details",
       "[{\"type\":\"change\",\"op\":\"update\",\"time\":\"2026-11-22T00:05:00.020Z\","
       "\"object\":{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"namespace\":"
       "\"demo\",\"name\":\"api\",\"uid\":\"dep-3\"},\"resourceVersion\":\"11\","
       "\"previousResourceVersion\":\"10\",\"cpid\":\"" P3
       "\",\"diff\":[{\"path\":\"/spec/replicas\",\"old\":1,\"new\":2}]}]");
  post(r, "/v1/audit",
       "{\"kind\":\"EventList\",\"apiVersion\":\"audit.k8s.io/v1\",\"items\":[{\"kind\":"
       "\"Event\",\"apiVersion\":\"audit.k8s.io/v1\",\"level\":\"Metadata\",\"auditID\":"
       "\"au-3\",\"stage\":\"ResponseComplete\",\"verb\":\"update\",\"user\":{\"username\":"
       "\"system:serviceaccount:kube-system:deployment-controller\"},\"objectRef\":{"
       "\"resource\":\"deployments\",\"subresource\":\"status\",\"namespace\":\"demo\","
       "\"name\":\"api\",\"apiGroup\":\"apps\",\"apiVersion\":\"v1\"},\"responseStatus\":"
       "{\"code\":200},\"requestReceivedTimestamp\":\"2026-11-22T00:05:00.090Z\","
       "\"stageTimestamp\":\"2026-11-22T00:05:00.120Z\",\"annotations\":{"
       "\"ripple.example/ripple-span\":\"00000000000003a2\"}}]}");
}

/* The path's hops split into their parts from the server's details: in
 * -o json as the server gives them, and as columns in the text. */
static void test_critical_path_parts(void **state) {
  rig_t *r = *state;
  char args[256];
  int st;
  post_with_details(r);
  snprintf(args, sizeof args, "trace " P3 " --server %s --critical-path -o json", r->base);
  char *out = run(args, &st);
  if (st != 0) fail_msg("kubectl-ripple %s: status %d:\n%s", args, st, out);
  json_t *j = json_loads(out, 0, NULL);
  if (!j) fail_msg("not JSON: %s", out);
  const json_t *hops = json_object_get(j, "hops");
  assert_int_equal(json_array_size(hops), 2);
  assert_null(json_object_get(json_array_get(hops, 0), "parts"));
  const json_t *p = json_object_get(json_array_get(hops, 1), "parts");
  assert_true(json_number_value(json_object_get(p, "seen_ms")) == 20.0);
  assert_true(json_number_value(json_object_get(p, "wrote_ms")) == 70.0);
  assert_true(json_number_value(json_object_get(p, "admission_ms")) == 10.0);
  json_decref(j);
  snprintf(args, sizeof args, "trace " P3 " --server %s --critical-path", r->base);
  out = run(args, &st);
  assert_int_equal(st, 0);
  assert_non_null(strstr(out, "+ms     seen   wrote     adm  component"));
  assert_non_null(strstr(out, "      100       20      70      10  deployment-controller"));
  assert_non_null(strstr(out, "        0        -       -       -  kubernetes-admin"));
  /* Without details (the first scale): no parts' columns. */
  snprintf(args, sizeof args, "trace " P1 " --server %s --critical-path", r->base);
  out = run(args, &st);
  assert_int_equal(st, 0);
  assert_null(strstr(out, "seen"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_trace_own_and_reachable, setup, teardown),
      cmocka_unit_test_setup_teardown(test_trace_text, setup, teardown),
      cmocka_unit_test_setup_teardown(test_flags_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_critical_path_and_diff, setup, teardown),
      cmocka_unit_test_setup_teardown(test_hops, setup, teardown),
      cmocka_unit_test_setup_teardown(test_critical_path_parts, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
