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
static char ns[64];
static ripple_kube_client_t *kc;

/* At exit too: no process may outlive a failed test. */
static void kill_both(void) {
  whlab_kill(&lab.server);
  whlab_kill(&lab.webhook);
}

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
  ripple_kube_status_t st;
  const ripple_kube_resource_t *r;
  whlab_unregister(&lab, kc);
  if (kc && *ns && ripple_kube_resolve(kc, "namespaces", &r, &st) == RIPPLE_OK)
    ripple_kube_delete(kc, r, NULL, ns, NULL, &st);
  kill_both();
  ripple_kube_client_free(kc);
  kc = NULL;
  return 0;
}

/* ---- cluster and trace server helpers ----------------------------------- */

/* The CPID in obj's annotation for kind, into out (37 bytes); 0 if none. */
static int obj_cpid(const json_t *obj, const char *kind, char *out) {
  char key[RIPPLE_ANNOTATION_KEYMAX];
  assert_int_equal(ripple_annotation_key(kind, key, sizeof key), RIPPLE_OK);
  const char *v = json_string_value(
      json_object_get(json_object_get(json_object_get(obj, "metadata"), "annotations"), key));
  ripple_ctx_t c;
  if (!v || ripple_ctx_decode(v, strlen(v), RIPPLE_ANC_MAX, &c) != RIPPLE_OK) return 0;
  ripple_cpid_format(&c.cpid, out);
  return 1;
}

static json_t *get(const char *resource, const char *name) {
  json_t *o = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_get(kc, lab_resolve(kc, resource), ns, name, &o, &st));
  return o;
}

typedef struct want {
  int replicas;
} want_t;

static int deployment_ready(void *ud) {
  const want_t *w = ud;
  json_t *d = get("deployments", "web");
  int ok = lab_int(d, "status.readyReplicas") == w->replicas &&
           lab_int(d, "status.updatedReplicas") == w->replicas &&
           lab_int(d, "status.observedGeneration") == lab_int(d, "metadata.generation");
  json_decref(d);
  return ok;
}

static int endpoints_full(void *ud) {
  const want_t *w = ud;
  json_t *e = get("endpoints", "web");
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
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_patch(kc, lab_resolve(kc, "deployments"), ns, "web",
                               RIPPLE_KUBE_PATCH_MERGE, patch, strlen(patch), NULL, NULL, &st));
  want_t w = {replicas};
  if (!lab_wait(deployment_ready, &w, 120000))
    fail_msg("the Deployment did not reach %d ready replicas within 120 s", replicas);
}

static json_t *trace_get(const char *cpid, const char *what) {
  char base[64], path[128];
  snprintf(base, sizeof base, "http://127.0.0.1:%u", lab.server.port);
  snprintf(path, sizeof path, "/v1/cpids/%s/%s", cpid, what);
  json_t *j = hc_get_json(base, path, 200);
  if (!j) fail_msg("GET %s%s did not answer 200", base, path);
  return j;
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

/* Create o (taken) in the test's namespace. */
static void create(const char *resource, json_t *o) {
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(kc, lab_resolve(kc, resource), ns, o, NULL, NULL, &st));
  json_decref(o);
}

static json_t *pod_names(void) { return lab_names(kc, "pods", ns, "app=web"); }

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
  c->spans = trace_get(c->x, "spans");
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
  json_t *rel = trace_get(x, "related");
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
    json_t *pod = get("pods", k);
    assert_true(obj_cpid(pod, "Pod", id));
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
    json_t *e = get("endpoints", "web");
    assert_true(obj_cpid(e, "Endpoints", id));
    json_decref(e);
    json_decref(org);
    org = trace_get(id, "origins");
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
  kc = lab_client();
  atexit(kill_both);
  whlab_start(&lab);
  lab_ns_new(kc, "ripple-wh", ns, sizeof ns);
  char sfx[8];
  lab_suffix(sfx, 6);
  char name[64];
  snprintf(name, sizeof name, "ripple-wh-test-%s", sfx);
  whlab_register(&lab, kc, name, ns);
  create("services",
         lab_json("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"web\","
                  "\"namespace\":\"%s\"},\"spec\":{\"selector\":{\"app\":\"web\"},\"ports\":[{"
                  "\"port\":80}]}}",
                  ns));
  create(
      "deployments",
      lab_json(
          "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
          "\"namespace\":\"%s\"},\"spec\":{\"replicas\":10,\"selector\":{\"matchLabels\":{\"app\":"
          "\"web\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{"
          "\"containers\":[{\"name\":\"c\",\"image\":\"ripple.invalid/noop:1\"}]}}}}",
          ns));
  want_t w10 = {10};
  if (!lab_wait(deployment_ready, &w10, 120000)) fail_msg("10 replicas not ready in 120 s");
  json_t *svc = get("services", "web");
  char svc_cpid[RIPPLE_CPID_STRLEN + 1], x[RIPPLE_CPID_STRLEN + 1];
  if (!obj_cpid(svc, "Service", svc_cpid)) fail_msg("the webhook gave the Service no context");
  json_decref(svc);
  ripple_cpid_t id;
  assert_int_equal(ripple_cpid_generate(&id), RIPPLE_OK);
  ripple_cpid_format(&id, x);
  json_t *before = pod_names();
  json_t *d = get("deployments", "web");
  char created[RIPPLE_CPID_STRLEN + 1], got[RIPPLE_CPID_STRLEN + 1];
  assert_true(obj_cpid(d, "Deployment", created));
  json_decref(d);
  scale(x, 20);
  /* The client's root is the scale's (check_scale), but held by the webhook:
   * the Deployment's annotation stays as created, or the Deployment
   * controller would copy it onto the ReplicaSet in a write of its own. */
  d = get("deployments", "web");
  assert_true(obj_cpid(d, "Deployment", got));
  assert_string_equal(got, created);
  json_decref(d);
  check_endpoints(svc_cpid, x);
  check_scale(x, before);
  json_decref(before);

  /* The trace server goes away: the cluster works as before. */
  whlab_kill(&lab.server);
  assert_int_equal(ripple_cpid_generate(&id), RIPPLE_OK);
  ripple_cpid_format(&id, x);
  scale(x, 25);
  want_t w25 = {25};
  assert_true(lab_wait(endpoints_full, &w25, 60000));
  assert_int_equal(whlab_webhook_get(&lab, "/healthz", NULL), 200);
  assert_true(metric("ripple_webhook_patched_total") > 0);
  assert_true(metric("ripple_webhook_merges_total") > 0);
  assert_int_equal(metric("ripple_webhook_bad_requests_total"), 0);

  whlab_unregister(&lab, kc);
  kill(lab.webhook.pid, SIGTERM);
  int st;
  waitpid(lab.webhook.pid, &st, 0);
  lab.webhook.pid = -1;
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  lab_ns_delete(kc, ns);
  ns[0] = '\0';
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_scale_traced, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
