/*
 * test_webhook_hostile.c - ripple-webhook's listener against slow clients
 * (issue 27): 300 connections from 127.0.0.2 (any Pod, to the API server one
 * more client address) sending an AdmissionReview one byte every 5 s, while
 * the API server (the test, on 127.0.0.1) asks for admission. Every admission
 * is answered during the attack, and every slow connection is closed: by the
 * limit per address at once, or by the request deadline.
 *
 * The real binary with --no-informers on plain HTTP: the listener is the same
 * with TLS (httpd.h), where a trickled handshake is held by the same deadline.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostile.h"
#include "http_client.h"
#include "testutil.h"
#include "wh_lab.h"

static char dir[64];
static whlab_proc_t webhook;

static int setup(void **state) {
  (void)state;
  signal(SIGPIPE, SIG_IGN);
  snprintf(dir, sizeof dir, "/tmp/ripple-wh-hostile-XXXXXX");
  assert_non_null(mkdtemp(dir));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  whlab_kill(&webhook);
  test_rmtree(dir);
  return 0;
}

#define REVIEW                                                                                  \
  "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"          \
  "\"uid\":\"req-1\",\"kind\":{\"group\":\"apps\",\"version\":\"v1\",\"kind\":\"Deployment\"}," \
  "\"resource\":{\"group\":\"apps\",\"version\":\"v1\",\"resource\":\"deployments\"},"          \
  "\"namespace\":\"d\",\"name\":\"web\",\"operation\":\"CREATE\",\"userInfo\":{"                \
  "\"username\":\"kubernetes-admin\"},\"object\":{\"kind\":\"Deployment\",\"metadata\":{"       \
  "\"name\":\"web\",\"namespace\":\"d\"}},\"oldObject\":null,\"dryRun\":false}}"

/* The API server's call: answered, allowed. */
static void admit(void) {
  char url[96];
  snprintf(url, sizeof url, "http://127.0.0.1:%u/mutate", webhook.port);
  hc_resp_t r = {0};
  assert_int_equal(hc_request("POST", url, REVIEW, strlen(REVIEW), NULL, &r), 0);
  if (r.status != 200 || !strstr(r.body, "\"allowed\":true"))
    fail_msg("admission: %ld %s", r.status, r.body ? r.body : "");
  hc_resp_free(&r);
}

static void test_slow_clients(void **state) {
  (void)state;
  snprintf(webhook.log, sizeof webhook.log, "%s/webhook.log", dir);
  /* The deadline short enough to wait for, still far above the
   * registration's timeoutSeconds (1). */
  char *argv[] = {getenv("RIPPLE_WEBHOOK_BIN"), "--listen", "127.0.0.1:0", "--no-informers",
                  "--request-deadline",         "2s",       NULL};
  whlab_spawn(&webhook, argv);
  admit();
  char request[1024];
  snprintf(request, sizeof request,
           "POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
           "Content-Length: %zu\r\n\r\n%s",
           strlen(REVIEW), REVIEW);
  hostile_slow_t *s = hostile_slow_start("127.0.0.2", webhook.port, 300, request, 5000);
  assert_non_null(s);
  while (hostile_slow_opened(s) < 300) usleep(10000);
  for (int k = 0; k < 20; k++) admit(); /* while they hold their slots */
  for (int i = 0; i < 600 && hostile_slow_closed(s) < 300; i++) usleep(100000);
  size_t closed = hostile_slow_closed(s);
  fprintf(stderr, "# 300 slow connections: %zu closed\n", closed);
  hostile_slow_stop(s);
  assert_int_equal(closed, 300);
  admit();
  whlab_stop(&webhook);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_slow_clients)};
  return cmocka_run_group_tests(tests, setup, teardown);
}
