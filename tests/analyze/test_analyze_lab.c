/*
 * test_analyze_lab.c - `ripple analyze` on a change log captured in the lab:
 * a tiny watch of our own (libripple-kube watches of Deployments, ReplicaSets
 * and Pods, written in the change-log format of docs/analyze.md) records a
 * Deployment created with 3 replicas and scaled to 5; the analyzer must find
 * the chain: one ReplicaSet add and one update, 3 Pods from the add and 2 from
 * the scale, every Pod's scheduling, and both end-to-end changes.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rw_lab.h"
#include "testutil.h"

#include "analyze.h"

typedef struct wcap {
  pthread_mutex_t mu;
  FILE *out;
  int synced;
  long long ready; /* the Deployment's status.readyReplicas, as last seen */
} wcap_t;

typedef struct source {
  wcap_t *cap;
  const char *resource; /* as the change log names it */
} source_t;

static void on_event(void *ud, const ripple_kube_event_t *ev) {
  source_t *s = ud;
  static const char *const ops[] = {"add", "update", "delete"};
  char when[64];
  time_t sec = (time_t)(ev->time_ns / 1000000000);
  struct tm tm;
  gmtime_r(&sec, &tm);
  size_t n = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(when + n, sizeof when - n, ".%09lldZ", (long long)(ev->time_ns % 1000000000));
  json_t *line = json_pack("{s:s, s:I, s:s, s:s, s:O, s:O, s:O, s:O, s:O}", "time", when, "time_ns",
                           (json_int_t)ev->time_ns, "op", ops[ev->type], "resource", s->resource,
                           "namespace", lab_at(ev->obj, "metadata.namespace"), "name",
                           lab_at(ev->obj, "metadata.name"), "uid", lab_at(ev->obj, "metadata.uid"),
                           "rv", lab_at(ev->obj, "metadata.resourceVersion"), "object", ev->obj);
  assert_non_null(line);
  if (ev->relist) json_object_set_new(line, "relist", json_true());
  if (ev->old) json_object_set(line, "old", ev->old);
  char *text = json_dumps(line, JSON_COMPACT);
  json_decref(line);
  pthread_mutex_lock(&s->cap->mu);
  fprintf(s->cap->out, "%s\n", text);
  if (!strcmp(s->resource, "deployments.apps"))
    s->cap->ready = lab_int(ev->obj, "status.readyReplicas");
  pthread_mutex_unlock(&s->cap->mu);
  free(text);
}

static void on_synced(void *ud) {
  source_t *s = ud;
  pthread_mutex_lock(&s->cap->mu);
  s->cap->synced++;
  pthread_mutex_unlock(&s->cap->mu);
}

static int all_synced(void *ud) {
  wcap_t *cap = ud;
  pthread_mutex_lock(&cap->mu);
  int done = cap->synced == 3;
  pthread_mutex_unlock(&cap->mu);
  return done;
}

static long long want_ready;
static int ready_seen(void *ud) {
  wcap_t *cap = ud;
  pthread_mutex_lock(&cap->mu);
  int done = cap->ready == want_ready;
  pthread_mutex_unlock(&cap->mu);
  return done;
}

static void create_deployment(ripple_kube_client_t *c, const char *ns) {
  json_t *d = lab_json(
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\"},"
      "\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":{\"app\":\"web\"}},"
      "\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{"
      "\"name\":\"app\",\"image\":\"ripple.invalid/noop:1\"}]}}}}");
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(c, lab_resolve(c, "deployments.apps"), ns, d, NULL, NULL, &st));
  json_decref(d);
}

static void scale(ripple_kube_client_t *c, const char *ns, int n) {
  char patch[64];
  int len = snprintf(patch, sizeof patch, "{\"spec\":{\"replicas\":%d}}", n);
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_patch(c, lab_resolve(c, "deployments.apps"), ns, "web",
                               RIPPLE_KUBE_PATCH_MERGE, patch, (size_t)len, NULL, NULL, &st));
}

static void wait_ready(wcap_t *cap, long long n) {
  want_ready = n;
  if (!lab_wait(ready_seen, cap, 120000)) fail_msg("Deployment never had %lld ready Pods", n);
  /* The Pods' own watch may trail the Deployment's by a moment. */
  sleep(1);
}

static void analyze_file(const char *path) {
  cl_log_t log = {0};
  char err[256];
  assert_int_equal(cl_log_read_path(&log, path, err, sizeof err), RIPPLE_OK);
  assert_int_equal(log.malformed, 0);
  cl_log_sort(&log);
  ripple_rules_t *rules;
  assert_int_equal(ripple_rules_new(&rules), RIPPLE_OK);
  hop_result_t res;
  assert_int_equal(hops_compute(&log, rules, &res), RIPPLE_OK);
  report_table(stderr, &log, &res);
  assert_int_equal(res.stats[HOP_DEPLOY_ADD_RS_ADD].count, 1);
  assert_int_equal(res.stats[HOP_DEPLOY_UPDATE_RS_UPDATE].count, 1);
  assert_int_equal(res.stats[HOP_RS_ADD_POD_ADD].count, 3);
  assert_int_equal(res.stats[HOP_RS_UPDATE_POD_ADD].count, 2);
  assert_int_equal(res.stats[HOP_POD_ADD_SCHEDULED].count, 5);
  assert_int_equal(res.stats[HOP_E2E_DEPLOY_READY].count, 2);
  hops_free(&res);
  ripple_rules_free(rules);
  cl_log_free(&log);
}

static void deployment_scale_chain(void **state) {
  (void)state;
  ripple_kube_client_t *c = lab_client();
  char ns[64];
  lab_ns_new(c, "analyze", ns, sizeof ns);
  char path[] = "/tmp/ripple-analyze-lab-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  wcap_t cap = {.mu = PTHREAD_MUTEX_INITIALIZER, .out = fdopen(fd, "w"), .ready = -1};
  assert_non_null(cap.out);
  source_t src[3] = {{&cap, "deployments.apps"}, {&cap, "replicasets.apps"}, {&cap, "pods"}};
  ripple_kube_watch_t *w[3];
  for (int i = 0; i < 3; i++) {
    ripple_kube_watch_opts_t o = {.list = {.namespace_ = ns}, .strip_managed_fields = 1};
    ripple_kube_watch_handlers_t h = {.event = on_event, .synced = on_synced, .ud = &src[i]};
    assert_int_equal(ripple_kube_watch_start(c, lab_resolve(c, src[i].resource), &o, &h, &w[i]),
                     RIPPLE_OK);
  }
  assert_true(lab_wait(all_synced, &cap, 30000));
  create_deployment(c, ns);
  wait_ready(&cap, 3);
  scale(c, ns, 5);
  wait_ready(&cap, 5);
  for (int i = 0; i < 3; i++) ripple_kube_watch_free(w[i]);
  assert_int_equal(fclose(cap.out), 0);
  analyze_file(path);
  unlink(path);
  lab_ns_delete(c, ns);
  ripple_kube_client_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(deployment_scale_chain)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
