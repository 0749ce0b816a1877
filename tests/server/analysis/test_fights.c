/*
 * test_fights.c - the field-fight detector (server/analysis/fights.h) on its
 * own: what is a fight (two writers, each undoing the other at least once,
 * within the window) and what is not (one change, one undo, two writers
 * moving a field the same way, one writer going back and forth, writes
 * further apart than the window, a field under /status); a fight counted once
 * per episode and again after a quiet window; joins in both orders (the span
 * first, the change first); the tables' bounds; the answer's filters and
 * limit.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/fights.h"
#include "testutil.h"

#define SEC 1000000000LL
#define UID "aaaaaaaa-0000-4000-8000-000000000001"
#define T0 (1795000000LL * SEC)

static uint64_t hv(int v) {
  char s[32];
  int n = snprintf(s, sizeof s, "%d", v);
  return fights_hash(s, (size_t)n);
}

/* One write: the span (writer, CPID byte c, starting from version rv) and
 * the change (old -> new of path at time t); span first unless change_first.
 * Returns the fights flagged. */
static int write_field(fights_t *f, const char *uid, const char *path, const char *writer, int c,
                       int rv, int old, int nw, int64_t t, int change_first) {
  char rvs[16];
  snprintf(rvs, sizeof rvs, "%d", rv);
  fights_write_t w = {.uid = uid,
                      .rv = rvs,
                      .writer = writer,
                      .user = "user-of-it",
                      .span_id = (uint64_t)(0x100 + rv),
                      .time = t};
  memset(w.cpid.b, c, sizeof w.cpid.b);
  fights_diff_t d = {path, old < 0 ? FIGHTS_ABSENT : hv(old), nw < 0 ? FIGHTS_ABSENT : hv(nw)};
  fights_change_t ch = {uid, "Deployment", "default", "web", rvs, t, &d, 1};
  int n = 0;
  if (change_first) n += fights_add_change(f, &ch);
  n += fights_add_write(f, &w);
  if (!change_first) n += fights_add_change(f, &ch);
  return n;
}

static fights_t *detector(int64_t window) {
  fights_t *f;
  fights_opts_t o = {.window_ns = window};
  assert_int_equal(fights_new(&o, &f), RIPPLE_OK);
  return f;
}

static json_t *answer(fights_t *f, int64_t since, const char *uid, size_t limit) {
  sbuf_t b;
  sbuf_init(&b);
  assert_int_equal(fights_answer(f, since, uid, limit, &b), RIPPLE_OK);
  json_error_t e;
  json_t *j = json_loadb(b.p, b.len, 0, &e);
  if (!j) fail_msg("not JSON: %s: %.*s", e.text, (int)b.len, b.p);
  sbuf_free(&b);
  return j;
}

#define R "/spec/replicas"

static void test_fight(void **state) {
  (void)state;
  fights_t *f = detector(0);
  assert_int_equal(write_field(f, UID, R, "kubernetes-admin", 1, 10, 3, 5, T0, 0), 0);
  /* One undo is a correction, not a fight. */
  assert_int_equal(write_field(f, UID, R, "hpa-like", 2, 11, 5, 3, T0 + 5 * SEC, 1), 0);
  /* The person undoes the undo: both ways now. */
  assert_int_equal(write_field(f, UID, R, "kubernetes-admin", 3, 12, 3, 5, T0 + 9 * SEC, 0), 1);
  assert_int_equal(fights_total(f), 1);
  /* More of the same episode: not counted again. */
  assert_int_equal(write_field(f, UID, R, "hpa-like", 4, 13, 5, 3, T0 + 12 * SEC, 0), 0);
  assert_int_equal(fights_total(f), 1);

  json_t *j = answer(f, 0, NULL, 10);
  json_t *v = json_object_get(j, "fights");
  assert_int_equal(json_array_size(v), 1);
  json_t *g = json_array_get(v, 0);
  assert_string_equal(json_string_value(json_object_get(g, "path")), R);
  assert_string_equal(json_string_value(json_object_get(json_object_get(g, "object"), "uid")), UID);
  json_t *m = json_object_get(g, "managers");
  assert_string_equal(json_string_value(json_object_get(json_array_get(m, 0), "writer")),
                      "kubernetes-admin");
  assert_string_equal(json_string_value(json_object_get(json_array_get(m, 1), "writer")),
                      "hpa-like");
  assert_int_equal(json_integer_value(json_object_get(json_array_get(m, 0), "reversals")), 1);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(m, 1), "reversals")), 2);
  assert_int_equal(json_integer_value(json_object_get(g, "reversals")), 3);
  json_t *w = json_object_get(g, "writes");
  assert_int_equal(json_array_size(w), 4);
  const char *cpids[] = {
      "01010101-0101-0101-0101-010101010101", "02020202-0202-0202-0202-020202020202",
      "03030303-0303-0303-0303-030303030303", "04040404-0404-0404-0404-040404040404"};
  for (size_t i = 0; i < 4; i++)
    assert_string_equal(json_string_value(json_object_get(json_array_get(w, i), "cpid")), cpids[i]);
  assert_string_equal(json_string_value(json_object_get(json_array_get(w, 1), "writer")),
                      "hpa-like");
  /* No values are ever served. */
  char *text = json_dumps(j, 0);
  assert_null(strstr(text, "\"new\""));
  free(text);
  json_decref(j);
  fights_free(f);
}

static void test_not_fights(void **state) {
  (void)state;
  fights_t *f = detector(0);
  /* A single change. */
  assert_int_equal(write_field(f, UID, "/spec/a", "alice", 1, 10, 1, 2, T0, 0), 0);
  /* Two writers moving a field the same way. */
  assert_int_equal(write_field(f, UID, "/spec/b", "alice", 1, 20, 1, 2, T0, 0), 0);
  assert_int_equal(write_field(f, UID, "/spec/b", "bob", 2, 21, 2, 3, T0 + SEC, 0), 0);
  assert_int_equal(write_field(f, UID, "/spec/b", "alice", 3, 22, 3, 4, T0 + 2 * SEC, 0), 0);
  /* One writer going back and forth. */
  for (int i = 0; i < 6; i++)
    assert_int_equal(write_field(f, UID, "/spec/c", "alice", 1, 30 + i, i % 2 ? 5 : 3,
                                 i % 2 ? 3 : 5, T0 + i * SEC, 0),
                     0);
  /* Undos further apart than the window. */
  assert_int_equal(write_field(f, UID, "/spec/d", "alice", 1, 40, 3, 5, T0, 0), 0);
  assert_int_equal(write_field(f, UID, "/spec/d", "bob", 2, 41, 5, 3, T0 + 601 * SEC, 0), 0);
  assert_int_equal(write_field(f, UID, "/spec/d", "alice", 3, 42, 3, 5, T0 + 1202 * SEC, 0), 0);
  /* A status field flipping between two writers is not tracked. */
  for (int i = 0; i < 4; i++)
    assert_int_equal(write_field(f, UID, "/status/replicas", i % 2 ? "bob" : "alice", 1, 50 + i,
                                 i % 2 ? 5 : 3, i % 2 ? 3 : 5, T0 + i * SEC, 0),
                     0);
  /* A write whose change did not start from the value before (a version
   * the watch missed) is no undo. */
  assert_int_equal(write_field(f, UID, "/spec/e", "alice", 1, 60, 3, 5, T0, 0), 0);
  assert_int_equal(write_field(f, UID, "/spec/e", "bob", 2, 61, 7, 3, T0 + SEC, 0), 0);
  assert_int_equal(write_field(f, UID, "/spec/e", "alice", 3, 62, 3, 5, T0 + 2 * SEC, 0), 0);
  /* A change whose write never came (no span) is never judged. */
  fights_diff_t d = {"/spec/f", hv(3), hv(5)};
  for (int i = 0; i < 4; i++) {
    fights_change_t ch = {UID, "Deployment", "default", "web", "99", T0 + i * SEC, &d, 1};
    assert_int_equal(fights_add_change(f, &ch), 0);
  }
  assert_int_equal(fights_total(f), 0);
  json_t *j = answer(f, 0, NULL, 10);
  assert_int_equal(json_array_size(json_object_get(j, "fights")), 0);
  json_decref(j);
  fights_free(f);
}

/* A label added by one operator and removed by another, twice: absent is a
 * value too. Joins in the other order (the change first). */
static void test_absent_and_order(void **state) {
  (void)state;
  fights_t *f = detector(0);
  const char *p = "/metadata/labels/team";
  assert_int_equal(write_field(f, UID, p, "op-a", 1, 10, -1, 7, T0, 1), 0);
  assert_int_equal(write_field(f, UID, p, "op-b", 2, 11, 7, -1, T0 + SEC, 1), 0);
  assert_int_equal(write_field(f, UID, p, "op-a", 3, 12, -1, 7, T0 + 2 * SEC, 1), 1);
  assert_int_equal(fights_total(f), 1);
  fights_free(f);
}

/* A new episode after a window without reversals is a second fight. */
static void test_episodes(void **state) {
  (void)state;
  fights_t *f = detector(60 * SEC);
  int rv = 10;
  for (int ep = 0; ep < 2; ep++) {
    int64_t t = T0 + ep * 1000 * SEC;
    int n = write_field(f, UID, R, "a", 1, rv++, 3, 5, t, 0);
    n += write_field(f, UID, R, "b", 2, rv++, 5, 3, t + SEC, 0);
    n += write_field(f, UID, R, "a", 3, rv++, 3, 5, t + 2 * SEC, 0);
    assert_int_equal(n, 1);
  }
  assert_int_equal(fights_total(f), 2);
  /* since: only the newer one; limit 1 of 2: truncated. */
  json_t *j = answer(f, T0 + 500 * SEC, NULL, 10);
  assert_int_equal(json_array_size(json_object_get(j, "fights")), 1);
  assert_false(json_is_true(json_object_get(j, "truncated")));
  json_decref(j);
  j = answer(f, 0, NULL, 1);
  assert_int_equal(json_array_size(json_object_get(j, "fights")), 1);
  assert_true(json_is_true(json_object_get(j, "truncated")));
  assert_int_equal(json_integer_value(json_object_get(j, "window_seconds")), 60);
  json_decref(j);
  /* By uid: the object's fights and the last writer of each field. */
  j = answer(f, 0, UID, 10);
  assert_int_equal(json_array_size(json_object_get(j, "fights")), 2);
  json_t *fl = json_object_get(j, "fields");
  assert_int_equal(json_array_size(fl), 1);
  assert_string_equal(json_string_value(json_object_get(json_array_get(fl, 0), "writer")), "a");
  assert_string_equal(json_string_value(json_object_get(json_array_get(fl, 0), "cpid")),
                      "03030303-0303-0303-0303-030303030303");
  json_decref(j);
  j = answer(f, 0, "bbbbbbbb-0000-4000-8000-000000000001", 10);
  assert_int_equal(json_array_size(json_object_get(j, "fights")), 0);
  assert_int_equal(json_array_size(json_object_get(j, "fields")), 0);
  json_decref(j);
  fights_free(f);
}

/* Many objects fighting: the fields' table and the fights' ring stay at
 * their sizes (the oldest evicted), and every fight is still counted. */
static void test_bounds(void **state) {
  (void)state;
  fights_t *f;
  fights_opts_t o = {.max_fields = 8, .max_fights = 4};
  assert_int_equal(fights_new(&o, &f), RIPPLE_OK);
  int flagged = 0;
  for (int k = 0; k < 100; k++) {
    char uid[64];
    snprintf(uid, sizeof uid, "aaaaaaaa-0000-4000-8000-%012d", k);
    int64_t t = T0 + k * 10 * SEC;
    flagged += write_field(f, uid, R, "a", 1, 10, 3, 5, t, 0);
    flagged += write_field(f, uid, R, "b", 2, 11, 5, 3, t + SEC, 0);
    flagged += write_field(f, uid, R, "a", 3, 12, 3, 5, t + 2 * SEC, 0);
  }
  assert_int_equal(flagged, 100);
  assert_int_equal(fights_total(f), 100);
  json_t *j = answer(f, 0, NULL, 1000);
  json_t *v = json_object_get(j, "fights");
  assert_int_equal(json_array_size(v), 4);
  assert_string_equal(
      json_string_value(json_object_get(json_object_get(json_array_get(v, 0), "object"), "uid")),
      "aaaaaaaa-0000-4000-8000-000000000099");
  json_decref(j);
  /* Keys too long for the tables are ignored, not cut into another's. */
  char big[200];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  assert_int_equal(write_field(f, big, R, "a", 1, 10, 3, 5, T0, 0), 0);
  fights_free(f);
}

/* Writes admitted from one version: all but one conflicted (and were
 * admitted again later). The change joins the one that could have made it,
 * and is not judged when two writers could have. */
static void test_same_version(void **state) {
  (void)state;
  fights_t *f = detector(0);
  fights_write_t person = {.uid = UID, .rv = "704", .writer = "kubernetes-admin", .time = T0};
  fights_write_t status = {.uid = UID,
                           .rv = "704",
                           .writer = "deployment-controller",
                           .subresource = "status",
                           .time = T0 + 1};
  fights_write_t scale = {
      .uid = UID, .rv = "704", .writer = "hpa", .subresource = "scale", .time = T0 + 2};
  memset(person.cpid.b, 1, 16);
  assert_int_equal(fights_add_write(f, &person), 0);
  assert_int_equal(fights_add_write(f, &status), 0);
  /* The status write cannot have changed /spec: the person did. */
  fights_diff_t d = {"/spec/template/spec/x", hv(1), hv(2)};
  fights_change_t ch = {UID, "Deployment", "default", "web", "704", T0 + 5, &d, 1};
  assert_int_equal(fights_add_change(f, &ch), 0);
  json_t *j = answer(f, 0, UID, 10);
  json_t *fl = json_object_get(j, "fields");
  assert_int_equal(json_array_size(fl), 1);
  assert_string_equal(json_string_value(json_object_get(json_array_get(fl, 0), "writer")),
                      "kubernetes-admin");
  json_decref(j);
  /* An annotation: either could have; not judged. A scale write could not
   * have (it changes /spec/replicas only). */
  person.rv = status.rv = scale.rv = "705";
  assert_int_equal(fights_add_write(f, &person), 0);
  assert_int_equal(fights_add_write(f, &status), 0);
  assert_int_equal(fights_add_write(f, &scale), 0);
  fights_diff_t a = {"/metadata/annotations/x", hv(1), hv(2)};
  fights_change_t ca = {UID, "Deployment", "default", "web", "705", T0 + 6, &a, 1};
  assert_int_equal(fights_add_change(f, &ca), 0);
  j = answer(f, 0, UID, 10);
  assert_int_equal(json_array_size(json_object_get(j, "fields")), 1);
  json_decref(j);
  /* /spec/replicas from a version only the scale write was admitted at. */
  scale.rv = "706";
  assert_int_equal(fights_add_write(f, &scale), 0);
  fights_diff_t r = {"/spec/replicas", hv(1), hv(2)};
  fights_change_t cr = {UID, "Deployment", "default", "web", "706", T0 + 7, &r, 1};
  assert_int_equal(fights_add_change(f, &cr), 0);
  j = answer(f, 0, UID, 10);
  assert_int_equal(json_array_size(json_object_get(j, "fields")), 2);
  json_decref(j);
  fights_free(f);
}

static void test_tracked(void **state) {
  (void)state;
  assert_true(fights_tracked("/spec/replicas"));
  assert_true(fights_tracked("/metadata/labels/app"));
  assert_true(fights_tracked("/metadata/generationx"));
  assert_false(fights_tracked("/status"));
  assert_false(fights_tracked("/status/replicas"));
  assert_false(fights_tracked("/metadata/generation"));
  assert_false(fights_tracked("/metadata/managedFields/0"));
  assert_false(fights_tracked("spec"));
  assert_true(fights_hash("", 0) != FIGHTS_ABSENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fight),
      cmocka_unit_test(test_not_fights),
      cmocka_unit_test(test_absent_and_order),
      cmocka_unit_test(test_episodes),
      cmocka_unit_test(test_bounds),
      cmocka_unit_test(test_same_version),
      cmocka_unit_test(test_tracked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
