/*
 * test_roots.c - GET /v1/objects/{uid}/roots, "the latest changes of this
 * object" (docs/api.md): the root mergelogs (no sources) that name an object
 * uid, newest first. The server runs in this process on a free loopback port
 * over a temporary database, as in test_server.c, so a test can stop and
 * reopen it, and can look into the database itself: that is how retention is
 * seen to remove the index rows and not only the answers.
 */
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_client.h"
#include "server_rig.h"
#include "testutil.h"

/* Each test opens the server itself (rig_setup): some change its configuration first. */

/* ---- helpers ------------------------------------------------------------- */

#define U1 "5b0c1f7e-2b7a-4c39-9b1e-0d8f1b5e7a11"
#define U2 "0f1e2d3c-4b5a-4968-8776-655443322110"
#define R1 "11111111-1111-4111-8111-111111111111"
#define R2 "22222222-2222-4222-8222-222222222222"
#define R3 "33333333-3333-4333-8333-333333333333"
#define R4 "44444444-4444-4444-8444-444444444444"
#define R5 "55555555-5555-4555-8555-555555555555"
#define R6 "66666666-6666-4666-8666-666666666666"
#define N1 "77777777-7777-4777-8777-777777777777"
#define T(s) "2026-11-22T10:00:0" s ".000000001Z"

#define OBJ(uid)                                                                         \
  ",\"object\":{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"namespace\":\"d\"," \
  "\"name\":\"x\",\"uid\":\"" uid "\"}"
#define ML(id, sources, time, extra) \
  "{\"cpid\":\"" id "\",\"sources\":[" sources "],\"time\":\"" time "\"" extra "}"

/* The CPIDs of GET /v1/objects/{uid}/roots<query>, newest first, joined by
 * spaces (the test compares one string). */
static void roots_of(const rig_t *r, const char *uid, const char *query, char *out, size_t cap) {
  char path[256];
  snprintf(path, sizeof path, "/v1/objects/%s/roots%s", uid, query);
  json_t *j = hc_get_json(r->base, path, 200);
  if (!j) fail_msg("GET %s did not answer 200 with JSON", path);
  json_t *arr = json_object_get(j, "roots");
  assert_true(json_is_array(arr));
  size_t i, n = 0;
  json_t *v;
  out[0] = '\0';
  json_array_foreach(arr, i, v) {
    const char *id = json_string_value(json_object_get(v, "cpid"));
    assert_non_null(id);
    n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s", i ? " " : "", id);
  }
  assert_true(n < cap);
  json_decref(j);
}

static void expect_roots(const rig_t *r, const char *uid, const char *query, const char *want) {
  char got[1024];
  roots_of(r, uid, query, got, sizeof got);
  if (strcmp(got, want) != 0) fail_msg("%s%s: roots [%s], want [%s]", uid, query, got, want);
}

static void expect_status(const rig_t *r, const char *method, const char *path, const char *token,
                          long status, const char *field) {
  char url[640]; /* base (64) and a path of up to 512 bytes */
  snprintf(url, sizeof url, "%s%s", r->base, path);
  hc_resp_t resp;
  assert_int_equal(hc_request(method, url, NULL, 0, token, &resp), 0);
  if (resp.status != status)
    fail_msg("%s %s: %ld, want %ld: %s", method, path, resp.status, status, resp.body);
  if (status != 200) {
    json_t *j = json_loads(resp.body, 0, NULL);
    assert_non_null(j);
    assert_true(json_is_string(json_object_get(j, "error")));
    if (field) assert_string_equal(json_string_value(json_object_get(j, "field")), field);
    json_decref(j);
  }
  hc_resp_free(&resp);
}

/* ---- which mergelogs are an object's roots ------------------------------------ */

static void test_roots_newest_first(void **state) {
  rig_t *r = *state;
  rig_open(r);
  rig_post(r, "mergelogs",
           "[" ML(R1, "", T("1"), OBJ(U1)) "," ML(R2, "", T("5"), OBJ(U1)) "," ML(
               R3, "", T("2"),
               OBJ(U2)) "," ML(N1, "\"" R1 "\"", T("9"),
                               OBJ(U1)) "," ML(R4, "", T("8"),
                                               "") "," ML(R5, "", T("7"),
                                                          ",\"object\":{\"kind\":\"Pod\"}") "]");
  /* Posted later, made earlier: the order is by time, not by arrival. */
  rig_post(r, "mergelogs", "[" ML(R6, "", T("3"), OBJ(U1)) "]");

  /* Two objects kept apart; the merge N1 (it has a source) and the roots
   * without an object or without a uid are nobody's roots. */
  expect_roots(r, U1, "", R2 " " R6 " " R1);
  expect_roots(r, U2, "", R3);
  expect_roots(r, U1, "?limit=1", R2);
  expect_roots(r, U1, "?limit=2", R2 " " R6);
  expect_roots(r, U1, "?limit=100", R2 " " R6 " " R1);
  expect_roots(r, "no-such-object", "", "");

  /* Each root is the stored mergelog, as the CPID's own query returns it. */
  json_t *roots = hc_get_json(r->base, "/v1/objects/" U1 "/roots?limit=1", 200);
  json_t *mls = hc_get_json(r->base, "/v1/cpids/" R2 "/mergelogs", 200);
  assert_non_null(roots);
  assert_non_null(mls);
  json_t *a = json_array_get(json_object_get(roots, "roots"), 0);
  json_t *b = json_array_get(json_object_get(mls, "mergelogs"), 0);
  assert_true(json_equal(a, b));
  assert_string_equal(json_string_value(json_object_get(json_object_get(a, "object"), "uid")), U1);
  json_decref(roots);
  json_decref(mls);

  /* A retried root (its answer lost) is listed once; a later mergelog for
   * the same CPID that claims another object changes nothing (the first
   * mergelog of a CPID wins). */
  rig_post(r, "mergelogs", "[" ML(R1, "", T("1"), OBJ(U1)) "]");
  rig_post(r, "mergelogs", "[" ML(R3, "", T("6"), OBJ(U1)) "]");
  expect_roots(r, U1, "", R2 " " R6 " " R1);
  expect_roots(r, U2, "", R3);

  /* Durable: the same answers after a restart. */
  rig_close(r);
  rig_open(r);
  expect_roots(r, U1, "", R2 " " R6 " " R1);
  expect_roots(r, U2, "", R3);
}

/* ---- refusals ------------------------------------------------------------------- */

static void test_roots_bad_requests(void **state) {
  rig_t *r = *state;
  rig_open(r);
  rig_post(r, "mergelogs", "[" ML(R1, "", T("1"), OBJ(U1)) "]");
  char path[512], uid[160];
  memset(uid, 'a', 128);
  uid[128] = '\0';
  snprintf(path, sizeof path, "/v1/objects/%s/roots", uid);
  expect_status(r, "GET", path, NULL, 200, NULL); /* 128 bytes: the most */
  uid[128] = 'a';
  uid[129] = '\0';
  snprintf(path, sizeof path, "/v1/objects/%s/roots", uid);
  expect_status(r, "GET", path, NULL, 400, "uid");
  expect_status(r, "GET", "/v1/objects//roots", NULL, 400, "uid");
  expect_status(r, "GET", "/v1/objects/a_b/roots", NULL, 400, "uid");
  expect_status(r, "GET", "/v1/objects/a.b/roots", NULL, 400, "uid");
  expect_status(r, "GET", "/v1/objects/a%20b/roots", NULL, 400, "uid");
  expect_status(r, "GET", "/v1/objects/" U1, NULL, 400, "uid");
  expect_status(r, "GET", "/v1/objects/" U1 "/roots?limit=0", NULL, 400, "limit");
  expect_status(r, "GET", "/v1/objects/" U1 "/roots?limit=101", NULL, 400, "limit");
  expect_status(r, "GET", "/v1/objects/" U1 "/roots?limit=-1", NULL, 400, "limit");
  expect_status(r, "GET", "/v1/objects/" U1 "/roots?limit=x", NULL, 400, "limit");
  expect_status(r, "GET", "/v1/objects/" U1 "/sideways", NULL, 404, NULL);
  expect_status(r, "POST", "/v1/objects/" U1 "/roots", NULL, 405, NULL);
  expect_roots(r, U1, "", R1); /* still serving */

  /* A reader token is needed when the server has reader tokens. */
  rig_close(r);
  char *readers[] = {"r-secret", NULL};
  r->ho.reader_tokens = readers;
  rig_open(r);
  expect_status(r, "GET", "/v1/objects/" U1 "/roots", NULL, 401, NULL);
  expect_status(r, "GET", "/v1/objects/" U1 "/roots", "r-other", 401, NULL);
  expect_status(r, "GET", "/v1/objects/" U1 "/roots", "r-secret", 200, NULL);
  rig_close(r);
  r->ho.reader_tokens = NULL;
}

/* ---- storage -------------------------------------------------------------------- */

static long long count_rows(const char *db, const char *sql) {
  sqlite3 *d = NULL;
  sqlite3_stmt *q = NULL;
  assert_int_equal(sqlite3_open_v2(db, &d, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(d, sql, -1, &q, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(q), SQLITE_ROW);
  long long n = sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  sqlite3_close(d);
  return n;
}

/* Retention by age deletes old roots with their mergelogs, and their index
 * rows with them; a root of now stays. */
static void test_roots_retention(void **state) {
  rig_t *r = *state;
  r->cfg.max_age_ns = 3600 * INT64_C(1000000000);
  rig_open(r);
  char now[40], body[1024];
  ripple_time_format(ripple_now_ns(), now);
  snprintf(
      body, sizeof body,
      "[" ML(R1, "", "2020-01-01T00:00:00Z", OBJ(U1)) "," ML(
          R2, "", "2020-01-01T00:00:01Z", OBJ(U2)) "," ML(N1, "\"" R1 "\"", "2020-01-01T00:00:02Z",
                                                          "") "," ML(R3, "", "%s", OBJ(U1)) "]",
      now);
  rig_post(r, "mergelogs", body);
  char got[1024] = "";
  for (int i = 0; i < 100; i++) { /* the writer's tick runs every second */
    roots_of(r, U1, "", got, sizeof got);
    if (!strcmp(got, R3)) break;
    usleep(100 * 1000);
  }
  assert_string_equal(got, R3);
  expect_roots(r, U2, "", "");
  rig_close(r);
  assert_int_equal(count_rows(r->db, "SELECT count(*) FROM roots"), 1);
  assert_int_equal(count_rows(r->db, "SELECT count(*) FROM mergelogs"), 1);
  assert_int_equal(count_rows(r->db, "SELECT count(*) FROM roots r JOIN mergelogs m USING(seq)"),
                   1);
}

/* A database written before the index opens: the table is added, earlier
 * roots are not indexed (nothing is rebuilt), and new ones are. */
static void test_roots_older_database(void **state) {
  rig_t *r = *state;
  static const char *rows =
      "INSERT INTO mergelogs(cpid, time, sources, body) VALUES("
      "  x'44444444444444448444444444444444', 1, x'',"
      "  '{\"cpid\":\"" R4
      "\",\"sources\":[],\"time\":\"1970-01-01T00:00:00.000000001Z\","
      "\"object\":{\"uid\":\"" U1 "\"}}');";
  rig_first_database(r, rows);
  rig_open(r);
  json_t *j = hc_get_json(r->base, "/v1/cpids/" R4 "/mergelogs", 200); /* the old record is read */
  assert_non_null(j);
  json_decref(j);
  expect_roots(r, U1, "", "");
  rig_post(r, "mergelogs", "[" ML(R1, "", T("1"), OBJ(U1)) "]");
  expect_roots(r, U1, "", R1);
  rig_close(r);
  rig_open(r);
  expect_roots(r, U1, "", R1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_roots_newest_first, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_roots_bad_requests, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_roots_retention, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_roots_older_database, rig_setup, rig_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
