/*
 * test_guard_lab.c - ripple-guard against the lab, beside the real
 * ripple-webhook and ripple-server.
 *
 * The webhook is registered for this test's namespace; a Deployment of 3 is
 * created (the API server calls the webhook: its request counter for the
 * webhook grows, which shows the counter can catch a call). Then the webhook
 * is stopped with SIGSTOP (it accepts connections and never answers, which
 * failurePolicy Ignore does not cover): the guard must patch its condition
 * onto the registration and say so in its metrics; the Deployment is scaled
 * 3 -> 8 and must reach 8 ready Pods with the API server calling the webhook
 * not once (apiserver_admission_webhook_request_total and
 * apiserver_admission_webhook_fail_open_count for the webhook do not grow).
 * After SIGCONT the guard must remove the condition, and a dry-run write must
 * come back annotated again. No timings are asserted (bench/bench-guard.sh
 * measures them).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guard_lab.h"
#include "rw_lab.h"
#include "testutil.h"

static whlab_t lab;
static whlab_proc_t guard;
static char whname[96];

/* At exit too: no process may outlive a failed test (wh_lab.c sees to the
 * webhook and the trace server). */
static void kill_guard(void) { whlab_kill(&guard); }

static int teardown(void **state) {
  (void)state;
  whlab_end(&lab);
  kill_guard();
  return 0;
}

typedef struct want {
  long replicas;
} want_t;

static int deployment_ready(void *ud) {
  json_t *d = NULL;
  ripple_kube_status_t st;
  if (ripple_kube_get(lab.kc, lab_resolve(lab.kc, "deployments"), lab.ns, "web", &d, &st) !=
      RIPPLE_OK)
    return 0;
  long ready = (long)json_integer_value(lab_at(d, "status.readyReplicas"));
  long updated = (long)json_integer_value(lab_at(d, "status.updatedReplicas"));
  json_decref(d);
  return ready == ((want_t *)ud)->replicas && updated == ready;
}

static int guard_acted(void *ud) {
  (void)ud;
  return glab_reg_off(lab.kc, lab.name) == 1 &&
         glab_metric(&guard, "ripple_guard_webhook_disabled") == 1 &&
         glab_metric(&guard, "ripple_guard_disabled_total") >= 1;
}

static int guard_restored(void *ud) {
  (void)ud;
  return glab_reg_off(lab.kc, lab.name) == 0 &&
         glab_metric(&guard, "ripple_guard_webhook_disabled") == 0 &&
         glab_metric(&guard, "ripple_guard_restored_total") >= 1 && whlab_annotated(lab.kc, lab.ns);
}

/* The API server skips the webhook by its conditions: a dry-run write in the
 * namespace is counted as excluded by a matchCondition. */
static int apiserver_skips(void *ud) {
  double *before = ud;
  json_t *cm = lab_json(
      "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
      "\"guard-probe\"}}");
  ripple_kube_write_opts_t wo = {.dry_run = 1};
  ripple_kube_status_t st;
  int rc =
      ripple_kube_create(lab.kc, lab_resolve(lab.kc, "configmaps"), lab.ns, cm, &wo, NULL, &st);
  json_decref(cm);
  return rc == RIPPLE_OK &&
         glab_apiserver_metric("apiserver_admission_match_condition_exclusions_total", whname) >
             *before;
}

static void scale(long replicas) {
  char patch[64];
  snprintf(patch, sizeof patch, "{\"spec\":{\"replicas\":%ld}}", replicas);
  whlab_patch(&lab, "deployments", "web", patch);
}

static void setup_lab(void) {
  whlab_begin(&lab, "ripple-guard", "ripple-guard-test");
  atexit(kill_guard);
  snprintf(whname, sizeof whname, "%s.ripple.dev", lab.name);
  glab_start(&guard, &lab, lab.name, NULL);
}

static void test_guard_takes_webhook_out_and_back(void **state) {
  (void)state;
  setup_lab();
  const char *req = "apiserver_admission_webhook_request_total";
  const char *open = "apiserver_admission_webhook_fail_open_count";
  double calls0 = glab_apiserver_metric(req, whname);
  json_t *dep = lab_json(
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{"
      "\"name\":\"web\"},\"spec\":{\"replicas\":3,\"selector\":{"
      "\"matchLabels\":{\"app\":\"web\"}},\"template\":{\"metadata\":{"
      "\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{\"name\":"
      "\"c\",\"image\":\"ripple.invalid/noop:1\"}]}}}}");
  whlab_create(&lab, "deployments", dep);
  want_t w3 = {3}, w8 = {8};
  if (!lab_wait(deployment_ready, &w3, 120000)) fail_msg("3 replicas not ready in 120 s");
  /* The counter sees the webhook's calls: the cascade of the create went to it. */
  assert_true(glab_apiserver_metric(req, whname) > calls0);
  assert_int_equal(glab_reg_off(lab.kc, lab.name), 0);
  assert_true(glab_metric(&guard, "ripple_guard_probes_total") > 0);
  assert_int_equal(glab_metric(&guard, "ripple_guard_webhook_disabled"), 0);

  assert_int_equal(kill(lab.webhook.pid, SIGSTOP), 0);
  if (!lab_wait(guard_acted, NULL, 60000)) fail_msg("the guard did not take the webhook out");
  double excl =
      glab_apiserver_metric("apiserver_admission_match_condition_exclusions_total", whname);
  if (!lab_wait(apiserver_skips, &excl, 60000))
    fail_msg("the API server kept the webhook in the write path");
  double calls = glab_apiserver_metric(req, whname), opens = glab_apiserver_metric(open, whname);
  scale(8);
  if (!lab_wait(deployment_ready, &w8, 120000)) fail_msg("8 replicas not ready in 120 s");
  assert_true(glab_apiserver_metric(req, whname) == calls);
  assert_true(glab_apiserver_metric(open, whname) == opens);
  assert_true(glab_metric(&guard, "ripple_guard_probe_failures_total") >= 2);
  assert_int_equal(glab_metric(&guard, "ripple_guard_webhook_disabled"), 1);

  assert_int_equal(kill(lab.webhook.pid, SIGCONT), 0);
  if (!lab_wait(guard_restored, NULL, 60000)) fail_msg("the guard did not restore the webhook");
  assert_true(glab_apiserver_metric(req, whname) > calls);

  /* A guard that stops leaves the registration as it is, and exits cleanly. */
  whlab_stop(&guard);
  assert_int_equal(glab_reg_off(lab.kc, lab.name), 0);
  whlab_unregister(&lab);
  whlab_ns_delete(&lab);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_guard_takes_webhook_out_and_back, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
