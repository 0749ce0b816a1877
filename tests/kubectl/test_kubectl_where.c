/*
 * test_kubectl_where.c - where kubectl-ripple finds the trace server, without
 * a cluster: --server-service and $RIPPLE_SERVER_SERVICE (good and bad
 * names), the order of the flags and variables, the service proxy's path on
 * the API server, and the dashboard's link through it. A client is made
 * from a kubeconfig naming an API server where nothing listens: with
 * $RIPPLE_READER_TOKEN set it is never asked anything (no Secret is read);
 * without, the error says it cannot be reached.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kr.h"
#include "testutil.h"

static void test_service_parse_good(void **state) {
  (void)state;
  static const char *const t[][4] = {
      {"ripple-system/ripple-server", "ripple-system", "ripple-server", "https"},
      {"ripple-system/ripple-server:http", "ripple-system", "ripple-server", "http"},
      {"a/b:8080", "a", "b", "8080"},
      {"0ns/svc-2:metrics-2", "0ns", "svc-2", "metrics-2"},
      {"ns/s:65535", "ns", "s", "65535"},
      {"ns/s:1", "ns", "s", "1"},
      {"ns/s:abcdefghijklmno", "ns", "s", "abcdefghijklmno"}, /* 15, the most */
      {"ns/s:7a", "ns", "s", "7a"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    kr_where_t w = {.url = "x", .from = "kept"};
    char err[256] = "";
    if (kr_service_parse(t[i][0], &w, err, sizeof err) != RIPPLE_OK)
      fail_msg("\"%s\": %s", t[i][0], err);
    assert_null(w.url);
    assert_string_equal(w.ns, t[i][1]);
    assert_string_equal(w.name, t[i][2]);
    assert_string_equal(w.port, t[i][3]);
    assert_string_equal(w.from, "kept");
  }
  /* The longest names Kubernetes allows: 63 characters. */
  char spec[160], l63[64];
  memset(l63, 'a', 63);
  l63[63] = '\0';
  snprintf(spec, sizeof spec, "%s/%s", l63, l63);
  kr_where_t w;
  char err[256];
  assert_int_equal(kr_service_parse(spec, &w, err, sizeof err), RIPPLE_OK);
  assert_string_equal(w.ns, l63);
  assert_string_equal(w.name, l63);
}

static void test_service_parse_bad(void **state) {
  (void)state;
  static const char *const t[][2] = {
      {"", "is not NAMESPACE/SERVICE[:PORT]"},
      {"ripple-server", "is not NAMESPACE/SERVICE[:PORT]"},
      {"/svc", "namespace"},
      {"NS/svc", "namespace"},
      {"-ns/svc", "namespace"},
      {"ns-/svc", "namespace"},
      {"n.s/svc", "namespace"},
      {"ns/", "service name"},
      {"ns/1svc", "service name"},
      {"ns/Svc", "service name"},
      {"ns/svc-", "service name"},
      {"ns/svc/x", "service name"},
      {"ns/svc:", "port"},
      {"ns/svc:0", "port"},
      {"ns/svc:65536", "port"},
      {"ns/svc:007480000", "port"},
      {"ns/svc:-http", "port"},
      {"ns/svc:http-", "port"},
      {"ns/svc:a--b", "port"},
      {"ns/svc:HTTP", "port"},
      {"ns/svc:abcdefghijklmnop", "port"}, /* 16 */
      {"ns/svc:http:x", "port"},
      {"ns/svc:ht tp", "port"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    kr_where_t w;
    char err[256] = "";
    assert_int_equal(kr_service_parse(t[i][0], &w, err, sizeof err), RIPPLE_EINVAL);
    if (!strstr(err, t[i][1])) fail_msg("\"%s\": \"%s\" does not say %s", t[i][0], err, t[i][1]);
  }
  char spec[160], l64[65];
  memset(l64, 'a', 64);
  l64[64] = '\0';
  snprintf(spec, sizeof spec, "%s/svc", l64);
  kr_where_t w;
  char err[256];
  assert_int_equal(kr_service_parse(spec, &w, err, sizeof err), RIPPLE_EINVAL);
  snprintf(spec, sizeof spec, "ns/%s", l64);
  assert_int_equal(kr_service_parse(spec, &w, err, sizeof err), RIPPLE_EINVAL);
}

static int parse(kr_args_t *a, char *err, size_t cap, ...) {
  char *argv[32] = {"kubectl-ripple"};
  int argc = 1;
  va_list ap;
  va_start(ap, cap);
  for (char *s; (s = va_arg(ap, char *)) && argc < 31;) argv[argc++] = s;
  va_end(ap);
  return kr_args_parse(argc, argv, a, err, cap);
}

#define C "11111111-1111-4111-8111-111111111111"

static void test_flag(void **state) {
  (void)state;
  kr_args_t a;
  char err[256] = "";
  assert_int_equal(
      parse(&a, err, sizeof err, "trace", C, "--server-service", "t/s:9", (char *)NULL), RIPPLE_OK);
  assert_string_equal(a.server_service, "t/s:9");
  assert_int_equal(parse(&a, err, sizeof err, "trace", C, "--server-service=t/s", (char *)NULL),
                   RIPPLE_OK);
  assert_string_equal(a.server_service, "t/s");
  assert_int_equal(parse(&a, err, sizeof err, "trace", C, "--server-service", "t/S", (char *)NULL),
                   RIPPLE_EINVAL);
  assert_non_null(strstr(err, "--server-service"));
  assert_non_null(strstr(err, "service name"));
  assert_int_equal(parse(&a, err, sizeof err, "trace", C, "--server-service", (char *)NULL),
                   RIPPLE_EINVAL);
  assert_non_null(strstr(err, "needs a value"));
}

/* kr_where_pick for this command line, with these variables (NULL: unset). */
static int pick(kr_where_t *w, char *err, size_t cap, const char *url_env, const char *svc_env,
                const char *flag1, const char *flag2) {
  kr_args_t a;
  char perr[256];
  assert_int_equal(parse(&a, perr, sizeof perr, "trace", C, flag1, flag2, (char *)NULL), RIPPLE_OK);
  if (url_env) setenv("RIPPLE_SERVER", url_env, 1);
  if (svc_env) setenv("RIPPLE_SERVER_SERVICE", svc_env, 1);
  int rc = kr_where_pick(&a, w, err, cap);
  unsetenv("RIPPLE_SERVER");
  unsetenv("RIPPLE_SERVER_SERVICE");
  return rc;
}

static void test_pick_order(void **state) {
  (void)state;
  unsetenv("RIPPLE_SERVER");
  unsetenv("RIPPLE_SERVER_SERVICE");
  kr_where_t w;
  char err[256] = "";
  /* Nothing given: the install's Service, through the API server. */
  assert_int_equal(pick(&w, err, sizeof err, NULL, NULL, NULL, NULL), RIPPLE_OK);
  assert_null(w.url);
  assert_string_equal(w.ns, "ripple-system");
  assert_string_equal(w.name, "ripple-server");
  assert_string_equal(w.port, "https");
  assert_string_equal(w.from, "the default");
  /* An empty variable is no variable. */
  assert_int_equal(pick(&w, err, sizeof err, "", "", NULL, NULL), RIPPLE_OK);
  assert_string_equal(w.from, "the default");
  assert_int_equal(pick(&w, err, sizeof err, NULL, "e/f:g", NULL, NULL), RIPPLE_OK);
  assert_null(w.url);
  assert_string_equal(w.ns, "e");
  assert_string_equal(w.name, "f");
  assert_string_equal(w.port, "g");
  assert_string_equal(w.from, "$RIPPLE_SERVER_SERVICE");
  /* A URL beats a Service at the same level; a flag beats a variable. */
  assert_int_equal(pick(&w, err, sizeof err, "http://env:1", "e/f", NULL, NULL), RIPPLE_OK);
  assert_string_equal(w.url, "http://env:1");
  assert_string_equal(w.from, "$RIPPLE_SERVER");
  assert_int_equal(pick(&w, err, sizeof err, "http://env:1", "e/f", "--server-service", "x/y"),
                   RIPPLE_OK);
  assert_null(w.url);
  assert_string_equal(w.ns, "x");
  assert_string_equal(w.from, "--server-service");
  assert_int_equal(pick(&w, err, sizeof err, NULL, "e/f", "--server", "http://flag:2"), RIPPLE_OK);
  assert_string_equal(w.url, "http://flag:2");
  assert_string_equal(w.from, "--server");
  /* A bad variable is said with its name. */
  assert_int_equal(pick(&w, err, sizeof err, NULL, "nope", NULL, NULL), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "$RIPPLE_SERVER_SERVICE"));
  /* Both flags: one too many. */
  kr_args_t a;
  assert_int_equal(parse(&a, err, sizeof err, "trace", C, "--server", "http://h:1",
                         "--server-service", "a/b", (char *)NULL),
                   RIPPLE_OK);
  assert_int_equal(kr_where_pick(&a, &w, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "give one"));
}

static void test_proxy_path(void **state) {
  (void)state;
  kr_where_t w = {0};
  char err[256];
  assert_int_equal(kr_service_parse("ripple-system/ripple-server", &w, err, sizeof err), RIPPLE_OK);
  char *p = kr_proxy_path(&w, "/v1/cpids/" C "/related");
  assert_string_equal(
      p, "/api/v1/namespaces/ripple-system/services/https:ripple-server:https/proxy/v1/cpids/" C
         "/related");
  free(p);
  assert_int_equal(kr_service_parse("t/s:7480", &w, err, sizeof err), RIPPLE_OK);
  p = kr_proxy_path(&w, "/v1/objects/u/roots?limit=1");
  assert_string_equal(
      p, "/api/v1/namespaces/t/services/https:s:7480/proxy/v1/objects/u/roots?limit=1");
  free(p);
}

/* A client for an API server nobody asks: kr_ts_open needs one for a Service. */
typedef struct cluster {
  char dir[64];
  ripple_kube_config_t *cfg;
  ripple_kube_client_t *kc;
} cluster_t;

static void cluster_open(cluster_t *c) {
  snprintf(c->dir, sizeof c->dir, "/tmp/kr-where-XXXXXX");
  assert_non_null(mkdtemp(c->dir));
  char path[128];
  snprintf(path, sizeof path, "%s/config", c->dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(
      "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
      "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:1/'}}]\n"
      "users: [{name: u, user: {token: kube-token}}]\n"
      "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
      f);
  fclose(f);
  ripple_kube_config_opts_t co = {path, NULL, NULL, 0};
  char err[512];
  if (ripple_kube_config_load(&co, &c->cfg, err, sizeof err) != RIPPLE_OK) fail_msg("%s", err);
  assert_int_equal(ripple_kube_client_new(c->cfg, NULL, &c->kc), RIPPLE_OK);
  unlink(path);
  rmdir(c->dir);
}

static void cluster_close(cluster_t *c) {
  ripple_kube_client_free(c->kc);
  ripple_kube_config_free(c->cfg);
}

static void test_dashboard_through_proxy(void **state) {
  (void)state;
  cluster_t cl = {.cfg = NULL};
  cluster_open(&cl);
  setenv("RIPPLE_READER_TOKEN", "the-reader-token", 1);
  kr_where_t w = {.from = "the default"};
  char err[512] = "";
  assert_int_equal(kr_service_parse("ripple-system/ripple-server", &w, err, sizeof err), RIPPLE_OK);
  kr_ts_t *ts = NULL;
  if (kr_ts_open(&w, cl.kc, ripple_kube_config_server(cl.cfg), &ts, err, sizeof err) != RIPPLE_OK)
    fail_msg("kr_ts_open: %s", err);
  char *url = kr_ts_dashboard_url(ts, C);
  assert_string_equal(url,
                      "https://127.0.0.1:1/api/v1/namespaces/ripple-system/services/"
                      "https:ripple-server:https/proxy/#/trace/" C);
  assert_non_null(strstr(kr_ts_where(ts), "behind Service ripple-system/ripple-server"));
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  kr_ts_put_dashboard(f, ts, url, C, 0);
  fclose(f);
  /* A browser cannot authenticate to the proxy's URL: the command that
   * relays it is printed instead. */
  assert_string_equal(text, "\ndashboard: kubectl ripple dashboard " C "\n");
  assert_true(kr_ts_proxied(ts));
  free(text);
  free(url);
  kr_ts_free(ts);
  /* With the Service named by --server-service, the command names it too. */
  w.from = "--server-service";
  assert_int_equal(kr_service_parse("team/tr:8443", &w, err, sizeof err), RIPPLE_OK);
  if (kr_ts_open(&w, cl.kc, ripple_kube_config_server(cl.cfg), &ts, err, sizeof err) != RIPPLE_OK)
    fail_msg("kr_ts_open: %s", err);
  url = kr_ts_dashboard_url(ts, C);
  f = open_memstream(&text, &len);
  kr_ts_put_dashboard(f, ts, url, C, 0);
  fclose(f);
  assert_string_equal(
      text, "\ndashboard: kubectl ripple dashboard " C " --server-service team/tr:8443\n");
  free(text);
  free(url);
  kr_ts_free(ts);

  /* Directly: the server's own URL, and no note. */
  kr_where_t d = {.url = "http://127.0.0.1:7480/", .from = "--server"};
  assert_int_equal(kr_ts_open(&d, NULL, NULL, &ts, err, sizeof err), RIPPLE_OK);
  url = kr_ts_dashboard_url(ts, C);
  assert_string_equal(url, "http://127.0.0.1:7480/#/trace/" C);
  assert_string_equal(kr_ts_where(ts), "at http://127.0.0.1:7480 (--server)");
  f = open_memstream(&text, &len);
  kr_ts_put_dashboard(f, ts, url, C, 0);
  fclose(f);
  assert_string_equal(text, "\ndashboard: http://127.0.0.1:7480/#/trace/" C "\n");
  free(text);
  free(url);
  kr_ts_free(ts);

  /* A Service without a client is a mistake of the caller's. */
  assert_int_equal(kr_ts_open(&w, NULL, NULL, &ts, err, sizeof err), RIPPLE_EINVAL);
  /* A token that cannot be a header line is refused, and not repeated. */
  setenv("RIPPLE_READER_TOKEN", "two\nlines", 1);
  assert_int_equal(kr_ts_open(&d, NULL, NULL, &ts, err, sizeof err), RIPPLE_EINVAL);
  assert_non_null(strstr(err, "$RIPPLE_READER_TOKEN"));
  assert_null(strstr(err, "two"));
  unsetenv("RIPPLE_READER_TOKEN");
  cluster_close(&cl);
}

/* Nothing listens where the kubeconfig says: the first request (the
 * Secret's token) says the API server cannot be reached, and where. */
static void test_api_server_unreachable(void **state) {
  (void)state;
  cluster_t cl = {.cfg = NULL};
  cluster_open(&cl);
  unsetenv("RIPPLE_READER_TOKEN");
  kr_where_t w = {.from = "the default"};
  char err[1024] = "";
  assert_int_equal(kr_service_parse("ripple-system/ripple-server", &w, err, sizeof err), RIPPLE_OK);
  kr_ts_t *ts = NULL;
  int rc = kr_ts_open(&w, cl.kc, ripple_kube_config_server(cl.cfg), &ts, err, sizeof err);
  assert_int_equal(rc, RIPPLE_KUBE_ECONNECT);
  if (!strstr(err, "cannot reach the API server at https://127.0.0.1:1") ||
      !strstr(err, "--server"))
    fail_msg("%s", err);
  assert_null(strstr(err, "kube-token"));
  cluster_close(&cl);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_service_parse_good),
      cmocka_unit_test(test_service_parse_bad),
      cmocka_unit_test(test_flag),
      cmocka_unit_test(test_pick_order),
      cmocka_unit_test(test_proxy_path),
      cmocka_unit_test(test_dashboard_through_proxy),
      cmocka_unit_test(test_api_server_unreachable),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
