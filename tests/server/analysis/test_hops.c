/*
 * test_hops.c - GET /v1/hops (server/analysis/hops.h) on the trace server
 * in the test's process (server_rig.h): five scales of one Deployment as the
 * webhook sends them, each with its own binding time, and one ConfigMap
 * change. The binding hop's count and percentiles across the scales, the
 * kind and write filters, since and until, limit and truncation, and the
 * arguments refused.
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

/* Each scale's binding, ms into its minute: the hop takes it less the
 * ReplicaSet's write (10 ms) it waited for. */
static const int bind_ms[] = {0, 40, 140, 240, 340, 1040};

static void root(sbuf_t *m, int k, const char *kind, const char *name) {
  sbuf_printf(m,
              "{\"cpid\":\"%s\",\"sources\":[],\"time\":\"2026-11-24T10:%02d:00Z\","
              "\"component\":\"kubernetes-admin\",\"object\":{\"kind\":\"%s\",\"namespace\":"
              "\"d\",\"name\":\"%s\",\"uid\":\"%s-uid\"}}",
              rig_cpid(P(k)), k, kind, name, name);
}

/* Scale k at minute k: the person's update, the ReplicaSet's, a Pod's
 * create, its binding bind_ms[k] into the minute, its status 50 ms later. */
static void post_scale(const rig_t *r, int k) {
  sbuf_t m, s;
  sbuf_init(&m);
  sbuf_init(&s);
  sbuf_putc(&m, '[');
  root(&m, k, "Deployment", "web");
  sbuf_printf(&m,
              ",{\"cpid\":\"%s\",\"sources\":[\"%s\"],\"trigger\":[\"%s\"],"
              "\"time\":\"2026-11-24T10:%02d:00.010Z\"}]",
              rig_cpid(N(k)), rig_cpid(P(k)), rig_cpid(P(k)), k);
  sbuf_putc(&s, '[');
  rig_span(&s, P(k), 1, "kubernetes-admin", "update deployments", "Deployment", "web", "", k, 0);
  rig_span(&s, N(k), 2, "deployment-controller", "update replicasets", "ReplicaSet", "web-1",
           "Deployment/web", k, 10);
  rig_span(&s, N(k), 3, "replicaset-controller", "create pods", "Pod", "", "ReplicaSet/web-1", k,
           20);
  rig_span(&s, N(k), 4, "kube-scheduler", "create pods/binding", "Pod", "web-1-a",
           "ReplicaSet/web-1", k, bind_ms[k]);
  rig_span(&s, N(k), 5, "kwok", "update pods/status", "Pod", "web-1-a", "ReplicaSet/web-1", k,
           bind_ms[k] + 50);
  sbuf_putc(&s, ']');
  rig_post(r, "mergelogs", m.p);
  rig_post(r, "spans", s.p);
  sbuf_free(&m);
  sbuf_free(&s);
}

/* A ConfigMap changed at minute 0: one write, no cascade. */
static void post_configmap(const rig_t *r) {
  sbuf_t m, s;
  sbuf_init(&m);
  sbuf_init(&s);
  sbuf_putc(&m, '[');
  root(&m, 0, "ConfigMap", "cfg");
  sbuf_putc(&m, ']');
  sbuf_putc(&s, '[');
  rig_span(&s, P(0), 1, "kubernetes-admin", "update configmaps", "ConfigMap", "cfg", "", 0, 0);
  sbuf_putc(&s, ']');
  rig_post(r, "mergelogs", m.p);
  rig_post(r, "spans", s.p);
  sbuf_free(&m);
  sbuf_free(&s);
}

static void post_all(rig_t *r) {
  rig_open(r);
  post_configmap(r);
  for (int k = 1; k <= 5; k++) post_scale(r, k);
}

static const char *str(const json_t *o, const char *k) {
  const char *v = json_string_value(json_object_get(o, k));
  return v ? v : "";
}

static double num(const json_t *o, const char *k) {
  return json_number_value(json_object_get(o, k));
}

/* The answer's hop of this write (NULL when it has none). */
static const json_t *hop(const json_t *j, const char *write) {
  const json_t *hops = json_object_get(j, "hops"), *h;
  size_t i;
  json_array_foreach(hops, i, h) if (!strcmp(str(h, "write"), write)) return h;
  return NULL;
}

static json_t *get(const rig_t *r, const char *query, int status) {
  char path[300];
  snprintf(path, sizeof path, "/v1/hops%s", query);
  return hc_get_json(r->base, path, status);
}

static size_t roots(const json_t *j) {
  return (size_t)json_integer_value(json_object_get(json_object_get(j, "roots"), "count"));
}

static int cut(const json_t *j) {
  return json_is_true(json_object_get(json_object_get(j, "roots"), "truncated"));
}

/* The binding's times: took = bind_ms - 10 (the ReplicaSet's update). */
static void bindings(void **state) {
  rig_t *r = *state;
  post_all(r);
  json_t *j = get(r, "?since=2026-11-24T09:00:00Z&until=2026-11-24T11:00:00Z", 200);
  assert_int_equal(roots(j), 6);
  assert_false(cut(j));
  assert_string_equal(str(j, "scope"), "own");
  const json_t *b = hop(j, "create pods/binding");
  assert_non_null(b);
  assert_string_equal(str(b, "component"), "kube-scheduler");
  assert_string_equal(str(b, "kind"), "Pod");
  assert_int_equal(num(b, "cascades"), 5);
  assert_int_equal(num(b, "writes"), 5);
  assert_true(num(b, "p50_ms") == 230.0); /* 30, 130, 230, 330, 1030 */
  assert_true(num(b, "p90_ms") == 1030.0);
  assert_true(num(b, "max_ms") == 1030.0);
  /* The slowest p50 first: the binding. */
  assert_ptr_equal(json_array_get(json_object_get(j, "hops"), 0), b);
  assert_non_null(hop(j, "update configmaps"));
  assert_int_equal(num(hop(j, "update deployments"), "cascades"), 5);
  json_decref(j);
}

static void filters(void **state) {
  rig_t *r = *state;
  post_all(r);
  json_t *j = get(r, "?kind=Deployment", 200);
  assert_int_equal(roots(j), 5);
  assert_null(hop(j, "update configmaps"));
  json_decref(j);
  j = get(r, "?write=update%20configmaps", 200);
  assert_int_equal(roots(j), 1);
  assert_int_equal(json_array_size(json_object_get(j, "hops")), 1);
  json_decref(j);
  j = get(r, "?kind=Deployment&write=update%20configmaps", 200);
  assert_int_equal(roots(j), 0);
  assert_int_equal(json_array_size(json_object_get(j, "hops")), 0);
  json_decref(j);
  j = get(r, "?component=someone-else", 200);
  assert_int_equal(roots(j), 0);
  json_decref(j);
  /* Scales 3, 4 and 5: bindings 230, 330, 1030. */
  j = get(r, "?since=2026-11-24T10:03:00Z", 200);
  assert_int_equal(roots(j), 3);
  assert_true(num(hop(j, "create pods/binding"), "p50_ms") == 330.0);
  json_decref(j);
  /* The ConfigMap, scales 1 and 2. */
  j = get(r, "?until=2026-11-24T10:03:00Z", 200);
  assert_int_equal(roots(j), 3);
  assert_true(num(hop(j, "create pods/binding"), "max_ms") == 130.0);
  json_decref(j);
}

static void limits(void **state) {
  rig_t *r = *state;
  post_all(r);
  /* The newest two: scales 5 and 4. */
  json_t *j = get(r, "?kind=Deployment&limit=2", 200);
  assert_int_equal(roots(j), 2);
  assert_true(cut(j));
  assert_true(json_is_true(json_object_get(j, "truncated")));
  const json_t *b = hop(j, "create pods/binding");
  assert_int_equal(num(b, "cascades"), 2);
  assert_true(num(b, "p50_ms") == 330.0);
  assert_true(num(b, "max_ms") == 1030.0);
  json_decref(j);
  j = get(r, "?kind=Deployment&limit=5", 200);
  assert_int_equal(roots(j), 5);
  assert_false(cut(j));
  assert_false(json_is_true(json_object_get(j, "truncated")));
  json_decref(j);
  j = get(r, "?kind=Deployment&scope=reachable", 200);
  assert_string_equal(str(j, "scope"), "reachable");
  json_decref(j);
  json_decref(get(r, "?limit=0", 400));
  json_decref(get(r, "?limit=501", 400));
  json_decref(get(r, "?limit=many", 400));
  json_decref(get(r, "?since=yesterday", 400));
  json_decref(get(r, "?until=2026-13-01", 400));
  json_decref(get(r, "?scope=everything", 400));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(bindings, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(filters, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(limits, rig_setup, rig_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
