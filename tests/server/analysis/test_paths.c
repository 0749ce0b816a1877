/*
 * test_paths.c - GET /v1/cpids/{cpid}/critical-path and GET /v1/compare
 * (server/analysis/paths.h) on the trace server in the test's process
 * (server_rig.h): two scales of one Deployment as the webhook sends them,
 * the second with a scheduler 2 s slower. The first's critical path runs
 * through its binding, whose parts come from the details posted (the watch
 * agent's change, the audit event); compared, the binding is the hop that
 * changed; the arguments are checked.
 */
#include <stdio.h>
#include <string.h>

#include "http_client.h"
#include "ripplex/sbuf.h"
#include "server_rig.h"
#include "testutil.h"

/* Keys: P_k (the person's change) 10+k, N_k (the ReplicaSet's merge) 20+k. */
#define P(k) (10 + (k))
#define N(k) (20 + (k))

/* Scale k at minute k: the person's update, the ReplicaSet's, a binding
 * bind_ms into the minute, the Pod's status 50 ms later. */
static void post_scale(const rig_t *r, int k, int bind_ms) {
  sbuf_t m, s;
  sbuf_init(&m);
  sbuf_init(&s);
  sbuf_printf(&m,
              "[{\"cpid\":\"%s\",\"sources\":[],\"time\":\"2026-11-24T10:%02d:00Z\"},"
              "{\"cpid\":\"%s\",\"sources\":[\"%s\"],\"trigger\":[\"%s\"],"
              "\"time\":\"2026-11-24T10:%02d:00.010Z\"}]",
              rig_cpid(P(k)), k, rig_cpid(N(k)), rig_cpid(P(k)), rig_cpid(P(k)), k);
  sbuf_putc(&s, '[');
  rig_span(&s, P(k), 1, "kubernetes-admin", "update deployments", "Deployment", "web", "", k, 0);
  rig_span(&s, N(k), 2, "deployment-controller", "update replicasets", "ReplicaSet", "web-1",
           "Deployment/web", k, 10);
  rig_span(&s, N(k), 3, "replicaset-controller", "create pods", "Pod", "", "ReplicaSet/web-1", k,
           20);
  rig_span(&s, N(k), 4, "kube-scheduler", "create pods/binding", "Pod", "web-1-a",
           "ReplicaSet/web-1", k, bind_ms);
  rig_span(&s, N(k), 5, "kwok", "update pods/status", "Pod", "web-1-a", "ReplicaSet/web-1", k,
           bind_ms + 50);
  sbuf_putc(&s, ']');
  rig_post(r, "mergelogs", m.p);
  rig_post(r, "spans", s.p);
  sbuf_free(&m);
  sbuf_free(&s);
}

static const char *str(const json_t *o, const char *k) {
  const char *v = json_string_value(json_object_get(o, k));
  return v ? v : "";
}

static void critical_path(void **state) {
  rig_t *r = *state;
  rig_open(r);
  post_scale(r, 1, 40);
  char path[160];
  snprintf(path, sizeof path, "/v1/cpids/%s/critical-path", rig_cpid(P(1)));
  json_t *j = hc_get_json(r->base, path, 200);
  const json_t *hops = json_object_get(j, "hops");
  assert_int_equal(json_array_size(hops), 4); /* not the Pod's create */
  assert_string_equal(str(json_array_get(hops, 2), "component"), "kube-scheduler");
  assert_string_equal(str(json_array_get(hops, 3), "write"), "update pods/status");
  assert_string_equal(str(j, "cpid"), rig_cpid(P(1)));
  assert_string_equal(str(j, "scope"), "own");
  assert_true(json_real_value(json_object_get(j, "total_ms")) == 90.0);
  json_decref(j);
  snprintf(path, sizeof path, "/v1/cpids/%s/critical-path?scope=everything", rig_cpid(P(1)));
  json_decref(hc_get_json(r->base, path, 400));
  snprintf(path, sizeof path, "/v1/cpids/%s/critical-path", rig_cpid(99));
  json_decref(hc_get_json(r->base, path, 404));
}

static const json_t *hop_parts(const json_t *path, size_t i) {
  return json_object_get(json_array_get(json_object_get(path, "hops"), i), "parts");
}

static double part(const json_t *parts, const char *k) {
  const json_t *v = json_object_get(parts, k);
  return v ? json_real_value(v) : -1;
}

/* Each hop split into its parts from the details joined to the path's
 * spans: the watch agent saw the ReplicaSet's update 5 ms after it (the
 * binding's predecessor), the API server received the binding 15 ms
 * before the webhook answered it; the scheduler's 2 s are its "wrote". */
static void critical_parts(void **state) {
  rig_t *r = *state;
  rig_open(r);
  post_scale(r, 1, 2040);
  char path[160], body[1200];
  snprintf(path, sizeof path, "/v1/cpids/%s/critical-path", rig_cpid(P(1)));
  json_t *j = hc_get_json(r->base, path, 200);
  for (size_t i = 0; i < 4; i++) assert_null(hop_parts(j, i)); /* no details yet */
  json_decref(j);
  /* The ReplicaSet's change: its uid and the version its span started from. */
  snprintf(body, sizeof body,
           "[{\"type\":\"change\",\"op\":\"update\",\"time\":\"2026-11-24T10:01:00.015Z\","
           "\"object\":{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"namespace\":"
           "\"d\",\"name\":\"web-1\",\"uid\":\"web-1-uid\"},\"resourceVersion\":\"3\","
           "\"previousResourceVersion\":\"2\",\"cpid\":\"%s\",\"diff\":[{\"path\":"
           "\"/spec/replicas\",\"old\":1,\"new\":2}]}]",
           rig_cpid(N(1)));
  rig_post(r, "details", body);
  /* The binding's audit event, joined by the webhook's span annotation. */
  snprintf(body, sizeof body,
           "{\"kind\":\"EventList\",\"apiVersion\":\"audit.k8s.io/v1\",\"items\":[{"
           "\"kind\":\"Event\",\"apiVersion\":\"audit.k8s.io/v1\",\"level\":\"Metadata\","
           "\"auditID\":\"au-b\",\"stage\":\"ResponseComplete\",\"verb\":\"create\","
           "\"user\":{\"username\":\"system:kube-scheduler\"},\"objectRef\":{\"resource\":"
           "\"pods\",\"subresource\":\"binding\",\"namespace\":\"d\",\"name\":\"web-1-a\","
           "\"apiVersion\":\"v1\"},\"responseStatus\":{\"code\":201},"
           "\"requestReceivedTimestamp\":\"2026-11-24T10:01:02.025Z\","
           "\"stageTimestamp\":\"2026-11-24T10:01:02.048Z\","
           "\"annotations\":{\"ripple.example/ripple-span\":\"%016x\"}}]}",
           (unsigned)(N(1) * 100 + 4));
  rig_post(r, "audit", body);
  j = hc_get_json(r->base, path, 200);
  const json_t *bind = json_array_get(json_object_get(j, "hops"), 2);
  assert_string_equal(str(bind, "component"), "kube-scheduler");
  assert_true(json_real_value(json_object_get(bind, "ms")) == 2030.0);
  const json_t *p = json_object_get(bind, "parts");
  assert_true(part(p, "seen_ms") == 5.0);
  assert_true(part(p, "wrote_ms") == 2010.0);
  assert_true(part(p, "admission_ms") == 15.0);
  assert_null(json_object_get(p, "clamped"));
  /* The ReplicaSet's hop had neither its predecessor's change nor its own
   * audit event; the Pod's status neither. */
  assert_null(hop_parts(j, 1));
  assert_null(hop_parts(j, 3));
  json_decref(j);
}

static void compared(void **state) {
  rig_t *r = *state;
  rig_open(r);
  post_scale(r, 1, 40);
  post_scale(r, 2, 2040);
  char path[200];
  snprintf(path, sizeof path, "/v1/compare?a=%s&b=%s", rig_cpid(P(1)), rig_cpid(P(2)));
  json_t *j = hc_get_json(r->base, path, 200);
  const json_t *first = json_array_get(json_object_get(j, "hops"), 0);
  assert_string_equal(str(first, "write"), "create pods/binding");
  assert_string_equal(str(first, "change"), "slower");
  assert_true(json_real_value(json_object_get(first, "delta_ms")) == 2000.0);
  assert_string_equal(str(json_array_get(json_object_get(j, "hops"), 1), "change"), "same");
  assert_string_equal(str(json_object_get(j, "a"), "cpid"), rig_cpid(P(1)));
  assert_string_equal(str(json_object_get(j, "b"), "cpid"), rig_cpid(P(2)));
  json_decref(j);
  json_decref(hc_get_json(r->base, "/v1/compare?a=nope&b=nope", 400));
  snprintf(path, sizeof path, "/v1/compare?a=%s", rig_cpid(P(1)));
  json_decref(hc_get_json(r->base, path, 400));
  snprintf(path, sizeof path, "/v1/compare?a=%s&b=%s", rig_cpid(P(1)), rig_cpid(99));
  json_decref(hc_get_json(r->base, path, 404));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(critical_path, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(critical_parts, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(compared, rig_setup, rig_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
