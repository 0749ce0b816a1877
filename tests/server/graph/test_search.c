/*
 * test_search.c - finding traces without a CPID (docs/api.md, "Finding
 * traces"): GET /v1/objects (an object's recent CPIDs) and GET /v1/roots
 * (root search with a summary of each cascade), through the real server in
 * this process (server_rig.h), across restarts, retention and a database
 * written before the object columns existed; large answers compressed for
 * clients that take gzip. The object index itself
 * (objects.h) is also tested on its own: its bounds and ordering.
 */
#include <curl/curl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "graph/objects.h"
#include "http_client.h"
#include "ripplex/cpid.h"
#include "server_rig.h"
#include "testutil.h"

#define C1 "11111111-1111-4111-8111-111111111111"
#define C2 "22222222-2222-4222-8222-222222222222"
#define C3 "33333333-3333-4333-8333-333333333333"
#define C4 "44444444-4444-4444-8444-444444444444"
#define C5 "55555555-5555-4555-8555-555555555555"
#define T(s) "2026-11-24T10:00:" s "Z"

#define OBJ(kind, ns, name) \
  ",\"object\":{\"kind\":\"" kind "\",\"namespace\":\"" ns "\",\"name\":\"" name "\"}"
#define ML(id, sources, time, comp, extra)                                                     \
  "{\"cpid\":\"" id "\",\"sources\":[" sources "],\"time\":\"" time "\",\"component\":\"" comp \
  "\"" extra "}"
#define SPAN(id, sid, start, end, kind, ns, name)                                \
  "{\"cpid\":\"" id "\",\"span_id\":\"" sid                                      \
  "\",\"service\":\"c\",\"name\":\"update x\","                                  \
  "\"start\":\"" start "\",\"end\":\"" end "\",\"attributes\":{\"kind\":\"" kind \
  "\","                                                                          \
  "\"namespace\":\"" ns "\",\"name\":\"" name "\"}}"

/* "kind/ns/name=cpid:writes,cpid:writes;..." of GET /v1/objects<query>, CPIDs
 * shortened to their first 2 characters. */
static void objects_of(const rig_t *r, const char *query, char *out, size_t cap) {
  char path[512];
  snprintf(path, sizeof path, "/v1/objects%s", query);
  json_t *j = hc_get_json(r->base, path, 200);
  if (!j) fail_msg("GET %s did not answer 200 with JSON", path);
  size_t i, k, n = 0;
  json_t *o, *c;
  out[0] = '\0';
  json_array_foreach(json_object_get(j, "objects"), i, o) {
    n += (size_t)snprintf(out + n, cap - n, "%s%s/%s/%s=", i ? ";" : "",
                          json_string_value(json_object_get(o, "kind")),
                          json_string_value(json_object_get(o, "namespace")),
                          json_string_value(json_object_get(o, "name")));
    json_array_foreach(json_object_get(o, "cpids"), k, c) {
      assert_true(json_is_string(json_object_get(c, "time")));
      n += (size_t)snprintf(out + n, cap - n, "%s%.2s:%lld", k ? "," : "",
                            json_string_value(json_object_get(c, "cpid")),
                            (long long)json_integer_value(json_object_get(c, "writes")));
    }
    assert_true(n < cap);
  }
  json_decref(j);
}

static void expect_objects(const rig_t *r, const char *query, const char *want) {
  char got[2048];
  objects_of(r, query, got, sizeof got);
  if (strcmp(got, want) != 0) fail_msg("objects%s: [%s], want [%s]", query, got, want);
}

/* "cpid(cpids,spans)..." of GET /v1/roots<query>, CPIDs shortened; *next
 * gets the cursor ("" for null). */
static void roots_of(const rig_t *r, const char *query, char *out, size_t cap, char *next,
                     size_t ncap) {
  char path[512];
  snprintf(path, sizeof path, "/v1/roots%s", query);
  json_t *j = hc_get_json(r->base, path, 200);
  if (!j) fail_msg("GET %s did not answer 200 with JSON", path);
  size_t i, n = 0;
  json_t *v;
  out[0] = '\0';
  json_array_foreach(json_object_get(j, "roots"), i, v) {
    json_t *s = json_object_get(v, "summary");
    assert_true(json_is_object(s));
    assert_false(json_is_true(json_object_get(s, "truncated")));
    n += (size_t)snprintf(out + n, cap - n, "%s%.2s(%lld,%lld)", i ? " " : "",
                          json_string_value(json_object_get(v, "cpid")),
                          (long long)json_integer_value(json_object_get(s, "cpids")),
                          (long long)json_integer_value(json_object_get(s, "spans")));
    assert_true(n < cap);
  }
  const char *nx = json_string_value(json_object_get(j, "next"));
  if (next) snprintf(next, ncap, "%s", nx ? nx : "");
  json_decref(j);
}

static void expect_roots(const rig_t *r, const char *query, const char *want) {
  char got[2048];
  roots_of(r, query, got, sizeof got, NULL, 0);
  if (strcmp(got, want) != 0) fail_msg("roots%s: [%s], want [%s]", query, got, want);
}

/* A scale's cascade in miniature: C1 a person's scale of demo/web, C2 the
 * ReplicaSet's update, C3 merged from C1 and C4 (another root, of demo/db). */
static void post_cascade(const rig_t *r) {
  rig_post(
      r, "mergelogs",
      "[" ML(C1, "", T("01"), "alice", OBJ("Deployment", "demo", "web")) "," ML(
          C2, "\"" C1 "\"", T("02"), "deployment-controller",
          OBJ("ReplicaSet", "demo", "web-1")) "," ML(C4, "", T("03"), "bob",
                                                     OBJ("Deployment", "demo",
                                                         "db")) "," ML(C3, "\"" C1 "\",\"" C4 "\"",
                                                                       T("04"), "x", "") "]");
  rig_post(
      r, "spans",
      "[" SPAN(C1, "0000000000000001", T("01"), T("01"), "Deployment", "demo", "web") "," SPAN(
          C2, "0000000000000002", T("01"), T("02"), "ReplicaSet", "demo",
          "web-1") "," SPAN(C2, "0000000000000003", T("01"), T("05"), "ReplicaSet", "demo",
                            "web-1") "," SPAN(C3, "0000000000000004", T("04"), T("07"), "Pod",
                                              "demo", "web-1-a") "," SPAN(C5, "0000000000000005",
                                                                          T("08"), T("09"),
                                                                          "Deployment", "demo",
                                                                          "web") "]");
}

static void test_objects_by_name(void **state) {
  rig_t *r = *state;
  rig_open(r);
  post_cascade(r);
  /* C5 wrote demo/web last (a span only); C1 by its mergelog and a span. */
  expect_objects(r, "?kind=Deployment&namespace=demo&name=web", "Deployment/demo/web=55:1,11:2");
  expect_objects(r, "?kind=ReplicaSet&namespace=demo&name=web-1",
                 "ReplicaSet/demo/web-1=22:3"); /* its mergelog and two spans */
  expect_objects(r, "?kind=Deployment&namespace=other&name=web", "");
  expect_objects(r, "?kind=deployment&namespace=demo&name=web", ""); /* kinds are exact */
  /* Without a name: every match, the most recently written first. */
  expect_objects(r, "?namespace=demo",
                 "Deployment/demo/web=55:1,11:2;Pod/demo/web-1-a=33:1;ReplicaSet/demo/web-1=22:3;"
                 "Deployment/demo/db=44:1");
  expect_objects(r, "?namespace=demo&limit=2",
                 "Deployment/demo/web=55:1,11:2;Pod/demo/web-1-a=33:1");
  expect_objects(r, "?kind=Deployment", "Deployment/demo/web=55:1,11:2;Deployment/demo/db=44:1");
  expect_objects(r, "?name=web-1-a", "Pod/demo/web-1-a=33:1");
  /* Counted in /metrics: four objects, none refused. */
  char url[256];
  snprintf(url, sizeof url, "%s/metrics", r->base);
  hc_resp_t m;
  assert_int_equal(hc_request("GET", url, NULL, 0, NULL, &m), 0);
  assert_non_null(strstr(m.body, "\nripple_objects 4\n"));
  assert_non_null(strstr(m.body, "\nripple_objects_refused_total 0\n"));
  hc_resp_free(&m);
  /* Durable: rebuilt from the store at start. */
  rig_close(r);
  rig_open(r);
  expect_objects(r, "?namespace=demo",
                 "Deployment/demo/web=55:1,11:2;Pod/demo/web-1-a=33:1;ReplicaSet/demo/web-1=22:3;"
                 "Deployment/demo/db=44:1");
}

static void test_roots_search(void **state) {
  rig_t *r = *state;
  rig_open(r);
  post_cascade(r);
  /* Roots only (C2 and C3 merged), newest first; C5 has spans only. Each
   * with its cascade: C1 reaches C2 and C3 (4 spans); C4 reaches C3. */
  expect_roots(r, "", "44(2,1) 11(3,4)");
  expect_roots(r, "?component=alice", "11(3,4)");
  expect_roots(r, "?component=nobody", "");
  expect_roots(r, "?namespace=demo&kind=Deployment&name=db", "44(2,1)");
  expect_roots(r, "?name=web", "11(3,4)");
  expect_roots(r, "?since=" T("02"), "44(2,1)");
  expect_roots(r, "?until=" T("03"), "11(3,4)");
  expect_roots(r, "?since=" T("01") "&until=" T("04"), "44(2,1) 11(3,4)");
  /* The summary's end is the latest span end below the root. */
  json_t *j = hc_get_json(r->base, "/v1/roots?component=alice", 200);
  assert_non_null(j);
  json_t *s = json_object_get(json_array_get(json_object_get(j, "roots"), 0), "summary");
  assert_string_equal(json_string_value(json_object_get(s, "end")),
                      "2026-11-24T10:00:07.000000000Z");
  json_decref(j);
  /* Paging: one root a page, the cursor walks back in time. */
  char got[256], next[64], q[128];
  roots_of(r, "?limit=1", got, sizeof got, next, sizeof next);
  assert_string_equal(got, "44(2,1)");
  assert_true(next[0]);
  snprintf(q, sizeof q, "?limit=1&cursor=%s", next);
  roots_of(r, q, got, sizeof got, next, sizeof next);
  assert_string_equal(got, "11(3,4)");
  assert_string_equal(next, "");
  rig_close(r);
  rig_open(r);
  expect_roots(r, "", "44(2,1) 11(3,4)");
}

static void expect_status(const rig_t *r, const char *path, long status, const char *field) {
  char url[5400];
  snprintf(url, sizeof url, "%s%s", r->base, path);
  hc_resp_t resp;
  assert_int_equal(hc_request("GET", url, NULL, 0, NULL, &resp), 0);
  if (resp.status != status)
    fail_msg("GET %s: %ld, want %ld: %s", path, resp.status, status, resp.body);
  json_t *j = json_loads(resp.body, 0, NULL);
  assert_non_null(j);
  if (field) assert_string_equal(json_string_value(json_object_get(j, "field")), field);
  json_decref(j);
  hc_resp_free(&resp);
}

static void test_search_bad_requests(void **state) {
  rig_t *r = *state;
  rig_open(r);
  post_cascade(r);
  expect_status(r, "/v1/roots?limit=0", 400, "limit");
  expect_status(r, "/v1/roots?limit=1001", 400, "limit");
  expect_status(r, "/v1/roots?since=yesterday", 400, "since");
  expect_status(r, "/v1/roots?until=2026-13-01T00:00:00Z", 400, "until");
  expect_status(r, "/v1/roots?cursor=abc", 400, "cursor");
  expect_status(r, "/v1/roots?cursor=1.", 400, "cursor");
  expect_status(r, "/v1/objects?limit=x", 400, "limit");
  char path[5200] = "/v1/objects?name=";
  memset(path + strlen(path), 'a', 4097);
  expect_status(r, path, 400, NULL);
  expect_roots(r, "?component=%FF", "");  /* not UTF-8: matches nothing, refuses nothing */
  expect_roots(r, "", "44(2,1) 11(3,4)"); /* still serving */
}

/* Retention removes what the indexes point at: the objects whose CPIDs are
 * all gone leave the index, roots leave the search. */
static void test_search_retention(void **state) {
  rig_t *r = *state;
  r->cfg.max_age_ns = 3600 * INT64_C(1000000000);
  rig_open(r);
  char now[40], body[2048];
  ripple_time_format(ripple_now_ns(), now);
  snprintf(body, sizeof body,
           "[" ML(C1, "", "2020-01-01T00:00:00Z", "alice", OBJ("Deployment", "demo", "web")) "," ML(
               C2, "", "%s", "alice", OBJ("Deployment", "demo", "db")) "]",
           now);
  rig_post(r, "mergelogs", body);
  char got[512] = "";
  for (int i = 0; i < 100; i++) { /* the writer's tick runs every second */
    objects_of(r, "?namespace=demo", got, sizeof got);
    if (!strcmp(got, "Deployment/demo/db=22:1")) break;
    usleep(100 * 1000);
  }
  assert_string_equal(got, "Deployment/demo/db=22:1");
  expect_roots(r, "", "22(1,0)");
}

/* A database from before the object columns: opened, the columns are added
 * and filled from the stored bodies, so old records are found too. */
static void test_search_older_database(void **state) {
  rig_t *r = *state;
  static const char *rows =
      "INSERT INTO mergelogs(cpid, time, sources, body) VALUES("
      "  x'44444444444444448444444444444444', 1, x'',"
      "  '{\"cpid\":\"" C4
      "\",\"sources\":[],\"time\":\"1970-01-01T00:00:00.000000001Z\","
      "\"component\":\"bob\",\"object\":{\"kind\":\"Deployment\",\"namespace\":\"demo\","
      "\"name\":\"db\"}}');"
      "INSERT INTO spans(cpid, start, body) VALUES("
      "  x'44444444444444448444444444444444', 2,"
      "  '{\"cpid\":\"" C4
      "\",\"span_id\":\"0000000000000009\",\"service\":\"s\","
      "\"name\":\"n\",\"start\":\"1970-01-01T00:00:00.000000002Z\","
      "\"end\":\"1970-01-01T00:00:00.000000002Z\",\"attributes\":{\"kind\":\"Pod\","
      "\"namespace\":\"demo\",\"name\":\"db-0\"}}');";
  rig_first_database(r, rows);
  rig_open(r);
  expect_roots(r, "?component=bob", "44(1,1)");
  expect_objects(r, "?namespace=demo", "Pod/demo/db-0=44:1;Deployment/demo/db=44:1");
  rig_close(r);
  rig_open(r); /* upgraded once; opens as a current database */
  expect_objects(r, "?name=db-0", "Pod/demo/db-0=44:1");
}

/* ---- large answers compressed --------------------------------------------------- */

typedef struct got {
  char *body;
  size_t len;
  int gzip; /* Content-Encoding: gzip was sent */
} got_t;

static size_t on_body(char *p, size_t sz, size_t n, void *ud) {
  got_t *g = ud;
  char *b = realloc(g->body, g->len + sz * n + 1);
  assert_non_null(b);
  memcpy(b + g->len, p, sz * n);
  g->body = b;
  g->len += sz * n;
  g->body[g->len] = '\0';
  return sz * n;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud) {
  if (!strncasecmp(p, "Content-Encoding: gzip", 22)) ((got_t *)ud)->gzip = 1;
  return sz * n;
}

/* GET url with accept as the Accept-Encoding header (NULL: none); decode
 * says whether curl undoes the encoding. */
static got_t get_encoded(const char *url, const char *accept, int decode) {
  got_t g = {0};
  CURL *c = curl_easy_init();
  struct curl_slist *h = NULL;
  char line[128];
  if (accept) {
    snprintf(line, sizeof line, "Accept-Encoding: %s", accept);
    h = curl_slist_append(h, line);
  }
  if (decode) curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(c, CURLOPT_HTTP_CONTENT_DECODING, (long)decode);
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &g);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &g);
  assert_int_equal(curl_easy_perform(c), CURLE_OK);
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  return g;
}

/* An answer of more than 16 KiB goes gzip'd to a client that takes gzip, the
 * same bytes once decoded; plain to one that does not, or refuses it (q=0);
 * a small answer always plain. */
static void test_large_answers_gzip(void **state) {
  rig_t *r = *state;
  rig_open(r);
  char body[64 * 1024];
  size_t n = (size_t)snprintf(body, sizeof body, "[");
  for (int i = 0; i < 200; i++)
    n += (size_t)snprintf(body + n, sizeof body - n,
                          "%s{\"cpid\":\"" C1
                          "\",\"span_id\":\"%016x\",\"service\":\"s\","
                          "\"name\":\"n\",\"start\":\"" T("01") "\",\"end\":\"" T("02") "\"}",
                          i ? "," : "", i + 1);
  snprintf(body + n, sizeof body - n, "]");
  rig_post(r, "spans", body);
  char url[256];
  snprintf(url, sizeof url, "%s/v1/cpids/" C1 "/spans", r->base);
  got_t plain = get_encoded(url, NULL, 0);
  assert_false(plain.gzip);
  assert_true(plain.len > 16384);
  got_t raw = get_encoded(url, "gzip, deflate, br", 0);
  assert_true(raw.gzip);
  assert_true(raw.len < plain.len / 4);
  assert_int_equal((unsigned char)raw.body[0], 0x1f);
  assert_int_equal((unsigned char)raw.body[1], 0x8b);
  got_t dec = get_encoded(url, NULL, 1);
  assert_true(dec.gzip);
  assert_int_equal(dec.len, plain.len);
  assert_memory_equal(dec.body, plain.body, plain.len);
  got_t refused = get_encoded(url, "gzip;q=0, identity", 0);
  assert_false(refused.gzip);
  assert_int_equal(refused.len, plain.len);
  snprintf(url, sizeof url, "%s/v1/cpids/" C1 "/related", r->base);
  got_t small = get_encoded(url, "gzip", 0);
  assert_false(small.gzip);
  free(plain.body);
  free(raw.body);
  free(dec.body);
  free(refused.body);
  free(small.body);
}

/* ---- the index on its own ------------------------------------------------------ */

static ripple_cpid_t cpid_n(unsigned n) {
  ripple_cpid_t c = {{0}};
  c.b[0] = (uint8_t)(n >> 8);
  c.b[1] = (uint8_t)n;
  c.b[6] = 0x40;
  return c;
}

static int odd_live(void *ud, const ripple_cpid_t *c) {
  (void)ud;
  return c->b[1] & 1;
}

static void test_objects_bounds(void **state) {
  (void)state;
  objects_t *o;
  assert_int_equal(objects_new(&o), RIPPLE_OK);
  obj_name_t web = {"Deployment", "demo", "web", 10, 4, 3};
  obj_name_t noname = {"Pod", "demo", "", 3, 4, 0};
  /* 40 CPIDs wrote web, each twice; the newest OBJECTS_KEEP stay. */
  for (unsigned i = 1; i <= 40; i++) {
    ripple_cpid_t c = cpid_n(i);
    assert_int_equal(objects_add(o, &web, &c, (int64_t)i * 10), RIPPLE_OK);
    assert_int_equal(objects_add(o, &web, &c, (int64_t)i * 10 + 1), RIPPLE_OK);
  }
  /* An older write than any kept changes nothing. */
  ripple_cpid_t old = cpid_n(99);
  assert_int_equal(objects_add(o, &web, &old, 5), RIPPLE_OK);
  assert_int_equal(objects_add(o, &noname, &old, 5), RIPPLE_OK); /* not indexed */
  assert_int_equal(objects_count(o), 1);
  obj_found_t f[2];
  assert_int_equal(objects_find(o, "Deployment", "demo", "web", NULL, NULL, f, 2), 1);
  assert_int_equal(f[0].n, OBJECTS_KEEP);
  for (size_t i = 0; i < f[0].n; i++) {
    unsigned want = 40 - (unsigned)i;
    ripple_cpid_t w = cpid_n(want);
    assert_true(cpid_eq(&f[0].cpid[i].cpid, &w));
    assert_int_equal(f[0].cpid[i].time, (int64_t)want * 10 + 1);
    assert_int_equal(f[0].cpid[i].writes, 2);
  }
  assert_string_equal(f[0].kind, "Deployment");
  assert_string_equal(f[0].ns, "demo");
  assert_string_equal(f[0].name, "web");
  /* Pruning keeps the live CPIDs; an object left with none goes. */
  assert_int_equal(objects_prune(o, odd_live, NULL), OBJECTS_KEEP / 2);
  assert_int_equal(objects_find(o, NULL, NULL, NULL, NULL, NULL, f, 2), 1);
  assert_int_equal(f[0].n, OBJECTS_KEEP / 2);
  assert_int_equal(f[0].cpid[0].cpid.b[1], 39);
  objects_prune(o, odd_live, NULL);
  ripple_cpid_t even = cpid_n(2);
  obj_name_t other = {"Pod", "", "p", 3, 0, 1};
  assert_int_equal(objects_add(o, &other, &even, 1000), RIPPLE_OK);
  assert_int_equal(objects_count(o), 2);
  objects_prune(o, odd_live, NULL);
  assert_int_equal(objects_count(o), 1);
  assert_int_equal(objects_find(o, "Pod", "", "p", NULL, NULL, f, 2), 0);
  objects_free(o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_objects_bounds),
      cmocka_unit_test_setup_teardown(test_objects_by_name, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_roots_search, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_search_bad_requests, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_search_retention, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_search_older_database, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_large_answers_gzip, rig_setup, rig_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
