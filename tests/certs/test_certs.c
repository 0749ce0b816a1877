/*
 * test_certs.c - ripple-certs' certificates and tokens (certs/x509.c), no
 * cluster: what certs_tls_generate makes verifies against its CA for every
 * name, for serverAuth, in its validity window, with its key; what
 * certs_tls_check keeps and every reason it gives to replace; tokens.
 */
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <string.h>

#include "certs.h"
#include "ripplex/b64.h"
#include "testutil.h"

/* A fixed "now" (2026-11-26T00:00:00Z): the check is told the time. */
#define NOW ((time_t)1795651200)
#define DAY 86400

static const char *const dns[] = {"ripple-webhook.ripple-system.svc",
                                  "ripple-webhook.ripple-system.svc.cluster.local"};

static certs_tls_t make(time_t now, int days) {
  certs_tls_t t;
  char err[256];
  int rc = certs_tls_generate(dns, 2, days, now, &t, err, sizeof err);
  if (rc != RIPPLE_OK) fail_msg("certs_tls_generate: %s", err);
  return t;
}

static X509 *pem_cert(const char *pem) {
  BIO *b = BIO_new_mem_buf(pem, -1);
  X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
  BIO_free(b);
  assert_non_null(x);
  return x;
}

static EVP_PKEY *pem_key(const char *pem) {
  BIO *b = BIO_new_mem_buf(pem, -1);
  EVP_PKEY *k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
  BIO_free(b);
  assert_non_null(k);
  return k;
}

static void put(json_t *data, const char *key, const char *text) {
  char *b = b64_encode_str(text, strlen(text));
  assert_non_null(b);
  json_object_set_new(data, key, json_string(b));
  free(b);
}

/* A Secret as the API server returns it, from three PEM texts (NULL: left out). */
static json_t *secret(const char *ca, const char *crt, const char *key) {
  json_t *data = json_object();
  if (ca) put(data, CERTS_KEY_CA, ca);
  if (crt) put(data, CERTS_KEY_CRT, crt);
  if (key) put(data, CERTS_KEY_KEY, key);
  return json_pack("{s:s, s:o}", "type", "kubernetes.io/tls", "data", data);
}

/* certs_tls_check's answer, and why into why. */
static int check(const json_t *s, size_t ndns, time_t now, int64_t renew, char *why) {
  return certs_tls_check(s, dns, ndns, now, renew, why, 64);
}

static void test_generated_verifies(void **state) {
  (void)state;
  certs_tls_t t = make(NOW, 3650);
  X509 *ca = pem_cert(t.ca_crt), *leaf = pem_cert(t.tls_crt);
  EVP_PKEY *key = pem_key(t.tls_key);
  X509_STORE *st = X509_STORE_new();
  X509_STORE_add_cert(st, ca);
  X509_STORE_CTX *ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, st, leaf, NULL);
  X509_STORE_CTX_set_time(ctx, 0, NOW);
  X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
  assert_int_equal(X509_verify_cert(ctx), 1);
  /* The CA: a CA for signing certificates; the leaf: not a CA, serverAuth. */
  assert_true(X509_check_ca(ca) >= 1);
  assert_true(X509_get_key_usage(ca) & KU_KEY_CERT_SIGN);
  assert_int_equal(X509_check_ca(leaf), 0);
  assert_true(X509_get_extended_key_usage(leaf) & XKU_SSL_SERVER);
  for (int i = 0; i < 2; i++)
    assert_int_equal(X509_check_host(leaf, dns[i], 0, X509_CHECK_FLAG_NEVER_CHECK_SUBJECT, NULL),
                     1);
  assert_int_equal(X509_check_host(leaf, "other.svc", 0, 0, NULL), 0);
  /* Valid from before now (an hour of skew) for exactly 3650 days. */
  time_t before = NOW - 3000, after = NOW + 3650L * DAY - 60, end = NOW + 3650L * DAY + 60;
  assert_int_equal(X509_cmp_time(X509_get0_notBefore(leaf), &before), -1);
  assert_int_equal(X509_cmp_time(X509_get0_notAfter(leaf), &after), 1);
  assert_int_equal(X509_cmp_time(X509_get0_notAfter(leaf), &end), -1);
  assert_int_equal(X509_check_private_key(leaf, key), 1);
  assert_string_equal(EVP_PKEY_get0_type_name(key), "EC");
  assert_int_equal(EVP_PKEY_get_bits(key), 256);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(st);
  X509_free(ca);
  X509_free(leaf);
  EVP_PKEY_free(key);
  certs_tls_free(&t);
  assert_null(t.tls_key);
}

static void test_serials_and_keys_differ(void **state) {
  (void)state;
  certs_tls_t a = make(NOW, 30), b = make(NOW, 30);
  X509 *la = pem_cert(a.tls_crt), *lb = pem_cert(b.tls_crt);
  assert_int_not_equal(ASN1_INTEGER_cmp(X509_get0_serialNumber(la), X509_get0_serialNumber(lb)), 0);
  BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(la), NULL);
  assert_true(BN_num_bits(bn) >= 120 && !BN_is_negative(bn));
  BN_free(bn);
  assert_string_not_equal(a.tls_key, b.tls_key);
  X509_free(la);
  X509_free(lb);
  certs_tls_free(&a);
  certs_tls_free(&b);
}

/* Names longer than a commonName may be (64): still every one a SAN. */
static void test_long_names(void **state) {
  (void)state;
  const char *names[] = {
      "ripple-webhook.a-namespace-with-a-rather-long-name-of-sixty-three-chars-x.svc",
      "ripple-webhook.a-namespace-with-a-rather-long-name-of-sixty-three-chars-x.svc.cluster."
      "local"};
  certs_tls_t t;
  char err[256], why[64];
  assert_int_equal(certs_tls_generate(names, 2, 30, NOW, &t, err, sizeof err), RIPPLE_OK);
  json_t *s = secret(t.ca_crt, t.tls_crt, t.tls_key);
  assert_int_equal(certs_tls_check(s, names, 2, NOW, DAY, why, sizeof why), 1);
  json_decref(s);
  certs_tls_free(&t);
}

/* An IPv4 address (a webhook registered by URL) is an IP SAN: it matches that
 * address, and not as a DNS name; another address is missing. */
static void test_ip_names(void **state) {
  (void)state;
  const char *names[] = {"127.0.0.1", "ripple-webhook.ns.svc"};
  certs_tls_t t;
  char err[256], why[64];
  assert_int_equal(certs_tls_generate(names, 2, 30, NOW, &t, err, sizeof err), RIPPLE_OK);
  json_t *s = secret(t.ca_crt, t.tls_crt, t.tls_key);
  assert_int_equal(certs_tls_check(s, names, 2, NOW, DAY, why, sizeof why), 1);
  const char *other[] = {"127.0.0.2"};
  assert_int_equal(certs_tls_check(s, other, 1, NOW, DAY, why, sizeof why), 0);
  assert_string_equal(why, "missing_san");
  json_decref(s);
  certs_tls_free(&t);
}

static void test_generate_refuses(void **state) {
  (void)state;
  certs_tls_t t;
  char err[256];
  const char *bad[] = {"Upper.svc"};
  assert_int_equal(certs_tls_generate(dns, 0, 10, NOW, &t, err, sizeof err), RIPPLE_EINVAL);
  assert_int_equal(certs_tls_generate(dns, 1, 0, NOW, &t, err, sizeof err), RIPPLE_EINVAL);
  assert_int_equal(certs_tls_generate(bad, 1, 10, NOW, &t, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "Upper.svc"));
}

static void test_check_keeps_valid(void **state) {
  (void)state;
  certs_tls_t t = make(NOW, 3650);
  json_t *s = secret(t.ca_crt, t.tls_crt, t.tls_key);
  char why[64], na[40];
  assert_int_equal(check(s, 2, NOW, 30L * DAY, why), 1);
  assert_int_equal(check(s, 1, NOW + 100L * DAY, 30L * DAY, why), 1);
  assert_int_equal(certs_tls_not_after(s, na, sizeof na), 1);
  assert_int_equal(strlen(na), 20);
  json_decref(s);
  certs_tls_free(&t);
}

static void test_check_rejects(void **state) {
  (void)state;
  certs_tls_t t = make(NOW, 365), o = make(NOW, 365);
  char why[64];
  struct {
    json_t *s;
    const char *why;
  } cases[] = {
      {secret("garbage", t.tls_crt, t.tls_key), "bad_ca.crt"},
      {secret(t.ca_crt, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
              t.tls_key),
       "bad_tls.crt"},
      {secret(t.ca_crt, t.tls_crt, "not a key"), "bad_tls.key"},
      {secret(t.ca_crt, t.tls_crt, o.tls_key), "key_mismatch"},
      {secret(o.ca_crt, t.tls_crt, t.tls_key), "not_signed_by_ca"},
      {secret(t.tls_crt, t.tls_crt, t.tls_key), "not_signed_by_ca"},
      {secret(NULL, t.tls_crt, t.tls_key), "missing_ca.crt"},
      {secret(t.ca_crt, NULL, t.tls_key), "missing_tls.crt"},
      {secret(t.ca_crt, t.tls_crt, NULL), "missing_tls.key"},
      {json_pack("{s:s}", "type", "kubernetes.io/tls"), "missing_data"},
      {json_pack("{s:{s:s,s:s,s:s}}", "data", "ca.crt", "a=b=", "tls.crt", "", "tls.key", ""),
       "bad_ca.crt"},
      {json_pack("{s:{s:i}}", "data", "ca.crt", 1), "bad_ca.crt"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_int_equal(check(cases[i].s, 2, NOW, DAY, why), 0);
    if (strcmp(why, cases[i].why) != 0) fail_msg("case %zu: why=%s, want %s", i, why, cases[i].why);
    json_decref(cases[i].s);
  }
  certs_tls_free(&t);
  certs_tls_free(&o);
}

static void test_check_names_and_time(void **state) {
  (void)state;
  const char *one[] = {"a.ns.svc"};
  certs_tls_t t;
  char err[256], why[64];
  assert_int_equal(certs_tls_generate(one, 1, 100, NOW, &t, err, sizeof err), RIPPLE_OK);
  json_t *s = secret(t.ca_crt, t.tls_crt, t.tls_key);
  const char *more[] = {"a.ns.svc", "b.ns.svc"}, *wild[] = {"x.a.ns.svc"};
  assert_int_equal(certs_tls_check(s, one, 1, NOW, DAY, why, sizeof why), 1);
  assert_int_equal(certs_tls_check(s, more, 2, NOW, DAY, why, sizeof why), 0);
  assert_string_equal(why, "missing_san");
  assert_int_equal(certs_tls_check(s, wild, 1, NOW, DAY, why, sizeof why), 0);
  assert_string_equal(why, "missing_san");
  /* 100 days: fine with 30 days' notice, expiring with 101, expired later. */
  assert_int_equal(certs_tls_check(s, one, 1, NOW, 30L * DAY, why, sizeof why), 1);
  assert_int_equal(certs_tls_check(s, one, 1, NOW, 101L * DAY, why, sizeof why), 0);
  assert_string_equal(why, "expiring");
  assert_int_equal(certs_tls_check(s, one, 1, NOW + 80L * DAY, 30L * DAY, why, sizeof why), 0);
  assert_string_equal(why, "expiring");
  assert_int_equal(certs_tls_check(s, one, 1, NOW + 200L * DAY, DAY, why, sizeof why), 0);
  assert_string_equal(why, "expired");
  assert_int_equal(certs_tls_check(s, one, 1, NOW - 2L * DAY, DAY, why, sizeof why), 0);
  assert_string_equal(why, "not_yet_valid");
  json_decref(s);
  certs_tls_free(&t);
}

static void test_tokens(void **state) {
  (void)state;
  char a[CERTS_TOKEN_LEN + 1], b[CERTS_TOKEN_LEN + 1];
  assert_int_equal(certs_token_new(a), RIPPLE_OK);
  assert_int_equal(certs_token_new(b), RIPPLE_OK);
  assert_int_equal(strlen(a), 64);
  assert_int_equal(strspn(a, "0123456789abcdef"), 64);
  assert_string_not_equal(a, b);
}

static void test_b64_and_names(void **state) {
  (void)state;
  /* Secret data is padded base64 without newlines (the codec's own tests are
   * tests/lib/ripplex/test_b64.c), at most 64 KiB a key. */
  enum { MAX = 64 * 1024 };
  certs_tls_t t = make(NOW, 365);
  char why[64], *big = malloc(MAX + 2);
  assert_non_null(big);
  size_t n = strlen(t.ca_crt);
  memcpy(big, t.ca_crt, n);
  memset(big + n, '\n', MAX - n); /* text after the PEM block is ignored */
  big[MAX] = '\0';
  json_t *s = secret(big, t.tls_crt, t.tls_key);
  assert_int_equal(check(s, 2, NOW, DAY, why), 1);
  json_decref(s);
  big[MAX] = '\n', big[MAX + 1] = '\0';
  s = secret(big, t.tls_crt, t.tls_key);
  assert_int_equal(check(s, 2, NOW, DAY, why), 0);
  assert_string_equal(why, "bad_ca.crt");
  json_decref(s);
  free(big);
  s = secret(t.ca_crt, t.tls_crt, t.tls_key);
  json_t *data = json_object_get(s, "data");
  char *b = strdup(json_string_value(json_object_get(data, CERTS_KEY_CA)));
  json_object_set_new(data, CERTS_KEY_CA, json_sprintf("%s\n", b));
  assert_int_equal(check(s, 2, NOW, DAY, why), 0);
  assert_string_equal(why, "bad_ca.crt");
  free(b);
  json_decref(s);
  certs_tls_free(&t);
  assert_true(certs_name_ok("ripple-webhook.ripple-system.svc"));
  assert_true(certs_name_ok("a"));
  assert_false(certs_name_ok(""));
  assert_false(certs_name_ok("-a"));
  assert_false(certs_name_ok("a-.b"));
  assert_false(certs_name_ok("a..b"));
  assert_false(certs_name_ok("a.b."));
  assert_false(certs_name_ok("A.b"));
  assert_false(certs_name_ok("a_b"));
  assert_false(certs_name_ok("*.svc"));
  assert_false(certs_name_ok("a,DNS:evil"));
}

/* One CA, two certificates (the webhook's and the trace server's): each
 * verifies for its own names only, against the same CA, with a key of its
 * own; one Secret does not serve the other's names. */
static void test_set_shares_ca(void **state) {
  (void)state;
  static const char *const srv[] = {"ripple-server.ripple-system.svc"};
  certs_leaf_req_t req[2] = {{dns, 2}, {srv, 1}};
  certs_tls_t t[2];
  char err[256], why[64];
  assert_int_equal(certs_tls_generate_set(req, 2, 365, NOW, t, err, sizeof err), RIPPLE_OK);
  assert_string_equal(t[0].ca_crt, t[1].ca_crt);
  assert_string_not_equal(t[0].tls_key, t[1].tls_key);
  json_t *a = secret(t[0].ca_crt, t[0].tls_crt, t[0].tls_key);
  json_t *b = secret(t[1].ca_crt, t[1].tls_crt, t[1].tls_key);
  assert_int_equal(certs_tls_check(a, dns, 2, NOW, 30 * DAY, why, sizeof why), 1);
  assert_int_equal(certs_tls_check(b, srv, 1, NOW, 30 * DAY, why, sizeof why), 1);
  assert_int_equal(certs_tls_check(b, dns, 1, NOW, 30 * DAY, why, sizeof why), 0);
  assert_string_equal(why, "missing_san");
  /* A year: kept 334 days on, renewed within the last 30. */
  assert_int_equal(certs_tls_check(b, srv, 1, NOW + 334 * DAY, 30 * DAY, why, sizeof why), 1);
  assert_int_equal(certs_tls_check(b, srv, 1, NOW + 336 * DAY, 30 * DAY, why, sizeof why), 0);
  assert_string_equal(why, "expiring");
  json_decref(a);
  json_decref(b);
  certs_tls_free(&t[0]);
  certs_tls_free(&t[1]);
  /* No certificate, too many, or a bad name in any: nothing is made. */
  assert_int_equal(certs_tls_generate_set(req, 0, 365, NOW, t, err, sizeof err), RIPPLE_EINVAL);
  assert_int_equal(certs_tls_generate_set(req, CERTS_MAX_TLS + 1, 365, NOW, t, err, sizeof err),
                   RIPPLE_EINVAL);
  static const char *const bad[] = {"Bad.svc"};
  req[1] = (certs_leaf_req_t){bad, 1};
  assert_int_equal(certs_tls_generate_set(req, 2, 365, NOW, t, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "Bad.svc"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_generated_verifies), cmocka_unit_test(test_serials_and_keys_differ),
      cmocka_unit_test(test_generate_refuses),   cmocka_unit_test(test_check_keeps_valid),
      cmocka_unit_test(test_check_rejects),      cmocka_unit_test(test_check_names_and_time),
      cmocka_unit_test(test_long_names),         cmocka_unit_test(test_tokens),
      cmocka_unit_test(test_b64_and_names),      cmocka_unit_test(test_ip_names),
      cmocka_unit_test(test_set_shares_ca),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
