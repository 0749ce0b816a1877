/*
 * test_run_expect_lab.c - a cascade kept as a test, on the lab, through the
 * real ripple-webhook and ripple-server (tests/support/cascade_lab.h) and
 * the real ripple-watch sending details (what the change was):
 *
 *   1. a Deployment of 2 replicas; `kubectl-ripple scale --replicas=4` as a
 *      person, its CPID printed;
 *   2. `kubectl-ripple export-test CPID -o FILE`: a scale from 2 to 4, with
 *      the scheduler's bindings among its hops;
 *   3. `ripple-run FILE`: replayed on the lab, it passes (exit 0);
 *   4. the lab's kube-scheduler stopped (SIGSTOP; SIGCONT in every path:
 *      teardown and atexit), `ripple-run FILE` again: it fails (exit 1) and
 *      names the binding hop (create pods/binding by the scheduler) as
 *      missing or over budget;
 *   5. the shipped example, scenarios/expect-scale.yaml, passes.
 *
 * The budgets are wide (--margin 3+5s): the replay on a busy machine must
 * pass; the stopped scheduler fails it whatever the budget, because its
 * bindings never come. No time is asserted beyond that comparison.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cascade_lab.h"

static char dir[64] = "/tmp/ripple-xp-lab-XXXXXX";
static pid_t watch_pid;

static void stop_watch(void) {
  if (watch_pid > 0) {
    kill(watch_pid, SIGTERM);
    waitpid(watch_pid, NULL, 0);
  }
  watch_pid = 0;
}

static void on_exit_cleanup(void) { stop_watch(); }

static int setup(void **state) {
  (void)state;
  if (!getenv("RIPPLE_KUBECTL_BIN") || !getenv("RIPPLE_RUN_BIN") || !getenv("RIPPLE_WATCH_BIN"))
    fail_msg(
        "RIPPLE_KUBECTL_BIN, RIPPLE_RUN_BIN and RIPPLE_WATCH_BIN are needed (ctest sets them)");
  atexit(on_exit_cleanup);
  assert_non_null(mkdtemp(dir));
  cl_begin("ripple-xp");
  return 0;
}

static int teardown(void **state) {
  cl_scheduler_resume();
  stop_watch();
  cl_unregister();
  if (cl.kc) whlab_ns_delete(&cl);
  return cl_teardown(state);
}

/* ripple-watch sending the namespace's changes to the trace server as details. */
static void start_watch(void) {
  char out[128], st[128], log[128];
  snprintf(out, sizeof out, "%s/changes.jsonl", dir);
  snprintf(st, sizeof st, "%s/watch-state", dir);
  snprintf(log, sizeof log, "%s/watch.log", dir);
  const char *bin = getenv("RIPPLE_WATCH_BIN");
  watch_pid = fork();
  assert_true(watch_pid >= 0);
  if (watch_pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) dup2(fd, 2);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) dup2(null, 1);
    if (!bin) _exit(127);
    execl(bin, bin, "--resources", "deployments.apps,replicasets.apps,pods", "--namespace", cl.ns,
          "--out", out, "--state-dir", st, "--trace-server", cl.trace, NULL);
    _exit(127);
  }
  char *text = NULL;
  for (int i = 0; i < 300; i++) { /* until it watches every resource */
    free(text);
    text = NULL;
    if (lab_sh(&text, "grep -c ' event=watch_synced ' '%s' 2>/dev/null", log) == 0 &&
        strtol(text, NULL, 10) >= 3)
      break;
    usleep(100000);
  }
  free(text);
}

/* The trace server has the change's details: the watch's record of the
 * Deployment's update joined to a write of the cascade. */
static int has_details(void *ud) {
  json_t *d = whlab_trace(&cl, ud, "details");
  size_t i;
  json_t *w;
  int found = 0;
  json_array_foreach(json_object_get(d, "writes"), i, w) {
    json_t *ch = json_object_get(w, "change");
    const char *kind = json_string_value(json_object_get(json_object_get(ch, "object"), "kind"));
    const char *op = json_string_value(json_object_get(ch, "op"));
    if (kind && op && !strcmp(kind, "Deployment") && !strcmp(op, "update")) found = 1;
  }
  json_decref(d);
  return found;
}

static int kr(char **out, const char *args, const char *arg2) {
  return lab_sh(out, "'%s' --kubeconfig '%s' --server '%s' -n '%s' %s %s",
                getenv("RIPPLE_KUBECTL_BIN"), getenv("KUBECONFIG"), cl.trace, cl.ns, args,
                arg2 ? arg2 : "");
}

/* ripple-run on the scenario; its standard output and error into *out. */
static int replay(const char *scenario, const char *name, char **out) {
  return lab_sh(out, "'%s' --kubeconfig '%s' --server '%s' --no-watch --out '%s/%s' '%s' 2>&1",
                getenv("RIPPLE_RUN_BIN"), getenv("KUBECONFIG"), cl.trace, dir, name, scenario);
}

static void test_export_replay(void **state) {
  (void)state;
  start_watch();
  whlab_create(&cl, "deployments", cl_deployment("web", 2));
  cl_wait_fields("deployments", "web", 2, CL_READY_APPS, 120000);
  char *out = NULL, cpid[CL_CPID] = "", scen[128];
  assert_int_equal(kr(&out, "scale deploy/web --replicas=4", NULL), 0);
  const char *c = strstr(out, "cpid: ");
  assert_non_null(c);
  snprintf(cpid, sizeof cpid, "%.36s", c + 6);
  free(out);
  cl_wait_fields("deployments", "web", 4, CL_READY_APPS, 120000);
  cl_spans_settle();
  cl_wait(has_details, cpid, 60000, "the scale's details at the trace server");

  snprintf(scen, sizeof scen, "%s/scale.yaml", dir);
  char args[256];
  snprintf(args, sizeof args, "export-test %s -o '%s' --margin 3+5s", cpid, scen);
  assert_int_equal(kr(&out, args, NULL), 0);
  free(out);
  assert_int_equal(lab_sh(&out, "cat '%s'", scen), 0);
  fprintf(stderr, "# the exported scenario:\n%s", out);
  assert_non_null(strstr(out, "from: 2\n  to: 4\n"));
  assert_non_null(strstr(out, "write: \"create pods/binding\", kind: \"Pod\", count: 2,"));
  assert_null(strstr(out, "FILL IN"));
  free(out);

  /* Replayed as it is: it passes. */
  int rc = replay(scen, "ok", &out);
  fprintf(stderr, "# replay:\n%s", out);
  assert_int_equal(rc, 0);
  assert_null(strstr(out, "hop differs"));
  free(out);

  /* The scheduler stopped: the bindings never come. */
  cl_scheduler_stop();
  rc = replay(scen, "stopped", &out);
  cl_scheduler_resume();
  fprintf(stderr, "# replay with the scheduler stopped:\n%s", out);
  assert_int_equal(rc, 1);
  const char *line = strstr(out, "hop differs: create pods/binding by ");
  assert_non_null(line);
  const char *eol = strchr(line, '\n');
  assert_non_null(eol);
  char text[512];
  snprintf(text, sizeof text, "%.*s", (int)(eol - line), line);
  assert_true(strstr(text, ": missing") || strstr(text, "over budget"));
  free(out);
  cl_wait_fields("deployments", "web", 4, CL_READY_APPS, 120000);
  stop_watch();

  /* The shipped example (scenarios/expect-scale.yaml) passes on the lab too. */
  rc = lab_sh(&out,
              "'%s' --kubeconfig '%s' --server '%s' --no-watch --namespace '%s' --set "
              "deployment=example --out '%s/example' '%s/scenarios/expect-scale.yaml' 2>&1",
              getenv("RIPPLE_RUN_BIN"), getenv("KUBECONFIG"), cl.trace, cl.ns, dir,
              getenv("RIPPLE_SOURCE_DIR"));
  fprintf(stderr, "# scenarios/expect-scale.yaml:\n%s", out);
  assert_int_equal(rc, 0);
  assert_null(strstr(out, "hop differs"));
  free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_export_replay, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
