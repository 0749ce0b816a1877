/*
 * test_webhook_clientca.c - who may POST /mutate (--client-ca, --client-name)
 * and where /metrics is (--metrics-listen): the real ripple-webhook on
 * 127.0.0.1:0 with no cluster (--no-informers), shipping to a recording
 * receiver (tests/support/recv_server.c) or the real ripple-server.
 *
 * The attack (issue 27): any Pod could POST a forged AdmissionReview, which
 * the webhook decided, shipped under its own writer token and remembered.
 * With --client-ca a client without a certificate (401) and one whose
 * certificate another CA signed (403) are refused before their body is
 * read: nothing shipped, the engine never ran (its counters unchanged), and
 * the real client's review afterwards is decided and shipped as if they had
 * never come. A replica forwarding to the decider shows the replicas' token
 * instead of a certificate. And a person's 10000-byte user name: the span
 * is still taken by the real trace server (the webhook cut the string).
 * And kube-apiserver's own traceparent header, read from the HTTP request.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "handover.h"
#include "http_client.h"
#include "recv_server.h"
#include "ripplex/sbuf.h"
#include "rw_lab.h"
#include "testutil.h"
#include "wh_lab.h"

static char dir[64];
static whlab_proc_t webhook, server;
static recv_server_t *rs;
static unsigned metrics_port;

static void kill_all(void) {
  whlab_kill(&webhook);
  whlab_kill(&server);
}

static void sh(const char *cmd) {
  /* A test's own fixed command lines, on paths it made itself. */
  if (system(cmd) != 0) fail_msg("failed: %s", cmd); /* NOLINT(cert-env33-c) */
}

/* A CA named name in dir: name.crt, name.key. */
static void make_ca(const char *name) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "cd %s && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
           "-days 1 -subj /CN=%s -addext basicConstraints=critical,CA:TRUE "
           "-addext keyUsage=critical,keyCertSign -keyout %s.key -out %s.crt >/dev/null 2>&1",
           dir, name, name, name);
  sh(cmd);
}

/* A leaf certificate name.crt/.key signed by ca, for CN cn (and DNS name cn,
 * IP 127.0.0.1), with eku (serverAuth or clientAuth). */
static void make_leaf(const char *name, const char *ca, const char *cn, const char *eku) {
  FILE *f = fopen(test_path(dir, "ext.cnf"), "w");
  assert_non_null(f);
  fprintf(f, "extendedKeyUsage=%s\nsubjectAltName=DNS:%s,IP:127.0.0.1\n", eku, cn);
  fclose(f);
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "cd %s && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
           "-subj /CN=%s -keyout %s.key -out %s.csr >/dev/null 2>&1 && openssl x509 -req "
           "-in %s.csr -CA %s.crt -CAkey %s.key -CAcreateserial -days 1 -extfile ext.cnf "
           "-out %s.crt >/dev/null 2>&1",
           dir, cn, name, name, name, ca, ca, name);
  sh(cmd);
}

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/ripple-wh-clientca-XXXXXX");
  assert_non_null(mkdtemp(dir));
  make_ca("ca");
  make_ca("other-ca");
  make_leaf("serving", "ca", "ripple-webhook.ripple-system.svc", "serverAuth");
  make_leaf("apiserver", "ca", "kube-apiserver", "clientAuth");
  make_leaf("stranger", "other-ca", "kube-apiserver", "clientAuth");
  make_leaf("tenant", "ca", "some-tenant", "clientAuth");
  webhook.pid = server.pid = -1;
  rs = recv_start();
  assert_non_null(rs);
  atexit(kill_all);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  kill_all();
  recv_stop(rs);
  if (!getenv("KEEP")) test_rmtree(dir);
  return 0;
}

static char *path_of(const char *name) {
  static char p[16][192];
  static int i;
  i = (i + 1) % 16;
  snprintf(p[i], sizeof p[i], "%s/%s", dir, name);
  return p[i];
}

/* The webhook with --client-ca ca.crt and more args (NULL-terminated),
 * shipping to trace. metrics_port: --metrics-listen's, when given. */
static void start_webhook(const char *trace, char *const more[]) {
  const char *bin = getenv("RIPPLE_WEBHOOK_BIN");
  if (!bin) fail_msg("RIPPLE_WEBHOOK_BIN is needed (ctest sets it)");
  static int starts;
  whlab_kill(&webhook); /* one a failed test left */
  /* A new log each time: the port is read from it. */
  snprintf(webhook.log, sizeof webhook.log, "%s/webhook-%d.log", dir, ++starts);
  char *argv[24] = {(char *)bin,      "--listen",
                    "127.0.0.1:0",    "--no-informers",
                    "--tls-cert",     path_of("serving.crt"),
                    "--tls-key",      path_of("serving.key"),
                    "--client-ca",    path_of("ca.crt"),
                    "--trace-server", (char *)trace};
  size_t n = 12;
  for (size_t i = 0; more && more[i] && n < 23; i++) argv[n++] = more[i];
  whlab_spawn(&webhook, argv);
  metrics_port = 0;
  sbuf_t log;
  sbuf_init(&log);
  char *text = NULL;
  if (sbuf_read_file_max(webhook.log, 1u << 20, &text, NULL) == RIPPLE_OK) {
    const char *a = strstr(text, "event=metrics_listening addr=127.0.0.1:");
    if (a) metrics_port = (unsigned)strtoul(a + 39, NULL, 10);
  }
  free(text);
  sbuf_free(&log);
}

static size_t on_body(char *p, size_t size, size_t n, void *ud) {
  sbuf_put(ud, p, size * n);
  return size * n;
}

/* One HTTPS request to the webhook, as client (a cert name in dir; NULL:
 * none), with one more header line (NULL: none). The status; the answer
 * into body. */
static long request(const char *method, const char *path, const char *client, const char *header,
                    const char *data, size_t len, sbuf_t *body) {
  CURL *h = curl_easy_init();
  assert_non_null(h);
  char url[128];
  snprintf(url, sizeof url, "https://127.0.0.1:%u%s", webhook.port, path);
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_CAINFO, path_of("ca.crt"));
  char crt[32], key[32];
  if (client) {
    snprintf(crt, sizeof crt, "%s.crt", client);
    snprintf(key, sizeof key, "%s.key", client);
    curl_easy_setopt(h, CURLOPT_SSLCERT, path_of(crt));
    curl_easy_setopt(h, CURLOPT_SSLKEY, path_of(key));
  }
  struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
  /* header may be several lines, "\n"-separated: each one a header. */
  char lines[512];
  snprintf(lines, sizeof lines, "%s", header ? header : "");
  for (char *save = NULL, *l = strtok_r(lines, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
    hdrs = curl_slist_append(hdrs, l);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
  if (data) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, data);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
  }
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
  long status = 0;
  CURLcode rc = curl_easy_perform(h);
  if (rc == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(hdrs);
  curl_easy_cleanup(h);
  return status;
}

/* A person's Deployment create in namespace d, as user. */
static char *review_of(const char *name, const char *user) {
  size_t cap = 2 * strlen(user) + 2048;
  char *b = malloc(cap);
  snprintf(b, cap,
           "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
           "\"uid\":\"req-%s\",\"kind\":{\"group\":\"apps\",\"version\":\"v1\",\"kind\":"
           "\"Deployment\"},\"resource\":{\"group\":\"apps\",\"version\":\"v1\",\"resource\":"
           "\"deployments\"},\"namespace\":\"d\",\"name\":\"%s\",\"operation\":\"CREATE\","
           "\"userInfo\":{\"username\":\"%s\"},\"object\":{\"kind\":\"Deployment\",\"metadata\":"
           "{\"name\":\"%s\",\"namespace\":\"d\"}},\"oldObject\":null,\"dryRun\":false}}",
           name, name, user, name);
  return b;
}

/* POST a review of name as client; the status. */
static long post_review(const char *client, const char *header, const char *name,
                        const char *user) {
  char *b = review_of(name, user);
  sbuf_t out;
  sbuf_init(&out);
  long st = request("POST", "/mutate", client, header, b, strlen(b), &out);
  if (st != 200 && st != 401 && st != 403)
    fail_msg("status %ld: %s (log %s)", st, out.p ? out.p : "", webhook.log);
  if (st != 200) assert_non_null(strstr(out.p, "\"error\":"));
  sbuf_free(&out);
  free(b);
  return st;
}

/* A counter of the webhook's /metrics (on port, plain HTTP when plain). */
static double metric(const char *name) {
  sbuf_t b;
  sbuf_init(&b);
  long st = metrics_port ? 0 : request("GET", "/metrics", NULL, NULL, NULL, 0, &b);
  if (metrics_port) {
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/metrics", metrics_port);
    hc_resp_t r = {0};
    assert_int_equal(hc_request("GET", url, NULL, 0, NULL, &r), 0);
    st = r.status;
    sbuf_put(&b, r.body, r.len);
    hc_resp_free(&r);
  }
  assert_int_equal(st, 200);
  double v = hc_metric_value(b.p, name);
  sbuf_free(&b);
  return v;
}

static int recv_has(void *ud) { return recv_records(rs, "/v1/spans") >= *(size_t *)ud; }

/* No certificate, a certificate of another CA, a certificate of the CA but
 * not for a --client-name, a forged peer token: refused before the body,
 * nothing decided, shipped or remembered. The API server's certificate:
 * decided and shipped. */
static void test_forged_reviews_refused(void **state) {
  (void)state;
  char trace[64];
  snprintf(trace, sizeof trace, "http://127.0.0.1:%d", recv_port(rs));
  char *more[] = {"--client-name", "kube-apiserver", NULL};
  start_webhook(trace, more);
  assert_int_equal(post_review(NULL, NULL, "forged", "kubernetes-admin"), 401);
  assert_int_equal(post_review("stranger", NULL, "forged", "kubernetes-admin"), 403);
  assert_int_equal(post_review("tenant", NULL, "forged", "kubernetes-admin"), 403);
  char fake[128];
  snprintf(fake, sizeof fake, "%s: %064d", WH_PEER_HEADER, 0);
  assert_int_equal(post_review(NULL, fake, "forged", "kubernetes-admin"), 401);
  assert_int_equal(metric("ripple_webhook_unauthenticated_total"), 4);
  assert_int_equal(metric("ripple_webhook_requests_total"), 0);
  assert_int_equal(metric("ripple_webhook_bad_requests_total"), 0);
  assert_int_equal(metric("ripple_webhook_roots_total"), 0);
  assert_int_equal(metric("ripple_webhook_spans_total"), 0);
  /* The real API server: decided and shipped; the receiver has that span
   * only (whatever had been queued before would have gone with it). */
  assert_int_equal(post_review("apiserver", NULL, "real", "kubernetes-admin"), 200);
  size_t one = 1;
  if (!lab_wait(recv_has, &one, 30000)) fail_msg("the real review's span was not shipped");
  usleep(300 * 1000);
  assert_int_equal(recv_records(rs, "/v1/spans"), 1);
  assert_int_equal(recv_records(rs, "/v1/mergelogs"), 1);
  assert_int_equal(metric("ripple_webhook_requests_total"), 1);
  assert_int_equal(metric("ripple_webhook_roots_total"), 1);
  /* Health and metrics need no certificate (kubelet's probes, Prometheus). */
  sbuf_t b;
  sbuf_init(&b);
  assert_int_equal(request("GET", "/readyz", NULL, NULL, NULL, 0, &b), 200);
  sbuf_free(&b);
  whlab_stop(&webhook);
  char *log = NULL;
  assert_int_equal(sbuf_read_file_max(webhook.log, 1u << 22, &log, NULL), RIPPLE_OK);
  assert_non_null(strstr(log, "client_auth=ca+names"));
  assert_non_null(strstr(log, "event=mutate_refused"));
  free(log);
}

/* A replica's forward to the decider carries no certificate of the CA but
 * the replicas' token (an HMAC of the serving key, handover.h): taken. */
static void test_forward_with_peer_token(void **state) {
  (void)state;
  char trace[64];
  snprintf(trace, sizeof trace, "http://127.0.0.1:%d", recv_port(rs));
  start_webhook(trace, NULL);
  char *key = NULL, token[WH_PEER_TOKEN_LEN + 1], line[160];
  assert_int_equal(sbuf_read_file_max(path_of("serving.key"), 1u << 16, &key, NULL), RIPPLE_OK);
  assert_int_equal(wh_peer_token(key, token), RIPPLE_OK);
  free(key);
  snprintf(line, sizeof line, "%s: %s", WH_PEER_HEADER, token);
  assert_int_equal(post_review(NULL, line, "fwd", "kubernetes-admin"), 200);
  assert_int_equal(post_review("stranger", line, "fwd2", "kubernetes-admin"), 200);
  token[0] = token[0] == 'a' ? 'b' : 'a';
  snprintf(line, sizeof line, "%s: %s", WH_PEER_HEADER, token);
  assert_int_equal(post_review(NULL, line, "fwd3", "kubernetes-admin"), 401);
  assert_int_equal(metric("ripple_webhook_requests_total"), 2);
  whlab_stop(&webhook);
}

/* --metrics-listen: /metrics and /healthz there (plain HTTP), nothing else;
 * 404 for /metrics on the main port. */
static void test_metrics_listen(void **state) {
  (void)state;
  char *more[] = {"--metrics-listen", "127.0.0.1:0", NULL};
  start_webhook("http://127.0.0.1:9", more);
  assert_true(metrics_port > 0);
  sbuf_t b;
  sbuf_init(&b);
  assert_int_equal(request("GET", "/metrics", "apiserver", NULL, NULL, 0, &b), 404);
  sbuf_free(&b);
  sbuf_init(&b);
  assert_int_equal(request("GET", "/healthz", NULL, NULL, NULL, 0, &b), 200);
  sbuf_free(&b);
  assert_int_equal(metric("ripple_webhook_requests_total"), 0);
  char url[128];
  const char *paths[] = {"/healthz", "/mutate", "/readyz", "/v1/peer/memo"};
  const long want[] = {200, 404, 404, 404};
  for (size_t i = 0; i < 4; i++) {
    snprintf(url, sizeof url, "http://127.0.0.1:%u%s", metrics_port, paths[i]);
    hc_resp_t r = {0};
    assert_int_equal(hc_request("GET", url, NULL, 0, NULL, &r), 0);
    if (r.status != want[i]) fail_msg("%s: %ld", paths[i], (long)r.status);
    hc_resp_free(&r);
  }
  whlab_stop(&webhook);
}

/* Start errors: --client-ca without TLS, --client-name without --client-ca,
 * a bad --client-name, --client-ca that is no CA. */
static void test_bad_options(void **state) {
  (void)state;
  const char *bin = getenv("RIPPLE_WEBHOOK_BIN");
  struct {
    char *args[10];
    const char *says;
  } cases[] = {
      {{"--no-informers", "--client-ca", path_of("ca.crt"), NULL}, "needs --tls-cert"},
      {{"--no-informers", "--client-name", "kube-apiserver", NULL}, "goes with --client-ca"},
      {{"--no-informers", "--tls-cert", path_of("serving.crt"), "--tls-key", path_of("serving.key"),
        "--client-ca", path_of("ca.crt"), "--client-name", "a b", NULL},
       "--client-name"},
      {{"--no-informers", "--client-ca", path_of("ca.key"), NULL}, "--client-ca"},
      {{"--no-informers", "--metrics-listen", "nowhere", NULL}, "--metrics-listen"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *err = NULL;
    int status = test_exec(bin, NULL, cases[i].args, &err);
    if (status != 2 || !strstr(err, cases[i].says))
      fail_msg("case %zu: exit %d, stderr: %s", i, status, err);
    free(err);
  }
}

/* A 10000-byte user name: the real trace server takes the span (it refuses
 * a whole batch over a string longer than 4096 bytes). */
static void test_long_user_accepted(void **state) {
  (void)state;
  const char *srv_bin = getenv("RIPPLE_SERVER_BIN");
  if (!srv_bin) fail_msg("RIPPLE_SERVER_BIN is needed (ctest sets it)");
  char db[128], trace[64];
  snprintf(db, sizeof db, "%s/trace.db", dir);
  snprintf(server.log, sizeof server.log, "%s/server.log", dir);
  char *sargv[] = {(char *)srv_bin, "--listen", "127.0.0.1:0", "--db", db, NULL};
  whlab_spawn(&server, sargv);
  snprintf(trace, sizeof trace, "http://127.0.0.1:%u", server.port);
  start_webhook(trace, NULL);
  char *user = malloc(10001);
  memset(user, 'u', 10000);
  user[10000] = '\0';
  assert_int_equal(post_review("apiserver", NULL, "long", user), 200);
  free(user);
  for (int i = 0; i < 300 && metric("ripple_webhook_shipper_sent_total") < 2; i++) usleep(100000);
  if (metric("ripple_webhook_shipper_sent_total") != 2)
    fail_msg("sent %g, rejected %g (log %s)", metric("ripple_webhook_shipper_sent_total"),
             metric("ripple_webhook_shipper_rejected_total"), server.log);
  assert_int_equal(metric("ripple_webhook_shipper_rejected_total"), 0);
  assert_int_equal(metric("ripple_webhook_attributes_truncated_total"), 1);
  whlab_stop(&webhook);
  whlab_stop(&server);
}

/* kube-apiserver's own traceparent header (docs/otlp.md, "kube-apiserver's
 * own traces"), over HTTPS as the API server sends it: a valid, sampled one
 * reaches the real trace server on the write's span; an upper-case one, two
 * headers and two values in one are ignored and counted; the CPID is never
 * the header's trace id. */
#define AS_TRACE "aac6227b5404bff5db076f6f9484a89d"
#define AS_SPAN "d10b89f27e22770b"
static void test_apiserver_traceparent_header(void **state) {
  (void)state;
  const char *srv_bin = getenv("RIPPLE_SERVER_BIN");
  if (!srv_bin) fail_msg("RIPPLE_SERVER_BIN is needed (ctest sets it)");
  char db[128], trace[64];
  snprintf(db, sizeof db, "%s/trace-tp.db", dir);
  snprintf(server.log, sizeof server.log, "%s/server-tp.log", dir);
  char *sargv[] = {(char *)srv_bin, "--listen", "127.0.0.1:0", "--db", db, NULL};
  whlab_spawn(&server, sargv);
  snprintf(trace, sizeof trace, "http://127.0.0.1:%u", server.port);
  start_webhook(trace, NULL);
  char *b = review_of("traced", "alice");
  sbuf_t out;
  sbuf_init(&out);
  assert_int_equal(request("POST", "/mutate", "apiserver",
                           "traceparent: 00-" AS_TRACE "-" AS_SPAN "-01", b, strlen(b), &out),
                   200);
  free(b);
  json_t *ans = json_loadb(out.p, out.len, 0, NULL);
  sbuf_free(&out);
  const char *w = json_string_value(
      json_array_get(json_object_get(json_object_get(ans, "response"), "warnings"), 0));
  assert_non_null(w);
  assert_true(!strncmp(w, "ripple: cpid ", 13));
  char cpid[64];
  snprintf(cpid, sizeof cpid, "%s", w + 13);
  json_decref(ans);
  static const char *const bad[] = {
      "traceparent: 00-AAC6227B5404BFF5DB076F6F9484A89D-" AS_SPAN "-01",
      "traceparent: 00-" AS_TRACE "-" AS_SPAN "-01\ntraceparent: 00-" AS_TRACE "-" AS_SPAN "-01",
      "traceparent: 00-" AS_TRACE "-" AS_SPAN "-01,00-" AS_TRACE "-" AS_SPAN "-01",
  };
  for (size_t i = 0; i < 3; i++) {
    char name[16];
    snprintf(name, sizeof name, "bad%zu", i);
    assert_int_equal(post_review("apiserver", bad[i], name, "alice"), 200);
  }
  assert_int_equal(metric("ripple_webhook_apiserver_traceparents_total"), 1);
  assert_int_equal(metric("ripple_webhook_apiserver_traceparents_invalid_total"), 3);
  assert_int_equal(metric("ripple_webhook_requests_total"), 4);
  for (int i = 0; i < 300 && metric("ripple_webhook_shipper_sent_total") < 8; i++) usleep(100000);
  assert_int_equal(metric("ripple_webhook_shipper_sent_total"), 8);
  char path[160];
  snprintf(path, sizeof path, "/v1/cpids/%s/spans", cpid);
  json_t *sp = hc_get_json(trace, path, 200);
  assert_non_null(sp);
  json_t *s = json_array_get(json_object_get(sp, "spans"), 0);
  json_t *attrs = json_object_get(s, "attributes");
  assert_string_equal(json_string_value(json_object_get(attrs, "apiserverTraceId")), AS_TRACE);
  assert_string_equal(json_string_value(json_object_get(attrs, "apiserverSpanId")), AS_SPAN);
  json_t *parent = json_object_get(s, "parent_id");
  assert_true(!parent || json_is_null(parent));
  assert_string_not_equal(cpid, "aac6227b-5404-bff5-db07-6f6f9484a89d");
  json_decref(sp);
  whlab_stop(&webhook);
  whlab_stop(&server);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_apiserver_traceparent_header),
      cmocka_unit_test(test_forged_reviews_refused),
      cmocka_unit_test(test_forward_with_peer_token),
      cmocka_unit_test(test_metrics_listen),
      cmocka_unit_test(test_bad_options),
      cmocka_unit_test(test_long_user_accepted),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
