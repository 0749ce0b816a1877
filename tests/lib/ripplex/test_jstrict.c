/*
 * test_jstrict.c - the strict JSON front end (lib/ripplex/jstrict.c): each
 * rule with inputs that must pass and inputs that must fail, the place and
 * reason of each refusal, and the rules checked against jansson itself, whose
 * behaviour they stand for. The scan's vector path is compared with a plain
 * byte-by-byte reading of the same rules on seeded random text.
 */
#include <inttypes.h>
#include <jansson.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripplex/jstrict.h"
#include "ripplex/utf8.h"
#include "testutil.h"

#define SENTINEL ((size_t)0x5a5a)

/* jstrict_scan of a C string; *at -1 when it passes. */
static int scan(const char *s, size_t n, unsigned flags, size_t *at, const char **why) {
  *at = SENTINEL;
  *why = "untouched";
  int rc = jstrict_scan(s, n, flags, at, why);
  if (rc == RIPPLE_OK) {
    /* Outputs are written on failure only. */
    assert_int_equal(*at, SENTINEL);
    assert_string_equal(*why, "untouched");
    *at = (size_t)-1;
  } else {
    assert_int_equal(rc, RIPPLE_EJSON);
    assert_non_null(*why);
  }
  return rc;
}

static void passes(const char *s, unsigned flags) {
  size_t at;
  const char *why;
  if (scan(s, strlen(s), flags, &at, &why) != RIPPLE_OK) fail_msg("refused \"%s\": %s", s, why);
}

/* Refused at byte `want`, for a reason that mentions `reason`. */
static void fails(const char *s, unsigned flags, size_t want, const char *reason) {
  size_t at;
  const char *why;
  if (scan(s, strlen(s), flags, &at, &why) == RIPPLE_OK) fail_msg("passed \"%s\"", s);
  assert_int_equal(at, want);
  if (!strstr(why, reason)) fail_msg("\"%s\": \"%s\" does not say \"%s\"", s, why, reason);
}

/* jansson's answer for a JSON text (JSON_ALLOW_NUL with flags). */
static int jansson_takes(const char *s, size_t n, unsigned flags) {
  size_t jf = JSON_DECODE_ANY | (flags & JSTRICT_ALLOW_NUL ? JSON_ALLOW_NUL : 0);
  json_t *v = json_loadb(s, n, jf, NULL);
  json_decref(v);
  return v != NULL;
}

/* A string's body, quoted: jansson and the scan give the same answer. */
static void same_as_jansson(const char *body, unsigned flags) {
  char json[256];
  int n = snprintf(json, sizeof json, "[\"%s\"]", body);
  size_t at;
  const char *why;
  int ours = scan(json, (size_t)n, flags, &at, &why) == RIPPLE_OK;
  if (ours != jansson_takes(json, (size_t)n, flags))
    fail_msg("%s: jstrict %s, jansson does not", json, ours ? "passes" : "refuses");
}

static void test_scan_utf8(void **state) {
  (void)state;
  static const char *const good[] = {
      "plain ASCII text",
      "\xc2\x80 \xdf\xbf",                 /* U+0080, U+07FF */
      "\xe0\xa0\x80 \xef\xbf\xbf",         /* U+0800, U+FFFF */
      "\xf0\x90\x80\x80 \xf4\x8f\xbf\xbf", /* U+10000, U+10FFFF */
      "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x98\x80",
  };
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    passes(good[i], 0);
    same_as_jansson(good[i], 0);
  }
  static const struct {
    const char *s;
    size_t at;
  } bad[] = {
      {"ab\x80", 2},           /* a lone continuation byte */
      {"\xc0\xaf", 0},         /* overlong '/' */
      {"x\xc1\xbf", 1},        /* overlong */
      {"\xe0\x80\xaf", 0},     /* overlong, 3 bytes */
      {"\xf0\x80\x80\xaf", 0}, /* overlong, 4 bytes */
      {"ok \xed\xa0\x80", 3},  /* U+D800, a surrogate */
      {"\xed\xbf\xbf", 0},     /* U+DFFF */
      {"\xf4\x90\x80\x80", 0}, /* past U+10FFFF */
      {"\xf5\x80\x80\x80", 0}, /* never a lead byte */
      {"\xff", 0},             /* never in UTF-8 */
      {"abc\xe6\x97", 3},      /* truncated */
      {"\xc3\xa9\xc3", 2},     /* truncated after a good one */
      {"\xe6\x97\x41", 0},     /* a lead byte without its continuation */
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    fails(bad[i].s, 0, bad[i].at, "UTF-8");
    same_as_jansson(bad[i].s, 0);
  }
}

static void test_scan_escapes(void **state) {
  (void)state;
  static const char *const good[] = {
      "\\\" \\\\ \\/ \\b \\f \\n \\r \\t",
      "\\u0041\\u00e9\\u20ac\\uffff",
      "\\ud83d\\ude00",                    /* a pair */
      "\\uD83D\\uDE00 and \\udbff\\udfff", /* upper case; the last pair */
      "\\\\ud800",                         /* an escaped backslash, then text */
      "\\\\\\\\ud800",
  };
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    passes(good[i], 0);
    same_as_jansson(good[i], 0);
  }
  static const struct {
    const char *s;
    size_t at;
    const char *why;
  } bad[] = {
      {"a\\u0000", 1, "NUL"},
      {"\\ud800", 0, "surrogate"},                /* a lone high one */
      {"x\\udc00", 1, "surrogate"},               /* a lone low one */
      {"\\ude00\\ud83d", 0, "surrogate"},         /* the wrong order */
      {"\\ud800\\u0041", 0, "surrogate"},         /* high, then no low */
      {"\\ud800\\ud800", 0, "surrogate"},         /* high, then high */
      {"\\ud800x\\udc00", 0, "surrogate"},        /* not adjacent */
      {"\\ud800\\n", 0, "surrogate"},             /* high, then another escape */
      {"\\ud83d\\ude00\\udc00", 12, "surrogate"}, /* a pair, then a lone low */
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    fails(bad[i].s, 0, bad[i].at, bad[i].why);
    same_as_jansson(bad[i].s, 0);
  }
  /* JSON_ALLOW_NUL: \u0000 is a character like any other; surrogates are
   * still paired. */
  passes("a\\u0000b", JSTRICT_ALLOW_NUL);
  same_as_jansson("a\\u0000b", JSTRICT_ALLOW_NUL);
  fails("\\u0000\\udc00", JSTRICT_ALLOW_NUL, 6, "surrogate");
  /* Malformed escapes are yajl's to refuse; the scan lets them be. */
  passes("\\u00zz \\u12", 0);
  passes("\\x", 0);
  passes("tail\\", 0);
}

static void test_scan_controls(void **state) {
  (void)state;
  /* Vertical tab and form feed are white space to yajl, nothing to JSON. */
  fails("[1,\v2]", 0, 3, "vertical tab");
  fails("\f[]", JSTRICT_ALLOW_NUL, 0, "form feed");
  fails("[\"a\vb\"]", 0, 3, "vertical tab");
  assert_false(jansson_takes("[1,\v2]", 6, 0));
  assert_false(jansson_takes("\f[]", 3, 0));
  /* JSON's own white space and other control bytes are yajl's business. */
  passes("[1,\t2,\n3,\r4, 5]", 0);
  passes("\x01\x1f\x7f", 0);
  passes("", 0);
}

/* Every rule at every offset of texts of every length up to 64 bytes, so that
 * each lands in the vector path, across its 16-byte steps, and in the tail. */
static void test_scan_positions(void **state) {
  (void)state;
  static const struct {
    const char *s, *why;
  } bad[] = {{"\v", "vertical"},        {"\f", "form"},     {"\x80", "UTF-8"},
             {"\xed\xa0\x80", "UTF-8"}, {"\\u0000", "NUL"}, {"\\udc00", "surrogate"}};
  char buf[80];
  for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
    size_t bl = strlen(bad[b].s);
    for (size_t len = bl; len <= 64; len++) {
      for (size_t pos = 0; pos + bl <= len; pos++) {
        memset(buf, 'a', len);
        buf[len] = '\0';
        memcpy(buf + pos, bad[b].s, bl);
        size_t at;
        const char *why;
        if (scan(buf, len, 0, &at, &why) == RIPPLE_OK || at != pos)
          fail_msg("%s at %zu of %zu: refused at %zu", bad[b].why, pos, len, at);
        assert_non_null(strstr(why, bad[b].why));
      }
    }
  }
  /* Good special bytes at every offset pass. */
  static const char *const good[] = {"\\\"", "\xc3\xa9", "\xf0\x9f\x98\x80", "\\ud83d\\ude00"};
  for (size_t g = 0; g < sizeof good / sizeof *good; g++) {
    size_t gl = strlen(good[g]);
    for (size_t pos = 0; pos + gl <= 64; pos++) {
      memset(buf, 'a', 64);
      memcpy(buf + pos, good[g], gl);
      size_t at;
      const char *why;
      assert_int_equal(scan(buf, 64, 0, &at, &why), RIPPLE_OK);
    }
  }
}

/* The rules read byte by byte, as plainly as they are stated: the reference
 * for the scan on random text. */
static size_t ref_scan(const unsigned char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    if (s[i] == '\v' || s[i] == '\f') return i;
    if (s[i] >= 0x80) {
      size_t l = utf8_len(s + i, n - i);
      if (!l) return i;
      i += l;
    } else if (s[i] == '\\' && i + 5 < n && s[i + 1] == 'u') {
      unsigned cp, lo;
      char hex[5] = {(char)s[i + 2], (char)s[i + 3], (char)s[i + 4], (char)s[i + 5], 0};
      if (strspn(hex, "0123456789abcdefABCDEF") != 4) {
        i += 2;
        continue;
      }
      cp = (unsigned)strtoul(hex, NULL, 16);
      if (cp == 0) return i;
      int paired = 0;
      if (cp >= 0xd800 && cp <= 0xdbff && i + 11 < n && s[i + 6] == '\\' && s[i + 7] == 'u') {
        memcpy(hex, s + i + 8, 4);
        lo = strspn(hex, "0123456789abcdefABCDEF") == 4 ? (unsigned)strtoul(hex, NULL, 16) : 0;
        paired = lo >= 0xdc00 && lo <= 0xdfff;
      }
      if (!paired && cp >= 0xd800 && cp <= 0xdfff) return i;
      i += paired ? 12 : 6;
    } else {
      i += s[i] == '\\' ? 2 : 1;
    }
  }
  return (size_t)-1;
}

/* splitmix64: seeded, the same on every system. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static void test_scan_random(void **state) {
  (void)state;
  static const char *const pieces[] = {
      "a",       "\"",      "\\\\",    "\\n",          "\\u0041",        "\\ud83d",
      "\\ude00", "\\u0000", "\\u00g0", "\xc3\xa9",     "\xe6\x97",       "\xf0\x9f\x98\x80",
      "\x80",    "\v",      "\\",      "\xed\xa0\x80", "bcdefghijklmnop"};
  const size_t npieces = sizeof pieces / sizeof *pieces;
  const uint64_t seed = 20261124;
  uint64_t rs = seed;
  char buf[512];
  for (int round = 0; round < 20000; round++) {
    size_t n = 0;
    size_t count = next_random(&rs) % 40;
    for (size_t k = 0; k < count; k++) {
      /* Mostly plain text, so that the vector path runs between the rest. */
      const char *p =
          next_random(&rs) % 3 ? pieces[npieces - 1] : pieces[next_random(&rs) % npieces];
      size_t l = strlen(p);
      if (n + l > sizeof buf) break;
      for (size_t c = 0; c < l; c++) buf[n++] = p[c];
    }
    size_t want = ref_scan((const unsigned char *)buf, n), at;
    const char *why;
    scan(buf, n, 0, &at, &why);
    if (at != want)
      fail_msg("seed %" PRIu64 " round %d: scan says %zu, the reference %zu: %.*s", seed, round, at,
               want, (int)n, buf);
  }
}

static void test_trailing(void **state) {
  (void)state;
  size_t at = SENTINEL;
  assert_int_equal(jstrict_trailing("[]", 2, 2, &at), RIPPLE_OK);
  assert_int_equal(jstrict_trailing("[] \t\r\n ", 7, 2, &at), RIPPLE_OK);
  assert_int_equal(at, SENTINEL);
  /* yajl lets an unfinished token after the value pass; jansson did not. */
  assert_int_equal(jstrict_trailing("[] \"", 4, 2, &at), RIPPLE_EJSON);
  assert_int_equal(at, 3);
  assert_int_equal(jstrict_trailing("1 tru", 5, 1, &at), RIPPLE_EJSON);
  assert_int_equal(at, 2);
  /* Only JSON's four white-space bytes: not \v, \f or NUL. */
  assert_int_equal(jstrict_trailing("{}\v", 3, 2, &at), RIPPLE_EJSON);
  assert_int_equal(jstrict_trailing("{}\f", 3, 2, &at), RIPPLE_EJSON);
  assert_int_equal(jstrict_trailing("{} \0", 4, 2, &at), RIPPLE_EJSON);
  assert_int_equal(at, 3);
  assert_false(jansson_takes("[] \"", 4, 0));
  assert_false(jansson_takes("{} \0", 4, 0));
}

static void test_key(void **state) {
  (void)state;
  assert_int_equal(jstrict_key("metadata", 8), RIPPLE_OK);
  assert_int_equal(jstrict_key("", 0), RIPPLE_OK);
  assert_int_equal(jstrict_key("a\0b", 3), RIPPLE_EJSON);
  assert_int_equal(jstrict_key("\0", 1), RIPPLE_EJSON);
  /* jansson refuses such a key even where it allows NUL in strings. */
  static const char nul_key[] = "{\"a\\u0000b\":1}", nul_value[] = "{\"a\":\"\\u0000\"}";
  assert_false(jansson_takes(nul_key, strlen(nul_key), JSTRICT_ALLOW_NUL));
  assert_true(jansson_takes(nul_value, strlen(nul_value), JSTRICT_ALLOW_NUL));
}

static int num(const char *s, jstrict_num_t *out) {
  memset(out, 0, sizeof *out);
  return jstrict_number(s, strlen(s), out);
}

static void test_integers(void **state) {
  (void)state;
  static const struct {
    const char *s;
    int64_t v;
  } good[] = {{"0", 0},
              {"-0", 0},
              {"7", 7},
              {"-42", -42},
              {"1000000000000000000", 1000000000000000000},
              {"9223372036854775807", INT64_MAX},
              {"-9223372036854775807", -INT64_MAX},
              {"-9223372036854775808", INT64_MIN}};
  jstrict_num_t n;
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    assert_int_equal(num(good[i].s, &n), RIPPLE_OK);
    assert_int_equal(n.real, 0);
    assert_true(n.i == good[i].v);
    assert_true(jansson_takes(good[i].s, strlen(good[i].s), 0));
  }
  static const char *const bad[] = {"9223372036854775808",   "-9223372036854775809",
                                    "9999999999999999999",   "10000000000000000000",
                                    "18446744073709551616", /* 2^64: wraps to 0 */
                                    "-18446744073709551617", "123456789012345678901234567890"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    assert_int_equal(num(bad[i], &n), RIPPLE_EJSON);
    assert_false(jansson_takes(bad[i], strlen(bad[i]), 0));
  }
}

static void test_reals(void **state) {
  (void)state;
  jstrict_num_t n;
  static const struct {
    const char *s;
    double v;
  } good[] = {
      {"1.5", 1.5},     {"-0.25", -0.25},
      {"1e3", 1000.0},  {"1E3", 1000.0},
      {"2e-3", 0.002},  {"-1.0E+2", -100.0},
      {"1e308", 1e308}, {"1e-400", 0.0}, /* underflow is not an error */
      {"0.0", 0.0},     {"123456789012345678901234567890.0", 123456789012345678901234567890.0}};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    assert_int_equal(num(good[i].s, &n), RIPPLE_OK);
    assert_int_equal(n.real, 1);
    assert_true(n.d == good[i].v);
    assert_true(jansson_takes(good[i].s, strlen(good[i].s), 0));
  }
  static const char *const bad[] = {"1e309", "-1e309", "1.8e308", "1e99999"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    assert_int_equal(num(bad[i], &n), RIPPLE_EJSON);
    assert_false(jansson_takes(bad[i], strlen(bad[i]), 0));
  }
  /* Longer than the conversion's stack buffer. */
  char big[512] = "0.";
  memset(big + 2, '1', 300);
  assert_int_equal(num(big, &n), RIPPLE_OK);
  assert_true(n.d > 0.111 && n.d < 0.112);
  memset(big, '9', 400);
  memcpy(big + 400, ".5", 3);
  assert_int_equal(num(big, &n), RIPPLE_EJSON);
  assert_false(jansson_takes(big, strlen(big), 0));
}

/* The conversion does not follow LC_NUMERIC (when the system has a locale
 * whose decimal point is a comma). */
static void test_reals_locale(void **state) {
  (void)state;
  static const char *const commas[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
  const char *set = NULL;
  for (size_t i = 0; i < sizeof commas / sizeof *commas && !set; i++)
    set = setlocale(LC_NUMERIC, commas[i]);
  if (!set) skip();
  jstrict_num_t n;
  int rc = num("1.5", &n);
  setlocale(LC_NUMERIC, "C");
  assert_int_equal(rc, RIPPLE_OK);
  assert_true(n.d == 1.5);
}

/* A value inside JSTRICT_MAX_DEPTH containers is refused: jansson's limit,
 * scalars counted. */
static void test_depth(void **state) {
  (void)state;
  const size_t d = JSTRICT_MAX_DEPTH;
  char *s = malloc(2 * d + 2);
  assert_non_null(s);
  memset(s, '[', d);
  memset(s + d, ']', d);
  assert_true(jansson_takes(s, 2 * d, 0)); /* d containers, the innermost empty */
  s[d - 1] = '1';                          /* a scalar inside d - 1 */
  assert_true(jansson_takes(s, 2 * d - 1, 0));
  memset(s, '[', d);
  s[d] = '1';
  memset(s + d + 1, ']', d);
  assert_false(jansson_takes(s, 2 * d + 1, 0)); /* a scalar inside d */
  free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scan_utf8),     cmocka_unit_test(test_scan_escapes),
      cmocka_unit_test(test_scan_controls), cmocka_unit_test(test_scan_positions),
      cmocka_unit_test(test_scan_random),   cmocka_unit_test(test_trailing),
      cmocka_unit_test(test_key),           cmocka_unit_test(test_integers),
      cmocka_unit_test(test_reals),         cmocka_unit_test(test_reals_locale),
      cmocka_unit_test(test_depth),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
