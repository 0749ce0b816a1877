/*
 * test_guard_endpoints_lab.c - ripple-guard in front of webhook replicas
 * (issue 25): three ripple-webhook replicas behind lbproxy
 * (tests/support/wh_replicas.c), the registration on the proxy, as the
 * chart's Service is; the guard given the three replicas as the Service's
 * endpoints (--endpoints: the lab cannot have a Service with loopback
 * endpoints, so this stands for the EndpointSlices it reads in a cluster).
 *
 * One replica hung (SIGSTOP; not the decider, whose hang is the webhook's
 * own story: the others forward to it until another takes the Lease): the
 * two others answer, so the guard must keep the webhook in the write path
 * over 20 probe rounds, report 2 of 3 endpoints answering, count the
 * failures and log the hung endpoint's streak once. Through the proxy a
 * probe would hit the hung replica every third connection, and two such
 * rounds in a row took all tracing out of the path. All three hung: the
 * guard takes the webhook out; all resumed: it puts it back, and a dry-run
 * write comes back annotated. No timings are asserted.
 *
 * What the lab can show of a registration by Service: the guard reads the
 * Service (the name of the port the registration calls) and its
 * EndpointSlices from the API server (a selectorless Service with slices
 * made by hand, since the lab runs no endpoint controller for loopback
 * Pods; another Service's slice beside them) and finds the ready endpoints
 * at the resolved port. The addresses are not on loopback, so without
 * --allow-remote it refuses to probe them (the lab never dials out), and the
 * registration, created disabled so that the API server never calls it,
 * stays as it is.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guard_lab.h"
#include "rw_lab.h"
#include "testutil.h"

#define REPLICAS 3
#define ROUNDS 20

static whlab_t lab;
static whlab_proc_t guard;

static int teardown(void **state) {
  (void)state;
  whlab_end(&lab);
  whlab_kill(&guard);
  return 0;
}

/* The replica that holds the decider Lease, -1 when none says so. */
static int decider(void) {
  for (int k = 0; k < lab.replicas; k++) {
    char *body = NULL;
    long st = whlab_get_port(lab.webhooks[k].port, "/metrics", &body);
    int yes = st == 200 && body && strstr(body, "\nripple_webhook_decider 1\n");
    free(body);
    if (yes) return k;
  }
  return -1;
}

/* Lines of the guard's log for event about 127.0.0.1:port. */
static int endpoint_lines(const char *event, unsigned port) {
  char ev[64], ep[64], line[2048];
  snprintf(ev, sizeof ev, "event=%s ", event);
  snprintf(ep, sizeof ep, "endpoint=127.0.0.1:%u", port);
  FILE *f = fopen(guard.log, "r");
  int n = 0;
  while (f && fgets(line, sizeof line, f)) {
    const char *p = strstr(line, ep);
    n += strstr(line, ev) && p && (p[strlen(ep)] == ' ' || p[strlen(ep)] == '\n');
  }
  if (f) fclose(f);
  return n;
}

typedef struct want {
  double total, answering;
} want_t;

static int endpoints_are(void *ud) {
  const want_t *w = ud;
  return glab_metric(&guard, "ripple_guard_endpoints") == w->total &&
         glab_metric(&guard, "ripple_guard_endpoints_answering") == w->answering;
}

static int guard_acted(void *ud) {
  (void)ud;
  return glab_reg_off(lab.kc, lab.name) == 1 &&
         glab_metric(&guard, "ripple_guard_webhook_disabled") == 1;
}

static int guard_restored(void *ud) {
  (void)ud;
  return glab_reg_off(lab.kc, lab.name) == 0 &&
         glab_metric(&guard, "ripple_guard_webhook_disabled") == 0 &&
         glab_metric(&guard, "ripple_guard_restored_total") >= 1 && whlab_annotated(lab.kc, lab.ns);
}

/* ROUNDS probe rounds (one webhook: one probe each) with the registration
 * read between them: it must never carry the guard's condition. */
static void stays_in_path(void) {
  double start = glab_metric(&guard, "ripple_guard_probes_total");
  int reads = 0;
  for (int waited = 0; glab_metric(&guard, "ripple_guard_probes_total") < start + ROUNDS;
       waited += 100) {
    if (waited > 120000) fail_msg("%d probe rounds did not pass in 120 s", ROUNDS);
    assert_int_equal(glab_reg_off(lab.kc, lab.name), 0);
    reads++;
    usleep(100000);
  }
  assert_int_equal(glab_reg_off(lab.kc, lab.name), 0);
  fprintf(stderr, "# %d rounds, registration read %d times: never disabled\n", ROUNDS, reads + 1);
}

static void start_guard(void) {
  static char eps[160];
  snprintf(eps, sizeof eps, "127.0.0.1:%u,127.0.0.1:%u,127.0.0.1:%u", lab.webhooks[0].port,
           lab.webhooks[1].port, lab.webhooks[2].port);
  char *extra[] = {"--endpoints", eps, NULL};
  glab_start(&guard, &lab, lab.name, extra);
}

static void one_hung(int k) {
  whlab_replica_pause(&lab, k);
  want_t two = {REPLICAS, REPLICAS - 1};
  if (!lab_wait(endpoints_are, &two, 60000)) fail_msg("the guard did not see 2 of 3 answering");
  stays_in_path();
  assert_true(endpoints_are(&two));
  assert_int_equal(glab_metric(&guard, "ripple_guard_webhook_disabled"), 0);
  assert_int_equal(glab_metric(&guard, "ripple_guard_disabled_total"), 0);
  assert_true(glab_metric(&guard, "ripple_guard_endpoint_probe_failures_total") >= ROUNDS);
  assert_true(glab_metric(&guard, "ripple_guard_partial_rounds_total") >= ROUNDS);
  /* The hung endpoint's streak is logged once, not every round. */
  assert_int_equal(endpoint_lines("endpoint_failed", lab.webhooks[k].port), 1);
}

static void test_guard_endpoints_one_hung(void **state) {
  (void)state;
  whlab_begin_cluster(&lab, "ripple-guard-eps");
  lab.replicas = REPLICAS;
  whlab_start(&lab);
  whlab_register(&lab, "ripple-guard-eps");
  start_guard();
  want_t all = {REPLICAS, REPLICAS};
  if (!lab_wait(endpoints_are, &all, 60000)) fail_msg("the guard did not see 3 endpoints answer");
  assert_int_equal(glab_reg_off(lab.kc, lab.name), 0);

  int d = decider(), hung = d == 0 ? 1 : 0;
  fprintf(stderr, "# decider: replica %d; hanging replica %d\n", d, hung);
  one_hung(hung);

  /* The webhook as a whole does not answer: out of the path. */
  for (int k = 0; k < REPLICAS; k++)
    if (k != hung) whlab_replica_pause(&lab, k);
  if (!lab_wait(guard_acted, NULL, 60000)) fail_msg("the guard did not take the webhook out");
  assert_int_equal(glab_metric(&guard, "ripple_guard_endpoints_answering"), 0);
  assert_true(glab_metric(&guard, "ripple_guard_disabled_total") >= 1);

  for (int k = 0; k < REPLICAS; k++) whlab_replica_resume(&lab, k);
  if (!lab_wait(guard_restored, NULL, 60000)) fail_msg("the guard did not restore the webhook");
  want_t back = {REPLICAS, REPLICAS};
  if (!lab_wait(endpoints_are, &back, 60000)) fail_msg("not every endpoint answers again");
  for (int k = 0; k < REPLICAS; k++) {
    assert_true(endpoint_lines("endpoint_failed", lab.webhooks[k].port) >= 1);
    assert_true(endpoint_lines("endpoint_answers", lab.webhooks[k].port) >= 1);
  }

  whlab_stop(&guard);
  assert_int_equal(glab_reg_off(lab.kc, lab.name), 0);
  whlab_unregister(&lab);
  whlab_ns_delete(&lab);
}

static void create(const char *resource, json_t *o) {
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(lab.kc, lab_resolve(lab.kc, resource), lab.ns, o, NULL, NULL, &st));
  json_decref(o);
}

/* A slice of service svc (made by hand: endpointslice.kubernetes.io/managed-by). */
static json_t *slice(const char *name, const char *svc, const char *endpoints) {
  return lab_json(
      "{\"apiVersion\":\"discovery.k8s.io/v1\",\"kind\":\"EndpointSlice\",\"metadata\":{"
      "\"name\":\"%s\",\"labels\":{\"kubernetes.io/service-name\":\"%s\","
      "\"endpointslice.kubernetes.io/managed-by\":\"ripple-test\"}},\"addressType\":\"IPv4\","
      "\"ports\":[{\"name\":\"metrics\",\"port\":9090},{\"name\":\"https\",\"port\":8443}],"
      "\"endpoints\":[%s]}",
      name, svc, endpoints);
}

/* Registered by Service wh, disabled (the guard's condition on) and for no
 * namespace at all: the API server never calls it. */
static void register_by_service(void) {
  snprintf(lab.name, sizeof lab.name, "%s", lab.ns); /* random, like the namespace */
  json_t *cfg = lab_json(
      "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
      "\"MutatingWebhookConfiguration\",\"metadata\":{\"name\":\"%s\"},\"webhooks\":[{"
      "\"name\":\"svc.ripple.dev\",\"clientConfig\":{\"service\":{\"namespace\":\"%s\","
      "\"name\":\"wh\",\"path\":\"/mutate\",\"port\":443}},\"rules\":[{\"apiGroups\":[\"\"],"
      "\"apiVersions\":[\"v1\"],\"operations\":[\"CREATE\"],\"resources\":[\"configmaps\"]}],"
      "\"namespaceSelector\":{\"matchLabels\":{\"ripple-guard-test\":\"never\"}},"
      "\"sideEffects\":\"None\",\"admissionReviewVersions\":[\"v1\"],\"failurePolicy\":"
      "\"Ignore\",\"timeoutSeconds\":1,\"matchConditions\":[{\"name\":\"ripple-guard-off\","
      "\"expression\":\"false\"}]}]}",
      lab.name, lab.ns);
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(lab.kc, lab_resolve(lab.kc, "mutatingwebhookconfigurations"), NULL,
                                cfg, NULL, NULL, &st));
  json_decref(cfg);
}

static int read_two_ready(void *ud) {
  (void)ud;
  int first;
  return glab_log_count(&guard, "probe_refused", &first) >= 1 &&
         glab_log_count(&guard, "endpoints", &first) >= 1;
}

static void test_guard_reads_endpointslices(void **state) {
  (void)state;
  whlab_begin_cluster(&lab, "ripple-guard-svc");
  create("services", lab_json("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{"
                              "\"name\":\"wh\"},\"spec\":{\"ports\":[{\"name\":\"metrics\","
                              "\"port\":9090},{\"name\":\"https\",\"port\":443,\"targetPort\":"
                              "8443}]}}"));
  create("endpointslices.discovery.k8s.io",
         slice("wh-1", "wh",
               "{\"addresses\":[\"10.0.0.1\"],\"conditions\":{\"ready\":true}},"
               "{\"addresses\":[\"10.0.0.2\"],\"conditions\":{\"ready\":false}}"));
  create("endpointslices.discovery.k8s.io", slice("wh-2", "wh", "{\"addresses\":[\"10.0.0.3\"]}"));
  create("endpointslices.discovery.k8s.io",
         slice("other-1", "other", "{\"addresses\":[\"10.0.0.9\"]}"));
  register_by_service();
  char dir[] = "/tmp/ripple-guard-svc-XXXXXX";
  assert_non_null(mkdtemp(dir));
  snprintf(lab.dir, sizeof lab.dir, "%s", dir);
  glab_start(&guard, &lab, lab.name, NULL);
  if (!lab_wait(read_two_ready, NULL, 60000)) fail_msg("the guard did not read the endpoints");
  char line[2048], want[300];
  snprintf(want, sizeof want, "service=%s/wh ready=2 malformed=0", lab.ns);
  FILE *f = fopen(guard.log, "r");
  int found = 0;
  while (f && fgets(line, sizeof line, f))
    found += strstr(line, "event=endpoints ") && strstr(line, want);
  if (f) fclose(f);
  assert_int_equal(found, 1);
  /* Nothing probed, nothing patched: it stays as created. */
  assert_int_equal(glab_reg_off(lab.kc, lab.name), 1);
  assert_int_equal(glab_metric(&guard, "ripple_guard_probes_total"), 0);
  whlab_stop(&guard);
  whlab_unregister(&lab);
  whlab_ns_delete(&lab);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_guard_endpoints_one_hung, teardown),
      cmocka_unit_test_teardown(test_guard_reads_endpointslices, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
