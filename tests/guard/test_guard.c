/*
 * test_guard.c - ripple-guard's pure parts, no cluster: the probe/hysteresis
 * state machine (with flap damping), the check of a webhook's answer, the
 * registration's parse and the patch that adds or removes the guard's
 * condition, and the loopback rule for probe URLs; --ca-bundle: the file's
 * check, the caBundle comparison and patch, and the restore held back until
 * the registration carries the CA the probes used.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The restore waits for the caBundle; disabling never does. */
static void test_restore_held_for_ca(void **state) {
  (void)state;
  guard_sm_t sm = {0};
  int64_t now = 0;
  guard_sm_init(&sm, 2, 3, 1); /* a registration created disabled (fresh install) */
  for (int i = 0; i < 10; i++) {
    assert_int_equal(guard_sm_step(&sm, 1, 0, now += SEC / 4), GUARD_KEEP);
    assert_true(sm.disabled);
  }
  /* A failure while held starts the count again. */
  assert_int_equal(guard_sm_step(&sm, 0, 0, now += SEC / 4), GUARD_KEEP);
  assert_int_equal(guard_sm_step(&sm, 1, 1, now += SEC / 4), GUARD_KEEP);
  assert_int_equal(guard_sm_step(&sm, 1, 1, now += SEC / 4), GUARD_KEEP);
  assert_int_equal(guard_sm_step(&sm, 1, 1, now += SEC / 4), GUARD_RESTORE);
  assert_false(sm.disabled);
  /* Enabled with a caBundle that differs: failures still disable. */
  guard_sm_init(&sm, 2, 3, 0);
  assert_int_equal(guard_sm_step(&sm, 0, 0, now += SEC / 4), GUARD_KEEP);
  assert_int_equal(guard_sm_step(&sm, 0, 0, now += SEC / 4), GUARD_DISABLE);
  /* Enough successes while held: the first round allowed restores at once. */
  for (int i = 0; i < 5; i++) assert_int_equal(guard_sm_step(&sm, 1, 0, now += 1), GUARD_KEEP);
  assert_int_equal(guard_sm_step(&sm, 1, 1, now += 1), GUARD_RESTORE);
}

#define PEM "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

static void test_bundle_is_pem(void **state) {
  (void)state;
  assert_true(guard_bundle_is_pem(PEM, strlen(PEM)));
  assert_true(guard_bundle_is_pem(PEM PEM, 2 * strlen(PEM)));
  assert_false(guard_bundle_is_pem("", 0));
  assert_false(guard_bundle_is_pem(NULL, 0));
  assert_false(guard_bundle_is_pem("not a certificate\n", 18));
  assert_false(guard_bundle_is_pem("-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\n", 54));
  assert_false(guard_bundle_is_pem("-----BEGIN CERTIFICATE-----\n", 28)); /* cut short */
  const char bin[] = "-----BEGIN CERTIFICATE-----\n\0\n-----END CERTIFICATE-----\n";
  assert_false(guard_bundle_is_pem(bin, sizeof bin - 1));
  /* A key is not a CA. */
  assert_false(
      guard_bundle_is_pem("-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n", 56));
}

static void write_file(const char *path, const char *p, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(p, 1, n, f), n);
  fclose(f);
}

static void test_bundle_read(void **state) {
  (void)state;
  char dir[] = "/tmp/ripple-guard-test-XXXXXX", path[64], why[256];
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/ca.crt", dir);
  char *text = NULL;
  size_t len = 0;
  assert_int_equal(guard_bundle_read(path, &text, &len, why, sizeof why), RIPPLE_ESYS);
  assert_non_null(strstr(why, "No such file"));
  write_file(path, PEM, strlen(PEM));
  assert_int_equal(guard_bundle_read(path, &text, &len, why, sizeof why), RIPPLE_OK);
  assert_int_equal(len, strlen(PEM));
  assert_memory_equal(text, PEM, len);
  free(text);
  text = NULL;
  write_file(path, "", 0);
  assert_int_equal(guard_bundle_read(path, &text, &len, why, sizeof why), RIPPLE_EINVAL);
  assert_string_equal(why, "empty");
  write_file(path, "ca.crt: hello\n", 14);
  assert_int_equal(guard_bundle_read(path, &text, &len, why, sizeof why), RIPPLE_EINVAL);
  assert_null(strstr(why, "hello")); /* the content is never repeated */
  assert_null(text);
  unlink(path);
  rmdir(dir);
}

/* A registration with the condition on every webhook and the given caBundle
 * (base64, "" for none) on both. */
static json_t *cfg_ca(const char *b64) {
  char text[2048], ca[600] = "";
  if (*b64) snprintf(ca, sizeof ca, ",\"caBundle\":\"%s\"", b64);
  snprintf(text, sizeof text,
           "{\"webhooks\":[{\"name\":\"a.ripple.dev\",\"clientConfig\":{\"url\":"
           "\"https://127.0.0.1:8443/mutate\"%s},\"matchConditions\":[{\"name\":"
           "\"ripple-guard-off\",\"expression\":\"false\"}]},{\"name\":\"b.ripple.dev\","
           "\"clientConfig\":{\"url\":\"https://127.0.0.1:8443/mutate\"%s},"
           "\"matchConditions\":[{\"name\":\"ripple-guard-off\",\"expression\":\"false\"}]}]}",
           ca, ca);
  json_t *j = json_loads(text, 0, NULL);
  assert_non_null(j);
  return j;
}

/* The caBundle patch: one entry per webhook by name, clientConfig.caBundle
 * only, base64 that decodes back to the file (every padding length). */
static void test_ca_patch(void **state) {
  (void)state;
  guard_reg_t r;
  char why[256];
  json_t *j = cfg_ca("");
  assert_int_equal(guard_reg_parse(j, &r, why, sizeof why), RIPPLE_OK);
  json_decref(j);
  assert_false(guard_reg_ca_equal(&r, PEM, strlen(PEM)));
  for (size_t cut = 0; cut < 3; cut++) {
    size_t len = strlen(PEM) - cut;
    sbuf_t b;
    sbuf_init(&b);
    guard_reg_ca_patch(&r, PEM, len, &b);
    json_t *p = json_loadb(b.p, b.len, 0, NULL);
    assert_non_null(p);
    json_t *whs = json_object_get(p, "webhooks");
    assert_int_equal(json_array_size(whs), 2);
    for (size_t i = 0; i < 2; i++) {
      json_t *wh = json_array_get(whs, i);
      assert_string_equal(json_string_value(json_object_get(wh, "name")), r.t[i].name);
      assert_int_equal(json_object_size(wh), 2); /* name and clientConfig, nothing else */
      json_t *cc = json_object_get(wh, "clientConfig");
      assert_int_equal(json_object_size(cc), 1); /* url or service kept by the merge */
      if (cut == 0)
        assert_string_equal(json_string_value(json_object_get(cc, "caBundle")),
                            "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNB"
                            "VEUtLS0tLQo=");
    }
    /* The registration patched with it: parsed back, it equals the file. */
    json_t *again = cfg_ca(json_string_value(
        json_object_get(json_object_get(json_array_get(whs, 0), "clientConfig"), "caBundle")));
    guard_reg_t r2;
    assert_int_equal(guard_reg_parse(again, &r2, why, sizeof why), RIPPLE_OK);
    assert_true(guard_reg_ca_equal(&r2, PEM, len));
    assert_false(guard_reg_ca_equal(&r2, PEM, len - 1));
    guard_reg_free(&r2);
    json_decref(again);
    json_decref(p);
    sbuf_free(&b);
  }
  guard_reg_free(&r);
}

/* A fresh install: the registration created with the condition and without
 * caBundle. Held until the caBundle patch went through, then restored after
 * --recover-after good rounds, by a patch that deletes the condition. */
static void test_fresh_install(void **state) {
  (void)state;
  guard_reg_t r;
  char why[256];
  json_t *j = cfg_ca("");
  assert_int_equal(guard_reg_parse(j, &r, why, sizeof why), RIPPLE_OK);
  json_decref(j);
  assert_int_equal(r.off, 1);
  assert_null(r.t[0].ca);
  guard_sm_t sm = {0};
  int64_t now = 0;
  guard_sm_init(&sm, 2, 3, r.off != 0);
  for (int i = 0; i < 4; i++)
    assert_int_equal(
        guard_sm_step(&sm, 1, guard_reg_ca_equal(&r, PEM, strlen(PEM)), now += SEC / 4),
        GUARD_KEEP);
  /* The caBundle patch succeeded: the guard's copy follows. */
  assert_int_equal(guard_reg_ca_adopt(&r, PEM, strlen(PEM)), RIPPLE_OK);
  assert_true(guard_reg_ca_equal(&r, PEM, strlen(PEM)));
  assert_int_equal(guard_sm_step(&sm, 1, 1, now += SEC / 4), GUARD_RESTORE);
  sbuf_t b;
  sbuf_init(&b);
  guard_reg_patch(&r, 0, &b);
  json_t *p = json_loadb(b.p, b.len, 0, NULL);
  json_t *c = json_array_get(
      json_object_get(json_array_get(json_object_get(p, "webhooks"), 1), "matchConditions"), 0);
  assert_string_equal(json_string_value(json_object_get(c, "name")), GUARD_OFF_NAME);
  assert_string_equal(json_string_value(json_object_get(c, "$patch")), "delete");
  json_decref(p);
  sbuf_free(&b);
  /* Without --ca-bundle (guard_sm_probe) the same start restores after 3. */
  guard_sm_init(&sm, 2, 3, r.off != 0);
  assert_int_equal(feed(&sm, 1, 2, &now), GUARD_KEEP);
  assert_int_equal(guard_sm_probe(&sm, 1, now += SEC / 4), GUARD_RESTORE);
  guard_reg_free(&r);
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
      cmocka_unit_test(test_restore_held_for_ca),
      cmocka_unit_test(test_bundle_is_pem),
      cmocka_unit_test(test_bundle_read),
      cmocka_unit_test(test_ca_patch),
      cmocka_unit_test(test_fresh_install),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
