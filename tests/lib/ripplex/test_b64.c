/*
 * test_b64.c - ripple's one base64 codec (ripplex/b64.h): the RFC 4648 test
 * vectors, round trips of random bytes, and every way an input is not padded
 * standard base64, with what Go's decoder (Kubernetes' side) answers for the
 * same input as the expectation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripplex/b64.h"
#include "ripplex/sbuf.h"
#include "testutil.h"

#define SEED 0x5eed64u

/* RFC 4648 section 10. */
static const char *const vec[][2] = {
    {"", ""},
    {"f", "Zg=="},
    {"fo", "Zm8="},
    {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="},
    {"fooba", "Zm9vYmE="},
    {"foobar", "Zm9vYmFy"},
};

/* s decoded by b64_decode (lines: b64_decode_lines): the code, and the bytes
 * in out (a new buffer) and n. */
static int dec(const char *s, int lines, char **out, size_t *n) {
  *out = NULL;
  return (lines ? b64_decode_lines : b64_decode)(s, strlen(s), out, n);
}

static void test_vectors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
    const char *plain = vec[i][0], *enc = vec[i][1];
    sbuf_t b;
    sbuf_init(&b);
    sbuf_puts(&b, "x"); /* b64_encode appends */
    b64_encode(&b, plain, strlen(plain));
    assert_int_equal(b.len, 1 + strlen(enc));
    assert_memory_equal(b.p + 1, enc, strlen(enc));
    sbuf_free(&b);
    char *s = b64_encode_str(plain, strlen(plain));
    assert_non_null(s);
    assert_string_equal(s, enc);
    free(s);
    for (int lines = 0; lines < 2; lines++) {
      char *d = NULL;
      size_t n = 99;
      assert_int_equal(dec(enc, lines, &d, &n), RIPPLE_OK);
      assert_int_equal(n, strlen(plain));
      assert_string_equal(d, plain); /* NUL-terminated */
      free(d);
    }
  }
  char *s = b64_encode_str("\xfb\xff\xbf", 3); /* the last two characters */
  assert_string_equal(s, "+/+/");
  free(s);
  char *d = NULL;
  assert_int_equal(b64_decode("+/+/", 4, &d, NULL), RIPPLE_OK); /* n may be NULL */
  assert_memory_equal(d, "\xfb\xff\xbf", 4);
  free(d);
  assert_int_equal(b64_decode("Zm9v", 4, &d, NULL), RIPPLE_OK);
  assert_string_equal(d, "foo");
  free(d);
}

static uint64_t next(uint64_t *x) { /* xorshift64* */
  *x ^= *x >> 12, *x ^= *x << 25, *x ^= *x >> 27;
  return *x * 0x2545F4914F6CDD1Dull;
}

static void test_round_trips(void **state) {
  (void)state;
  uint64_t x = SEED;
  unsigned char in[64];
  for (size_t len = 0; len <= sizeof in; len++) {
    for (int rep = 0; rep < 8; rep++) {
      for (size_t i = 0; i < len; i++) in[i] = (unsigned char)next(&x);
      char *e = b64_encode_str(in, len), *d = NULL;
      size_t n = 0;
      assert_non_null(e);
      if (strlen(e) != (len + 2) / 3 * 4) fail_msg("seed %#x: length %zu", SEED, len);
      if (b64_decode(e, strlen(e), &d, &n) != RIPPLE_OK || n != len || memcmp(d, in, len) != 0 ||
          d[n] != '\0')
        fail_msg("seed %#x: %zu random bytes do not come back from %s", SEED, len, e);
      free(d);
      free(e);
    }
  }
}

static void test_bad_input(void **state) {
  (void)state;
  static const char *const bad[] = {
      /* characters outside the alphabet: URL-safe base64, spaces, newlines */
      "Zm9v!", "Zm-v", "Zm_v", "Zm9 v", " Zm9v", "Zm9v\n", "Zm9v\r\n", "\tZm9v", "Zm9\xc3\xa9",
      /* padding: missing, too much, too early, inside, data after it */
      "Zg", "Zm8", "Zg=", "Zg===", "Zm8==", "Z===", "====", "=", "Zm9v=", "Zm9v====", "Z=9v",
      "Zg==Zg==", "Zg=A", "Zm9=v",
      /* truncated */
      "Z", "Zm9vY", "Zm9vYm", "Zm9vYmF"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *d = (char *)bad; /* untouched on failure */
    size_t n = 42;
    int rc = b64_decode(bad[i], strlen(bad[i]), &d, &n);
    if (rc != RIPPLE_EINVAL) fail_msg("\"%s\": %d, want RIPPLE_EINVAL", bad[i], rc);
    assert_ptr_equal(d, bad);
    assert_int_equal(n, 42);
  }
  /* a NUL in the input is not base64, nor are the characters after it lost */
  char *d = NULL;
  assert_int_equal(b64_decode("Zm9v\0Zm9v", 9, &d, NULL), RIPPLE_EINVAL);
  assert_int_equal(b64_decode("Zm9v\0\0\0\0", 8, &d, NULL), RIPPLE_EINVAL);
  assert_int_equal(b64_decode("Zm9v", 3, &d, NULL), RIPPLE_EINVAL); /* len is what counts */
  assert_null(d);
}

/* The low bits of a last, partial quantum are not checked, as Go does not. */
static void test_unused_bits(void **state) {
  (void)state;
  char *d = NULL;
  size_t n = 0;
  assert_int_equal(dec("Zh==", 0, &d, &n), RIPPLE_OK);
  assert_int_equal(n, 1);
  assert_string_equal(d, "f");
  free(d);
  assert_int_equal(dec("Zm9=", 0, &d, &n), RIPPLE_OK);
  assert_string_equal(d, "fo");
  free(d);
}

static void test_lines(void **state) {
  (void)state;
  static const char *const ok[] = {"Zm9v\n",   "Zm\n9v", "Zm9v\r\nYmFy\r\n",
                                   "\nZg==\n", "Zg=\n=", "Z\r\ng=="};
  static const char *const want[] = {"foo", "foo", "foobar", "f", "f", "f"};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    char *d = NULL;
    size_t n = 0;
    if (dec(ok[i], 1, &d, &n) != RIPPLE_OK) fail_msg("lines: \"%s\" refused", ok[i]);
    assert_string_equal(d, want[i]);
    assert_int_equal(n, strlen(want[i]));
    free(d);
  }
  char *d = NULL;
  size_t n = 7;
  assert_int_equal(dec("\n\r\n", 1, &d, &n), RIPPLE_OK); /* nothing but line ends */
  assert_int_equal(n, 0);
  free(d);
  static const char *const bad[] = {"Zm 9v", "Zm9v\t", "Zg\n", "Zg==\nZg==", "Zm9v\v", "Zm9v\f"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (dec(bad[i], 1, &d, &n) != RIPPLE_EINVAL) fail_msg("lines: \"%s\" taken", bad[i]);
}

static void test_embedded_nul(void **state) {
  (void)state;
  static const unsigned char raw[] = {0, 'a', 0, 0xff, 0};
  char *e = b64_encode_str(raw, sizeof raw), *d = NULL;
  assert_string_equal(e, "AGEA/wA=");
  size_t n = 0;
  assert_int_equal(b64_decode(e, strlen(e), &d, &n), RIPPLE_OK);
  assert_int_equal(n, sizeof raw);
  assert_memory_equal(d, raw, sizeof raw);
  assert_int_equal(d[n], '\0');
  free(d);
  free(e);
  assert_int_equal(b64_decode("AAAA", 4, &d, &n), RIPPLE_OK);
  assert_int_equal(n, 3);
  assert_memory_equal(d, "\0\0\0", 4);
  free(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vectors),   cmocka_unit_test(test_round_trips),
      cmocka_unit_test(test_bad_input), cmocka_unit_test(test_unused_bits),
      cmocka_unit_test(test_lines),     cmocka_unit_test(test_embedded_nul),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
