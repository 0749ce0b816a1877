/*
 * test_own_trace.c - a change's own cascade through the API (docs/api.md
 * "Own cascade and everything reachable"), end to end in process
 * (server_rig.h): one Deployment scaled four times by a person, sent as the
 * webhook sends it, mergelogs naming their trigger. /trace, /details and the
 * roots' summaries answer the scale's own cascade by default and everything
 * reachable with scope=reachable; /related, /mergelogs and /spans keep
 * reachability by default and take scope=own. Also: trace cursors and roots
 * pages in both scopes, refusals, a restart (the flags come back from the
 * store), and a database from before trigger lists (its rows count every
 * source).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_client.h"
#include "ripplex/sbuf.h"
#include "server_rig.h"
#include "testutil.h"

#define SCALES 4
#define PODS 10

/* Keys: the ReplicaSet's first context 1; P_k 10+k; N_k 20+k; Q_k_i 100*k+i. */
#define R0 1
#define P(k) (10 + (k))
#define N(k) ((k) ? 20 + (k) : R0)
#define Q(k, i) (100 * (k) + (i))

/* Scale k happens at minute k: its writes at second 1.., its Pods end at
 * second 10 + i. */
static void t_at(char *out, int k, int s) { sprintf(out, "2026-11-24T10:%02d:%02dZ", k, s); }

static void ml(sbuf_t *b, int key, const int *src, int n, int trigger, int k, int s) {
  char t[32];
  t_at(t, k, s);
  sbuf_printf(b, "%s{\"cpid\":\"%s\",\"sources\":[", b->len > 1 ? "," : "", rig_cpid(key));
  for (int i = 0; i < n; i++) sbuf_printf(b, "%s\"%s\"", i ? "," : "", rig_cpid(src[i]));
  sbuf_puts(b, "]");
  if (trigger >= 0) sbuf_printf(b, ",\"trigger\":[\"%s\"]", rig_cpid(src[trigger]));
  /* The person's scales are kubectl's roots; the ReplicaSet's first context
   * is not. */
  sbuf_printf(b, ",\"time\":\"%s\",\"component\":\"%s\"", t,
              n           ? "controller"
              : key == R0 ? "replicaset-controller"
                          : "kubectl");
  if (!n)
    sbuf_puts(b, ",\"object\":{\"kind\":\"Deployment\",\"namespace\":\"d\",\"name\":\"web\"}");
  sbuf_putc(b, '}');
}

/* Scale k (1..SCALES): P_k, N_k = [P_k, N_{k-1}] triggered by P_k, and the
 * Pods' contexts Q_k_i = [N_k] with a span each. with_trigger 0 sends no
 * trigger lists (a writer before them). */
static void post_scale(const rig_t *r, int k, int with_trigger) {
  sbuf_t m, s;
  sbuf_init(&m);
  sbuf_init(&s);
  sbuf_putc(&m, '[');
  ml(&m, P(k), NULL, 0, -1, k, 1);
  ml(&m, N(k), (int[]){P(k), N(k - 1)}, 2, with_trigger ? 0 : -1, k, 2);
  sbuf_putc(&s, '[');
  for (int i = 0; i < PODS; i++) {
    ml(&m, Q(k, i), (int[]){N(k)}, 1, with_trigger ? 0 : -1, k, 3);
    char t0[32], t1[32];
    t_at(t0, k, 4);
    t_at(t1, k, 10 + i);
    sbuf_printf(&s,
                "%s{\"cpid\":\"%s\",\"span_id\":\"%016x\",\"service\":\"kubelet\",\"name\":"
                "\"create Pod\",\"start\":\"%s\",\"end\":\"%s\",\"attributes\":{\"kind\":"
                "\"Pod\"}}",
                i ? "," : "", rig_cpid(Q(k, i)), (unsigned)Q(k, i), t0, t1);
  }
  sbuf_putc(&m, ']');
  sbuf_putc(&s, ']');
  rig_post(r, "mergelogs", m.p);
  rig_post(r, "spans", s.p);
  sbuf_free(&m);
  sbuf_free(&s);
}

static void post_all(const rig_t *r, int with_trigger) {
  sbuf_t m;
  sbuf_init(&m);
  sbuf_putc(&m, '[');
  ml(&m, R0, NULL, 0, -1, 0, 0);
  sbuf_putc(&m, ']');
  rig_post(r, "mergelogs", m.p);
  sbuf_free(&m);
  for (int k = 1; k <= SCALES; k++) post_scale(r, k, with_trigger);
}

static json_t *get(const rig_t *r, int key, const char *what, long want) {
  char path[256];
  snprintf(path, sizeof path, "/v1/cpids/%s/%s", rig_cpid(key), what);
  json_t *j = hc_get_json(r->base, path, want);
  if (!j) fail_msg("GET %s did not answer %ld with JSON", path, want);
  return j;
}

static size_t count(const json_t *j, const char *key) {
  return json_array_size(json_object_get(j, key));
}

/* Scale k's own cascade in a trace answer: P_k, N_k and its Pods, their
 * spans, nothing of another scale. */
static void expect_own(const json_t *t, int k) {
  assert_string_equal(json_string_value(json_object_get(t, "scope")), "own");
  const json_t *rel = json_object_get(t, "related");
  assert_int_equal(json_array_size(rel), 2 + PODS);
  assert_true(hc_array_has(rel, rig_cpid(P(k))) && hc_array_has(rel, rig_cpid(N(k))));
  for (int i = 0; i < PODS; i++) assert_true(hc_array_has(rel, rig_cpid(Q(k, i))));
  assert_int_equal(count(t, "mergelogs"), 2 + PODS);
  assert_int_equal(count(t, "spans"), PODS);
}

/* Everything reachable from P_k: every later scale too. */
static void expect_reachable(const json_t *t, int k) {
  const json_t *rel = json_object_get(t, "related");
  assert_int_equal(json_array_size(rel), 1 + (size_t)(SCALES - k + 1) * (1 + PODS));
  for (int j = k; j <= SCALES; j++) assert_true(hc_array_has(rel, rig_cpid(Q(j, 0))));
  assert_int_equal(count(t, "spans"), (size_t)(SCALES - k + 1) * PODS);
}

static void expect_scales(const rig_t *r) {
  for (int k = 1; k <= SCALES; k++) {
    json_t *t = get(r, P(k), "trace", 200);
    expect_own(t, k);
    json_decref(t);
    t = get(r, P(k), "trace?scope=own", 200);
    expect_own(t, k);
    json_decref(t);
    t = get(r, P(k), "trace?scope=reachable", 200);
    assert_string_equal(json_string_value(json_object_get(t, "scope")), "reachable");
    expect_reachable(t, k);
    json_decref(t);
  }
}

static void test_trace_scopes(void **state) {
  rig_t *r = *state;
  rig_open(r);
  post_all(r, 1);
  expect_scales(r);
  /* The single answers: reachable by default, own on request. */
  json_t *j = get(r, P(1), "related", 200);
  assert_string_equal(json_string_value(json_object_get(j, "scope")), "reachable");
  assert_int_equal(count(j, "related"), 1 + SCALES * (1 + PODS));
  json_decref(j);
  j = get(r, P(1), "related?scope=own", 200);
  assert_int_equal(count(j, "related"), 2 + PODS);
  assert_false(hc_array_has(json_object_get(j, "related"), rig_cpid(N(2))));
  json_decref(j);
  j = get(r, P(1), "mergelogs?scope=own", 200);
  assert_int_equal(count(j, "mergelogs"), 2 + PODS);
  json_decref(j);
  j = get(r, P(1), "spans?scope=own", 200);
  assert_int_equal(count(j, "spans"), PODS);
  json_decref(j);
  j = get(r, P(1), "spans", 200);
  assert_int_equal(count(j, "spans"), SCALES * PODS);
  json_decref(j);
  /* N_2's stored mergelog says what triggered it. */
  j = get(r, N(2), "mergelogs?scope=own", 200);
  json_t *trig = json_object_get(json_array_get(json_object_get(j, "mergelogs"), 0), "trigger");
  assert_int_equal(json_array_size(trig), 1);
  assert_string_equal(json_string_value(json_array_get(trig, 0)), rig_cpid(P(2)));
  json_decref(j);
  /* The same over a restart: the flags come back from the store. */
  rig_close(r);
  rig_open(r);
  expect_scales(r);
}

/* A trace cursor in each scope: what is new to that scope's cascade. */
static void test_trace_after_scopes(void **state) {
  rig_t *r = *state;
  rig_open(r);
  post_all(r, 1);
  char own[64], all[64], what[128];
  json_t *t = get(r, P(3), "trace", 200);
  snprintf(own, sizeof own, "%s", json_string_value(json_object_get(t, "next")));
  json_decref(t);
  t = get(r, P(3), "trace?scope=reachable", 200);
  snprintf(all, sizeof all, "%s", json_string_value(json_object_get(t, "next")));
  json_decref(t);
  post_scale(r, 5, 1); /* a fifth scale: rides on N_3 through N_4 */
  snprintf(what, sizeof what, "trace?after=%s", own);
  t = get(r, P(3), what, 200);
  assert_int_equal(count(t, "mergelogs"), 0);
  assert_int_equal(count(t, "spans"), 0);
  assert_int_equal(count(t, "related"), 2 + PODS);
  json_decref(t);
  snprintf(what, sizeof what, "trace?scope=reachable&after=%s", all);
  t = get(r, P(3), what, 200);
  assert_int_equal(count(t, "mergelogs"), 1 + PODS); /* N_5 and its Pods: not P_5 */
  assert_int_equal(count(t, "spans"), PODS);
  json_decref(t);
}

/* The roots' summaries (the dashboard's Find): each scale's own spans,
 * CPIDs and end by default; page by page in either scope. */
static void test_roots_summaries(void **state) {
  rig_t *r = *state;
  rig_open(r);
  post_all(r, 1);
  static const char *const scope[] = {"", "&scope=own", "&scope=reachable"};
  for (int sc = 0; sc < 3; sc++) {
    char path[256], cursor[64] = "";
    int seen = 0;
    for (int page = 0; page < 10; page++) {
      snprintf(path, sizeof path, "/v1/roots?component=kubectl&limit=1%s%s%s", scope[sc],
               *cursor ? "&cursor=" : "", cursor);
      json_t *j = hc_get_json(r->base, path, 200);
      assert_non_null(j);
      json_t *roots = json_object_get(j, "roots");
      if (json_array_size(roots)) {
        json_t *root = json_array_get(roots, 0), *sum = json_object_get(root, "summary");
        int k = SCALES - seen; /* newest first */
        assert_string_equal(json_string_value(json_object_get(root, "cpid")), rig_cpid(P(k)));
        char end[32];
        if (sc < 2) {
          assert_string_equal(json_string_value(json_object_get(sum, "scope")), "own");
          assert_int_equal(json_integer_value(json_object_get(sum, "spans")), PODS);
          assert_int_equal(json_integer_value(json_object_get(sum, "cpids")), 2 + PODS);
          t_at(end, k, 10 + PODS - 1);
        } else {
          assert_string_equal(json_string_value(json_object_get(sum, "scope")), "reachable");
          assert_int_equal(json_integer_value(json_object_get(sum, "spans")),
                           (SCALES - k + 1) * PODS);
          t_at(end, SCALES, 10 + PODS - 1);
        }
        /* The summary's end is to the millisecond. */
        end[19] = '\0';
        assert_true(!strncmp(json_string_value(json_object_get(sum, "end")), end, 19));
        seen++;
      }
      json_t *next = json_object_get(j, "next");
      snprintf(cursor, sizeof cursor, "%s", json_is_string(next) ? json_string_value(next) : "");
      json_decref(j);
      if (!*cursor) break;
    }
    assert_int_equal(seen, SCALES);
  }
}

static void test_scope_refusals(void **state) {
  rig_t *r = *state;
  rig_open(r);
  post_all(r, 1);
  static const char *const what[] = {"trace?scope=mine",    "related?scope=",  "spans?scope=OWN",
                                     "mergelogs?scope=all", "details?scope=x", "stalls?scope=1"};
  for (size_t i = 0; i < sizeof what / sizeof *what; i++) {
    json_t *e = get(r, P(1), what[i], i == 1 ? 200 : 400);
    if (i != 1) assert_string_equal(json_string_value(json_object_get(e, "field")), "scope");
    json_decref(e);
  }
  json_t *e = hc_get_json(r->base, "/v1/roots?scope=both", 400);
  assert_non_null(e);
  assert_string_equal(json_string_value(json_object_get(e, "field")), "scope");
  json_decref(e);
  /* A mergelog whose trigger is not among its sources is refused whole. */
  hc_resp_t resp;
  char url[128];
  snprintf(url, sizeof url, "%s/v1/mergelogs", r->base);
  char body[512];
  snprintf(body, sizeof body,
           "[{\"cpid\":\"%s\",\"sources\":[\"%s\"],\"trigger\":[\"%s\"],\"time\":"
           "\"2026-11-24T10:00:00Z\"}]",
           rig_cpid(900), rig_cpid(P(1)), rig_cpid(P(2)));
  assert_int_equal(hc_request("POST", url, body, strlen(body), NULL, &resp), 0);
  assert_int_equal(resp.status, 400);
  assert_non_null(strstr(resp.body, "trigger[0]"));
  hc_resp_free(&resp);
}

/* Writers without trigger lists, and rows of a database from before them:
 * every source counts, so own is everything reachable, as before. */
static void test_without_trigger_lists(void **state) {
  rig_t *r = *state;
  rig_open(r);
  post_all(r, 0);
  json_t *t = get(r, P(1), "trace", 200);
  expect_reachable(t, 1);
  json_decref(t);
}

/* The rows with trigger lists, then the column dropped: a database of the
 * release before them, opened again. */
static void test_database_before_trigger_lists(void **state) {
  rig_t *r = *state;
  rig_open(r);
  post_all(r, 1);
  json_t *t = get(r, P(1), "trace", 200);
  expect_own(t, 1);
  json_decref(t);
  rig_close(r);
  sqlite3 *d = NULL;
  assert_int_equal(sqlite3_open(r->db, &d), SQLITE_OK);
  assert_int_equal(sqlite3_exec(d, "ALTER TABLE mergelogs DROP COLUMN trig", NULL, NULL, NULL),
                   SQLITE_OK);
  sqlite3_close(d);
  rig_open(r);
  t = get(r, P(1), "trace", 200);
  expect_reachable(t, 1); /* the trigger text in old bodies is not what counts */
  json_decref(t);
  post_scale(r, 5, 1); /* new rows after the upgrade have their lists */
  t = get(r, P(5), "trace?scope=reachable", 200);
  assert_int_equal(count(t, "related"), 2 + PODS);
  json_decref(t);
  t = get(r, N(4), "trace", 200);
  assert_false(hc_array_has(json_object_get(t, "related"), rig_cpid(N(5))));
  json_decref(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_trace_scopes, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_trace_after_scopes, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_roots_summaries, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_scope_refusals, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_without_trigger_lists, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_database_before_trigger_lists, rig_setup, rig_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
