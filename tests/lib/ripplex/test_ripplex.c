/*
 * test_ripplex.c - the shared internal layer (lib/ripplex): YAML as JSON,
 * command-line values, the Prometheus text writer, the JSON string escaper
 * and strict UTF-8.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripplex/opt.h"
#include "ripplex/prom.h"
#include "ripplex/sbuf.h"
#include "ripplex/utf8.h"
#include "ripplex/yjson.h"
#include "testutil.h"

static json_t *yaml(const char *text) {
  json_t *docs = NULL;
  char err[256] = "";
  int rc = yjson_parse(text, strlen(text), &docs, err, sizeof err);
  if (rc != RIPPLE_OK) fprintf(stderr, "yaml: %s\n", err);
  return docs;
}

static void test_yjson_types(void **state) {
  (void)state;
  json_t *d = yaml(
      "a: 100\nb: \"100\"\nc: 1.5\nd: true\ne: ~\nf: web\ng: -3\nh: 1e3\n"
      "i: [x, 2]\nj: ''\nk: 0x10\nl: False\n");
  assert_non_null(d);
  json_t *o = json_array_get(d, 0);
  assert_true(json_is_integer(json_object_get(o, "a")));
  assert_int_equal(json_integer_value(json_object_get(o, "a")), 100);
  assert_string_equal(json_string_value(json_object_get(o, "b")), "100"); /* quoted: text */
  assert_true(json_is_real(json_object_get(o, "c")));
  assert_true(json_is_true(json_object_get(o, "d")));
  assert_true(json_is_null(json_object_get(o, "e")));
  assert_string_equal(json_string_value(json_object_get(o, "f")), "web");
  assert_int_equal(json_integer_value(json_object_get(o, "g")), -3);
  assert_true(json_is_real(json_object_get(o, "h")));
  assert_int_equal(json_array_size(json_object_get(o, "i")), 2);
  assert_string_equal(json_string_value(json_object_get(o, "j")), "");
  assert_string_equal(json_string_value(json_object_get(o, "k")), "0x10"); /* YAML 1.1 only */
  assert_true(json_is_false(json_object_get(o, "l")));
  json_decref(d);
}

static void test_yjson_documents_and_errors(void **state) {
  (void)state;
  json_t *d = yaml("---\nkind: A\n---\n---\nkind: B\n...\n");
  assert_int_equal(json_array_size(d), 2); /* the empty document is skipped */
  json_decref(d);
  json_t *out = NULL;
  char err[256] = "";
  const char *bad = "a: [1, 2\nb: c\n";
  assert_int_equal(yjson_parse(bad, strlen(bad), &out, err, sizeof err), RIPPLE_EINVAL);
  assert_null(out);
  assert_non_null(strstr(err, "line"));
  /* Aliases that expand exponentially are refused, not expanded. */
  char bomb[4096] = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  size_t blen = strlen(bomb);
  for (int c = 'b'; c <= 'i'; c++) {
    int p = c - 1;
    blen += (size_t)snprintf(bomb + blen, sizeof bomb - blen,
                             "%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", c, c,
                             p, p, p, p, p, p, p, p, p, p);
  }
  assert_int_equal(yjson_parse(bomb, strlen(bomb), &out, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "expands"));
  /* A non-scalar key is an error, not a crash. */
  const char *cplx = "? [a, b]\n: c\n";
  assert_int_equal(yjson_parse(cplx, strlen(cplx), &out, err, sizeof err), RIPPLE_EINVAL);
}

static void test_opt_values(void **state) {
  (void)state;
  char host[16];
  uint16_t port = 1;
  assert_int_equal(opt_listen("127.0.0.1:8443", host, sizeof host, &port), RIPPLE_OK);
  assert_string_equal(host, "127.0.0.1");
  assert_int_equal(port, 8443);
  assert_int_equal(opt_listen("0.0.0.0:0", host, sizeof host, &port), RIPPLE_OK);
  assert_int_equal(port, 0);
  const char *bad[] = {"127.0.0.1",    "127.0.0.1:",    "127.0.0.1:65536",
                       "127.0.0.1:-1", "127.0.0.1:80x", "a-host-name-too-long-for-the-buffer:80"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    port = 7;
    assert_int_equal(opt_listen(bad[i], host, sizeof host, &port), RIPPLE_EINVAL);
    assert_int_equal(port, 7); /* untouched */
  }
  unsigned long n = 0;
  assert_int_equal(opt_ulong("32", 0, 32, &n), RIPPLE_OK);
  assert_int_equal(n, 32);
  assert_int_equal(opt_ulong("33", 0, 32, &n), RIPPLE_EINVAL);
  assert_int_equal(opt_ulong("3", 4, 32, &n), RIPPLE_EINVAL);
  assert_int_equal(opt_ulong("-1", 0, 32, &n), RIPPLE_EINVAL);
  assert_int_equal(opt_ulong("", 0, 32, &n), RIPPLE_EINVAL);
  assert_int_equal(opt_ulong("99999999999999999999999", 0, ~0ul, &n), RIPPLE_EINVAL);
  size_t z = 0;
  assert_int_equal(opt_size("16777216", &z), RIPPLE_OK);
  assert_int_equal(z, 16777216);
  assert_int_equal(opt_size("1k", &z), RIPPLE_EINVAL);
  int64_t ns = 0;
  assert_int_equal(opt_duration("7d", &ns), RIPPLE_OK);
  assert_int_equal(ns, 7 * 86400 * 1000000000LL);
  assert_int_equal(opt_duration("0s", &ns), RIPPLE_EINVAL); /* above zero */
  assert_int_equal(opt_duration("soon", &ns), RIPPLE_EINVAL);
}

static void test_opt_file(void **state) {
  (void)state;
  char dir[] = "/tmp/ripplex-test-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const char *p = test_path(dir, "cert.pem");
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs("PEM\n", f);
  fclose(f);
  char *text = NULL;
  assert_int_equal(opt_file("test", p, &text), RIPPLE_OK);
  assert_string_equal(text, "PEM\n");
  free(text);
  text = NULL;
  assert_int_equal(opt_file("test", test_path(dir, "absent.pem"), &text), RIPPLE_ESYS);
  assert_null(text);
  test_rmtree(dir);
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* The first line, trimmed (white space, CR); an empty first line, a token
 * shorter than OPT_TOKEN_MIN or no file is an error. */
static void test_opt_token_file(void **state) {
  (void)state;
  char dir[] = "/tmp/ripplex-test-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const char *p = test_path(dir, "token");
#define TOK "s3cret-0123456789"
  static const char *const good[] = {TOK, TOK "\n", "  " TOK " \t\r\nsecond line\n", "\t" TOK,
                                     TOK "\r\n"};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    put(p, good[i]);
    char *tok = NULL;
    assert_int_equal(opt_token_file("test", "--token-file", p, &tok), RIPPLE_OK);
    assert_string_equal(tok, TOK);
    free(tok);
  }
  /* The token on a second line, after a blank one, is not read either. */
  static const char blank_first[] = " \n" TOK "\n";
  static const char *const empty[] = {"", "\n", "   \r\n", blank_first,
                                      /* 15 characters: too short to be a secret */
                                      "s3cret-01234567\n", "  s3cret \r\n"};
  for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
    put(p, empty[i]);
    char *tok = NULL;
    assert_int_equal(opt_token_file("test", "--token-file", p, &tok), RIPPLE_EINVAL);
    assert_null(tok);
  }
  char *tok = NULL;
  assert_int_equal(opt_token_file("test", "--token-file", test_path(dir, "absent"), &tok),
                   RIPPLE_ESYS);
  assert_null(tok);
  /* A CA file must hold a PEM certificate. */
  put(p, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
  assert_int_equal(opt_ca_file("test", "--ca", p), RIPPLE_OK);
  put(p, "s3cret\n");
  assert_int_equal(opt_ca_file("test", "--ca", p), RIPPLE_EINVAL);
  assert_int_equal(opt_ca_file("test", "--ca", test_path(dir, "absent")), RIPPLE_EINVAL);
  test_rmtree(dir);
}

typedef struct seen {
  char names[8][32], values[8][32];
  int n;
} seen_t;

static int take(void *ud, const char *name, const char *value) {
  seen_t *s = ud;
  if (!strcmp(name, "--bad")) return RIPPLE_EINVAL;
  if (strcmp(name, "--listen") != 0 && strcmp(name, "--flag") != 0) return RIPPLE_ENOENT;
  snprintf(s->names[s->n], sizeof s->names[0], "%s", name);
  snprintf(s->values[s->n], sizeof s->values[0], "%s", value ? value : "(none)");
  s->n++;
  return RIPPLE_OK;
}

static void no_usage(FILE *f) { (void)f; }

static int parse(seen_t *s, int argc, char **argv, int *status) {
  static const char *const flags[] = {"--flag", NULL};
  memset(s, 0, sizeof *s);
  opt_cli_t c = {.prog = "test", .flags = flags, .option = take, .usage = no_usage, .ud = s};
  return opt_parse(argc, argv, &c, status);
}

static void test_opt_parse(void **state) {
  (void)state;
  seen_t s;
  int status = -1;
  char *ok[] = {"prog", "--listen", "127.0.0.1:1", "--flag", "--listen", "x:2"};
  assert_int_equal(parse(&s, 6, ok, &status), RIPPLE_OK);
  assert_int_equal(s.n, 3);
  assert_string_equal(s.values[0], "127.0.0.1:1");
  assert_string_equal(s.values[1], "(none)"); /* a flag takes no value */
  assert_string_equal(s.values[2], "x:2");
  char *help[] = {"prog", "--listen", "a:1", "--help"};
  assert_int_equal(parse(&s, 4, help, &status), RIPPLE_ESTATE);
  assert_int_equal(status, 0);
  char *unknown[] = {"prog", "--what", "x"};
  assert_int_equal(parse(&s, 3, unknown, &status), RIPPLE_ESTATE);
  assert_int_equal(status, 2);
  char *missing[] = {"prog", "--listen"};
  assert_int_equal(parse(&s, 2, missing, &status), RIPPLE_ESTATE);
  assert_int_equal(status, 2);
  assert_int_equal(s.n, 0);
  char *bad[] = {"prog", "--bad", "1"};
  assert_int_equal(parse(&s, 3, bad, &status), RIPPLE_ESTATE);
  assert_int_equal(status, 2);
  /* --name=value, as manifests write flags; "=" inside a value stays. */
  char *eq[] = {"prog", "--listen=127.0.0.1:3", "--flag", "--listen", "a=b:4", "--listen="};
  assert_int_equal(parse(&s, 6, eq, &status), RIPPLE_OK);
  assert_int_equal(s.n, 4);
  assert_string_equal(s.names[0], "--listen");
  assert_string_equal(s.values[0], "127.0.0.1:3");
  assert_string_equal(s.values[2], "a=b:4");
  assert_string_equal(s.values[3], ""); /* an empty value is the option's to judge */
  char *flag_value[] = {"prog", "--flag=1"};
  assert_int_equal(parse(&s, 2, flag_value, &status), RIPPLE_ESTATE);
  assert_int_equal(status, 2);
  assert_int_equal(s.n, 0);
  char *unknown_eq[] = {"prog", "--what=x"};
  assert_int_equal(parse(&s, 2, unknown_eq, &status), RIPPLE_ESTATE);
  assert_int_equal(status, 2);
}

static char *take_text(sbuf_t *b) {
  char *out = NULL;
  assert_int_equal(sbuf_take(b, &out, NULL), RIPPLE_OK);
  return out;
}

static void test_prom(void **state) {
  (void)state;
  sbuf_t b;
  sbuf_init(&b);
  prom_counter(&b, "x_total", "Things.", 18446744073709551615ull);
  prom_gauge(&b, "g", "A gauge.", 0.123);
  prom_gauge(&b, "bytes", "Big.", 4294967296.0);
  prom_family(&b, "l", "gauge", "Labelled.");
  sbuf_puts(&b, "l{v=\"");
  prom_label_value(&b, "a\"b\\c\nd");
  sbuf_puts(&b, "\"} 1\n");
  char *t = take_text(&b);
  assert_string_equal(t,
                      "# HELP x_total Things.\n# TYPE x_total counter\nx_total "
                      "18446744073709551615\n"
                      "# HELP g A gauge.\n# TYPE g gauge\ng 0.123\n"
                      "# HELP bytes Big.\n# TYPE bytes gauge\nbytes 4294967296\n"
                      "# HELP l Labelled.\n# TYPE l gauge\nl{v=\"a\\\"b\\\\c\\nd\"} 1\n");
  free(t);

  static const double bounds[] = {0.001, 0.01};
  uint64_t counts[3] = {0};
  double values[] = {0.0005, 0.001, 0.005, 2};
  for (size_t i = 0; i < 4; i++) counts[prom_bucket(bounds, 2, values[i])]++;
  assert_int_equal(counts[0], 2); /* a value equal to a bound is in its bucket */
  assert_int_equal(counts[1], 1);
  assert_int_equal(counts[2], 1);
  prom_histogram(
      &b, "h", "route=\"q\"",
      &(prom_hist_t){.bounds = bounds, .nbounds = 2, .counts = counts, .sum = 2.0065, .count = 4});
  prom_histogram(
      &b, "u", NULL,
      &(prom_hist_t){.bounds = bounds, .nbounds = 2, .counts = counts, .sum = 0, .count = 4});
  t = take_text(&b);
  assert_string_equal(t,
                      "h_bucket{route=\"q\",le=\"0.001\"} 2\n"
                      "h_bucket{route=\"q\",le=\"0.01\"} 3\n"
                      "h_bucket{route=\"q\",le=\"+Inf\"} 4\n"
                      "h_sum{route=\"q\"} 2.006500000\n"
                      "h_count{route=\"q\"} 4\n"
                      "u_bucket{le=\"0.001\"} 2\nu_bucket{le=\"0.01\"} 3\nu_bucket{le=\"+Inf\"} 4\n"
                      "u_sum 0.000000000\nu_count 4\n");
  free(t);
}

static void test_json_escaper(void **state) {
  (void)state;
  sbuf_t b;
  sbuf_init(&b);
  sbuf_json_strn(&b, "a\"\\\n\t\x01\xc3\xa9\xff\xed\xa0\x80z", 13);
  char *t = take_text(&b);
  /* Control bytes escaped, valid UTF-8 kept, invalid bytes (a lone 0xff, an
   * encoded surrogate) each become U+FFFD. */
  assert_string_equal(t, "\"a\\\"\\\\\\n\\t\\u0001\xc3\xa9\\ufffd\\ufffd\\ufffd\\ufffdz\"");
  json_error_t e;
  json_t *v = json_loads(t, JSON_DECODE_ANY, &e);
  assert_non_null(v); /* always valid JSON */
  json_decref(v);
  free(t);
  const unsigned char ok4[] = {0xf0, 0x9f, 0x98, 0x80}, over[] = {0xc0, 0x80},
                      big[] = {0xf4, 0x90, 0x80, 0x80};
  assert_int_equal(utf8_len(ok4, 4), 4);
  assert_int_equal(utf8_len(ok4, 3), 0); /* truncated */
  assert_int_equal(utf8_len(over, 2), 0);
  assert_int_equal(utf8_len(big, 4), 0); /* past U+10FFFF */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_yjson_types),    cmocka_unit_test(test_yjson_documents_and_errors),
      cmocka_unit_test(test_opt_values),     cmocka_unit_test(test_opt_file),
      cmocka_unit_test(test_opt_token_file), cmocka_unit_test(test_opt_parse),
      cmocka_unit_test(test_prom),           cmocka_unit_test(test_json_escaper),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
