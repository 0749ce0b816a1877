/*
 * test_webhook_token.c - ripple-webhook's --trace-server-token-file and
 * --trace-server-ca, the real binaries on 127.0.0.1:0 and no cluster
 * (--no-informers, plain HTTP: the test posts AdmissionReviews itself).
 *
 * Bad files are start errors (exit 2) that name the option and the file and
 * never show a token. A ripple-server started with --writer-token-file
 * stores what the webhook ships with the token (its shipper counts them sent,
 * the server answers the trace) and refuses it without (counted rejected,
 * nothing stored). The token never appears in the webhook's log. And over
 * HTTPS: a server with a self-signed certificate takes what the webhook
 * ships when --trace-server-ca names that certificate.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "http_client.h"
#include "ripplex/sbuf.h"
#include "rw_lab.h"
#include "testutil.h"
#include "wh_lab.h"

#define TOKEN "tok-webhook-7f3a-c01b"

static char dir[64];
static whlab_proc_t server, webhook;
static char trace[64];

static void kill_all(void) {
  whlab_kill(&webhook);
  whlab_kill(&server);
}

static const char *put(const char *name, const char *text) {
  const char *p = test_path(dir, name);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return p;
}

static char *slurp(const char *path) {
  char *text = NULL;
  FILE *f = fopen(path, "r");
  if (!f) return strdup("");
  fclose(f);
  assert_int_equal(sbuf_read_file_max(path, 1u << 22, &text, NULL), RIPPLE_OK);
  return text;
}

/* Run the webhook with args (after its binary), its stderr into *err
 * (malloc'd): the exit status. */
static int run(char *const args[], char **err) {
  const char *bin = getenv("RIPPLE_WEBHOOK_BIN");
  if (!bin) fail_msg("RIPPLE_WEBHOOK_BIN is needed (ctest sets it)");
  return test_exec(bin, NULL, args, err);
}

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/ripple-wh-token-XXXXXX");
  assert_non_null(mkdtemp(dir));
  put("token", TOKEN "\n");
  put("writers", "# the webhook's\n" TOKEN "\n");
  server.pid = webhook.pid = -1;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  kill_all();
  test_rmtree(dir);
  return 0;
}

/* Each bad command line exits 2 with a message naming what was wrong. */
static void test_bad_files(void **state) {
  (void)state;
  const char *empty = put("empty", "\n"), *blank = put("blank", "  \n" TOKEN "\n");
  char shortc[128];
  snprintf(shortc, sizeof shortc, "%s", put("short", " tok-7f3a \r\n"));
  const char *tok = test_path(dir, "token"), *absent = test_path(dir, "absent");
  char tokc[128], emptyc[128], blankc[128], absentc[128];
  snprintf(tokc, sizeof tokc, "%s", tok);
  snprintf(emptyc, sizeof emptyc, "%s", empty);
  snprintf(blankc, sizeof blankc, "%s", blank);
  snprintf(absentc, sizeof absentc, "%s", absent);
  struct {
    char *args[8];
    const char *says;
  } cases[] = {
      {{"--no-informers", "--trace-server", "http://127.0.0.1:9", "--trace-server-token-file",
        absentc, NULL},
       "cannot read it"},
      {{"--no-informers", "--trace-server", "http://127.0.0.1:9", "--trace-server-token-file",
        emptyc, NULL},
       "holds no token"},
      {{"--no-informers", "--trace-server", "http://127.0.0.1:9", "--trace-server-token-file",
        blankc, NULL},
       "holds no token"},
      /* A placeholder or a typo, not a secret (issue 27). */
      {{"--no-informers", "--trace-server", "http://127.0.0.1:9", "--trace-server-token-file",
        shortc, NULL},
       "shorter than 16"},
      {{"--no-informers", "--trace-server", "https://127.0.0.1:9", "--trace-server-ca", absentc,
        NULL},
       "cannot read it"},
      /* A token is no CA: refused without showing the token. */
      {{"--no-informers", "--trace-server", "https://127.0.0.1:9", "--trace-server-ca", tokc, NULL},
       "no PEM certificate"},
      {{"--no-informers", "--trace-server-token-file", tokc, NULL}, "go with --trace-server"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *err = NULL;
    int status = run(cases[i].args, &err);
    if (status != 2 || !strstr(err, cases[i].says))
      fail_msg("case %zu: exit %d, stderr: %s", i, status, err);
    assert_null(strstr(err, TOKEN));
    free(err);
  }
}

static double metric(unsigned port, const char *name) {
  char url[128];
  snprintf(url, sizeof url, "http://127.0.0.1:%u/metrics", port);
  hc_resp_t r = {0};
  double v = -1;
  if (hc_request("GET", url, NULL, 0, NULL, &r) == 0 && r.status == 200)
    v = hc_metric_value(r.body, name);
  hc_resp_free(&r);
  return v;
}

/* The webhook shipping to trace, with token_file and ca_file when not NULL. */
static void start_webhook(const char *token_file, const char *ca_file) {
  const char *bin = getenv("RIPPLE_WEBHOOK_BIN");
  /* A new log each time: the port is read from it. */
  snprintf(webhook.log, sizeof webhook.log, "%s/webhook-%s%s.log", dir,
           token_file ? "token" : "none", ca_file ? "-tls" : "");
  char *argv[16] = {(char *)bin,      "--listen", "127.0.0.1:0", "--no-informers",
                    "--trace-server", trace,      NULL};
  size_t n = 6;
  if (token_file) argv[n++] = "--trace-server-token-file", argv[n++] = (char *)token_file;
  if (ca_file) argv[n++] = "--trace-server-ca", argv[n++] = (char *)ca_file;
  whlab_spawn(&webhook, argv);
}

/* A person's Deployment create: a root, one mergelog and one span shipped.
 * Its CPID (from the answer's warning) into cpid. */
static void admit_root(char *cpid, size_t cap) {
  char url[128];
  snprintf(url, sizeof url, "http://127.0.0.1:%u/mutate", webhook.port);
  const char *body =
      "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
      "\"uid\":\"req-1\",\"kind\":{\"group\":\"apps\",\"version\":\"v1\",\"kind\":\"Deployment\"},"
      "\"resource\":{\"group\":\"apps\",\"version\":\"v1\",\"resource\":\"deployments\"},"
      "\"namespace\":\"d\",\"name\":\"web\",\"operation\":\"CREATE\",\"userInfo\":{"
      "\"username\":\"kubernetes-admin\"},\"object\":{\"kind\":\"Deployment\",\"metadata\":{"
      "\"name\":\"web\",\"namespace\":\"d\"}},\"oldObject\":null,\"dryRun\":false}}";
  hc_resp_t r = {0};
  assert_int_equal(hc_request("POST", url, body, strlen(body), NULL, &r), 0);
  assert_int_equal(r.status, 200);
  json_t *j = json_loadb(r.body, r.len, 0, NULL);
  const char *w = json_string_value(
      json_array_get(json_object_get(json_object_get(j, "response"), "warnings"), 0));
  if (!w || strncmp(w, "ripple: cpid ", 13) != 0) fail_msg("no CPID in the answer: %s", r.body);
  snprintf(cpid, cap, "%s", w + 13);
  json_decref(j);
  hc_resp_free(&r);
}

typedef struct want {
  const char *metric;
  double value;
} want_t;

static int webhook_metric_is(void *ud) {
  const want_t *w = ud;
  return metric(webhook.port, w->metric) == w->value;
}

static void test_server_wants_the_token(void **state) {
  (void)state;
  const char *srv_bin = getenv("RIPPLE_SERVER_BIN");
  if (!srv_bin) fail_msg("RIPPLE_SERVER_BIN is needed (ctest sets it)");
  atexit(kill_all);
  char db[128], writers[128], token[128];
  snprintf(db, sizeof db, "%s/trace.db", dir);
  snprintf(writers, sizeof writers, "%s", test_path(dir, "writers"));
  snprintf(token, sizeof token, "%s", test_path(dir, "token"));
  snprintf(server.log, sizeof server.log, "%s/server.log", dir);
  char *sargv[] = {(char *)srv_bin,       "--listen", "127.0.0.1:0", "--db", db,
                   "--writer-token-file", writers,    NULL};
  whlab_spawn(&server, sargv);
  snprintf(trace, sizeof trace, "http://127.0.0.1:%u", server.port);

  /* With the token: both records are sent, and the server has the trace. */
  start_webhook(token, NULL);
  char cpid[64], path[160];
  admit_root(cpid, sizeof cpid);
  want_t sent = {"ripple_webhook_shipper_sent_total", 2};
  if (!lab_wait(webhook_metric_is, &sent, 30000))
    fail_msg("the server did not take the records (sent %g, rejected %g)",
             metric(webhook.port, sent.metric),
             metric(webhook.port, "ripple_webhook_shipper_rejected_total"));
  assert_int_equal(metric(webhook.port, "ripple_webhook_shipper_rejected_total"), 0);
  snprintf(path, sizeof path, "/v1/cpids/%s/spans", cpid);
  json_t *spans = hc_get_json(trace, path, 200);
  assert_non_null(spans);
  assert_int_equal(json_array_size(json_object_get(spans, "spans")), 1);
  json_decref(spans);
  whlab_stop(&webhook);
  char *log = slurp(webhook.log);
  assert_non_null(strstr(log, "trace_token=set"));
  assert_null(strstr(log, TOKEN));
  free(log);

  /* Without: refused for good (401), counted, nothing stored. */
  start_webhook(NULL, NULL);
  admit_root(cpid, sizeof cpid);
  want_t rejected = {"ripple_webhook_shipper_rejected_total", 2};
  if (!lab_wait(webhook_metric_is, &rejected, 30000))
    fail_msg("the server did not refuse the records (sent %g, rejected %g)",
             metric(webhook.port, "ripple_webhook_shipper_sent_total"),
             metric(webhook.port, rejected.metric));
  assert_int_equal(metric(webhook.port, "ripple_webhook_shipper_sent_total"), 0);
  snprintf(path, sizeof path, "/v1/cpids/%s/spans", cpid);
  hc_resp_t r = {0};
  char url[256];
  snprintf(url, sizeof url, "%s%s", trace, path);
  assert_int_equal(hc_request("GET", url, NULL, 0, NULL, &r), 0);
  assert_int_equal(r.status, 404); /* an unknown CPID */
  hc_resp_free(&r);
  whlab_stop(&webhook);
  whlab_stop(&server);
}

/* ripple-server over HTTPS (a self-signed certificate for 127.0.0.1) with a
 * writer token: the webhook given the certificate as --trace-server-ca and
 * the token delivers. */
static void test_https_server(void **state) {
  (void)state;
  const char *srv_bin = getenv("RIPPLE_SERVER_BIN");
  if (!srv_bin) fail_msg("RIPPLE_SERVER_BIN is needed (ctest sets it)");
  atexit(kill_all);
  char db[128], writers[128], token[128], crt[128], key[128], cmd[640];
  snprintf(db, sizeof db, "%s/trace.db", dir);
  snprintf(writers, sizeof writers, "%s", test_path(dir, "writers"));
  snprintf(token, sizeof token, "%s", test_path(dir, "token"));
  snprintf(crt, sizeof crt, "%s/tls.crt", dir);
  snprintf(key, sizeof key, "%s/tls.key", dir);
  snprintf(cmd, sizeof cmd,
           "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 "
           "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout %s -out %s "
           ">/dev/null 2>&1",
           key, crt);
  /* A test's own fixed command line, with paths it made itself. */
  assert_int_equal(system(cmd), 0); /* NOLINT(cert-env33-c) */
  snprintf(server.log, sizeof server.log, "%s/server.log", dir);
  char *sargv[] = {(char *)srv_bin, "--listen", "127.0.0.1:0", "--db", db,
                   "--tls-cert",    crt,        "--tls-key",   key,    "--writer-token-file",
                   writers,         NULL};
  whlab_spawn(&server, sargv);
  snprintf(trace, sizeof trace, "https://127.0.0.1:%u", server.port);
  start_webhook(token, crt);
  char cpid[64];
  admit_root(cpid, sizeof cpid);
  want_t sent = {"ripple_webhook_shipper_sent_total", 2};
  if (!lab_wait(webhook_metric_is, &sent, 30000))
    fail_msg("the HTTPS server did not take the records (sent %g, rejected %g)",
             metric(webhook.port, sent.metric),
             metric(webhook.port, "ripple_webhook_shipper_rejected_total"));
  whlab_stop(&webhook);
  whlab_stop(&server);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_bad_files, setup, teardown),
      cmocka_unit_test_setup_teardown(test_server_wants_the_token, setup, teardown),
      cmocka_unit_test_setup_teardown(test_https_server, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
