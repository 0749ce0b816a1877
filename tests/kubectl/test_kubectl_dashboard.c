/*
 * test_kubectl_dashboard.c - `kubectl ripple trace` ends with the trace's
 * page in the dashboard, `dashboard: <server>/#/trace/<cpid>`, and `-o json`
 * has it as "dashboard"; a span an OpenTelemetry-instrumented controller
 * sent to POST /v1/traces is in the trace like any other. The real
 * kubectl-ripple against the real ripple-server (on a free loopback port,
 * over a temporary database, given one root change and its span by HTTP):
 * no cluster needed. Against a server with a reader token: the error
 * without it, $RIPPLE_READER_TOKEN, and libripple-kube's raw request with
 * the X-Ripple-Token header kubectl ripple sends through the API server.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "http_client.h"
#include "ripple/kube.h"
#include "testutil.h"

#define CPID "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60"
#define T "2026-11-22T00:00:00.000000000Z"

typedef struct rig {
  char dir[64], base[64];
  pid_t pid;
} rig_t;

static const char *bin(const char *var) {
  const char *p = getenv(var);
  if (!p || !*p) fail_msg("$%s is not set (run through ctest)", var);
  return p;
}

/* ripple-server on a free port (test_server_start); with reader tokens from
 * a file when readers is not NULL. */
static void server_start(rig_t *r, const char *readers) {
  const char *more[] = {"--no-web", readers ? "--reader-token-file" : NULL, readers, NULL};
  r->pid = test_server_start(r->dir, more, r->base, sizeof r->base);
}

static void post(const rig_t *r, const char *path, const char *body) {
  if (!hc_post_ok(r->base, path, body)) fail_msg("POST %s was not accepted", path);
}

static void record(const rig_t *r);

static int setup(void **state) {
  rig_t *r = calloc(1, sizeof *r);
  assert_non_null(r);
  snprintf(r->dir, sizeof r->dir, "/tmp/ripple-test-XXXXXX");
  assert_non_null(mkdtemp(r->dir));
  server_start(r, NULL);
  record(r);
  *state = r;
  return 0;
}

/* One root change and its span. */
static void record(const rig_t *r) {
  post(r, "/v1/mergelogs",
       "[{\"cpid\":\"" CPID "\",\"sources\":[],\"time\":\"" T
       "\",\"component\":\"kubernetes-admin\"}]");
  post(r, "/v1/spans",
       "[{\"cpid\":\"" CPID
       "\",\"span_id\":\"0000000000000001\",\"service\":\"kubernetes-admin\","
       "\"name\":\"update deployments\",\"start\":\"" T "\",\"end\":\"" T
       "\",\"attributes\":{\"kind\":\"Deployment\",\"namespace\":\"demo\",\"name\":\"web\","
       "\"uid\":\"\",\"user\":\"kubernetes-admin\",\"operation\":\"UPDATE\"}}]");
}

static void rig_stop(rig_t *r) {
  int st;
  kill(r->pid, SIGTERM);
  waitpid(r->pid, &st, 0);
  test_rmtree(r->dir);
  free(r);
}

static int teardown(void **state) {
  rig_stop(*state);
  return 0;
}

/* kubectl-ripple's stdout (and stderr with both) for args (a shell word
 * list of safe words); its exit status in *status. */
static char *run_status(const char *args, int both, int *status) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "NO_COLOR=1 '%s' %s%s", bin("RIPPLE_KUBECTL_BIN"), args,
           both ? " 2>&1" : "");
  FILE *p = popen(cmd, "r");  // NOLINT(cert-env33-c)
  assert_non_null(p);
  static char out[16384];
  size_t n = fread(out, 1, sizeof out - 1, p);
  out[n] = '\0';
  int st = pclose(p);
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

static char *run(const char *args) {
  int st;
  char *out = run_status(args, 0, &st);
  if (st != 0) fail_msg("kubectl-ripple %s: status %d:\n%s", args, st, out);
  return out;
}

/* The last line of the text output, whatever form the server URL took. */
static void test_text(void **state) {
  rig_t *r = *state;
  char args[256], want[256];
  snprintf(want, sizeof want, "\n\ndashboard: %s/#/trace/" CPID "\n", r->base);
  static const char *const slashes[] = {"", "/", "///"};
  for (size_t i = 0; i < 3; i++) {
    snprintf(args, sizeof args, "trace " CPID " --server %s%s", r->base, slashes[i]);
    const char *out = run(args);
    assert_non_null(strstr(out, "Deployment demo/web  kubernetes-admin  update deployments"));
    size_t n = strlen(out), k = strlen(want);
    if (n < k || strcmp(out + n - k, want) != 0) fail_msg("no dashboard line last:\n%s", out);
  }
  /* The CPID as the server knows it (lower case), the server from $RIPPLE_SERVER. */
  snprintf(args, sizeof args, "trace 3F2B8E4C-9A1D-4C7E-8F00-1B2C3D4E5F60");
  char env[128];
  snprintf(env, sizeof env, "%s/", r->base);
  setenv("RIPPLE_SERVER", env, 1);
  const char *out = run(args);
  unsetenv("RIPPLE_SERVER");
  assert_non_null(strstr(out, want));
}

static void test_json(void **state) {
  rig_t *r = *state;
  char args[256], want[128];
  snprintf(args, sizeof args, "trace " CPID " -o json --server %s/", r->base);
  json_error_t je;
  json_t *j = json_loads(run(args), 0, &je);
  if (!j) fail_msg("not JSON: %s", je.text);
  snprintf(want, sizeof want, "%s/#/trace/" CPID, r->base);
  assert_string_equal(json_string_value(json_object_get(j, "dashboard")), want);
  assert_string_equal(json_string_value(json_object_get(j, "cpid")), CPID);
  assert_int_equal(json_array_size(json_object_get(j, "tree")), 1);
  json_decref(j);
}

/* An OTLP/JSON span whose trace id is the CPID, as an instrumented operator
 * sends it: `kubectl ripple trace` shows it under the CPID with its service. */
static void test_otlp_span(void **state) {
  rig_t *r = *state;
  post(r, "/v1/traces",
       "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
       "\"value\":{\"stringValue\":\"web-operator\"}}]},\"scopeSpans\":[{\"spans\":[{"
       "\"traceId\":\"3f2b8e4c9a1d4c7e8f001b2c3d4e5f60\",\"spanId\":\"00000000000000a1\","
       "\"parentSpanId\":\"0000000000000001\",\"name\":\"reconcile\","
       "\"startTimeUnixNano\":\"1795305600001000000\",\"endTimeUnixNano\":\"1795305600002000000\","
       "\"attributes\":[{\"key\":\"kind\",\"value\":{\"stringValue\":\"Deployment\"}},"
       "{\"key\":\"namespace\",\"value\":{\"stringValue\":\"demo\"}},"
       "{\"key\":\"name\",\"value\":{\"stringValue\":\"web\"}}]}]}]}]}");
  char args[256];
  snprintf(args, sizeof args, "trace " CPID " --server %s", r->base);
  const char *out = run(args);
  if (!strstr(out, "Deployment demo/web  web-operator  reconcile"))
    fail_msg("the operator's span is not in the trace:\n%s", out);
}

/* libripple-kube's raw request sends the extra header lines it is given
 * (what carries X-Ripple-Token through the API server's proxy), here to the
 * server itself named as a kubeconfig's cluster, and refuses lines that
 * could split a header. path is a scratch file. */
static void raw_with_token(const rig_t *r, const char *path) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f,
          "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
          "clusters: [{name: k, cluster: {server: '%s'}}]\nusers: [{name: u, user: {}}]\n"
          "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
          r->base);
  fclose(f);
  ripple_kube_config_opts_t co = {path, NULL, NULL, 0};
  ripple_kube_config_t *cfg;
  ripple_kube_client_t *kc;
  char err[512];
  if (ripple_kube_config_load(&co, &cfg, err, sizeof err) != RIPPLE_OK) fail_msg("%s", err);
  assert_int_equal(ripple_kube_client_new(cfg, NULL, &kc), RIPPLE_OK);
  const char *path_q = "/v1/cpids/" CPID "/related";
  static const struct {
    const char *h[2];
    int rc;
    long status;
  } t[] = {
      {{NULL, NULL}, RIPPLE_OK, 401},
      {{"X-Ripple-Token: tok-3e8a5d-b27f40", NULL}, RIPPLE_OK, 200},
      {{"X-Ripple-Token: tok-3e8a5d-b27f40\r\nX-Other: 1", NULL}, RIPPLE_EINVAL, 0},
      {{"no colon", NULL}, RIPPLE_EINVAL, 0},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    long status = 0;
    char *body = NULL;
    size_t len = 0;
    ripple_kube_status_t st;
    int rc = ripple_kube_request_raw(kc, "GET", path_q, t[i].h, &status, &body, &len, &st);
    assert_int_equal(rc, t[i].rc);
    if (rc == RIPPLE_OK) {
      assert_int_equal(status, t[i].status);
      assert_int_equal(strlen(body), len);
    }
    ripple_free(body);
  }
  ripple_kube_client_free(kc);
  ripple_kube_config_free(cfg);
}

/* A server that wants a reader token: without one the error says where
 * to put it; $RIPPLE_READER_TOKEN (sent as a bearer token) is let in; the
 * token is never printed. */
static void test_reader_token(void **state) {
  (void)state;
  rig_t *r = calloc(1, sizeof *r);
  assert_non_null(r);
  snprintf(r->dir, sizeof r->dir, "/tmp/ripple-test-XXXXXX");
  assert_non_null(mkdtemp(r->dir));
  char tokens[96];
  snprintf(tokens, sizeof tokens, "%s/readers", r->dir);
  FILE *f = fopen(tokens, "w");
  assert_non_null(f);
  fputs("tok-3e8a5d-b27f40\n", f);
  fclose(f);
  server_start(r, tokens);
  record(r); /* POSTs stay open: no writer tokens */
  char args[256];
  snprintf(args, sizeof args, "trace " CPID " --server %s", r->base);
  int st;
  unsetenv("RIPPLE_READER_TOKEN");
  const char *out = run_status(args, 1, &st);
  assert_int_equal(st, 1);
  if (!strstr(out, "wants a reader token") || !strstr(out, "set $RIPPLE_READER_TOKEN"))
    fail_msg("the error does not say what to do:\n%s", out);
  setenv("RIPPLE_READER_TOKEN", "tok-wrong", 1);
  out = run_status(args, 1, &st);
  assert_int_equal(st, 1);
  assert_non_null(strstr(out, "$RIPPLE_READER_TOKEN was refused"));
  assert_null(strstr(out, "tok-wrong"));
  raw_with_token(r, tokens);
  setenv("RIPPLE_READER_TOKEN", "tok-3e8a5d-b27f40", 1);
  out = run_status(args, 1, &st);
  if (st != 0 || !strstr(out, "Deployment demo/web  kubernetes-admin  update deployments"))
    fail_msg("with the token: status %d:\n%s", st, out);
  assert_null(strstr(out, "tok-3e8a5d-b27f40"));
  unsetenv("RIPPLE_READER_TOKEN");
  rig_stop(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_text),
      cmocka_unit_test(test_json),
      cmocka_unit_test(test_otlp_span),
      cmocka_unit_test(test_reader_token),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
