/*
 * test_fights_api.c - field fights through the trace server (docs/api.md,
 * "Field fights"), with the server in this process (server_rig.h): the
 * webhook's spans and the watch agent's changes posted as they would be,
 * joined, and a fight between a person and an HPA-like writer answered on
 * GET /v1/fights (both writers, the CPIDs of the writes) and counted in
 * ripple_field_fights_total; one change of another object not flagged; the
 * endpoint's reader token, its bounds (limit, since, uid) and --no-fights.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_client.h"
#include "server_rig.h"
#include "testutil.h"

#define UA "aaaaaaaa-0000-4000-8000-00000000000a" /* the Deployment fought over */
#define UB "aaaaaaaa-0000-4000-8000-00000000000b" /* a Deployment changed once */
#define C(n) "0000000" n "-0000-4000-8000-000000000000"
#define T(s) "2026-11-25T10:00:" s "Z"

static char *writers[] = {"writer-secret-16chars", NULL};
static char *readers[] = {"reader-secret-16chars", NULL};

static long request(const rig_t *r, const char *method, const char *path, const char *body,
                    const char *token, char **out) {
  char url[640]; /* base (64) and a path of up to 512 bytes */
  snprintf(url, sizeof url, "%s%s", r->base, path);
  hc_resp_t resp;
  assert_int_equal(hc_request(method, url, body, body ? strlen(body) : 0, token, &resp), 0);
  long st = resp.status;
  if (out) *out = resp.body, resp.body = NULL;
  hc_resp_free(&resp);
  return st;
}

static void post(const rig_t *r, const char *what, const char *body) {
  char path[64], *out = NULL;
  snprintf(path, sizeof path, "/v1/%s", what);
  long st = request(r, "POST", path, body, writers[0], &out);
  if (st != 200) fail_msg("POST %s: %ld: %s", what, st, out);
  free(out);
}

/* The webhook's span of one update and its root mergelog. */
static void write_span(const rig_t *r, const char *cpid, const char *id, const char *svc,
                       const char *uid, const char *rv, const char *t) {
  char b[1024];
  snprintf(b, sizeof b, "[{\"cpid\":\"%s\",\"sources\":[],\"time\":\"%s\",\"component\":\"%s\"}]",
           cpid, t, svc);
  post(r, "mergelogs", b);
  snprintf(b, sizeof b,
           "[{\"cpid\":\"%s\",\"span_id\":\"%s\",\"service\":\"%s\",\"name\":\"update "
           "deployments\",\"start\":\"%s\",\"end\":\"%s\",\"attributes\":{\"kind\":"
           "\"Deployment\",\"namespace\":\"d\",\"name\":\"web\",\"uid\":\"%s\","
           "\"resourceVersion\":\"%s\",\"user\":\"%s\",\"operation\":\"UPDATE\"}}]",
           cpid, id, svc, t, t, uid, rv, svc);
  post(r, "spans", b);
}

/* The watch agent's change of that update. */
static void write_change(const rig_t *r, const char *uid, const char *prev, const char *rv, int old,
                         int nw, const char *t) {
  char b[1024];
  snprintf(b, sizeof b,
           "[{\"type\":\"change\",\"op\":\"update\",\"time\":\"%s\",\"object\":{\"kind\":"
           "\"Deployment\",\"namespace\":\"d\",\"name\":\"web\",\"uid\":\"%s\"},"
           "\"resourceVersion\":\"%s\",\"previousResourceVersion\":\"%s\",\"diff\":[{\"path\":"
           "\"/spec/replicas\",\"old\":%d,\"new\":%d},{\"path\":\"/status/replicas\",\"old\":%d,"
           "\"new\":%d}]}]",
           t, uid, rv, prev, old, nw, old, nw);
  post(r, "details", b);
}

static json_t *fights(const rig_t *r, const char *query) {
  char path[256], *out = NULL;
  snprintf(path, sizeof path, "/v1/fights%s", query);
  long st = request(r, "GET", path, NULL, readers[0], &out);
  if (st != 200) fail_msg("GET %s: %ld: %s", path, st, out);
  json_t *j = json_loads(out, 0, NULL);
  assert_non_null(j);
  free(out);
  return j;
}

static void open_with_tokens(rig_t *r, int off) {
  r->ho.writer_tokens = writers;
  r->ho.reader_tokens = readers;
  r->cfg.fights_off = off;
  rig_open(r);
}

static void test_fight(void **state) {
  rig_t *r = *state;
  open_with_tokens(r, 0);
  /* The person scales to 5, the HPA-like writer back to 3, the person to 5
   * again; half the joins with the span first, half with the change. */
  write_span(r, C("1"), "00000000000000a1", "kubernetes-admin", UA, "10", T("01"));
  write_change(r, UA, "10", "11", 3, 5, T("01"));
  write_change(r, UA, "11", "12", 5, 3, T("02"));
  write_span(r, C("2"), "00000000000000a2", "hpa-like", UA, "11", T("02"));
  write_span(r, C("3"), "00000000000000a3", "kubernetes-admin", UA, "12", T("03"));
  write_change(r, UA, "12", "13", 3, 5, T("03"));
  /* Another Deployment changed once. */
  write_span(r, C("4"), "00000000000000a4", "kubernetes-admin", UB, "20", T("04"));
  write_change(r, UB, "20", "21", 1, 2, T("04"));

  /* The spans' feed runs in the server's writer after the commit: wait. */
  json_t *j = NULL;
  for (int i = 0; i < 100; i++) {
    j = fights(r, "");
    if (json_array_size(json_object_get(j, "fights")) > 0) break;
    json_decref(j);
    j = NULL;
    usleep(50000);
  }
  if (!j) fail_msg("no fight flagged");
  json_t *v = json_object_get(j, "fights");
  assert_int_equal(json_array_size(v), 1);
  json_t *g = json_array_get(v, 0);
  assert_string_equal(json_string_value(json_object_get(g, "path")), "/spec/replicas");
  assert_string_equal(json_string_value(json_object_get(json_object_get(g, "object"), "uid")), UA);
  assert_string_equal(json_string_value(json_object_get(json_object_get(g, "object"), "name")),
                      "web");
  json_t *m = json_object_get(g, "managers");
  assert_string_equal(json_string_value(json_object_get(json_array_get(m, 0), "writer")),
                      "kubernetes-admin");
  assert_string_equal(json_string_value(json_object_get(json_array_get(m, 1), "writer")),
                      "hpa-like");
  json_t *w = json_object_get(g, "writes");
  assert_int_equal(json_array_size(w), 3);
  assert_string_equal(json_string_value(json_object_get(json_array_get(w, 0), "cpid")), C("1"));
  assert_string_equal(json_string_value(json_object_get(json_array_get(w, 1), "cpid")), C("2"));
  assert_string_equal(json_string_value(json_object_get(json_array_get(w, 2), "cpid")), C("3"));
  assert_string_equal(json_string_value(json_object_get(json_array_get(w, 1), "span_id")),
                      "00000000000000a2");
  json_decref(j);

  /* By object: the fought-over one has the fight and its fields' writers;
   * the other none. */
  j = fights(r, "?uid=" UA);
  assert_int_equal(json_array_size(json_object_get(j, "fights")), 1);
  json_t *fl = json_object_get(j, "fields");
  assert_int_equal(json_array_size(fl), 1); /* /status is not tracked */
  assert_string_equal(json_string_value(json_object_get(json_array_get(fl, 0), "cpid")), C("3"));
  json_decref(j);
  j = fights(r, "?uid=" UB);
  assert_int_equal(json_array_size(json_object_get(j, "fights")), 0);
  assert_int_equal(json_array_size(json_object_get(j, "fields")), 1);
  json_decref(j);
  j = fights(r, "?since=" T("05"));
  assert_int_equal(json_array_size(json_object_get(j, "fights")), 0);
  json_decref(j);

  char *text = NULL;
  assert_int_equal(request(r, "GET", "/metrics", NULL, readers[0], &text), 200);
  assert_true(hc_metric_value(text, "ripple_field_fights_total") == 1);
  free(text);
  rig_close(r);
}

static void test_auth_and_bounds(void **state) {
  rig_t *r = *state;
  open_with_tokens(r, 0);
  assert_int_equal(request(r, "GET", "/v1/fights", NULL, NULL, NULL), 401);
  assert_int_equal(request(r, "GET", "/v1/fights", NULL, writers[0], NULL), 401);
  assert_int_equal(request(r, "POST", "/v1/fights", "[]", readers[0], NULL), 405);
  static const char *const bad[] = {"?limit=0",         "?limit=1001",      "?limit=-1",
                                    "?limit=x",         "?since=yesterday", "?uid=a/b",
                                    "?uid=" UA UA UA UA};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char path[512];
    snprintf(path, sizeof path, "/v1/fights%s", bad[i]);
    assert_int_equal(request(r, "GET", path, NULL, readers[0], NULL), 400);
  }
  json_t *j = fights(r, "?limit=1000");
  assert_true(json_is_true(json_object_get(j, "enabled")));
  assert_int_equal(json_integer_value(json_object_get(j, "window_seconds")), 600);
  json_decref(j);
  rig_close(r);
}

static void test_off(void **state) {
  rig_t *r = *state;
  open_with_tokens(r, 1);
  json_t *j = fights(r, "");
  assert_true(json_is_false(json_object_get(j, "enabled")));
  json_decref(j);
  char *text = NULL;
  assert_int_equal(request(r, "GET", "/metrics", NULL, readers[0], &text), 200);
  assert_null(strstr(text, "ripple_field_fights_total"));
  free(text);
  rig_close(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_fight, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_auth_and_bounds, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_off, rig_setup, rig_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
