/*
 * test_cpid_ctx.c - CPIDs and the context text format: round trips, and that
 * every malformed shape is refused with the right error and leaves no context.
 */
#include <stdio.h>
#include <string.h>

#include "testutil.h"

static void cpid_generate_is_v4_and_unique(void **state) {
  (void)state;
  ripple_cpid_t a, b;
  assert_int_equal(ripple_cpid_generate(&a), RIPPLE_OK);
  assert_int_equal(ripple_cpid_generate(&b), RIPPLE_OK);
  assert_false(ripple_cpid_equal(&a, &b));
  assert_int_equal(a.b[6] >> 4, 4);
  assert_int_equal(a.b[8] >> 6, 2);
  char s[RIPPLE_CPID_STRLEN + 1];
  ripple_cpid_format(&a, s);
  assert_int_equal(strlen(s), RIPPLE_CPID_STRLEN);
  assert_int_equal(s[14], '4');
  /* Many in a row: the per-thread buffer refills without repeating itself. */
  for (int i = 0; i < 1000; i++) {
    assert_int_equal(ripple_cpid_generate(&b), RIPPLE_OK);
    assert_false(ripple_cpid_equal(&a, &b));
  }
}

static void cpid_parse_format_round_trip(void **state) {
  (void)state;
  const char *txt = "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60";
  ripple_cpid_t id;
  assert_int_equal(ripple_cpid_parse(txt, strlen(txt), &id), RIPPLE_OK);
  char back[RIPPLE_CPID_STRLEN + 1];
  ripple_cpid_format(&id, back);
  assert_string_equal(back, txt);
  /* Upper case is accepted and comes back canonical. */
  assert_int_equal(ripple_cpid_parse("3F2B8E4C-9A1D-4C7E-8F00-1B2C3D4E5F60", 36, &id), RIPPLE_OK);
  ripple_cpid_format(&id, back);
  assert_string_equal(back, txt);
}

static void cpid_parse_rejects(void **state) {
  (void)state;
  const char *bad[] = {
      "",
      "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f6",   /* short */
      "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f600", /* long */
      "3f2b8e4c9a1d-4c7e-8f00-1b2c3d4e5f60-",  /* dash moved */
      "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5g60",  /* not hex */
      "00000000-0000-0000-0000-000000000000",  /* nil */
      "{f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ripple_cpid_t id;
    assert_int_equal(ripple_cpid_parse(bad[i], strlen(bad[i]), &id), RIPPLE_EBADCTX);
  }
}

static ripple_ctx_t make_ctx(uint64_t k, uint32_t nanc) {
  ripple_ctx_t c;
  memset(&c, 0, sizeof c);
  c.cpid = test_cpid(k);
  for (uint32_t i = 0; i < nanc; i++) c.anc[i] = test_cpid(k + 1000 + i);
  c.nanc = nanc;
  return c;
}

static void ctx_round_trip_every_size(void **state) {
  (void)state;
  for (uint32_t n = 0; n <= RIPPLE_ANC_MAX; n++) {
    ripple_ctx_t c = make_ctx(7, n), d;
    char buf[RIPPLE_CTX_STRMAX + 1];
    size_t len = 0;
    assert_int_equal(ripple_ctx_encode(&c, buf, sizeof buf, &len), RIPPLE_OK);
    assert_int_equal(len, strlen(buf));
    assert_int_equal(len, 2 + 36 + n * 37); /* size bounded by N, as promised */
    assert_int_equal(ripple_ctx_decode(buf, len, RIPPLE_ANC_MAX, &d), RIPPLE_OK);
    assert_true(ripple_ctx_equal(&c, &d));
  }
}

static void ctx_encode_limits(void **state) {
  (void)state;
  ripple_ctx_t c = make_ctx(1, 3), absent;
  memset(&absent, 0, sizeof absent);
  char small[40], buf[RIPPLE_CTX_STRMAX + 1];
  assert_int_equal(ripple_ctx_encode(&c, small, sizeof small, NULL), RIPPLE_ERANGE);
  assert_int_equal(ripple_ctx_encode(&absent, buf, sizeof buf, NULL), RIPPLE_EINVAL);
  c.nanc = RIPPLE_ANC_MAX + 1;
  assert_int_equal(ripple_ctx_encode(&c, buf, sizeof buf, NULL), RIPPLE_EINVAL);
}

static void ctx_decode_cuts_to_n_and_trims_space(void **state) {
  (void)state;
  ripple_ctx_t c = make_ctx(3, 8), d;
  char buf[RIPPLE_CTX_STRMAX + 8];
  size_t len;
  buf[0] = ' ';
  assert_int_equal(ripple_ctx_encode(&c, buf + 1, sizeof buf - 3, &len), RIPPLE_OK);
  buf[len + 1] = '\n';
  buf[len + 2] = '\0';
  assert_int_equal(ripple_ctx_decode(buf, len + 2, 5, &d), RIPPLE_OK);
  assert_int_equal(d.nanc, 5);
  for (uint32_t i = 0; i < 5; i++) assert_true(ripple_cpid_equal(&d.anc[i], &c.anc[i]));
  assert_int_equal(ripple_ctx_decode(buf, len + 2, 0, &d), RIPPLE_OK);
  assert_int_equal(d.nanc, 0);
}

static void ctx_decode_rejects(void **state) {
  (void)state;
  const char *a = "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60";
  const char *b = "0c9d2b1a-1111-4222-8333-444455556666";
  char over[RIPPLE_CTX_STRMAX + 64];
  /* 33 ancestors: more than any cluster may use. */
  ripple_ctx_t big = make_ctx(9, RIPPLE_ANC_MAX);
  size_t len;
  assert_int_equal(ripple_ctx_encode(&big, over, sizeof over, &len), RIPPLE_OK);
  ripple_cpid_t extra = test_cpid(99999);
  over[len++] = ',';
  ripple_cpid_format(&extra, over + len);
  struct {
    char s[RIPPLE_CTX_STRMAX + 64];
    int rc;
  } cases[16];
  memset(cases, 0, sizeof cases);
  size_t n = 0;
#define CASE(rcv, ...) (snprintf(cases[n].s, sizeof cases[n].s, __VA_ARGS__), cases[n++].rc = (rcv))
  CASE(RIPPLE_EBADCTX, "%s", "");
  CASE(RIPPLE_EBADCTX, "%s", "1");
  CASE(RIPPLE_EBADCTX, "%s", "1;");
  CASE(RIPPLE_EBADCTX, "1;%s;", a);
  CASE(RIPPLE_EBADCTX, "1;%s;%s,", a, b);
  CASE(RIPPLE_EBADCTX, "1;%s,%s", a, b);       /* wrong separator */
  CASE(RIPPLE_EBADCTX, "1;%s;%s,%s", a, b, b); /* duplicate ancestor */
  CASE(RIPPLE_EBADCTX, "1;%s;%s", a, a);       /* its own ancestor */
  CASE(RIPPLE_EBADCTX, "1;%s %s", a, b);
  CASE(RIPPLE_EBADCTX, "x;%s", a);
  CASE(RIPPLE_EBADCTX, "{\"cpid\":\"%s\"}", a);
  CASE(RIPPLE_EVERSION, "2;%s", a);
  CASE(RIPPLE_EVERSION, "10;%s;whatever", a);
  CASE(RIPPLE_EBADCTX, "%s", over);
#undef CASE
  for (size_t i = 0; i < n; i++) {
    ripple_ctx_t d;
    memset(&d, 0xab, sizeof d);
    int rc = ripple_ctx_decode(cases[i].s, strlen(cases[i].s), RIPPLE_ANC_MAX, &d);
    if (rc != cases[i].rc) fail_msg("case %zu '%s': got %s", i, cases[i].s, ripple_errname(rc));
    assert_false(ripple_ctx_is_set(&d)); /* a bad value leaves the context absent */
  }
  /* A NUL inside the value is garbage, not a terminator. */
  char with_nul[64];
  int m = snprintf(with_nul, sizeof with_nul, "1;%s", a);
  with_nul[10] = '\0';
  ripple_ctx_t d;
  assert_int_equal(ripple_ctx_decode(with_nul, (size_t)m, 10, &d), RIPPLE_EBADCTX);
}

static void errors_have_names_and_text(void **state) {
  (void)state;
  for (int e = RIPPLE_OK; e >= RIPPLE_ETIMEDOUT; e--) {
    assert_string_not_equal(ripple_strerror(e), "unknown error");
    assert_string_not_equal(ripple_errname(e), "RIPPLE_E?");
  }
  assert_string_equal(ripple_strerror(12345), "unknown error");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cpid_generate_is_v4_and_unique),
      cmocka_unit_test(cpid_parse_format_round_trip),
      cmocka_unit_test(cpid_parse_rejects),
      cmocka_unit_test(ctx_round_trip_every_size),
      cmocka_unit_test(ctx_encode_limits),
      cmocka_unit_test(ctx_decode_cuts_to_n_and_trims_space),
      cmocka_unit_test(ctx_decode_rejects),
      cmocka_unit_test(errors_have_names_and_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
