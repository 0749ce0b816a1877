/*
 * test_webhook_lab.c - the real ripple-webhook and ripple-server against the
 * lab.
 *
 * The webhook serves with the lab's webhook certificate and is registered
 * (failurePolicy Ignore, by loopback URL) for this test's namespace only.
 * Then: a Deployment of 10 replicas is scaled to 20 by a patch that carries a
 * root CPID; the trace server must relate that CPID to the Deployment, its
 * ReplicaSet, the 10 new Pods and their bindings and status writes; the
 * Endpoints of a Service over those Pods must carry a CPID whose origins
 * include the Service's and the scale's. Finally, with the trace server
 * killed, the Deployment still scales.
 */
#include <curl/curl.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "http_client.h"
#include "review.h"
#include "rw_lab.h"
#include "wh_lab.h"

static whlab_t lab;

/* A metric's value from the webhook's /metrics; prints the latency lines. */
static double metric(const char *name) {
  char *body = NULL;
  assert_int_equal(whlab_webhook_get(&lab, "/metrics", &body), 200);
  double v = -1;
  for (char *save = NULL, *l = strtok_r(body, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    if (!strncmp(l, "ripple_webhook_request_duration_seconds_bucket", 46))
      fprintf(stderr, "# %s\n", l);
    if (!strncmp(l, name, strlen(name)) && l[strlen(name)] == ' ')
      v = strtod(l + strlen(name), NULL);
  }
  free(body);
  return v;
}

/* Whatever the test left when it failed: the registration, the namespace. */
static int teardown(void **state) {
  (void)state;
  whlab_end(&lab);
  return 0;
}

/* ---- cluster and trace server helpers ----------------------------------- */

typedef struct want {
  int replicas;
} want_t;

static int deployment_ready(void *ud) {
  const want_t *w = ud;
  json_t *d = whlab_get(&lab, "deployments", "web");
  int ok = lab_int(d, "status.readyReplicas") == w->replicas &&
           lab_int(d, "status.updatedReplicas") == w->replicas &&
           lab_int(d, "status.observedGeneration") == lab_int(d, "metadata.generation");
  json_decref(d);
  return ok;
}

static int endpoints_full(void *ud) {
  const want_t *w = ud;
  json_t *e = whlab_get(&lab, "endpoints", "web");
  const json_t *addrs =
      json_object_get(json_array_get(json_object_get(e, "subsets"), 0), "addresses");
  int ok = (int)json_array_size(addrs) == w->replicas;
  json_decref(e);
  return ok;
}

static void scale(const char *cpid, int replicas) {
  char patch[256];
  snprintf(patch, sizeof patch,
           "{\"metadata\":{\"annotations\":{\"cpid.ripple.dev/deployment\":\"1;%s\"}},"
           "\"spec\":{\"replicas\":%d}}",
           cpid, replicas);
  whlab_patch(&lab, "deployments", "web", patch);
  want_t w = {replicas};
  if (!lab_wait(deployment_ready, &w, 120000))
    fail_msg("the Deployment did not reach %d ready replicas within 120 s", replicas);
}

/* Is cpid among the related CPIDs of root? */
static int related_has(const json_t *rel, const char *cpid) {
  return hc_array_has(json_object_get(rel, "related"), cpid);
}

static const char *sattr(const json_t *span, const char *key) {
  return json_string_value(json_object_get(json_object_get(span, "attributes"), key));
}

/* How many spans named name, on objects whose name is in names (NULL: any). */
static size_t count_spans(const json_t *spans, const char *name, json_t *names) {
  size_t i, n = 0;
  const json_t *s;
  json_array_foreach(json_object_get(spans, "spans"), i, s) {
    if (strcmp(json_string_value(json_object_get(s, "name")), name) != 0) continue;
    const char *obj = sattr(s, "name");
    if (!names || (obj && json_object_get(names, obj))) n++;
  }
  return n;
}

/* ---- the test --------------------------------------------------------------- */

static json_t *pod_names(void) { return lab_names(lab.kc, "pods", lab.ns, "app=web"); }

/* What the trace server holds of a scale's spans. */
typedef struct scale_spans {
  const char *x;
  json_t *fresh; /* the new Pods' names */
  json_t *spans;
  size_t ndep, nrs, creates, binds, statuses;
} scale_spans_t;

static int spans_complete(void *ud) {
  scale_spans_t *c = ud;
  json_decref(c->spans);
  c->spans = whlab_trace(&lab, c->x, "spans");
  c->ndep = c->nrs = 0;
  size_t i;
  const json_t *s;
  json_array_foreach(json_object_get(c->spans, "spans"), i, s) {
    c->ndep += !strcmp(sattr(s, "kind"), "Deployment") && !strcmp(sattr(s, "name"), "web");
    c->nrs += !strcmp(sattr(s, "kind"), "ReplicaSet");
  }
  c->creates = count_spans(c->spans, "create pods", NULL);
  c->binds = count_spans(c->spans, "create pods/binding", c->fresh);
  c->statuses = count_spans(c->spans, "update pods/status", c->fresh);
  return c->ndep >= 1 && c->nrs >= 1 && c->creates >= 10 && c->binds == 10 && c->statuses >= 10;
}

/* The scale's CPID relates to the Deployment, its ReplicaSet, the new Pods. */
static void check_scale(const char *x, json_t *before) {
  json_t *rel = whlab_trace(&lab, x, "related");
  json_t *all = pod_names(), *fresh = json_object();
  const char *k;
  json_t *v;
  json_object_foreach(all, k, v) if (!json_object_get(before, k)) json_object_set(fresh, k, v);
  assert_int_equal(json_object_size(fresh), 10);
  /* The webhook ships spans in the background: give the last ones time. */
  scale_spans_t c = {.x = x, .fresh = fresh};
  lab_wait(spans_complete, &c, 30000);
  fprintf(stderr,
          "# spans of %s: %zu in all, %zu deployment, %zu replicaset, %zu pod creates, "
          "%zu bindings and %zu status writes of the new pods\n",
          x, json_array_size(json_object_get(c.spans, "spans")), c.ndep, c.nrs, c.creates, c.binds,
          c.statuses);
  assert_true(c.ndep >= 1);
  assert_true(c.nrs >= 1);
  assert_true(c.creates >= 10);
  assert_int_equal(c.binds, 10);
  assert_true(c.statuses >= 10);
  json_t *spans = c.spans;
  /* Each new Pod and the ReplicaSet carry a CPID related to the scale's. */
  char id[RIPPLE_CPID_STRLEN + 1];
  json_object_foreach(fresh, k, v) {
    json_t *pod = whlab_get(&lab, "pods", k);
    assert_true(whlab_obj_cpid(pod, "Pod", id));
    if (!related_has(rel, id)) fail_msg("pod %s carries %s, not related to %s", k, id, x);
    json_decref(pod);
  }
  json_decref(all);
  json_decref(fresh);
  json_decref(rel);
  json_decref(spans);
}

/* The Endpoints' CPID descends from the Service's and from the scale's. */
static void check_endpoints(const char *svc_cpid, const char *x) {
  want_t w = {20};
  if (!lab_wait(endpoints_full, &w, 60000)) fail_msg("Endpoints did not list 20 addresses");
  char id[RIPPLE_CPID_STRLEN + 1];
  int found = 0;
  json_t *org = NULL;
  for (int tries = 0; tries < 100 && !found; tries++) { /* the last write may be in flight */
    json_t *e = whlab_get(&lab, "endpoints", "web");
    assert_true(whlab_obj_cpid(e, "Endpoints", id));
    json_decref(e);
    json_decref(org);
    org = whlab_trace(&lab, id, "origins");
    found = hc_array_has(json_object_get(org, "origins"), svc_cpid) &&
            hc_array_has(json_object_get(org, "origins"), x);
    if (!found) usleep(100000);
  }
  char *dump = json_dumps(org, JSON_COMPACT);
  fprintf(stderr, "# endpoints %s: origins %s\n", id, dump);
  free(dump);
  json_decref(org);
  assert_true(found);
}

static void test_scale_traced(void **state) {
  (void)state;
  whlab_begin(&lab, "ripple-wh", "ripple-wh-test");
  whlab_create(
      &lab, "services",
      lab_json("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"web\","
               "\"namespace\":\"%s\"},\"spec\":{\"selector\":{\"app\":\"web\"},\"ports\":[{"
               "\"port\":80}]}}",
               lab.ns));
  whlab_create(
      &lab, "deployments",
      lab_json(
          "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
          "\"namespace\":\"%s\"},\"spec\":{\"replicas\":10,\"selector\":{\"matchLabels\":{\"app\":"
          "\"web\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{"
          "\"containers\":[{\"name\":\"c\",\"image\":\"ripple.invalid/noop:1\"}]}}}}",
          lab.ns));
  want_t w10 = {10};
  if (!lab_wait(deployment_ready, &w10, 120000)) fail_msg("10 replicas not ready in 120 s");
  json_t *svc = whlab_get(&lab, "services", "web");
  char svc_cpid[RIPPLE_CPID_STRLEN + 1], x[RIPPLE_CPID_STRLEN + 1];
  if (!whlab_obj_cpid(svc, "Service", svc_cpid))
    fail_msg("the webhook gave the Service no context");
  json_decref(svc);
  whlab_new_cpid(x);
  json_t *before = pod_names();
  json_t *d = whlab_get(&lab, "deployments", "web");
  char created[RIPPLE_CPID_STRLEN + 1], got[RIPPLE_CPID_STRLEN + 1];
  assert_true(whlab_obj_cpid(d, "Deployment", created));
  json_decref(d);
  scale(x, 20);
  /* The client's root is the scale's (check_scale), but held by the webhook:
   * the Deployment's annotation stays as created, or the Deployment
   * controller would copy it onto the ReplicaSet in a write of its own. */
  d = whlab_get(&lab, "deployments", "web");
  assert_true(whlab_obj_cpid(d, "Deployment", got));
  assert_string_equal(got, created);
  json_decref(d);
  check_endpoints(svc_cpid, x);
  check_scale(x, before);
  json_decref(before);

  /* The trace server goes away: the cluster works as before. */
  whlab_kill(&lab.server);
  whlab_new_cpid(x);
  scale(x, 25);
  want_t w25 = {25};
  assert_true(lab_wait(endpoints_full, &w25, 60000));
  assert_int_equal(whlab_webhook_get(&lab, "/healthz", NULL), 200);
  assert_true(metric("ripple_webhook_patched_total") > 0);
  assert_true(metric("ripple_webhook_merges_total") > 0);
  assert_int_equal(metric("ripple_webhook_bad_requests_total"), 0);

  whlab_unregister(&lab);
  whlab_stop(&lab.webhook);
  whlab_ns_delete(&lab);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_scale_traced, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
