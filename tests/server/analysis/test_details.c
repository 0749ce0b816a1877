/*
 * test_details.c - details and stalled cascades in the trace server
 * (docs/api.md, "Details" and "Stalled cascades"), with the server in this
 * process (server_rig.h):
 *
 *  - POST /v1/details and POST /v1/audit, and GET /v1/cpids/{cpid}/details:
 *    each join rule (audit event by the webhook's span annotation, change by
 *    uid and the version a write started from, a generateName create by the
 *    version its audit event says was written), what is listed without a
 *    span and what is left out (another trace's audit events, unrelated
 *    changes, Events of other objects), the newest version of an Event;
 *  - bad input refused with a reason and counted; Secrets' values replaced
 *    whatever the sender did; the bounded queue (429); details surviving a
 *    restart; the details' lag on /metrics (ripple_details_lag_seconds); a
 *    request late for the parser taken over by its own thread;
 *  - stalls: learned from posted spans, flagged, in both stall endpoints, in
 *    /metrics, rebuilt the same after a restart, ended by the late hop; with
 *    no room in the detector's queue, every span dropped, counted, and the
 *    answers marked incomplete.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_client.h"
#include "ripplex/clock.h"
#include "server_rig.h"
#include "testutil.h"

#define R1 "11111111-1111-4111-8111-111111111111"
#define R9 "99999999-9999-4999-8999-999999999999"
#define U1 "aaaaaaaa-0000-4000-8000-000000000001" /* the Deployment */
#define U2 "aaaaaaaa-0000-4000-8000-000000000002" /* its ReplicaSet */
#define U3 "aaaaaaaa-0000-4000-8000-000000000003" /* a Pod created by generateName */
#define U9 "aaaaaaaa-0000-4000-8000-000000000009" /* an object of no trace */
#define T(s) "2026-11-25T10:00:" s "Z"

static const char *span(char *buf, size_t cap, const char *id, const char *svc, const char *name,
                        const char *t0, const char *t1, const char *attrs) {
  snprintf(buf, cap,
           "{\"cpid\":\"" R1
           "\",\"span_id\":\"%s\",\"service\":\"%s\",\"name\":\"%s\","
           "\"start\":\"%s\",\"end\":\"%s\",\"attributes\":{%s}}",
           id, svc, name, t0, t1, attrs);
  return buf;
}

/* A cascade of three writes under R1: a person's update of the Deployment
 * (version 10 to 11), the ReplicaSet controller's create of a Pod by
 * generateName (no name, no uid at admission), and the Deployment
 * controller's update of the ReplicaSet (no details arrive for it). */
static void post_cascade(const rig_t *r) {
  rig_post(r, "mergelogs",
           "[{\"cpid\":\"" R1
           "\",\"sources\":[],\"time\":\"" T("00") "\",\"component\":\"kubectl\"}]");
  char a[512], b[512], c[512], body[1600];
  span(a, sizeof a, "00000000000000a1", "kubectl", "update deployments", T("00"), T("00"),
       "\"kind\":\"Deployment\",\"namespace\":\"d\",\"name\":\"web\",\"uid\":\"" U1
       "\",\"resourceVersion\":\"10\",\"operation\":\"UPDATE\"");
  span(b, sizeof b, "00000000000000a2", "replicaset-controller", "create pods", T("00"), T("01"),
       "\"kind\":\"Pod\",\"namespace\":\"d\",\"name\":\"\",\"operation\":\"CREATE\","
       "\"owner\":\"ReplicaSet/web-1\"");
  span(c, sizeof c, "00000000000000a3", "deployment-controller", "update replicasets", T("00"),
       T("01"),
       "\"kind\":\"ReplicaSet\",\"namespace\":\"d\",\"name\":\"web-1\",\"uid\":\"" U2
       "\",\"resourceVersion\":\"20\",\"operation\":\"UPDATE\"");
  snprintf(body, sizeof body, "[%s,%s,%s]", a, b, c);
  rig_post(r, "spans", body);
}

#define CHANGE(op, uid, kind, name, rv, prev, cpid, rest)                                          \
  "{\"type\":\"change\",\"op\":\"" op                                                              \
  "\",\"time\":\"" T("02") "\",\"object\":{\"kind\":\"" kind                                       \
                           "\",\"namespace\":\"d\",\"name\":\"" name "\",\"uid\":\"" uid           \
                           "\"},\"resourceVersion\":\"" rv "\"" prev ",\"cpid\":\"" cpid "\"" rest \
                           "}"
#define EVENT(uid, time, count, reason)                                                            \
  "{\"type\":\"event\",\"time\":\"" time                                                           \
  "\",\"object\":{\"kind\":\"Pod\",\"namespace\":"                                                 \
  "\"d\",\"name\":\"web-1-abc\",\"uid\":\"" uid "\"},\"reason\":\"" reason                         \
  "\",\"message\":"                                                                                \
  "\"0/4 nodes are available\",\"eventType\":\"Warning\",\"count\":" count ",\"uid\":\"ev-" reason \
  "\"}"

static void post_details(const rig_t *r) {
  rig_post(r, "details",
           "[" CHANGE("update", U1, "Deployment", "web", "11", ",\"previousResourceVersion\":\"10\"", R1,
                      ",\"diff\":[{\"path\":\"/spec/replicas\",\"old\":1,\"new\":3}]") ","
           /* a later write of the Deployment by another change: in no span of R1 */
           CHANGE("update", U1, "Deployment", "web", "13", ",\"previousResourceVersion\":\"11\"", R9,
                  ",\"diff\":[{\"path\":\"/spec/paused\",\"new\":true}]") ","
           CHANGE("create", U3, "Pod", "web-1-abc", "12", "", R1,
                  ",\"snapshot\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1-abc\"}}") ","
           EVENT(U3, T("03"), "1", "FailedScheduling") "," EVENT(U3, T("09"), "4", "FailedScheduling") ","
           EVENT(U9, T("03"), "1", "Elsewhere") "]");
}

#define AUDIT(id, verb, code, user, ns, name, extra)                                      \
  "{\"kind\":\"Event\",\"apiVersion\":\"audit.k8s.io/v1\",\"level\":\"RequestResponse\"," \
  "\"auditID\":\"" id "\",\"stage\":\"ResponseComplete\",\"verb\":\"" verb                \
  "\",\"user\":{"                                                                         \
  "\"username\":\"" user                                                                  \
  "\",\"groups\":[\"system:authenticated\"]},\"userAgent\":\"test\","                     \
  "\"objectRef\":{\"resource\":\"pods\",\"namespace\":\"" ns "\",\"name\":\"" name        \
  "\","                                                                                   \
  "\"apiVersion\":\"v1\"},\"responseStatus\":{\"code\":" code                             \
  "},"                                                                                    \
  "\"requestReceivedTimestamp\":\"" T("01") "\",\"stageTimestamp\":\"" T("01") "\"" extra "}"

static void post_audit(const rig_t *r) {
  rig_post(r, "audit",
           "{\"kind\":\"EventList\",\"apiVersion\":\"audit.k8s.io/v1\",\"items\":["
           /* the Pod's create, through the webhook: joins span a2, names the Pod */
           AUDIT("au-1", "create", "201", "system:serviceaccount:kube-system:replicaset-controller",
                 "d", "",
                 ",\"annotations\":{\"ripple.example/ripple-span\":\"00000000000000a2\"},"
                 "\"responseObject\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1-abc\","
                 "\"uid\":\"" U3 "\",\"resourceVersion\":\"12\"},\"spec\":{\"x\":1}}") ","
           /* refused before admission: no span anywhere, about the cascade's Pod */
           AUDIT("au-2", "update", "403", "mallory", "d", "web-1-abc", "") ","
           /* another trace's write of the same Pod: not this trace's */
           AUDIT("au-3", "update", "200", "someone", "d", "web-1-abc",
                 ",\"annotations\":{\"x/ripple-span\":\"ffffffffffffffff\"}") ","
           /* a read: skipped */
           AUDIT("au-4", "get", "200", "someone", "d", "web-1-abc", "") "]}");
}

static json_t *get(const rig_t *r, const char *path) {
  json_t *j = hc_get_json(r->base, path, 200);
  if (!j) fail_msg("GET %s did not answer 200 with JSON", path);
  return j;
}

static const json_t *write_of(const json_t *d, const char *span_id) {
  size_t i;
  const json_t *w;
  json_array_foreach(json_object_get(d, "writes"), i, w) {
    if (!strcmp(json_string_value(json_object_get(w, "span_id")), span_id)) return w;
  }
  return NULL;
}

static void test_joins(void **state) {
  rig_t *r = *state;
  rig_open(r);
  post_cascade(r);
  post_details(r);
  post_audit(r);
  json_t *d = get(r, "/v1/cpids/" R1 "/details");
  /* The person's update: its change, by uid and the version it started from. */
  if (getenv("DEBUG_DETAILS")) json_dumpf(d, stderr, JSON_INDENT(1));
  const json_t *w = write_of(d, "00000000000000a1");
  assert_non_null(w);
  const json_t *c = json_object_get(w, "change");
  assert_string_equal(json_string_value(json_object_get(c, "resourceVersion")), "11");
  const json_t *e = json_array_get(json_object_get(c, "diff"), 0);
  assert_string_equal(json_string_value(json_object_get(e, "path")), "/spec/replicas");
  assert_int_equal(json_integer_value(json_object_get(e, "new")), 3);
  assert_true(json_is_null(json_object_get(w, "audit")));
  /* The generateName create: its audit event by the span annotation, its
   * change by the version the audit event says was written. */
  w = write_of(d, "00000000000000a2");
  assert_non_null(w);
  const json_t *a = json_object_get(w, "audit");
  assert_int_equal(json_integer_value(json_object_get(a, "code")), 201);
  assert_string_equal(json_string_value(json_object_get(a, "auditID")), "au-1");
  assert_string_equal(json_string_value(json_object_get(json_object_get(a, "object"), "uid")), U3);
  assert_null(json_object_get(a, "responseObject")); /* nothing of the objects is kept */
  c = json_object_get(w, "change");
  assert_string_equal(json_string_value(json_object_get(c, "op")), "create");
  assert_non_null(json_object_get(c, "snapshot"));
  /* No details for the ReplicaSet's write: no entry. */
  assert_null(write_of(d, "00000000000000a3"));
  assert_int_equal(json_array_size(json_object_get(d, "writes")), 2);
  /* The Pod's Event, once, its newest version; not the other object's. */
  json_t *evs = json_object_get(d, "events");
  assert_int_equal(json_array_size(evs), 1);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(evs, 0), "count")), 4);
  /* The write refused before admission, listed by object and time; not
   * another trace's, not a read. */
  json_t *au = json_object_get(d, "audit");
  assert_int_equal(json_array_size(au), 1);
  assert_string_equal(json_string_value(json_object_get(json_array_get(au, 0), "user")), "mallory");
  /* The later, unrelated write of the Deployment is in no list. */
  assert_int_equal(json_array_size(json_object_get(d, "changes")), 0);
  char *text = json_dumps(d, 0);
  assert_null(strstr(text, "/spec/paused"));
  free(text);
  json_decref(d);
  /* Everything acknowledged survives a restart. */
  rig_close(r);
  rig_open(r);
  d = get(r, "/v1/cpids/" R1 "/details");
  assert_int_equal(json_array_size(json_object_get(d, "writes")), 2);
  assert_int_equal(json_array_size(json_object_get(d, "events")), 1);
  json_decref(d);
  /* An unknown CPID. */
  assert_null(hc_get_json(r->base, "/v1/cpids/" R9 "/details", 200));
}

static long post(const rig_t *r, const char *what, const char *body, char **answer) {
  char url[256];
  snprintf(url, sizeof url, "%s/v1/%s", r->base, what);
  hc_resp_t resp;
  assert_int_equal(hc_request("POST", url, body, strlen(body), NULL, &resp), 0);
  long status = resp.status;
  if (answer) *answer = resp.body, resp.body = NULL;
  hc_resp_free(&resp);
  return status;
}

static void expect_refused(const rig_t *r, const char *what, const char *body, long status,
                           const char *field) {
  char *ans = NULL;
  assert_int_equal(post(r, what, body, &ans), status);
  json_t *j = json_loads(ans, 0, NULL);
  assert_non_null(json_string_value(json_object_get(j, "error")));
  if (field) assert_string_equal(json_string_value(json_object_get(j, "field")), field);
  json_decref(j);
  free(ans);
}

static void test_bad_input(void **state) {
  rig_t *r = *state;
  rig_open(r);
  expect_refused(r, "details", "[{", 400, NULL);
  expect_refused(r, "details", "{}", 400, NULL);
  expect_refused(r, "details", "[{\"type\":\"nope\"}]", 400, "type");
  expect_refused(r, "details", "[{\"type\":\"change\",\"time\":\"yesterday\"}]", 400, "time");
  expect_refused(r, "details",
                 "[{\"type\":\"change\",\"time\":\"" T("00") "\",\"op\":\"update\",\"object\":{"
                 "\"kind\":\"Pod\",\"name\":\"p\",\"uid\":\"not a uid!\"}}]",
                 400, "object.uid");
  expect_refused(r, "details",
                 "[{\"type\":\"change\",\"time\":\"" T("00") "\",\"op\":\"rename\",\"object\":{"
                 "\"kind\":\"Pod\",\"name\":\"p\"}}]",
                 400, "op");
  expect_refused(r, "details",
                 "[{\"type\":\"event\",\"time\":\"" T("00") "\",\"object\":{\"kind\":\"Pod\","
                 "\"name\":\"p\"},\"count\":-1}]",
                 400, "count");
  /* A record past the stored size (256 KiB of JSON). */
  size_t big = 300 * 1024;
  char *body = malloc(big + 512);
  int n = snprintf(body, 512,
                   "[{\"type\":\"change\",\"time\":\"" T("00") "\",\"op\":\"create\",\"object\":{"
                   "\"kind\":\"Pod\",\"name\":\"p\"},\"snapshot\":{\"x\":\"");
  memset(body + n, 'a', big);
  memcpy(body + n + big, "\"}}]", sizeof "\"}}]");
  r->ho.max_body = 1 << 20;
  expect_refused(r, "details", body, 413, NULL);
  free(body);
  expect_refused(r, "audit", "not json", 400, NULL);
  expect_refused(r, "audit", "[]", 400, NULL);
  /* Reads and unfinished stages are skipped, counted, and answered 200. */
  char *ans = NULL;
  assert_int_equal(
      post(r, "audit",
           "{\"kind\":\"EventList\",\"apiVersion\":\"audit.k8s.io/v1\",\"items\":[" AUDIT(
               "x", "get", "200", "u", "d", "p", "") ","
                                                     "{\"auditID\":7}]}",
           &ans),
      200);
  assert_non_null(strstr(ans, "\"accepted\":0"));
  free(ans);
  hc_resp_t m;
  char url[128];
  snprintf(url, sizeof url, "%s/metrics", r->base);
  assert_int_equal(hc_request("GET", url, NULL, 0, NULL, &m), 0);
  assert_non_null(strstr(m.body, "ripple_audit_events_ignored_total{reason=\"skipped\"} 1"));
  assert_non_null(strstr(m.body, "ripple_audit_events_ignored_total{reason=\"malformed\"} 1"));
  assert_non_null(strstr(m.body, "ripple_details_refused_requests_total 10"));
  hc_resp_free(&m);
}

/* A Secret's values never reach the database, whatever the sender sent. */
static void test_secret(void **state) {
  rig_t *r = *state;
  rig_open(r);
  rig_post(r, "details",
           "[{\"type\":\"change\",\"op\":\"create\",\"time\":\"" T("00") "\",\"object\":{"
           "\"kind\":\"Secret\",\"namespace\":\"d\",\"name\":\"pw\",\"uid\":\"" U9 "\"},"
           "\"snapshot\":{\"kind\":\"Secret\",\"data\":{\"password\":\"aHVudGVyMg==\"},"
           "\"stringData\":\"hunter2\"}},"
           "{\"type\":\"change\",\"op\":\"update\",\"time\":\"" T("00") "\",\"object\":{"
           "\"kind\":\"Secret\",\"namespace\":\"d\",\"name\":\"pw\",\"uid\":\"" U9 "\"},"
           "\"diff\":[{\"path\":\"/data/password\",\"old\":\"aHVudGVyMg==\",\"new\":\"eA==\"},"
           "{\"path\":\"/metadata/labels/a\",\"new\":\"b\"}]}]");
  rig_close(r);
  char db[128], *err = NULL;
  snprintf(db, sizeof db, "%s.details", r->db);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
  sqlite3_stmt *q;
  assert_int_equal(sqlite3_prepare_v2(h, "SELECT group_concat(body, '|') FROM facts", -1, &q, NULL),
                   SQLITE_OK);
  assert_int_equal(sqlite3_step(q), SQLITE_ROW);
  const char *all = (const char *)sqlite3_column_text(q, 0);
  assert_non_null(all);
  assert_null(strstr(all, "aHVudGVyMg"));
  assert_null(strstr(all, "hunter2"));
  assert_null(strstr(all, "eA=="));
  assert_non_null(strstr(all, "\"/data/password\""));     /* which key changed is kept */
  assert_non_null(strstr(all, "\"/metadata/labels/a\"")); /* other fields are */
  sqlite3_finalize(q);
  sqlite3_close(h);
  sqlite3_free(err);
}

/* The queue in front of the details' writer is bounded: past it, refused at once. */
static void test_queue_bound(void **state) {
  rig_t *r = *state;
  facts_t *f;
  char err[256], path[128];
  snprintf(path, sizeof path, "%s/q.details", r->dir);
  facts_opts_t o = {.path = path, .max_queue = 2};
  assert_int_equal(facts_open(&o, &f, err, sizeof err), RIPPLE_OK);
  fact_t v[3] = {{.type = FACT_EVENT, .time = 1, .body = "{}", .body_len = 2},
                 {.type = FACT_EVENT, .time = 2, .body = "{}", .body_len = 2},
                 {.type = FACT_EVENT, .time = 3, .body = "{}", .body_len = 2}};
  assert_int_equal(facts_put(f, v, 3), RIPPLE_EFULL);
  assert_int_equal(facts_put(f, v, 2), RIPPLE_OK);
  facts_stats_t st;
  facts_stats(f, &st);
  assert_int_equal(st.refused_busy, 1);
  assert_int_equal(st.stored, 2);
  assert_int_equal(st.queued, 0);
  /* The lag, one observation per fact: these two waited at least 3 s since
   * their (pretended) receipt, so both land above the 2.5 s bound. */
  assert_int_equal(st.lag_count, 2);
  assert_int_equal(facts_put_since(f, v, 2, mono_ns() - 3000000000LL), RIPPLE_OK);
  facts_stats(f, &st);
  assert_int_equal(st.lag_count, 4);
  assert_true(st.lag_sum >= 6.0);
  uint64_t late = 0, all = 0;
  for (size_t b = 0; b <= FACTS_LAG_BUCKETS; b++) {
    all += st.lag_counts[b];
    if (b == FACTS_LAG_BUCKETS || facts_lag_bounds[b] > 2.5) late += st.lag_counts[b];
  }
  assert_int_equal(all, 4);
  assert_true(late >= 2);
  facts_close(f);
}

/* A writer queue that is behind refuses more: its oldest job's request
 * waited over 3 s (facts.c, FACTS_BEHIND_NS). The writer is held by another
 * connection's write lock: one job is in its hands, the next (received 4 s
 * ago) waits in the queue, and a third put is refused at once. */
typedef struct putter {
  facts_t *f;
  const fact_t *v;
  int64_t since;
  int rc;
  pthread_t t;
} putter_t;

static void *put_thread(void *arg) {
  putter_t *p = arg;
  p->rc = facts_put_since(p->f, p->v, 1, p->since);
  return NULL;
}

static void test_queue_behind(void **state) {
  rig_t *r = *state;
  facts_t *f;
  char err[256], path[128];
  snprintf(path, sizeof path, "%s/b.details", r->dir);
  facts_opts_t o = {.path = path};
  assert_int_equal(facts_open(&o, &f, err, sizeof err), RIPPLE_OK);
  fact_t v[1] = {{.type = FACT_EVENT, .time = 1, .body = "{}", .body_len = 2}};
  sqlite3 *h;
  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  assert_int_equal(sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
  putter_t a = {f, v, mono_ns(), -1, 0}, b = {f, v, mono_ns() - 4000000000LL, -1, 0};
  assert_int_equal(pthread_create(&a.t, NULL, put_thread, &a), 0);
  facts_stats_t st = {0};
  for (int i = 0; i < 100 && st.queued < 1; i++, usleep(10000)) facts_stats(f, &st);
  assert_int_equal(pthread_create(&b.t, NULL, put_thread, &b), 0);
  for (int i = 0; i < 100 && st.queued < 2; i++, usleep(10000)) facts_stats(f, &st);
  assert_int_equal(st.queued, 2);
  assert_int_equal(facts_put(f, v, 1), RIPPLE_EFULL); /* behind, not full */
  assert_int_equal(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
  pthread_join(a.t, NULL);
  pthread_join(b.t, NULL);
  assert_int_equal(a.rc, RIPPLE_OK);
  assert_int_equal(b.rc, RIPPLE_OK);
  facts_stats(f, &st);
  assert_int_equal(st.refused_busy, 1);
  assert_int_equal(st.stored, 2);
  assert_int_equal(facts_put(f, v, 1), RIPPLE_OK); /* caught up: taken again */
  facts_close(f);
}

static char *metrics_text(const rig_t *r) {
  hc_resp_t m;
  char url[128];
  snprintf(url, sizeof url, "%s/metrics", r->base);
  assert_int_equal(hc_request("GET", url, NULL, 0, NULL, &m), 0);
  char *text = strdup(m.body);
  hc_resp_free(&m);
  return text;
}

/* ripple_details_lag_seconds on /metrics: one observation per detail stored,
 * none for a refused request; the parser's queue empty once all are answered. */
static void test_lag_metric(void **state) {
  rig_t *r = *state;
  rig_open(r);
  char *m = metrics_text(r);
  assert_non_null(strstr(m, "# TYPE ripple_details_lag_seconds histogram\n"));
  assert_non_null(strstr(m, "\nripple_details_lag_seconds_count 0\n"));
  free(m);
  post_details(r); /* six records */
  expect_refused(r, "details", "[{\"type\":\"change\",\"time\":\"yesterday\"}]", 400, "time");
  m = metrics_text(r);
  assert_non_null(strstr(m, "\nripple_details_lag_seconds_count 6\n"));
  assert_non_null(strstr(m, "\nripple_details_lag_seconds_bucket{le=\"+Inf\"} 6\n"));
  assert_null(strstr(m, "\nripple_details_lag_seconds_sum 0.000000000\n")); /* it took some time */
  assert_non_null(strstr(m, "\nripple_details_pending_requests 0\n"));
  assert_non_null(strstr(m, "\nripple_details_pending_bytes 0\n"));
  free(m);
}

static unsigned long metric_value(const rig_t *r, const char *sample) {
  char *m = metrics_text(r), *at = strstr(m, sample);
  unsigned long v = at ? strtoul(at + strlen(sample), NULL, 10) : 0;
  free(m);
  return v;
}

typedef struct poster {
  const rig_t *r;
  const char *body;
  long status;
  pthread_t t;
} poster_t;

static void *post_thread(void *arg) {
  poster_t *p = arg;
  char *ans = NULL;
  p->status = post(p->r, "details", p->body, &ans);
  free(ans);
  return NULL;
}

/* A request that waited 1 s for the details' parser is taken over by its own
 * connection's thread. The parser is held up here by a lock on the details'
 * database, which its writer waits for (SQLite's busy timeout, 5 s): the
 * first request keeps the parser, the second is taken over, and both are
 * stored once the lock goes. */
static void test_late_request(void **state) {
  rig_t *r = *state;
  rig_open(r);
  char db[160];
  snprintf(db, sizeof db, "%s.details", r->db);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
  assert_int_equal(sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
  poster_t a = {r, "[" EVENT(U1, T("03"), "1", "A") "]", 0, 0};
  poster_t b = {r, "[" EVENT(U1, T("04"), "1", "B") "]", 0, 0};
  assert_int_equal(pthread_create(&a.t, NULL, post_thread, &a), 0);
  for (int i = 0; i < 40 && metric_value(r, "\nripple_details_pending_requests ") < 1; i++)
    usleep(50000);
  assert_int_equal(pthread_create(&b.t, NULL, post_thread, &b), 0);
  unsigned long late = 0;
  for (int i = 0; i < 30 && !late; i++) {
    usleep(100000);
    late = metric_value(r, "\nripple_details_late_requests_total ");
  }
  assert_int_equal(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
  pthread_join(a.t, NULL);
  pthread_join(b.t, NULL);
  assert_true(late >= 1); /* 2 if the parser had not even taken the first */
  assert_int_equal(a.status, 200);
  assert_int_equal(b.status, 200);
  assert_int_equal(metric_value(r, "\nripple_details_stored_total{type=\"event\"} "), 2);
  assert_int_equal(metric_value(r, "\nripple_details_lag_seconds_count "), 2);
}

/* ---- stalls ---------------------------------------------------------------------- */

/* n cascades in which a Pod's create (by generateName, under ReplicaSet/rs-i)
 * is followed 50 ms later by its binding; then one whose binding never comes.
 * Times are a minute ago, so every write has matured by the next tick. */
static void post_learning_at(const rig_t *r, int n, const char *stuck, int64_t t) {
  static int ids; /* span ids unique across calls */
  ids += 0x1000;
  sbuf_t ml, sp;
  sbuf_init(&ml);
  sbuf_init(&sp);
  for (int i = 0; i <= n; i++) {
    char cp[40], t0[40], t1[40], t2[40];
    if (i == n)
      snprintf(cp, sizeof cp, "%s", stuck);
    else
      snprintf(cp, sizeof cp, "aaaaaaaa-bbbb-4ccc-8ddd-%012d", i + 1);
    time_text(t + i * 100000000LL, t0);
    time_text(t + i * 100000000LL + 1000000, t1);
    time_text(t + i * 100000000LL + 51000000, t2);
    sbuf_printf(&ml, "%s{\"cpid\":\"%s\",\"sources\":[],\"time\":\"%s\"}", i ? "," : "[", cp, t0);
    sbuf_printf(&sp,
                "%s{\"cpid\":\"%s\",\"span_id\":\"%016x\",\"service\":\"replicaset-controller\","
                "\"name\":\"create pods\",\"start\":\"%s\",\"end\":\"%s\",\"attributes\":{"
                "\"kind\":\"Pod\",\"namespace\":\"d\",\"name\":\"\",\"operation\":\"CREATE\","
                "\"owner\":\"ReplicaSet/rs-%d\"}}",
                i ? "," : "[", cp, ids + 0x100 + i, t0, t1, i);
    /* The ReplicaSet's status follows every create, the stuck one's too. */
    sbuf_printf(&sp,
                ",{\"cpid\":\"%s\",\"span_id\":\"%016x\",\"service\":\"replicaset-controller\","
                "\"name\":\"update replicasets/status\",\"start\":\"%s\",\"end\":\"%s\","
                "\"attributes\":{\"kind\":\"ReplicaSet\",\"namespace\":\"d\",\"name\":\"rs-%d\","
                "\"operation\":\"UPDATE\",\"owner\":\"Deployment/d-%d\"}}",
                cp, ids + 0x500 + i, t0, t1, i, i);
    if (i < n)
      sbuf_printf(&sp,
                  ",{\"cpid\":\"%s\",\"span_id\":\"%016x\",\"service\":\"default-scheduler\","
                  "\"name\":\"create pods/binding\",\"start\":\"%s\",\"end\":\"%s\","
                  "\"attributes\":{\"kind\":\"Pod\",\"namespace\":\"d\",\"name\":\"rs-%d-x\","
                  "\"operation\":\"CREATE\",\"owner\":\"ReplicaSet/rs-%d\"}}",
                  cp, ids + 0x900 + i, t0, t2, i, i);
  }
  sbuf_puts(&ml, "]");
  sbuf_puts(&sp, "]");
  rig_post(r, "mergelogs", ml.p);
  rig_post(r, "spans", sp.p);
  sbuf_free(&ml);
  sbuf_free(&sp);
}

static void post_learning(const rig_t *r, int n, const char *stuck) {
  post_learning_at(r, n, stuck, ripple_now_ns() - 60 * 1000000000LL);
}

static size_t stalls_count(const rig_t *r, const char *path) {
  json_t *j = get(r, path);
  size_t n = json_array_size(json_object_get(j, "stalls"));
  json_decref(j);
  return n;
}

/* The next tick of the writer (every second) has run. */
static void next_tick(void) { usleep(2200 * 1000); }

static void test_stalls(void **state) {
  rig_t *r = *state;
  r->cfg.stall =
      (stall_opts_t){.min_samples = 5, .horizon_ns = 1000000000LL, .min_wait_ns = 1000000000LL};
  rig_open(r);
  const char *stuck = "cccccccc-0000-4000-8000-000000000001";
  post_learning(r, 12, stuck);
  next_tick();
  json_t *j = get(r, "/v1/stalls");
  assert_true(json_is_true(json_object_get(j, "enabled")));
  const json_t *st = json_array_get(json_object_get(j, "stalls"), 0);
  assert_non_null(st);
  assert_string_equal(json_string_value(json_object_get(st, "cpid")), stuck);
  assert_string_equal(json_string_value(json_object_get(st, "name")), "create pods");
  assert_string_equal(json_string_value(json_object_get(json_object_get(st, "expect"), "name")),
                      "create pods/binding");
  json_decref(j);
  char path[128];
  snprintf(path, sizeof path, "/v1/cpids/%s/stalls", stuck);
  size_t n = stalls_count(r, path);
  assert_true(n >= 1);
  assert_int_equal(stalls_count(r, "/v1/cpids/aaaaaaaa-bbbb-4ccc-8ddd-000000000001/stalls"), 0);
  j = get(r, "/v1/stalls/expected");
  assert_true(json_array_size(json_object_get(j, "expected")) >= 1);
  json_decref(j);
  hc_resp_t m;
  char url[128];
  snprintf(url, sizeof url, "%s/metrics", r->base);
  assert_int_equal(hc_request("GET", url, NULL, 0, NULL, &m), 0);
  assert_non_null(strstr(
      m.body,
      "\nripple_stalled_writes{service=\"replicaset-controller\",name=\"create pods\"} 1\n"));
  assert_non_null(strstr(m.body, "\nripple_stalls_active 1\n"));
  /* The detector keeps up and misses nothing here: its queue is empty. */
  assert_true(hc_metric_value(m.body, "ripple_stall_queued_spans_total") >= 3 * 12);
  assert_true(hc_metric_value(m.body, "ripple_stall_dropped_spans_total") == 0);
  assert_true(hc_metric_value(m.body, "ripple_stall_queue_spans") == 0);
  assert_true(hc_metric_value(m.body, "ripple_stalls_withheld") == 0);
  hc_resp_free(&m);
  j = get(r, "/v1/stalls");
  assert_true(json_is_true(json_object_get(j, "complete")));
  json_decref(j);
  /* The same after a restart: rebuilt from the stored spans. */
  rig_close(r);
  rig_open(r);
  next_tick();
  assert_int_equal(stalls_count(r, path), n);
  /* The binding comes, late: the stall ends. */
  char body[600], t0[40], t1[40];
  time_text(ripple_now_ns() - 1000000000LL, t0);
  time_text(ripple_now_ns(), t1);
  snprintf(body, sizeof body,
           "[{\"cpid\":\"%s\",\"span_id\":\"0000000000000fff\",\"service\":\"default-scheduler\","
           "\"name\":\"create pods/binding\",\"start\":\"%s\",\"end\":\"%s\",\"attributes\":{"
           "\"kind\":\"Pod\",\"namespace\":\"d\",\"name\":\"rs-12-x\",\"operation\":\"CREATE\","
           "\"owner\":\"ReplicaSet/rs-12\"}}]",
           stuck, t0, t1);
  rig_post(r, "spans", body);
  assert_int_equal(stalls_count(r, path), 0);
}

/* A live cascade: learned from the past, the stuck write arrives now and is
 * flagged once its wait is over, later than the horizon. */
static void test_stalls_live(void **state) {
  rig_t *r = *state;
  r->cfg.stall =
      (stall_opts_t){.min_samples = 5, .horizon_ns = 1000000000LL, .min_wait_ns = 3000000000LL};
  rig_open(r);
  post_learning(r, 12, "cccccccc-0000-4000-8000-000000000001");
  next_tick(); /* the past's stuck write is flagged; the new one is not yet */
  const char *stuck = "cccccccc-0000-4000-8000-000000000002";
  char path[128];
  snprintf(path, sizeof path, "/v1/cpids/%s/stalls", stuck);
  post_learning_at(r, 0, stuck, ripple_now_ns());
  assert_int_equal(stalls_count(r, path), 0);
  usleep(4500 * 1000);
  assert_true(stalls_count(r, path) >= 1);
}

/* A queue with no room: every span is dropped, counted, and the answers say
 * they are not complete (and invent nothing). */
static void test_stalls_dropped(void **state) {
  rig_t *r = *state;
  r->cfg.stall =
      (stall_opts_t){.min_samples = 5, .horizon_ns = 1000000000LL, .min_wait_ns = 1000000000LL};
  r->cfg.stall_queue_bytes = 1;
  rig_open(r);
  post_learning(r, 12, "cccccccc-0000-4000-8000-000000000001");
  json_t *j = get(r, "/v1/stalls");
  assert_true(json_is_false(json_object_get(j, "complete")));
  assert_int_equal(json_array_size(json_object_get(j, "stalls")), 0);
  json_decref(j);
  hc_resp_t m;
  char url[128];
  snprintf(url, sizeof url, "%s/metrics", r->base);
  assert_int_equal(hc_request("GET", url, NULL, 0, NULL, &m), 0);
  assert_true(hc_metric_value(m.body, "ripple_stall_dropped_spans_total") >= 3 * 12);
  assert_true(hc_metric_value(m.body, "ripple_stall_queued_spans_total") == 0);
  hc_resp_free(&m);
}

static void test_stalls_off(void **state) {
  rig_t *r = *state;
  r->cfg.stall_off = 1;
  rig_open(r);
  json_t *j = get(r, "/v1/stalls");
  assert_true(json_is_false(json_object_get(j, "enabled")));
  assert_int_equal(json_array_size(json_object_get(j, "stalls")), 0);
  json_decref(j);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_joins, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_bad_input, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_secret, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_queue_bound, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_queue_behind, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_lag_metric, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_late_request, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_stalls, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_stalls_live, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_stalls_dropped, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_stalls_off, rig_setup, rig_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
