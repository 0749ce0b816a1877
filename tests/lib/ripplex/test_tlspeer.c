/*
 * test_tlspeer.c - which names a client certificate is for
 * (ripplex/tlspeer.h: tlspeer_cert_named), on certificates openssl makes
 * here: the subject's one CN, its DNS names, case, and the subjects that
 * must match nothing (two CNs, a name not listed, bytes that are no
 * certificate).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripplex/tlspeer.h"
#include "testutil.h"

static const char *const names[] = {"kube-apiserver", "webhook.example"};

/* A self-signed certificate of subject subj (openssl's -subj form) and, when
 * san is not NULL, those subjectAltNames; its DER in *der (free()). */
static size_t make_cert(const char *subj, const char *san, unsigned char **der) {
  char dir[] = "/tmp/ripple-tlspeer-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char cmd[1024], path[300];
  snprintf(path, sizeof path, "%s/c.der", dir);
  snprintf(cmd, sizeof cmd,
           "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "
           "%s/k.pem -subj '%s' %s%s%s -days 1 -outform DER -out %s 2>/dev/null",
           dir, subj, san ? "-addext 'subjectAltName=" : "", san ? san : "", san ? "'" : "", path);
  assert_int_equal(system(cmd), 0);  // NOLINT(cert-env33-c): the test's own command
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  *der = malloc(4096);
  size_t n = fread(*der, 1, 4096, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);  // NOLINT(cert-env33-c)
  assert_true(n > 0 && n < 4096);
  return n;
}

static int named(const char *subj, const char *san, char *cn, size_t cap) {
  unsigned char *der = NULL;
  size_t n = make_cert(subj, san, &der);
  int r = tlspeer_cert_named(der, n, names, 2, cn, cap);
  free(der);
  return r;
}

static void test_common_name(void **state) {
  (void)state;
  char cn[TLSPEER_NAME_MAX + 1];
  assert_int_equal(named("/CN=kube-apiserver/O=system:masters", NULL, cn, sizeof cn), 1);
  assert_string_equal(cn, "kube-apiserver");
  /* Case does not make a name another (tlspeer_name_match). */
  assert_int_equal(named("/CN=Kube-APIServer", NULL, cn, sizeof cn), 1);
  /* Not a name given; a name given only as an organisation. */
  assert_int_equal(named("/CN=mallory", NULL, cn, sizeof cn), 0);
  assert_string_equal(cn, "mallory");
  assert_int_equal(named("/CN=mallory/O=kube-apiserver", NULL, cn, sizeof cn), 0);
  /* A prefix or an extension of a name is not the name. */
  assert_int_equal(named("/CN=kube-apiserver2", NULL, cn, sizeof cn), 0);
  assert_int_equal(named("/CN=kube-apiserve", NULL, cn, sizeof cn), 0);
}

static void test_two_common_names(void **state) {
  (void)state;
  char cn[TLSPEER_NAME_MAX + 1];
  /* Which CN a client means is ambiguous: neither counts. */
  assert_int_equal(named("/CN=mallory/CN=kube-apiserver", NULL, cn, sizeof cn), 0);
  assert_int_equal(named("/CN=kube-apiserver/CN=mallory", NULL, cn, sizeof cn), 0);
  /* Its DNS names still do. */
  assert_int_equal(named("/CN=a/CN=b", "DNS:webhook.example", cn, sizeof cn), 1);
}

static void test_dns_names(void **state) {
  (void)state;
  char cn[TLSPEER_NAME_MAX + 1];
  assert_int_equal(named("/CN=x", "DNS:other.example,DNS:webhook.example", cn, sizeof cn), 1);
  assert_int_equal(named("/CN=x", "DNS:other.example,IP:127.0.0.1", cn, sizeof cn), 0);
  /* An e-mail or URI name that spells a listed name is not a DNS name. */
  assert_int_equal(named("/CN=x", "email:kube-apiserver,URI:webhook.example", cn, sizeof cn), 0);
}

static void test_not_a_certificate(void **state) {
  (void)state;
  char cn[8];
  memset(cn, 'x', sizeof cn);
  static const unsigned char junk[] = {0x30, 0x82, 0xff, 0xff, 0x00};
  assert_int_equal(tlspeer_cert_named(junk, sizeof junk, names, 2, cn, sizeof cn), 0);
  assert_string_equal(cn, "");
  assert_int_equal(tlspeer_cert_named(NULL, 0, names, 2, cn, sizeof cn), 0);
  /* A CN longer than the buffer is read as none. */
  char small[4];
  assert_int_equal(named("/CN=kube-apiserver", NULL, small, sizeof small), 0);
  assert_string_equal(small, "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_common_name),
      cmocka_unit_test(test_two_common_names),
      cmocka_unit_test(test_dns_names),
      cmocka_unit_test(test_not_a_certificate),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
