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
 *
 * A fresh install (a chart's order): the guard starts with --ca-bundle FILE
 * before the registration exists (it waits, saying so once) while FILE is not
 * PEM yet (counted, rounds fail); the registration is created with the
 * guard's condition on and no caBundle, and stays so while FILE is bad. Once
 * FILE holds the lab's CA (replaced by a rename, as the kubelet updates a
 * mounted Secret), the guard sets every caBundle to it, then (and only then,
 * by its log's order) removes the condition, and the API server calls the
 * webhook: a dry-run write comes back annotated. Without --ca-bundle, a
 * registration created disabled with its caBundle is restored after
 * --recover-after good rounds all the same.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guard_lab.h"
#include "ripplex/sbuf.h"
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

/* ---- a fresh install with --ca-bundle ------------------------------------ */

/* Replace path's content at once (write beside it, rename over it). */
static void put_file(const char *path, const char *text, size_t len) {
  char tmp[300];
  snprintf(tmp, sizeof tmp, "%s.new", path);
  FILE *f = fopen(tmp, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
  assert_int_equal(rename(tmp, path), 0);
}

typedef struct seen {
  const char *metric;
  double at_least;
} seen_t;

static int metric_reached(void *ud) {
  const seen_t *s = ud;
  return glab_metric(&guard, s->metric) >= s->at_least;
}

static int logged_registration(void *ud) {
  (void)ud;
  int first;
  return glab_log_count(&guard, "registration", &first) >= 1;
}

/* Every caBundle is the lab's CA, the condition is off, and the guard says so. */
static int ca_set_and_restored(void *ud) {
  char *ca = glab_reg_ca(lab.kc, lab.name);
  int ok = ca && !strcmp(ca, ud) && glab_reg_off(lab.kc, lab.name) == 0;
  free(ca);
  return ok && glab_metric(&guard, "ripple_guard_restored_total") >= 1 &&
         glab_metric(&guard, "ripple_guard_ca_bundle_synced") == 1;
}

static int webhook_called(void *ud) {
  (void)ud;
  return whlab_annotated(lab.kc, lab.ns);
}

static void test_guard_fresh_install_ca_bundle(void **state) {
  (void)state;
  whlab_begin_cluster(&lab, "ripple-guard-ca");
  whlab_start(&lab);
  char bundle[300], name[64], sfx[8];
  snprintf(bundle, sizeof bundle, "%s/ca.crt", lab.dir);
  put_file(bundle, "not a certificate yet\n", 22);
  lab_suffix(sfx, 6);
  snprintf(name, sizeof name, "ripple-guard-ca-%s", sfx);
  char *extra[] = {"--ca-bundle", bundle, "--resync", "300", "--recover-after", "3", NULL};
  glab_start(&guard, &lab, name, extra);

  /* No registration yet: waited for (a few reads), said once. */
  seen_t retries = {"ripple_guard_kube_errors_total", 3};
  if (!lab_wait(metric_reached, &retries, 60000)) fail_msg("the guard did not retry the read");
  int first;
  assert_int_equal(glab_log_count(&guard, "registration_missing", &first), 1);
  assert_true(glab_metric(&guard, "ripple_guard_ca_bundle_errors_total") >= 1);

  glab_register_disabled(&lab, name, NULL);
  if (!lab_wait(logged_registration, NULL, 60000))
    fail_msg("the guard never read the registration");
  /* A bad bundle: rounds fail, nothing is set or restored (two more reads of it). */
  seen_t errs = {"ripple_guard_ca_bundle_errors_total",
                 glab_metric(&guard, "ripple_guard_ca_bundle_errors_total") + 2};
  if (!lab_wait(metric_reached, &errs, 60000)) fail_msg("the guard did not re-read the bundle");
  assert_int_equal(glab_reg_off(lab.kc, lab.name), 1);
  char *ca = glab_reg_ca(lab.kc, lab.name);
  assert_non_null(ca);
  assert_string_equal(ca, "");
  free(ca);
  assert_int_equal(glab_metric(&guard, "ripple_guard_ca_bundle_set_total"), 0);
  assert_int_equal(glab_metric(&guard, "ripple_guard_restored_total"), 0);
  assert_int_equal(glab_metric(&guard, "ripple_guard_webhook_disabled"), 1);
  assert_int_equal(glab_metric(&guard, "ripple_guard_ca_bundle_synced"), 0);
  assert_false(whlab_annotated(lab.kc, lab.ns)); /* the API server does not call it */

  /* The Secret's ca.crt arrives. */
  char *pem = NULL;
  size_t len = 0;
  assert_int_equal(sbuf_read_file_max(getenv("RIPPLE_LAB_CA"), 1u << 20, &pem, &len), RIPPLE_OK);
  put_file(bundle, pem, len);
  free(pem);
  char *want = glab_b64_file(bundle);
  if (!lab_wait(ca_set_and_restored, want, 60000))
    fail_msg("the guard did not set the caBundle and restore the webhook");
  free(want);
  int set_at, restored_at;
  assert_int_equal(glab_log_count(&guard, "ca_bundle_set", &set_at), 1);
  assert_int_equal(glab_log_count(&guard, "webhook_restored", &restored_at), 1);
  assert_true(set_at >= 0 && restored_at > set_at);
  assert_int_equal(glab_log_count(&guard, "registration_missing", &first), 1);
  if (!lab_wait(webhook_called, NULL, 60000))
    fail_msg("the API server does not call the webhook with the caBundle the guard set");

  whlab_stop(&guard);
  assert_int_equal(glab_reg_off(lab.kc, lab.name), 0);
  whlab_unregister(&lab);
  whlab_ns_delete(&lab);
}

static int guard_restored_only(void *ud) {
  (void)ud;
  return glab_reg_off(lab.kc, lab.name) == 0 &&
         glab_metric(&guard, "ripple_guard_restored_total") == 1;
}

/* The registration created disabled, with its caBundle, and a guard without
 * --ca-bundle: it starts disabled and restores once the webhook answers. */
static void test_guard_fresh_install_with_ca(void **state) {
  (void)state;
  whlab_begin_cluster(&lab, "ripple-guard-on");
  whlab_start(&lab);
  char name[64], sfx[8];
  lab_suffix(sfx, 6);
  snprintf(name, sizeof name, "ripple-guard-on-%s", sfx);
  glab_register_disabled(&lab, name, getenv("RIPPLE_LAB_CA"));
  assert_int_equal(glab_reg_off(lab.kc, lab.name), 1);
  assert_false(whlab_annotated(lab.kc, lab.ns));
  char *extra[] = {"--recover-after", "3", NULL};
  glab_start(&guard, &lab, name, extra);
  if (!lab_wait(guard_restored_only, NULL, 60000)) fail_msg("the guard did not restore");
  int first;
  assert_int_equal(glab_log_count(&guard, "webhook_restored", &first), 1);
  assert_int_equal(glab_log_count(&guard, "ca_bundle_set", &first), 0);
  assert_true(glab_metric(&guard, "ripple_guard_probes_total") >= 3);
  assert_int_equal(glab_metric(&guard, "ripple_guard_ca_bundle_synced"), 1);
  if (!lab_wait(webhook_called, NULL, 60000)) fail_msg("the API server does not call the webhook");
  whlab_stop(&guard);
  whlab_unregister(&lab);
  whlab_ns_delete(&lab);
}

int main(void) {
  atexit(kill_guard);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_guard_takes_webhook_out_and_back, teardown),
      cmocka_unit_test_teardown(test_guard_fresh_install_ca_bundle, teardown),
      cmocka_unit_test_teardown(test_guard_fresh_install_with_ca, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
