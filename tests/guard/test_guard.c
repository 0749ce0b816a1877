/*
 * test_guard.c - ripple-guard's pure parts, no cluster: the probe/hysteresis
 * state machine (with flap damping), the check of a webhook's answer, the
 * registration's parse and the patch that adds or removes the guard's
 * condition, and the loopback rule for probe URLs.
 */
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "ripplex/sbuf.h"
#include "testutil.h"

#define SEC INT64_C(1000000000)

/* Feed n results; return the last non-KEEP action (KEEP if none). */
static guard_action_t feed(guard_sm_t *sm, int ok, int n, int64_t *now) {
  guard_action_t last = GUARD_KEEP;
  for (int i = 0; i < n; i++) {
    *now += SEC / 4;
    guard_action_t a = guard_sm_probe(sm, ok, *now);
    if (a != GUARD_KEEP) last = a;
  }
  return last;
}

static void test_disable_after_n_failures(void **state) {
  (void)state;
  guard_sm_t sm = {0};
  int64_t now = 0;
  guard_sm_init(&sm, 2, 3, 0);
  assert_int_equal(guard_sm_probe(&sm, 0, now += SEC / 4), GUARD_KEEP);
  assert_false(sm.disabled);
  assert_int_equal(guard_sm_probe(&sm, 0, now += SEC / 4), GUARD_DISABLE);
  assert_true(sm.disabled);
  /* Further failures decide nothing new. */
  assert_int_equal(feed(&sm, 0, 10, &now), GUARD_KEEP);
  assert_true(sm.disabled);
}

static void test_success_resets_failure_count(void **state) {
  (void)state;
  guard_sm_t sm = {0};
  int64_t now = 0;
  guard_sm_init(&sm, 2, 3, 0);
  for (int i = 0; i < 20; i++) { /* fail, ok, fail, ok: never two in a row */
    assert_int_equal(guard_sm_probe(&sm, i % 2, now += SEC / 4), GUARD_KEEP);
    assert_false(sm.disabled);
  }
}

static void test_restore_after_n_successes(void **state) {
  (void)state;
  guard_sm_t sm = {0};
  int64_t now = 0;
  guard_sm_init(&sm, 2, 3, 0);
  assert_int_equal(feed(&sm, 0, 2, &now), GUARD_DISABLE);
  assert_int_equal(feed(&sm, 1, 2, &now), GUARD_KEEP);
  assert_true(sm.disabled);
  /* A failure in between starts the count again. */
  assert_int_equal(feed(&sm, 0, 1, &now), GUARD_KEEP);
  assert_int_equal(feed(&sm, 1, 2, &now), GUARD_KEEP);
  assert_true(sm.disabled);
  assert_int_equal(guard_sm_probe(&sm, 1, now += SEC / 4), GUARD_RESTORE);
  assert_false(sm.disabled);
}

static void test_start_disabled(void **state) {
  (void)state;
  guard_sm_t sm = {0};
  int64_t now = 0;
  guard_sm_init(&sm, 2, 3, 1); /* a guard restarted while the webhook was out */
  assert_true(sm.disabled);
  assert_int_equal(feed(&sm, 0, 5, &now), GUARD_KEEP);
  assert_int_equal(feed(&sm, 1, 3, &now), GUARD_RESTORE);
}

static void test_flapping_needs_more_successes(void **state) {
  (void)state;
  guard_sm_t sm = {0};
  int64_t now = 0;
  guard_sm_init(&sm, 2, 3, 0);
  assert_int_equal(feed(&sm, 0, 2, &now), GUARD_DISABLE);
  assert_int_equal(feed(&sm, 1, 3, &now), GUARD_RESTORE);
  /* Fails again at once: a flap, so 6 successes are needed next time. */
  assert_int_equal(feed(&sm, 0, 2, &now), GUARD_DISABLE);
  assert_int_equal(sm.recover_need, 6);
  assert_int_equal(feed(&sm, 1, 5, &now), GUARD_KEEP);
  assert_int_equal(feed(&sm, 1, 1, &now), GUARD_RESTORE);
  /* Flapping on and on: the need doubles up to the cap (16 x 3). */
  for (int i = 0; i < 10; i++) {
    assert_int_equal(feed(&sm, 0, 2, &now), GUARD_DISABLE);
    assert_int_equal(feed(&sm, 1, (int)sm.recover_need, &now), GUARD_RESTORE);
  }
  assert_int_equal(sm.recover_need, 48);
  /* Stable for longer than the flap window: back to 3. */
  feed(&sm, 1, 4 * 31, &now);
  assert_int_equal(sm.recover_need, 3);
  assert_int_equal(feed(&sm, 0, 2, &now), GUARD_DISABLE);
  assert_int_equal(sm.recover_need, 3);
}

static void test_one_failure_enough(void **state) {
  (void)state;
  guard_sm_t sm = {0};
  int64_t now = 0;
  guard_sm_init(&sm, 0, 0, 0); /* 0 means 1 */
  assert_int_equal(guard_sm_probe(&sm, 0, now += 1), GUARD_DISABLE);
  assert_int_equal(guard_sm_probe(&sm, 1, now += 1), GUARD_RESTORE);
}

static int check(const char *body, const char *uid) {
  char why[256] = "";
  int rc = guard_answer_check(body, body ? strlen(body) : 0, uid, why, sizeof why);
  if (rc != RIPPLE_OK) assert_true(why[0] != '\0');
  return rc;
}

static void test_answer_check(void **state) {
  (void)state;
  const char *ok =
      "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
      "\"response\":{\"uid\":\"u1\",\"allowed\":true}}";
  assert_int_equal(check(ok, "u1"), RIPPLE_OK);
  assert_int_equal(check(ok, "u2"), RIPPLE_EJSON); /* an answer to another request */
  assert_int_equal(check("", "u1"), RIPPLE_EJSON);
  assert_int_equal(check("not json", "u1"), RIPPLE_EJSON);
  assert_int_equal(check("[1]", "u1"), RIPPLE_EJSON);
  assert_int_equal(check("{\"error\":\"the AdmissionReview is larger\"}", "u1"), RIPPLE_EJSON);
  assert_int_equal(check("{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":"
                         "\"AdmissionReview\",\"response\":{\"uid\":\"u1\",\"allowed\":true}}",
                         "u1"),
                   RIPPLE_EJSON);
  assert_int_equal(check("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                         "\"response\":{\"uid\":\"u1\",\"allowed\":\"yes\"}}",
                         "u1"),
                   RIPPLE_EJSON);
  assert_int_equal(check("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                         "\"response\":{\"uid\":\"u1\",\"uid\":\"u1\",\"allowed\":true}}",
                         "u1"),
                   RIPPLE_EJSON); /* duplicate keys */
}

static void test_probe_body(void **state) {
  (void)state;
  sbuf_t b;
  sbuf_init(&b);
  guard_probe_body(&b, "ripple-guard-probe-7");
  json_t *j = json_loadb(b.p, b.len, 0, NULL);
  assert_non_null(j);
  json_t *req = json_object_get(j, "request");
  assert_string_equal(json_string_value(json_object_get(req, "uid")), "ripple-guard-probe-7");
  assert_true(json_is_true(json_object_get(req, "dryRun")));
  assert_string_equal(json_string_value(json_object_get(req, "namespace")), GUARD_PROBE_NS);
  assert_string_equal(json_string_value(json_object_get(req, "operation")), "CREATE");
  json_decref(j);
  sbuf_free(&b);
}

#define CA_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==" /* "-----BEGIN CERTIFICATE-----\n" */

static json_t *cfg(const char *conds0, const char *conds1) {
  char text[2048];
  snprintf(text, sizeof text,
           "{\"webhooks\":[{\"name\":\"a.ripple.dev\",\"clientConfig\":{\"url\":"
           "\"https://127.0.0.1:8443/mutate\",\"caBundle\":\"" CA_B64
           "\"},"
           "\"matchConditions\":%s},{\"name\":\"b.ripple.dev\",\"clientConfig\":{\"service\":{"
           "\"namespace\":\"ripple-system\",\"name\":\"ripple-webhook\",\"path\":\"/mutate\","
           "\"port\":443}},\"matchConditions\":%s}]}",
           conds0, conds1);
  json_t *j = json_loads(text, 0, NULL);
  assert_non_null(j);
  return j;
}

static void test_reg_parse(void **state) {
  (void)state;
  const char *off =
      "[{\"name\":\"not-leases\",\"expression\":\"true\"},{\"name\":"
      "\"ripple-guard-off\",\"expression\":\"false\"}]";
  const char *on = "[{\"name\":\"not-leases\",\"expression\":\"true\"}]";
  guard_reg_t r;
  char why[256];
  json_t *j = cfg(on, "[]");
  assert_int_equal(guard_reg_parse(j, &r, why, sizeof why), RIPPLE_OK);
  assert_int_equal(r.n, 2);
  assert_int_equal(r.off, 0);
  assert_string_equal(r.t[0].url, "https://127.0.0.1:8443/mutate");
  assert_string_equal(r.t[0].ca, "-----BEGIN CERTIFICATE-----\n");
  assert_string_equal(r.t[1].url, "https://ripple-webhook.ripple-system.svc:443/mutate");
  assert_null(r.t[1].ca);
  guard_reg_free(&r);
  json_decref(j);
  j = cfg(off, off);
  assert_int_equal(guard_reg_parse(j, &r, why, sizeof why), RIPPLE_OK);
  assert_int_equal(r.off, 1);
  guard_reg_free(&r);
  json_decref(j);
  j = cfg(off, on);
  assert_int_equal(guard_reg_parse(j, &r, why, sizeof why), RIPPLE_OK);
  assert_int_equal(r.off, -1);
  guard_reg_free(&r);
  json_decref(j);
  j = json_loads("{\"webhooks\":[]}", 0, NULL);
  assert_int_equal(guard_reg_parse(j, &r, why, sizeof why), RIPPLE_EJSON);
  json_decref(j);
  j = json_loads(
      "{\"webhooks\":[{\"name\":\"a\",\"clientConfig\":{\"url\":\"https://127.0.0.1\","
      "\"caBundle\":\"!!\"}}]}",
      0, NULL);
  assert_int_equal(guard_reg_parse(j, &r, why, sizeof why), RIPPLE_EJSON);
  assert_non_null(strstr(why, "caBundle"));
  json_decref(j);
}

static void test_reg_patch(void **state) {
  (void)state;
  guard_reg_t r;
  char why[256];
  json_t *j = cfg("[]", "[]");
  assert_int_equal(guard_reg_parse(j, &r, why, sizeof why), RIPPLE_OK);
  json_decref(j);
  for (int off = 0; off < 2; off++) {
    sbuf_t b;
    sbuf_init(&b);
    guard_reg_patch(&r, off, &b);
    json_t *p = json_loadb(b.p, b.len, 0, NULL);
    assert_non_null(p);
    json_t *whs = json_object_get(p, "webhooks");
    assert_int_equal(json_array_size(whs), 2);
    for (size_t i = 0; i < 2; i++) {
      json_t *wh = json_array_get(whs, i);
      assert_string_equal(json_string_value(json_object_get(wh, "name")), r.t[i].name);
      json_t *c = json_array_get(json_object_get(wh, "matchConditions"), 0);
      assert_string_equal(json_string_value(json_object_get(c, "name")), GUARD_OFF_NAME);
      if (off)
        assert_string_equal(json_string_value(json_object_get(c, "expression")), "false");
      else
        assert_string_equal(json_string_value(json_object_get(c, "$patch")), "delete");
    }
    json_decref(p);
    sbuf_free(&b);
  }
  guard_reg_free(&r);
}

static void test_loopback(void **state) {
  (void)state;
  assert_true(guard_url_loopback("https://127.0.0.1:8443/mutate"));
  assert_true(guard_url_loopback("https://127.1.2.3/x"));
  assert_true(guard_url_loopback("https://localhost:1/"));
  assert_true(guard_url_loopback("https://[::1]:8443/mutate"));
  assert_false(guard_url_loopback("http://127.0.0.1:8443/mutate"));
  assert_false(guard_url_loopback("https://127.0.0.1.example.com/mutate"));
  assert_false(guard_url_loopback("https://localhost.example.com/"));
  assert_false(guard_url_loopback("https://192.0.2.1:8443/"));
  assert_false(guard_url_loopback("https://ripple-webhook.ripple-system.svc:443/mutate"));
  assert_false(guard_url_loopback(NULL));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_disable_after_n_failures),
      cmocka_unit_test(test_success_resets_failure_count),
      cmocka_unit_test(test_restore_after_n_successes),
      cmocka_unit_test(test_start_disabled),
      cmocka_unit_test(test_flapping_needs_more_successes),
      cmocka_unit_test(test_one_failure_enough),
      cmocka_unit_test(test_answer_check),
      cmocka_unit_test(test_probe_body),
      cmocka_unit_test(test_reg_parse),
      cmocka_unit_test(test_reg_patch),
      cmocka_unit_test(test_loopback),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
