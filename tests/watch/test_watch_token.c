/*
 * test_watch_token.c - ripple-watch's --trace-server-token-file and
 * --trace-server-ca, no cluster.
 *
 * Bad files are start errors of the real binary (exit 2, before it looks for
 * a cluster) that name the option and the file and never show a token. The
 * agent's trace shipping (wtrace.h, what the flags reach) against a real
 * ripple-server on 127.0.0.1:0 started with --writer-token-file: a change of
 * an object with a context is stored when shipped with the token, and refused
 * without it. test_watch_lab.c checks the flag reaches it in the binary.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "http_client.h"
#include "ripplex/opt.h"
#include "ripplex/sbuf.h"
#include "testutil.h"
#include "wh_lab.h"
#include "wtrace.h"

#define TOKEN "tok-watch-51c2-a9d4"

static char dir[64];
static whlab_proc_t server;

static void kill_server(void) { whlab_kill(&server); }

static void put(const char *name, const char *text) {
  FILE *f = fopen(test_path(dir, name), "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/ripple-watch-token-XXXXXX");
  assert_non_null(mkdtemp(dir));
  put("token", TOKEN "\n");
  put("writers", TOKEN "\n");
  put("empty", "");
  server.pid = -1;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  kill_server();
  test_rmtree(dir);
  return 0;
}

/* ripple-watch with args; its exit status, its stderr into *err (malloc'd).
 * No cluster: a command line that got past its checks fails to connect. */
static int run(char *const args[], char **err) {
  const char *bin = getenv("RIPPLE_WATCH_BIN");
  if (!bin) fail_msg("RIPPLE_WATCH_BIN is needed (ctest sets it)");
  static char *const first[] = {"--resources", "configmaps", NULL};
  setenv("KUBECONFIG", "/nonexistent", 1);
  return test_exec(bin, first, args, err);
}

static void test_bad_files(void **state) {
  (void)state;
  char tok[128], empty[128], absent[128];
  snprintf(tok, sizeof tok, "%s", test_path(dir, "token"));
  snprintf(empty, sizeof empty, "%s", test_path(dir, "empty"));
  snprintf(absent, sizeof absent, "%s", test_path(dir, "absent"));
  struct {
    char *args[8];
    const char *says;
  } cases[] = {
      {{"--trace-server", "http://127.0.0.1:9", "--trace-server-token-file", absent, NULL},
       "cannot read it"},
      {{"--trace-server", "http://127.0.0.1:9", "--trace-server-token-file", empty, NULL},
       "holds no token"},
      {{"--trace-server", "https://127.0.0.1:9", "--trace-server-ca", absent, NULL},
       "cannot read it"},
      {{"--trace-server", "https://127.0.0.1:9", "--trace-server-ca", tok, NULL},
       "no PEM certificate"},
      {{"--trace-server-token-file", tok, NULL}, "go with --trace-server"},
      /* --no-records only sends: it needs a trace server and refuses outputs. */
      {{"--no-records", NULL}, "only sends to --trace-server"},
      {{"--no-records", "--trace-server", "http://127.0.0.1:9", "--out", tok, NULL},
       "goes without --out"},
      {{"--no-records", "--trace-server", "http://127.0.0.1:9", "--state-dir", dir, NULL},
       "goes without --out"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *err = NULL;
    int status = run(cases[i].args, &err);
    if (status != 2 || !strstr(err, cases[i].says))
      fail_msg("case %zu: exit %d, stderr: %s", i, status, err);
    assert_null(strstr(err, TOKEN));
    free(err);
  }
  /* Good files (and --no-records with a trace server) get past the command line
   * (to the missing cluster). */
  char *args[] = {"--trace-server",
                  "http://127.0.0.1:9",
                  "--trace-server-token-file",
                  tok,
                  "--no-records",
                  NULL};
  char *err = NULL;
  int status = run(args, &err);
  if (status == 0 || status == 2) fail_msg("exit %d, stderr: %s", status, err);
  assert_null(strstr(err, TOKEN));
  free(err);
}

/* One change of a ConfigMap carrying a context, shipped with token (or
 * none) and delivered before wtrace_free returns. */
static void ship_change(const char *url, const char *token, const char *cpid) {
  wtrace_t *t = NULL;
  assert_int_equal(wtrace_new(url, token, NULL, &t), RIPPLE_OK);
  char obj[512];
  snprintf(obj, sizeof obj,
           "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"traced\",\"namespace\":\"t\","
           "\"annotations\":{\"cpid.ripple.dev/configmap\":\"1;%s\"}}}",
           cpid);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ripple_kube_event_t ev = {.type = RIPPLE_KUBE_MODIFIED,
                            .time_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec,
                            .obj_text = obj,
                            .obj_len = strlen(obj),
                            .key = "t/traced",
                            .uid = "u-1",
                            .rv = "42"};
  wtrace_change(t, &ev, "configmaps");
  wtrace_free(t, 10000);
}

static double spans_stored(const char *base) {
  char url[128];
  snprintf(url, sizeof url, "%s/metrics", base);
  hc_resp_t r = {0};
  double v = -1;
  const char *name = "ripple_records_total{kind=\"span\"} ";
  if (hc_request("GET", url, NULL, 0, NULL, &r) == 0 && r.status == 200) {
    const char *p = strstr(r.body, name);
    if (p) v = strtod(p + strlen(name), NULL);
  }
  hc_resp_free(&r);
  return v;
}

static void test_server_wants_the_token(void **state) {
  (void)state;
  const char *bin = getenv("RIPPLE_SERVER_BIN");
  if (!bin) fail_msg("RIPPLE_SERVER_BIN is needed (ctest sets it)");
  atexit(kill_server);
  char db[128], writers[128], tok_file[128], base[64];
  snprintf(db, sizeof db, "%s", test_path(dir, "trace.db"));
  snprintf(writers, sizeof writers, "%s", test_path(dir, "writers"));
  snprintf(tok_file, sizeof tok_file, "%s", test_path(dir, "token"));
  snprintf(server.log, sizeof server.log, "%s", test_path(dir, "server.log"));
  char *argv[] = {(char *)bin,           "--listen", "127.0.0.1:0", "--db", db,
                  "--writer-token-file", writers,    NULL};
  whlab_spawn(&server, argv);
  snprintf(base, sizeof base, "http://127.0.0.1:%u", server.port);
  assert_int_equal(spans_stored(base), 0);

  /* Without the token: refused (the shipper drops a 401 batch for good). */
  ship_change(base, NULL, "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60");
  assert_int_equal(spans_stored(base), 0);
  /* With it, as ripple-watch reads it from --trace-server-token-file. */
  char *token = NULL;
  assert_int_equal(opt_token_file("test", "--trace-server-token-file", tok_file, &token),
                   RIPPLE_OK);
  ship_change(base, token, "3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f61");
  free(token);
  assert_int_equal(spans_stored(base), 1);
  whlab_stop(&server);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_bad_files, setup, teardown),
      cmocka_unit_test_setup_teardown(test_server_wants_the_token, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
