/*
 * test_paths.c - GET /v1/cpids/{cpid}/critical-path and GET /v1/compare
 * (server/analysis/paths.h) on the trace server in the test's process
 * (server_rig.h): two scales of one Deployment as the webhook sends them,
 * the second with a scheduler 2 s slower. The first's critical path runs
 * through its binding; compared, the binding is the hop that changed; the
 * arguments are checked.
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

static const char *id(int key) {
  static char buf[8][40];
  static int next;
  char *b = buf[next++ % 8];
  snprintf(b, 40, "%08x-0000-4000-8000-000000000000", (unsigned)key);
  return b;
}

static void span(sbuf_t *s, int key, int n, const char *svc, const char *name, const char *kind,
                 const char *obj, const char *owner, int k, int ms) {
  sbuf_printf(s,
              "%s{\"cpid\":\"%s\",\"span_id\":\"%016x\",\"service\":\"%s\",\"name\":\"%s\","
              "\"start\":\"2026-11-24T10:%02d:00Z\",\"end\":\"2026-11-24T10:%02d:%02d.%03dZ\","
              "\"attributes\":{\"kind\":\"%s\",\"namespace\":\"d\",\"name\":\"%s\",\"uid\":"
              "\"%s-uid\",\"owner\":\"%s\"}}",
              s->len > 1 ? "," : "", id(key), (unsigned)(key * 100 + n), svc, name, k, k, ms / 1000,
              ms % 1000, kind, obj, obj, owner);
}

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
              id(P(k)), k, id(N(k)), id(P(k)), id(P(k)), k);
  sbuf_putc(&s, '[');
  span(&s, P(k), 1, "kubernetes-admin", "update deployments", "Deployment", "web", "", k, 0);
  span(&s, N(k), 2, "deployment-controller", "update replicasets", "ReplicaSet", "web-1",
       "Deployment/web", k, 10);
  span(&s, N(k), 3, "replicaset-controller", "create pods", "Pod", "", "ReplicaSet/web-1", k, 20);
  span(&s, N(k), 4, "kube-scheduler", "create pods/binding", "Pod", "web-1-a", "ReplicaSet/web-1",
       k, bind_ms);
  span(&s, N(k), 5, "kwok", "update pods/status", "Pod", "web-1-a", "ReplicaSet/web-1", k,
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
  snprintf(path, sizeof path, "/v1/cpids/%s/critical-path", id(P(1)));
  json_t *j = hc_get_json(r->base, path, 200);
  const json_t *hops = json_object_get(j, "hops");
  assert_int_equal(json_array_size(hops), 4); /* not the Pod's create */
  assert_string_equal(str(json_array_get(hops, 2), "component"), "kube-scheduler");
  assert_string_equal(str(json_array_get(hops, 3), "write"), "update pods/status");
  assert_string_equal(str(j, "cpid"), id(P(1)));
  assert_string_equal(str(j, "scope"), "own");
  assert_true(json_real_value(json_object_get(j, "total_ms")) == 90.0);
  json_decref(j);
  snprintf(path, sizeof path, "/v1/cpids/%s/critical-path?scope=everything", id(P(1)));
  json_decref(hc_get_json(r->base, path, 400));
  snprintf(path, sizeof path, "/v1/cpids/%s/critical-path", id(99));
  json_decref(hc_get_json(r->base, path, 404));
}

static void compared(void **state) {
  rig_t *r = *state;
  rig_open(r);
  post_scale(r, 1, 40);
  post_scale(r, 2, 2040);
  char path[200];
  snprintf(path, sizeof path, "/v1/compare?a=%s&b=%s", id(P(1)), id(P(2)));
  json_t *j = hc_get_json(r->base, path, 200);
  const json_t *first = json_array_get(json_object_get(j, "hops"), 0);
  assert_string_equal(str(first, "write"), "create pods/binding");
  assert_string_equal(str(first, "change"), "slower");
  assert_true(json_real_value(json_object_get(first, "delta_ms")) == 2000.0);
  assert_string_equal(str(json_array_get(json_object_get(j, "hops"), 1), "change"), "same");
  assert_string_equal(str(json_object_get(j, "a"), "cpid"), id(P(1)));
  assert_string_equal(str(json_object_get(j, "b"), "cpid"), id(P(2)));
  json_decref(j);
  json_decref(hc_get_json(r->base, "/v1/compare?a=nope&b=nope", 400));
  snprintf(path, sizeof path, "/v1/compare?a=%s", id(P(1)));
  json_decref(hc_get_json(r->base, path, 400));
  snprintf(path, sizeof path, "/v1/compare?a=%s&b=%s", id(P(1)), id(99));
  json_decref(hc_get_json(r->base, path, 404));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(critical_path, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(compared, rig_setup, rig_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
