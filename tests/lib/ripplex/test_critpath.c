/*
 * test_critpath.c - the critical path of a cascade (ripplex/critpath.h) and
 * two cascades compared (ripplex/compare.h), on scales of a Deployment
 * written by hand as the trace server answers them: the person's update, the
 * ReplicaSet's, two Pod creates, two bindings, the Pods' status, the
 * Endpoints, and the Deployment's status. With a slow scheduler the path
 * must run through the scheduler's binding, across the Endpoints' merge, and
 * leave out what did not wait (the Pod creates, the other Pod, the
 * Deployment's status); compared with a quick one, the binding is the hop
 * that changed, and not every write after it.
 */
#include <stdio.h>
#include <string.h>

#include "ripplex/compare.h"
#include "ripplex/critpath.h"
#include "ripplex/hops.h"
#include "testutil.h"

#define P "00000000-0000-4000-8000-000000000001"
#define N "00000000-0000-4000-8000-000000000002"
#define E "00000000-0000-4000-8000-000000000003"
#define X "00000000-0000-4000-8000-000000000004"
#define S "00000000-0000-4000-8000-000000000005"

static json_t *span_of(const char *cpid, const char *id, const char *svc, const char *name,
                       const char *kind, const char *obj, const char *uid, const char *owner,
                       int ms) {
  char end[64];
  snprintf(end, sizeof end, "2026-11-28T00:00:%02d.%03d000000Z", ms / 1000, ms % 1000);
  return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s}}", "cpid", cpid,
                   "span_id", id, "service", svc, "name", name, "start",
                   "2026-11-28T00:00:00.000000000Z", "end", end, "attributes", "kind", kind,
                   "namespace", "d", "name", obj, "uid", uid, "owner", owner);
}

/* A Pod's write: owned by the ReplicaSet web-1. */
static json_t *pod_span(const char *id, const char *svc, const char *name, const char *obj,
                        const char *uid, int ms) {
  return span_of(N, id, svc, name, "Pod", obj, uid, "ReplicaSet/web-1", ms);
}

static json_t *span(const char *cpid, const char *id, const char *svc, const char *name,
                    const char *kind, const char *obj, const char *uid, int ms) {
  return span_of(cpid, id, svc, name, kind, obj, uid, "", ms);
}

/* A scale whose scheduler binds bind_ms after the Pod creates (by sched),
 * with or without the Endpoints' update. */
static json_t *scale_of(int bind_ms, const char *sched, int endpoints) {
  int d = bind_ms - 2030; /* what the times after the bindings shift by */
  json_t *spans = json_array();
  json_array_append_new(spans, span(P, "01", "kubernetes-admin", "update deployments", "Deployment",
                                    "web", "dep", 0));
  json_array_append_new(spans, span_of(N, "02", "deployment-controller", "update replicasets",
                                       "ReplicaSet", "web-1", "rs", "Deployment/web", 10));
  json_array_append_new(spans, pod_span("03", "replicaset-controller", "create pods", "", "", 20));
  json_array_append_new(spans, pod_span("04", "replicaset-controller", "create pods", "", "", 22));
  json_array_append_new(spans,
                        pod_span("05", sched, "create pods/binding", "web-1-a", "pa", 2030 + d));
  json_array_append_new(spans,
                        pod_span("06", sched, "create pods/binding", "web-1-b", "pb", 2032 + d));
  json_array_append_new(spans,
                        pod_span("07", "kwok", "update pods/status", "web-1-a", "pa", 2100 + d));
  json_array_append_new(spans,
                        pod_span("08", "kwok", "update pods/status", "web-1-b", "pb", 2110 + d));
  json_array_append_new(
      spans, span_of(N, "0b", "replicaset-controller", "update replicasets/status", "ReplicaSet",
                     "web-1", "rs", "Deployment/web", 2120 + d));
  json_array_append_new(spans, span(P, "09", "deployment-controller", "update deployments/status",
                                    "Deployment", "web", "dep", 2200 + d));
  if (endpoints)
    json_array_append_new(spans, span(E, "0a", "endpoint-controller", "update endpoints",
                                      "Endpoints", "web", "ep", 2300 + d));
  json_t *mls = json_pack("[{s:s, s:[]}, {s:s, s:[s, s], s:[s]}, {s:s, s:[s, s], s:[s]}]", "cpid",
                          P, "sources", "cpid", N, "sources", X, P, "trigger", P, "cpid", E,
                          "sources", S, N, "trigger", N);
  return json_pack("{s:o, s:o}", "spans", spans, "mergelogs", mls);
}

static json_t *scale_trace(void) { return scale_of(2030, "kube-scheduler", 1); }

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
  /* The person's update, the ReplicaSet's, the binding of the later Pod, its
   * status, the ReplicaSet's status (after its Pods'), the Endpoints. */
  static const char *const want[] = {"01", "02", "06", "08", "0b", "0a"};
  static const double ms[] = {0, 10, 2022, 78, 10, 180};
  assert_int_equal(json_array_size(json_object_get(path, "hops")), 6);
  for (size_t i = 0; i < 6; i++) {
    assert_string_equal(hop(path, i, "span_id"), want[i]);
    assert_true(hop_ms(path, i) == ms[i]);
  }
  assert_string_equal(hop(path, 2, "component"), "kube-scheduler");
  assert_string_equal(hop(path, 2, "name"), "web-1-b");
  assert_true(json_real_value(json_object_get(path, "total_ms")) == 2300.0);
  assert_int_equal(json_integer_value(json_object_get(path, "writes")), 11);
  json_decref(path);

  /* The watch agent's spans (when it saw the ReplicaSet's update and the
   * Pod's binding) are no writes: the same path. */
  json_array_append_new(json_object_get(t, "spans"),
                        span_of(N, "w1", "ripple-watch", "update replicasets.apps", "ReplicaSet",
                                "web-1", "rs", "", 15));
  json_array_append_new(json_object_get(t, "spans"),
                        pod_span("w2", "ripple-watch", "update pods", "web-1-b", "pb", 2035));
  assert_int_equal(critpath_compute(t, &path), RIPPLE_OK);
  assert_int_equal(json_array_size(json_object_get(path, "hops")), 6);
  for (size_t i = 0; i < 6; i++) assert_string_equal(hop(path, i, "span_id"), want[i]);
  assert_int_equal(json_integer_value(json_object_get(path, "writes")), 11);
  json_decref(path);

  /* Without the trigger, every source of the Endpoints' merge counts: the
   * same path (S has no write here). */
  json_object_del(json_array_get(json_object_get(t, "mergelogs"), 2), "trigger");
  assert_int_equal(critpath_compute(t, &path), RIPPLE_OK);
  assert_string_equal(hop(path, 4, "span_id"), "0b");
  json_decref(path);
  json_decref(t);
}

/* The Deployment's status comes last: it waited for its ReplicaSet's status
 * (an object it owns), not for the person's write on it 2.2 s before. */
static void status_after_children(void **state) {
  (void)state;
  json_t *t = scale_of(2030, "kube-scheduler", 0), *path;
  assert_int_equal(critpath_compute(t, &path), RIPPLE_OK);
  assert_int_equal(json_array_size(json_object_get(path, "hops")), 6);
  assert_string_equal(hop(path, 4, "span_id"), "0b");
  assert_string_equal(hop(path, 5, "span_id"), "09");
  assert_true(hop_ms(path, 5) == 80.0);
  json_decref(path);
  json_decref(t);
}

static const json_t *cmp_hop(const json_t *cmp, size_t i) {
  return json_array_get(json_object_get(cmp, "hops"), i);
}

static const char *cmp_str(const json_t *cmp, size_t i, const char *key) {
  return json_string_value(json_object_get(cmp_hop(cmp, i), key));
}

/* A quick scale against one with a scheduler 2 s slower: the bindings are
 * the change, the writes after them the same; a missing Endpoints update and
 * another scheduler are named. */
static void compared(void **state) {
  (void)state;
  json_t *quick = scale_of(30, "kube-scheduler", 1), *slow = scale_of(2030, "kube-scheduler", 1);
  json_t *cmp;
  assert_int_equal(compare_compute(quick, slow, &cmp), RIPPLE_OK);
  assert_string_equal(cmp_str(cmp, 0, "component"), "kube-scheduler");
  assert_string_equal(cmp_str(cmp, 0, "write"), "create pods/binding");
  assert_string_equal(cmp_str(cmp, 0, "change"), "slower");
  assert_true(json_real_value(json_object_get(cmp_hop(cmp, 0), "delta_ms")) == 2000.0);
  size_t n = json_array_size(json_object_get(cmp, "hops"));
  assert_int_equal(n, 8);
  for (size_t i = 1; i < n; i++) assert_string_equal(cmp_str(cmp, i, "change"), "same");
  assert_true(json_real_value(json_object_get(cmp, "delta_ms")) == 2000.0);
  assert_int_equal(json_array_size(json_object_get(cmp, "writers")), 0);
  json_decref(cmp);

  json_t *none = scale_of(30, "my-scheduler", 0);
  assert_int_equal(compare_compute(quick, none, &cmp), RIPPLE_OK);
  /* Appeared and disappeared first: the Endpoints, and each scheduler. */
  size_t gone = 0, came = 0;
  for (size_t i = 0; i < 3; i++) {
    gone += !strcmp(cmp_str(cmp, i, "change"), "disappeared");
    came += !strcmp(cmp_str(cmp, i, "change"), "appeared");
  }
  assert_int_equal(gone, 2);
  assert_int_equal(came, 1);
  const json_t *w = json_array_get(json_object_get(cmp, "writers"), 0);
  assert_string_equal(json_string_value(json_object_get(w, "write")), "create pods/binding");
  assert_string_equal(json_string_value(json_array_get(json_object_get(w, "a"), 0)),
                      "kube-scheduler");
  assert_string_equal(json_string_value(json_array_get(json_object_get(w, "b"), 0)),
                      "my-scheduler");
  json_decref(cmp);
  assert_int_equal(compare_compute(quick, json_array_get(json_object_get(quick, "spans"), 0), &cmp),
                   RIPPLE_OK); /* a span is an object with no spans: an empty trace */
  json_decref(cmp);
  json_t *arr = json_array();
  assert_int_equal(compare_compute(quick, arr, &cmp), RIPPLE_EINVAL);
  assert_null(cmp);
  json_decref(arr);
  json_decref(none);
  json_decref(quick);
  json_decref(slow);
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

/* One trace grouped into hops (ripplex/hops.h), what GET /v1/hops adds up:
 * the two bindings in one group, the slower one last. */
static void grouped(void **state) {
  (void)state;
  json_t *t = scale_trace();
  hop_groups_t h;
  assert_int_equal(hops_group(t, &h), RIPPLE_OK);
  assert_int_equal(h.writes, 11);
  assert_true(h.total == 2300000000LL);
  assert_string_equal(h.first, "update deployments");
  const hop_group_t *b = NULL;
  for (size_t i = 0; i < h.n; i++)
    if (!strcmp(h.g[i].write, "create pods/binding")) b = &h.g[i];
  if (!b) {
    fail_msg("no hop of the bindings");
    return;
  }
  assert_string_equal(b->component, "kube-scheduler");
  assert_int_equal(b->n, 2);
  assert_true(b->took[0] <= b->took[1]);
  assert_true(b->took[1] == 2022000000LL);
  hops_free(&h);
  json_decref(t);
  assert_int_equal(hops_group(json_null(), &h), RIPPLE_EINVAL);
}

static void percentiles(void **state) {
  (void)state;
  static const int64_t v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  assert_true(hops_percentile(v, 10, 50) == 5);
  assert_true(hops_percentile(v, 10, 90) == 9);
  assert_true(hops_percentile(v, 10, 99) == 10);
  assert_true(hops_percentile(v, 10, 100) == 10);
  assert_true(hops_percentile(v, 5, 50) == 3);
  assert_true(hops_percentile(v, 1, 1) == 1);
  assert_true(hops_percentile(v, 0, 50) == 0);
}

/* ---- a hop split into its parts ---- */

#define MS 1000000LL
#define U CRITPATH_UNKNOWN

static void split_parts(void **state) {
  (void)state;
  critpath_parts_t p;
  /* All known, in order: 5 ms until seen, 2012 until received, 5 admission. */
  critpath_split(10 * MS, 15 * MS, 2027 * MS, 2032 * MS, &p);
  assert_true(p.seen == 5 * MS && p.wrote == 2012 * MS && p.admission == 5 * MS);
  assert_false(p.clamped);
  /* No watch agent: no seen part; wrote runs from the predecessor's end. */
  critpath_split(10 * MS, U, 2027 * MS, 2032 * MS, &p);
  assert_true(p.seen == -1 && p.wrote == 2017 * MS && p.admission == 5 * MS);
  /* No audit: no admission part; wrote runs to the write's end. */
  critpath_split(10 * MS, 15 * MS, U, 2032 * MS, &p);
  assert_true(p.seen == 5 * MS && p.wrote == 2017 * MS && p.admission == -1);
  /* Neither: no parts at all. */
  critpath_split(10 * MS, U, U, 2032 * MS, &p);
  assert_true(p.seen == -1 && p.wrote == -1 && p.admission == -1);
  assert_false(p.clamped);
}

/* Three clocks and any arrival order: clamped, never negative, and the
 * parts still add up to the hop. */
static void split_clamped(void **state) {
  (void)state;
  critpath_parts_t p;
  /* Seen before the predecessor's end (the agent's clock behind). */
  critpath_split(10 * MS, 8 * MS, 20 * MS, 30 * MS, &p);
  assert_true(p.seen == 0 && p.wrote == 10 * MS && p.admission == 10 * MS);
  assert_true(p.clamped);
  /* Received before seen: no time writing. */
  critpath_split(10 * MS, 25 * MS, 20 * MS, 30 * MS, &p);
  assert_true(p.seen == 15 * MS && p.wrote == 0 && p.admission == 5 * MS);
  assert_true(p.clamped);
  /* Both after the write's end. */
  critpath_split(10 * MS, 40 * MS, 50 * MS, 30 * MS, &p);
  assert_true(p.seen == 20 * MS && p.wrote == 0 && p.admission == 0);
  assert_true(p.clamped);
  /* The write's end before its predecessor's: a hop of 0, all parts 0. */
  critpath_split(10 * MS, 12 * MS, 11 * MS, 5 * MS, &p);
  assert_true(p.seen == 0 && p.wrote == 0 && p.admission == 0);
  /* Times a hostile trace could give: no overflow, no parts. */
  critpath_split(INT64_MIN + 1, 0, 0, INT64_MAX, &p);
  assert_true(p.seen == -1 && p.wrote == -1 && p.admission == -1);
}

static const json_t *parts(const json_t *path, size_t i) {
  return json_object_get(json_array_get(json_object_get(path, "hops"), i), "parts");
}

static double part(const json_t *path, size_t i, const char *k) {
  const json_t *v = json_object_get(parts(path, i), k);
  return v ? json_real_value(v) : -1;
}

/* The details' writes: the ReplicaSet's update (02) seen at 15 ms, the
 * binding (06) received at 2027 ms, the later Pod's status (08) seen at
 * 2115 ms. */
static json_t *details_of(void) {
  return json_pack("{s:[{s:s, s:{s:s}, s:n}, {s:s, s:n, s:{s:s, s:s}}, {s:s, s:{s:s}, s:n}]}",
                   "writes", "span_id", "02", "change", "time", "2026-11-28T00:00:00.015Z", "audit",
                   "span_id", "06", "change", "audit", "received", "2026-11-28T00:00:02.027Z",
                   "time", "2026-11-28T00:00:02.040Z", "span_id", "08", "change", "time",
                   "2026-11-28T00:00:02.115Z", "audit");
}

static void hop_parts(void **state) {
  (void)state;
  json_t *t = scale_trace(), *path, *d = details_of();
  assert_int_equal(critpath_compute(t, &path), RIPPLE_OK);
  assert_int_equal(critpath_add_parts(path, d), RIPPLE_OK);
  /* The first hop waited for nothing; the ReplicaSet's had no facts. */
  assert_null(parts(path, 0));
  assert_null(parts(path, 1));
  /* The binding (hop 2, 2022 ms): seen 5, wrote 2012, admission 5. */
  assert_string_equal(hop(path, 2, "span_id"), "06");
  assert_true(part(path, 2, "seen_ms") == 5.0);
  assert_true(part(path, 2, "wrote_ms") == 2012.0);
  assert_true(part(path, 2, "admission_ms") == 5.0);
  assert_null(json_object_get(parts(path, 2), "clamped"));
  /* The Pod's status (08, 78 ms) has no facts of its own nor its
   * predecessor's (06 has no change): none. */
  assert_null(parts(path, 3));
  /* The ReplicaSet's status (0b, 10 ms) after 08, seen at 2115 ms (its end
   * 2120): seen 5, wrote 5, no audit: no admission. */
  assert_true(part(path, 4, "seen_ms") == 5.0);
  assert_true(part(path, 4, "wrote_ms") == 5.0);
  assert_true(part(path, 4, "admission_ms") == -1);
  /* No details, or details without writes: nothing added. */
  json_decref(path);
  assert_int_equal(critpath_compute(t, &path), RIPPLE_OK);
  assert_int_equal(critpath_add_parts(path, NULL), RIPPLE_OK);
  json_t *odd = json_pack("{s:[s, {s:i}, {s:s, s:s}]}", "writes", "x", "span_id", 7, "span_id",
                          "06", "audit", "garbage");
  assert_int_equal(critpath_add_parts(path, odd), RIPPLE_OK);
  for (size_t i = 0; i < 6; i++) assert_null(parts(path, i));
  assert_int_equal(critpath_add_parts(odd, d), RIPPLE_OK);
  json_t *arr = json_array();
  assert_int_equal(critpath_add_parts(arr, d), RIPPLE_EINVAL);
  json_decref(arr);
  json_decref(odd);
  json_decref(path);
  json_decref(d);
  json_decref(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(through_the_binding),
      cmocka_unit_test(status_after_children),
      cmocka_unit_test(compared),
      cmocka_unit_test(bad_input),
      cmocka_unit_test(split_parts),
      cmocka_unit_test(split_clamped),
      cmocka_unit_test(hop_parts),
      cmocka_unit_test(grouped),
      cmocka_unit_test(percentiles),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
