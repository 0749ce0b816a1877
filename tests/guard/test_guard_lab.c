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
static char ns[64], whname[96];
static ripple_kube_client_t *kc;

/* At exit too: no process may outlive a failed test. */
static void kill_all(void) {
  whlab_kill(&guard);
  whlab_kill(&lab.webhook);
  whlab_kill(&lab.server);
}

static int teardown(void **state) {
  (void)state;
  ripple_kube_status_t st;
  const ripple_kube_resource_t *r;
  whlab_unregister(&lab, kc);
  if (kc && *ns && ripple_kube_resolve(kc, "namespaces", &r, &st) == RIPPLE_OK)
    ripple_kube_delete(kc, r, NULL, ns, NULL, &st);
  kill_all();
  ripple_kube_client_free(kc);
  kc = NULL;
  return 0;
}

typedef struct want {
  long replicas;
} want_t;

static int deployment_ready(void *ud) {
  json_t *d = NULL;
  ripple_kube_status_t st;
  if (ripple_kube_get(kc, lab_resolve(kc, "deployments"), ns, "web", &d, &st) != RIPPLE_OK)
    return 0;
  long ready = (long)json_integer_value(lab_at(d, "status.readyReplicas"));
  long updated = (long)json_integer_value(lab_at(d, "status.updatedReplicas"));
  json_decref(d);
  return ready == ((want_t *)ud)->replicas && updated == ready;
}

static int guard_acted(void *ud) {
  (void)ud;
  return glab_reg_off(kc, lab.name) == 1 &&
         glab_metric(&guard, "ripple_guard_webhook_disabled") == 1 &&
         glab_metric(&guard, "ripple_guard_disabled_total") >= 1;
}

static int guard_restored(void *ud) {
  (void)ud;
  return glab_reg_off(kc, lab.name) == 0 &&
         glab_metric(&guard, "ripple_guard_webhook_disabled") == 0 &&
         glab_metric(&guard, "ripple_guard_restored_total") >= 1 && whlab_annotated(kc, ns);
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
  int rc = ripple_kube_create(kc, lab_resolve(kc, "configmaps"), ns, cm, &wo, NULL, &st);
  json_decref(cm);
  return rc == RIPPLE_OK &&
         glab_apiserver_metric("apiserver_admission_match_condition_exclusions_total", whname) >
             *before;
}

static void scale(long replicas) {
  char patch[64];
  snprintf(patch, sizeof patch, "{\"spec\":{\"replicas\":%ld}}", replicas);
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_patch(kc, lab_resolve(kc, "deployments"), ns, "web",
                               RIPPLE_KUBE_PATCH_MERGE, patch, strlen(patch), NULL, NULL, &st));
}

static void setup_lab(void) {
  kc = lab_client();
  atexit(kill_all);
  whlab_start(&lab);
  lab_ns_new(kc, "ripple-guard", ns, sizeof ns);
  char sfx[8], name[64];
  lab_suffix(sfx, 6);
  snprintf(name, sizeof name, "ripple-guard-test-%s", sfx);
  snprintf(whname, sizeof whname, "%s.ripple.dev", name);
  whlab_register(&lab, kc, name, ns);
  glab_start(&guard, &lab, name, NULL);
}

static void test_guard_takes_webhook_out_and_back(void **state) {
  (void)state;
  setup_lab();
  const char *req = "apiserver_admission_webhook_request_total";
  const char *open = "apiserver_admission_webhook_fail_open_count";
  double calls0 = glab_apiserver_metric(req, whname);
  ripple_kube_status_t st;
  json_t *dep = lab_json(
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{"
      "\"name\":\"web\"},\"spec\":{\"replicas\":3,\"selector\":{"
      "\"matchLabels\":{\"app\":\"web\"}},\"template\":{\"metadata\":{"
      "\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{\"name\":"
      "\"c\",\"image\":\"ripple.invalid/noop:1\"}]}}}}");
  LAB_OK(st, ripple_kube_create(kc, lab_resolve(kc, "deployments"), ns, dep, NULL, NULL, &st));
  json_decref(dep);
  want_t w3 = {3}, w8 = {8};
  if (!lab_wait(deployment_ready, &w3, 120000)) fail_msg("3 replicas not ready in 120 s");
  /* The counter sees the webhook's calls: the cascade of the create went to it. */
  assert_true(glab_apiserver_metric(req, whname) > calls0);
  assert_int_equal(glab_reg_off(kc, lab.name), 0);
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
  kill(guard.pid, SIGTERM);
  int ws;
  waitpid(guard.pid, &ws, 0);
  guard.pid = -1;
  assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
  assert_int_equal(glab_reg_off(kc, lab.name), 0);
  whlab_unregister(&lab, kc);
  lab_ns_delete(kc, ns);
  ns[0] = '\0';
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_guard_takes_webhook_out_and_back, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
