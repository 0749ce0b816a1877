/*
 * test_trace.c - a whole trace in one answer (GET /v1/cpids/{cpid}/trace,
 * docs/api.md "Queries by CPID"; graph/trace.h), through the real server in
 * this process (server_rig.h): it holds exactly what /related, /mergelogs and
 * /spans hold for the same CPID, and with `after` (its own `next`) exactly
 * what was stored since, spans of a CPID that joined the trace later
 * included. Refusals: a cursor it did not hand out, an unknown CPID.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_client.h"
#include "server_rig.h"
#include "testutil.h"

#define C1 "11111111-1111-4111-8111-111111111111"
#define C2 "22222222-2222-4222-8222-222222222222"
#define C3 "33333333-3333-4333-8333-333333333333"
#define C4 "44444444-4444-4444-8444-444444444444"
#define C5 "55555555-5555-4555-8555-555555555555"
#define T(s) "2026-11-24T10:00:" s "Z"

#define ML(id, sources, time) \
  "{\"cpid\":\"" id "\",\"sources\":[" sources "],\"time\":\"" time "\",\"component\":\"c\"}"
#define SPAN(id, sid, start)                    \
  "{\"cpid\":\"" id "\",\"span_id\":\"" sid     \
  "\",\"service\":\"c\",\"name\":\"update x\"," \
  "\"start\":\"" start "\",\"end\":\"" start "\",\"attributes\":{\"kind\":\"Pod\"}}"

static json_t *get(const rig_t *r, const char *cpid, const char *what, long want) {
  char path[256];
  snprintf(path, sizeof path, "/v1/cpids/%s/%s", cpid, what);
  json_t *j = hc_get_json(r->base, path, want);
  if (!j) fail_msg("GET %s did not answer %ld with JSON", path, want);
  return j;
}

/* The trace answer of cpid holds the same related, mergelogs and spans (same
 * records, same order) and truncated as the three single answers. */
static void expect_same(const rig_t *r, const char *cpid) {
  json_t *t = get(r, cpid, "trace", 200);
  assert_true(json_is_string(json_object_get(t, "next")));
  assert_string_equal(json_string_value(json_object_get(t, "cpid")), cpid);
  static const char *const parts[] = {"related", "mergelogs", "spans"};
  for (int i = 0; i < 3; i++) {
    json_t *one = get(r, cpid, parts[i], 200);
    if (!json_equal(json_object_get(one, parts[i]), json_object_get(t, parts[i])))
      fail_msg("%s of %s: the trace answer differs from /%s", parts[i], cpid, parts[i]);
    assert_true(json_equal(json_object_get(one, "truncated"), json_object_get(t, "truncated")));
    json_decref(one);
  }
  json_decref(t);
}

/* The span ids of a trace answer's spans, sorted, comma-separated. */
static void span_ids(const json_t *t, char *out, size_t cap) {
  json_t *sp = json_object_get(t, "spans");
  size_t n = json_array_size(sp);
  const char **ids = calloc(n ? n : 1, sizeof *ids);
  assert_non_null(ids);
  for (size_t i = 0; i < n; i++)
    ids[i] = json_string_value(json_object_get(json_array_get(sp, i), "span_id"));
  for (size_t i = 1; i < n; i++)
    for (size_t k = i; k > 0 && strcmp(ids[k - 1], ids[k]) > 0; k--) {
      const char *x = ids[k];
      ids[k] = ids[k - 1];
      ids[k - 1] = x;
    }
  size_t len = 0;
  out[0] = '\0';
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(out + len, cap - len, "%s%.4s", i ? "," : "", ids[i] + 12);
  assert_true(len < cap);
  free(ids);
}

/* GET trace?after=<next of prev>: the answer, prev's cursor moved to it. */
static json_t *since(const rig_t *r, const char *cpid, char *cursor, size_t cap) {
  char what[128];
  snprintf(what, sizeof what, "trace?after=%s", cursor);
  json_t *t = get(r, cpid, what, 200);
  snprintf(cursor, cap, "%s", json_string_value(json_object_get(t, "next")));
  return t;
}

static void test_trace_is_the_three_answers(void **state) {
  rig_t *r = *state;
  rig_open(r);
  rig_post(r, "mergelogs",
           "[" ML(C1, "", T("01")) "," ML(C2, "\"" C1 "\"", T("02")) "," ML(
               C3, "\"" C1 "\",\"" C4 "\"", T("03")) "," ML(C4, "", T("00")) "]");
  rig_post(
      r, "spans",
      "[" SPAN(C1, "0000000000000001", T("01")) "," SPAN(C2, "0000000000000002", T("02")) "," SPAN(
          C2, "0000000000000003", T("03")) "," SPAN(C3, "0000000000000004",
                                                    T("04")) "," SPAN(C4, "0000000000000005",
                                                                      T("05")) "]");
  expect_same(r, C1); /* C1, C2, C3 */
  expect_same(r, C4); /* C4, C3 */
  expect_same(r, C3);
  /* A limit cuts the walk as it cuts the single answers'. */
  json_t *t = get(r, C1, "trace?limit=1", 200);
  assert_true(json_is_true(json_object_get(t, "truncated")));
  assert_int_equal(json_array_size(json_object_get(t, "related")), 1);
  assert_int_equal(json_array_size(json_object_get(t, "spans")), 1);
  json_decref(t);
  /* The same over a restart (the graph rebuilt from storage). */
  rig_close(r);
  rig_open(r);
  expect_same(r, C1);
}

static void test_trace_after_cursor(void **state) {
  rig_t *r = *state;
  rig_open(r);
  char cursor[64], ids[256];
  rig_post(r, "mergelogs", "[" ML(C1, "", T("01")) "]");
  rig_post(r, "spans", "[" SPAN(C1, "0000000000000001", T("01")) "]");
  json_t *t = get(r, C1, "trace", 200);
  snprintf(cursor, sizeof cursor, "%s", json_string_value(json_object_get(t, "next")));
  json_decref(t);
  /* Nothing new: no records, the cursor stays, related in full. */
  t = since(r, C1, cursor, sizeof cursor);
  assert_int_equal(json_array_size(json_object_get(t, "spans")), 0);
  assert_int_equal(json_array_size(json_object_get(t, "mergelogs")), 0);
  assert_int_equal(json_array_size(json_object_get(t, "related")), 1);
  json_decref(t);
  /* C2's span comes before its mergelog (shippers are not ordered), then a
   * span of C1 that moves the cursor past it; a span of C5, not related. */
  rig_post(r, "spans",
           "[" SPAN(C2, "0000000000000002", T("02")) "," SPAN(C5, "0000000000000005", T("02")) "]");
  rig_post(r, "spans", "[" SPAN(C1, "0000000000000003", T("03")) "]");
  t = since(r, C1, cursor, sizeof cursor);
  span_ids(t, ids, sizeof ids);
  assert_string_equal(ids, "0003");
  json_decref(t);
  /* C2's mergelog joins it to the trace: its span, older than the cursor, is
   * new to the trace. */
  rig_post(r, "mergelogs", "[" ML(C2, "\"" C1 "\"", T("02")) "]");
  t = since(r, C1, cursor, sizeof cursor);
  span_ids(t, ids, sizeof ids);
  assert_string_equal(ids, "0002");
  assert_int_equal(json_array_size(json_object_get(t, "mergelogs")), 1);
  assert_int_equal(json_array_size(json_object_get(t, "related")), 2);
  json_decref(t);
  /* And then only what is newer again. */
  rig_post(r, "spans", "[" SPAN(C2, "0000000000000004", T("04")) "]");
  t = since(r, C1, cursor, sizeof cursor);
  span_ids(t, ids, sizeof ids);
  assert_string_equal(ids, "0004");
  json_decref(t);
  t = since(r, C1, cursor, sizeof cursor);
  assert_int_equal(json_array_size(json_object_get(t, "spans")), 0);
  json_decref(t);
  /* The whole answer is the deltas together. */
  t = get(r, C1, "trace", 200);
  span_ids(t, ids, sizeof ids);
  assert_string_equal(ids, "0001,0002,0003,0004");
  assert_string_equal(json_string_value(json_object_get(t, "next")), cursor);
  json_decref(t);
}

static void test_trace_refusals(void **state) {
  rig_t *r = *state;
  rig_open(r);
  rig_post(r, "mergelogs", "[" ML(C1, "", T("01")) "]");
  static const char *const bad[] = {"x", "1", "1.", ".1", "1.2.3", "-1.0", "1.-2", "1.2x", ""};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char what[64];
    snprintf(what, sizeof what, "trace?after=%s", bad[i]);
    json_t *e = get(r, C1, what, 400);
    assert_string_equal(json_string_value(json_object_get(e, "field")), "after");
    json_decref(e);
  }
  json_t *e = get(r, C2, "trace", 404);
  assert_string_equal(json_string_value(json_object_get(e, "field")), "cpid");
  json_decref(e);
  json_decref(get(r, C1, "trace?limit=x", 400));
  json_decref(get(r, C1, "trace?after=99999999999999999999.0", 400));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_trace_is_the_three_answers, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_trace_after_cursor, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_trace_refusals, rig_setup, rig_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
