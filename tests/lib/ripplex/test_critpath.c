/*
 * test_critpath.c - the critical path of a cascade (ripplex/critpath.h), on
 * a scale of a Deployment written by hand as the trace server answers it:
 * the person's update, the ReplicaSet's, two Pod creates, two bindings by a
 * slow scheduler, the Pods' status, the Endpoints, and the Deployment's
 * status. The path must run through the scheduler's binding, across the
 * Endpoints' merge, and leave out what did not wait (the Pod creates, the
 * other Pod, the Deployment's status).
 */
#include <stdio.h>
#include <string.h>

#include "ripplex/critpath.h"
#include "testutil.h"

#define P "00000000-0000-4000-8000-000000000001"
#define N "00000000-0000-4000-8000-000000000002"
#define E "00000000-0000-4000-8000-000000000003"
#define X "00000000-0000-4000-8000-000000000004"
#define S "00000000-0000-4000-8000-000000000005"

static json_t *span(const char *cpid, const char *id, const char *svc, const char *name,
                    const char *kind, const char *obj, const char *uid, int ms) {
  char end[64];
  snprintf(end, sizeof end, "2026-11-28T00:00:%02d.%03d000000Z", ms / 1000, ms % 1000);
  return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s}}", "cpid", cpid,
                   "span_id", id, "service", svc, "name", name, "start",
                   "2026-11-28T00:00:00.000000000Z", "end", end, "attributes", "kind", kind,
                   "namespace", "d", "name", obj, "uid", uid);
}

static json_t *scale_trace(void) {
  json_t *spans = json_array();
  json_array_append_new(spans, span(P, "01", "kubernetes-admin", "update deployments", "Deployment",
                                    "web", "dep", 0));
  json_array_append_new(spans, span(N, "02", "deployment-controller", "update replicasets",
                                    "ReplicaSet", "web-1", "rs", 10));
  json_array_append_new(spans,
                        span(N, "03", "replicaset-controller", "create pods", "Pod", "", "", 20));
  json_array_append_new(spans,
                        span(N, "04", "replicaset-controller", "create pods", "Pod", "", "", 22));
  json_array_append_new(
      spans, span(N, "05", "kube-scheduler", "create pods/binding", "Pod", "web-1-a", "pa", 2030));
  json_array_append_new(
      spans, span(N, "06", "kube-scheduler", "create pods/binding", "Pod", "web-1-b", "pb", 2032));
  json_array_append_new(spans,
                        span(N, "07", "kwok", "update pods/status", "Pod", "web-1-a", "pa", 2100));
  json_array_append_new(spans,
                        span(N, "08", "kwok", "update pods/status", "Pod", "web-1-b", "pb", 2110));
  json_array_append_new(spans, span(P, "09", "deployment-controller", "update deployments/status",
                                    "Deployment", "web", "dep", 2200));
  json_array_append_new(spans, span(E, "0a", "endpoint-controller", "update endpoints", "Endpoints",
                                    "web", "ep", 2300));
  json_t *mls = json_pack("[{s:s, s:[]}, {s:s, s:[s, s], s:[s]}, {s:s, s:[s, s], s:[s]}]", "cpid",
                          P, "sources", "cpid", N, "sources", X, P, "trigger", P, "cpid", E,
                          "sources", S, N, "trigger", N);
  return json_pack("{s:o, s:o}", "spans", spans, "mergelogs", mls);
}

static const char *hop(const json_t *path, size_t i, const char *key) {
  return json_string_value(json_object_get(json_array_get(json_object_get(path, "hops"), i), key));
}

static double hop_ms(const json_t *path, size_t i) {
  return json_real_value(json_object_get(json_array_get(json_object_get(path, "hops"), i), "ms"));
}

static void through_the_binding(void **state) {
  (void)state;
  json_t *t = scale_trace(), *path;
  assert_int_equal(critpath_compute(t, &path), RIPPLE_OK);
  static const char *const want[] = {"01", "02", "06", "08", "0a"};
  assert_int_equal(json_array_size(json_object_get(path, "hops")), 5);
  for (size_t i = 0; i < 5; i++) assert_string_equal(hop(path, i, "span_id"), want[i]);
  assert_string_equal(hop(path, 2, "component"), "kube-scheduler");
  assert_string_equal(hop(path, 2, "name"), "web-1-b");
  assert_true(hop_ms(path, 0) == 0.0);
  assert_true(hop_ms(path, 1) == 10.0);
  assert_true(hop_ms(path, 2) == 2022.0); /* the scheduler's wait */
  assert_true(hop_ms(path, 3) == 78.0);
  assert_true(hop_ms(path, 4) == 190.0);
  assert_true(json_real_value(json_object_get(path, "total_ms")) == 2300.0);
  assert_int_equal(json_integer_value(json_object_get(path, "writes")), 10);
  json_decref(path);

  /* Without the trigger, every source of the Endpoints' merge counts: the
   * same path (S has no write here). */
  json_object_del(json_array_get(json_object_get(t, "mergelogs"), 2), "trigger");
  assert_int_equal(critpath_compute(t, &path), RIPPLE_OK);
  assert_string_equal(hop(path, 3, "span_id"), "08");
  json_decref(path);
  json_decref(t);
}

/* The Deployment's status comes last: its path is the person's write and
 * that status write, on the same object. */
static void same_object(void **state) {
  (void)state;
  json_t *t = scale_trace(), *path;
  json_array_remove(json_object_get(t, "spans"), 9); /* no Endpoints */
  assert_int_equal(critpath_compute(t, &path), RIPPLE_OK);
  assert_int_equal(json_array_size(json_object_get(path, "hops")), 2);
  assert_string_equal(hop(path, 0, "span_id"), "01");
  assert_string_equal(hop(path, 1, "span_id"), "09");
  json_decref(path);
  json_decref(t);
}

/* Empty, unreadable and wrong input: no hops, or refused; never a crash. */
static void bad_input(void **state) {
  (void)state;
  json_t *path;
  json_t *empty = json_object();
  assert_int_equal(critpath_compute(empty, &path), RIPPLE_OK);
  assert_int_equal(json_array_size(json_object_get(path, "hops")), 0);
  json_decref(path);
  json_t *arr = json_array();
  assert_int_equal(critpath_compute(arr, &path), RIPPLE_EINVAL);
  assert_null(path);
  json_t *odd = json_pack("{s:[{s:i}, {s:s, s:s}, s], s:i}", "spans", "cpid", 1, "cpid", P, "end",
                          "yesterday", "nonsense", "mergelogs", 7);
  assert_int_equal(critpath_compute(odd, &path), RIPPLE_OK);
  assert_int_equal(json_integer_value(json_object_get(path, "writes")), 0);
  json_decref(path);
  json_decref(odd);
  json_decref(arr);
  json_decref(empty);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(through_the_binding),
      cmocka_unit_test(same_object),
      cmocka_unit_test(bad_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
