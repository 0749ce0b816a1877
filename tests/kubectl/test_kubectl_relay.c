/*
 * test_kubectl_relay.c - the pure parts of `kubectl ripple dashboard`
 * (kubectl/relay.c): the secret prefix, the Host and Sec-Fetch-Site checks,
 * the path mapping under the prefix, the query's encoding and the answers'
 * Content-Types; and the command line of `dashboard`. No server, no network.
 */
#include <stdio.h>
#include <string.h>

#include "kr.h"
#include "testutil.h"

#define SECRET "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde"

static void test_secret(void **state) {
  (void)state;
  char a[KR_RELAY_SECRET_LEN + 1], b[KR_RELAY_SECRET_LEN + 1];
  assert_int_equal(kr_relay_secret(a), RIPPLE_OK);
  assert_int_equal(kr_relay_secret(b), RIPPLE_OK);
  assert_int_equal(strlen(a), KR_RELAY_SECRET_LEN);
  assert_int_equal(strspn(a,
                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                          "0123456789-_"),
                   KR_RELAY_SECRET_LEN);
  assert_string_not_equal(a, b);
  /* 32 bytes: the last character carries 4 bits, its low 2 are zero. */
  assert_non_null(strchr("AEIMQUYcgkosw048", a[KR_RELAY_SECRET_LEN - 1]));
  assert_int_equal(strlen(SECRET), KR_RELAY_SECRET_LEN);
}

static void test_host(void **state) {
  (void)state;
  assert_true(kr_relay_host_ok("127.0.0.1:8123", 8123));
  assert_true(kr_relay_host_ok("localhost:8123", 8123));
  assert_true(kr_relay_host_ok("LOCALHOST:8123", 8123));
  assert_true(kr_relay_host_ok("127.0.0.1", 80));
  static const char *const bad[] = {
      NULL,
      "",
      "127.0.0.1",            /* the port left out: 80 only */
      "127.0.0.1:8124",       /* another port */
      "127.0.0.1:08123x",     /* not a number */
      "127.0.0.1:",           /* no port */
      "127.0.0.1:0000008123", /* too long */
      "evil.example:8123",    /* DNS rebinding: the attacker's name */
      "127.0.0.1.evil.example:8123",
      "localhost.evil.example:8123",
      "127.0.0.2:8123",
      "[::1]:8123",
      "0.0.0.0:8123",
      " 127.0.0.1:8123",
      "127.0.0.1:8123 ",
      "127.0.0.1:8123:8123",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (kr_relay_host_ok(bad[i], 8123)) fail_msg("Host \"%s\" was let in", bad[i] ? bad[i] : "");
}

static void test_fetch_site(void **state) {
  (void)state;
  assert_true(kr_relay_fetch_ok(NULL, NULL, NULL));
  assert_true(kr_relay_fetch_ok("same-origin", "cors", "empty"));
  assert_true(kr_relay_fetch_ok("none", "navigate", "document"));
  /* Another port of 127.0.0.1, another site: their fetches, scripts, frames. */
  assert_false(kr_relay_fetch_ok("same-site", "cors", "empty"));
  assert_false(kr_relay_fetch_ok("cross-site", "no-cors", "script"));
  assert_false(kr_relay_fetch_ok("cross-site", "navigate", "iframe"));
  assert_false(kr_relay_fetch_ok("cross-site", NULL, NULL));
  assert_false(kr_relay_fetch_ok("", NULL, NULL));
  /* A top-level navigation from anywhere (the page the relay opens is a file). */
  assert_true(kr_relay_fetch_ok("cross-site", "navigate", "document"));
  assert_true(kr_relay_fetch_ok("same-site", "navigate", "document"));
}

static void test_map(void **state) {
  (void)state;
  static const char *const good[][2] = {
      {"/" SECRET "/", "/"},
      {"/" SECRET "/index.html", "/index.html"},
      {"/" SECRET "/assets/app-ABC123.js", "/assets/app-ABC123.js"},
      {"/" SECRET "/v1/cpids/3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60/trace",
       "/v1/cpids/3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60/trace"},
      {"/" SECRET "/v1/roots", "/v1/roots"},
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    char out[KR_RELAY_PATH_MAX + 1] = "";
    if (kr_relay_map(SECRET, good[i][0], out, sizeof out) != KR_RELAY_OK)
      fail_msg("%s was not relayed", good[i][0]);
    assert_string_equal(out, good[i][1]);
  }
  char out[KR_RELAY_PATH_MAX + 1];
  assert_int_equal(kr_relay_map(SECRET, "/" SECRET, out, sizeof out), KR_RELAY_REDIRECT);
  static const char *const bad[] = {
      "/",
      "/index.html",
      "/v1/roots", /* no prefix */
      "",
      SECRET "/",
      "/" SECRET "x/",                                 /* the secret and more */
      "/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcdf/", /* one character off */
      "/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcd/",  /* one short */
      "//" SECRET "/",
      "/" SECRET "//v1/roots",
      "/" SECRET "/../v1/roots",
      "/" SECRET "/assets/../../etc/passwd",
      "/" SECRET "/metrics", /* not the dashboard's */
      "/" SECRET "/healthz",
      "/" SECRET "/v1",
      "/" SECRET "/v1/roots?x", /* the query is not in the path */
      "/" SECRET "/v1/cpids/a b/trace",
      "/" SECRET "/v1/cpids/a%2Fb/trace",
      "/" SECRET "/assets/\x01",
      "/" SECRET "/assets/\xc3\xa9",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (kr_relay_map(SECRET, bad[i], out, sizeof out) != KR_RELAY_NOT_FOUND)
      fail_msg("\"%s\" was relayed", bad[i]);
  /* Too long, and too long for the caller's buffer. */
  char longp[KR_RELAY_PATH_MAX + 64];
  int n = snprintf(longp, sizeof longp, "/%s/v1/", SECRET);
  memset(longp + n, 'a', sizeof longp - (size_t)n - 1);
  longp[sizeof longp - 1] = '\0';
  assert_int_equal(kr_relay_map(SECRET, longp, out, sizeof out), KR_RELAY_NOT_FOUND);
  char small[8];
  assert_int_equal(kr_relay_map(SECRET, "/" SECRET "/v1/roots", small, sizeof small),
                   KR_RELAY_NOT_FOUND);
  assert_int_equal(kr_relay_map(SECRET, NULL, out, sizeof out), KR_RELAY_NOT_FOUND);
}

static void test_query(void **state) {
  (void)state;
  char q[64] = "/v1/roots";
  assert_int_equal(kr_relay_query_add(q, sizeof q, "kind", "Deployment"), RIPPLE_OK);
  assert_int_equal(kr_relay_query_add(q, sizeof q, "name", "a b&c=d/é"), RIPPLE_OK);
  assert_int_equal(kr_relay_query_add(q, sizeof q, "flag", NULL), RIPPLE_OK);
  assert_string_equal(q, "/v1/roots?kind=Deployment&name=a%20b%26c%3Dd%2F%C3%A9&flag");
  assert_int_equal(kr_relay_query_add(q, sizeof q, "", "x"), RIPPLE_EINVAL);
  char small[16] = "/v1/roots";
  assert_int_equal(kr_relay_query_add(small, sizeof small, "limit", "100"), RIPPLE_EINVAL);
  assert_string_equal(small, "/v1/roots"); /* nothing of it left */
  assert_int_equal(kr_relay_query_add(small, sizeof small, "a", "1"), RIPPLE_OK);
  assert_string_equal(small, "/v1/roots?a=1");
}

static void test_types(void **state) {
  (void)state;
  assert_string_equal(kr_relay_type("/", 200), "text/html; charset=utf-8");
  assert_string_equal(kr_relay_type("/index.html", 200), "text/html; charset=utf-8");
  assert_string_equal(kr_relay_type("/assets/app-X.js", 200), "text/javascript; charset=utf-8");
  assert_string_equal(kr_relay_type("/assets/app-X.css", 200), "text/css; charset=utf-8");
  assert_string_equal(kr_relay_type("/assets/app-X.js.map", 200), "application/json");
  assert_string_equal(kr_relay_type("/assets/x.woff2", 200), "font/woff2");
  assert_string_equal(kr_relay_type("/assets/noext", 200), "application/octet-stream");
  assert_string_equal(kr_relay_type("/assets/.x/y", 200), "application/octet-stream");
  /* The API is JSON, its errors too (the server's, and the API server's Status). */
  assert_string_equal(kr_relay_type("/v1/roots", 200), "application/json");
  assert_string_equal(kr_relay_type("/v1/roots", 503), "application/json");
  /* A missing file is never served as script or a page. */
  assert_string_equal(kr_relay_type("/assets/app-X.js", 404), "text/plain; charset=utf-8");
  assert_string_equal(kr_relay_type("/", 503), "text/plain; charset=utf-8");
}

static void test_args(void **state) {
  (void)state;
  kr_args_t a;
  char err[256];
  char *v1[] = {"kubectl-ripple", "dashboard", NULL};
  assert_int_equal(kr_args_parse(2, v1, &a, err, sizeof err), RIPPLE_OK);
  assert_int_equal(a.cmd, KR_CMD_DASHBOARD);
  assert_null(a.cpid);
  assert_int_equal(a.port, -1);
  assert_false(a.no_browser);
  char *v2[] = {"kubectl-ripple",
                "dashboard",
                "--port=8123",
                "--no-browser",
                "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60",
                "--server",
                "http://127.0.0.1:1",
                NULL};
  assert_int_equal(kr_args_parse(7, v2, &a, err, sizeof err), RIPPLE_OK);
  assert_int_equal(a.port, 8123);
  assert_true(a.no_browser);
  assert_string_equal(a.cpid, "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60");
  assert_string_equal(a.server, "http://127.0.0.1:1");
  char *v3[] = {"kubectl-ripple", "dashboard", "--port", "65536", NULL};
  assert_int_equal(kr_args_parse(4, v3, &a, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "--port"));
  char *v4[] = {"kubectl-ripple", "dashboard", "a", "b", NULL};
  assert_int_equal(kr_args_parse(4, v4, &a, err, sizeof err), RIPPLE_EINVAL);
  char *v5[] = {"kubectl-ripple", "trace", "x", "--no-browser", NULL};
  assert_int_equal(kr_args_parse(4, v5, &a, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "dashboard"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_secret),     cmocka_unit_test(test_host),
      cmocka_unit_test(test_fetch_site), cmocka_unit_test(test_map),
      cmocka_unit_test(test_query),      cmocka_unit_test(test_types),
      cmocka_unit_test(test_args),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
