/*
 * test_dashboard_lab.c - the dashboard (web/) in a real browser on a real
 * cascade: the lab's control plane, the real ripple-webhook and ripple-server
 * (which serves the dashboard's bundle), and Debian's chromium driven by
 * playwright-core through web/test/e2e/run.mjs.
 *
 * The cluster is made busy the way operators' clusters are: two workloads
 * (web, with a Service, and db) created as people create them, then web
 * scaled with a root CPID the test knows, while db is scaled too. The browser
 * checks (web/test/e2e/views.mjs) compare what each view shows (rows, bars,
 * counts, the hop table, the merge graph, the Find page, links, error
 * messages) with the trace server's own answers; this file adds what only the
 * cluster knows: the scale's trace must hold web's new Pods and none of db's.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cascade_lab.h"

static int setup(void **state) {
  (void)state;
  cl_begin("rdash");
  return 0;
}

/* node web/test/e2e/run.mjs --server URL --cpid CPID [extra...]: its exit
 * status (its output goes to the test's). */
static int run_e2e(const char *cpid, const char *const *extra) {
  const char *src = getenv("RIPPLE_SOURCE_DIR");
  assert_non_null(src);
  char script[512];
  snprintf(script, sizeof script, "%s/web/test/e2e/run.mjs", src);
  const char *argv[24] = {"node", script, "--server", cl.trace, "--cpid", cpid};
  size_t n = 6;
  for (; extra && *extra && n < 23; extra++) argv[n++] = *extra;
  argv[n] = NULL;
  pid_t pid;
  int rc = posix_spawnp(&pid, "node", NULL, NULL, (char *const *)argv, environ);
  if (rc != 0) fail_msg("cannot run node (make deps installs nodejs): %s", strerror(rc));
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The Pods of app=name that the trace of cpid binds (a "create pods/binding"
 * span names each), and those it does not. */
static void count_bound(const json_t *spans, const json_t *pods, size_t *in, size_t *out) {
  const char *name;
  json_t *v;
  *in = *out = 0;
  json_object_foreach((json_t *)pods, name, v) {
    (void)v;
    if (cl_count(spans, "create pods/binding", name, NULL))
      (*in)++;
    else
      (*out)++;
  }
}

static void test_dashboard_on_a_scale(void **state) {
  (void)state;
  char c_svc[CL_CPID], c_web[CL_CPID], c_db[CL_CPID], c_scale[CL_CPID], c_db2[CL_CPID];
  cl_create_root("services", cl_service("web"), c_svc);
  cl_create_root("deployments", cl_deployment("web", 2), c_web);
  cl_create_root("deployments", cl_deployment("db", 1), c_db);
  cl_wait_fields("deployments", "web", 2, CL_READY_APPS, 120000);
  cl_wait_fields("deployments", "db", 1, CL_READY_APPS, 120000);
  json_t *before = cl_cpids("pods", "app=web", "Pod");

  /* Two people's changes at once: web 2 -> 5 (the one under test), db 1 -> 3. */
  cl_patch_root("deployments", "Deployment", "web", "\"spec\":{\"replicas\":5}", c_scale);
  cl_patch_root("deployments", "Deployment", "db", "\"spec\":{\"replicas\":3}", c_db2);
  cl_wait_fields("deployments", "web", 5, CL_READY_APPS, 120000);
  cl_wait_fields("deployments", "db", 3, CL_READY_APPS, 120000);
  cl_spans_settle();

  /* What the browser will be shown: the 3 new web Pods bound under the
   * scale's trace, web's 2 old Pods and every db Pod not. */
  json_t *j = whlab_trace(&cl, c_scale, "spans");
  json_t *spans = json_object_get(j, "spans");
  json_t *web = cl_cpids("pods", "app=web", "Pod"), *db = cl_cpids("pods", "app=db", "Pod");
  size_t in, out;
  count_bound(spans, web, &in, &out);
  assert_int_equal(in, 3);
  assert_int_equal(out, 2);
  count_bound(spans, before, &in, &out);
  assert_int_equal(in, 0);
  count_bound(spans, db, &in, &out);
  assert_int_equal(in, 0);
  assert_int_equal(cl_count(spans, "update deployments", "db", NULL), 0);

  /* The browser: every view of the scale's trace compared with the API, the
   * rows only the cluster knows (the Deployment on top, its ReplicaSet under
   * it, the 3 new Pods under that and the creates by generateName in a row of
   * their own; nothing of db), the Find page, bad input and a server that
   * goes away (the real one: stopped under the open page). */
  char e[5][160];
  snprintf(e[0], sizeof e[0], "Deployment/%s/web@0=1", cl.ns);
  snprintf(e[1], sizeof e[1], "ReplicaSet/%s/web-*@1=1", cl.ns);
  snprintf(e[2], sizeof e[2], "Pod/%s/web-*@2=3", cl.ns);
  snprintf(e[3], sizeof e[3], "Pod/%s/(created)*@2=1", cl.ns);
  snprintf(e[4], sizeof e[4], "*/%s/db*=0", cl.ns);
  char pid[24];
  snprintf(pid, sizeof pid, "%ld", (long)cl.server.pid);
  const char *extra[] = {"--expect-rows",
                         e[0],
                         "--expect-rows",
                         e[1],
                         "--expect-rows",
                         e[2],
                         "--expect-rows",
                         e[3],
                         "--expect-rows",
                         e[4],
                         "--stop-server",
                         pid,
                         NULL};
  assert_int_equal(run_e2e(c_scale, extra), 0);
  whlab_stop(&cl.server); /* stopped by the browser check: it must have exited cleanly */
  json_decref(j);
  json_decref(web);
  json_decref(db);
  json_decref(before);
  (void)c_svc, (void)c_web, (void)c_db, (void)c_db2;
  cl_unregister();
  whlab_stop(&cl.webhook);
  whlab_ns_delete(&cl);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_dashboard_on_a_scale, setup, cl_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
