/*
 * test_jaeger_lab.c - the lab's Jaeger v2 works as the OTLP backend of lab
 * tests (tests/support/jaeger_lab.h): started on loopback ports only, an OTLP
 * JSON export of two spans (a child, and a link to another trace) is stored
 * by the time the receiver answers 200 and reads back with its parent and
 * its link; an unknown trace is a 404; killed and restarted it is empty.
 *
 * Needs no cluster, only the lab's Jaeger ($RIPPLE_LAB_JAEGER, from
 * `lab/build.sh --jaeger`; scripts/with-lab exports it). Without it the test
 * fails: `make test` builds Jaeger, so a missing one is a broken setup.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http_client.h"
#include "jaeger_lab.h"
#include "testutil.h"

#define TRACE "5b8efff798038103d269b633813fc60c"
#define ROOT "eee19b7ec3c1b174"
#define CHILD "0af7651916cd43dd"
#define LINK_TRACE "4bf92f3577b34da6a3ce929d0e0e4736"
#define LINK_SPAN "00f067aa0ba902b7"
#define UNKNOWN "0123456789abcdef0123456789abcdef"

static jaeger_lab_t *J;

static int setup(void **state) {
  (void)state;
  char err[2048];
  if (jaeger_lab_start(&J, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "test_jaeger_lab: %s\n", err);
    return -1; /* cmocka fails the group */
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  jaeger_lab_stop(J);
  J = NULL;
  return 0;
}

/* The network rule: every socket Jaeger listens on (TCP and UDP) is on
 * 127.0.0.1, as `ss` sees it, and there are just the four it was given. */
static void test_listens_on_loopback_only(void **state) {
  (void)state;
  char line[512], want[32];
  snprintf(want, sizeof want, "pid=%d,", (int)jaeger_lab_pid(J));
  FILE *p = popen("ss -Htulnp 2>&1", "r"); /* NOLINT(cert-env33-c): a fixed command */
  assert_non_null(p);
  int n = 0, bad = 0;
  while (fgets(line, sizeof line, p)) {
    if (!strstr(line, want)) continue;
    char proto[16], st[16], rq[16], sq[16], local[128];
    if (sscanf(line, "%15s %15s %15s %15s %127s", proto, st, rq, sq, local) != 5) continue;
    n++;
    if (strncmp(local, "127.0.0.1:", 10) != 0) {
      fprintf(stderr, "jaeger listens on %s: %s", local, line);
      bad++;
    }
  }
  assert_int_equal(pclose(p), 0);
  assert_int_equal(bad, 0);
  assert_int_equal(n, 4); /* OTLP/HTTP, query HTTP, query gRPC, health check */
}

static void test_export_and_read_back(void **state) {
  (void)state;
  long long t0 = (long long)time(NULL) * 1000000000LL;
  char body[4096];
  int len = snprintf(
      body, sizeof body,
      "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
      "\"value\":{\"stringValue\":\"ripple-test\"}}]},\"scopeSpans\":[{\"scope\":{\"name\":"
      "\"test_jaeger_lab\"},\"spans\":["
      "{\"traceId\":\"" TRACE "\",\"spanId\":\"" ROOT
      "\",\"name\":\"scale\",\"kind\":1,"
      "\"startTimeUnixNano\":\"%lld\",\"endTimeUnixNano\":\"%lld\","
      "\"links\":[{\"traceId\":\"" LINK_TRACE "\",\"spanId\":\"" LINK_SPAN
      "\","
      "\"attributes\":[{\"key\":\"ripple.relation\",\"value\":{\"stringValue\":\"cause\"}}],"
      "\"flags\":256}]},"
      "{\"traceId\":\"" TRACE "\",\"spanId\":\"" CHILD "\",\"parentSpanId\":\"" ROOT
      "\","
      "\"name\":\"replicaset\",\"kind\":1,\"startTimeUnixNano\":\"%lld\","
      "\"endTimeUnixNano\":\"%lld\",\"status\":{\"code\":1}}"
      "]}]}]}",
      t0, t0 + 5000000, t0 + 1000000, t0 + 4000000);
  assert_true(len > 0 && len < (int)sizeof body);

  hc_resp_t r;
  assert_int_equal(hc_request("POST", jaeger_lab_otlp_url(J), body, (size_t)len, NULL, &r), 0);
  if (r.status != 200) fail_msg("POST %s: %ld %s", jaeger_lab_otlp_url(J), r.status, r.body);
  /* No rejected spans: an empty partialSuccess, or none at all. */
  assert_null(r.body ? strstr(r.body, "rejectedSpans") : NULL);
  hc_resp_free(&r);

  /* Stored before the 200 (no batch processor, no queue): no wait. */
  json_t *res = NULL;
  int rc = jaeger_lab_trace(J, TRACE, &res);
  if (rc != RIPPLE_OK) fail_msg("%s: %s", ripple_errname(rc), jaeger_lab_last_error(J));
  assert_int_equal(jaeger_lab_count_spans(res), 2);

  json_t *root = jaeger_lab_find_span(res, ROOT), *child = jaeger_lab_find_span(res, CHILD);
  assert_non_null(root);
  assert_non_null(child);
  assert_ptr_equal(jaeger_lab_find_span(res, "EEE19B7EC3C1B174"), root); /* either case */
  assert_null(jaeger_lab_find_span(res, LINK_SPAN));
  assert_string_equal(json_string_value(json_object_get(child, "traceId")), TRACE);
  assert_string_equal(json_string_value(json_object_get(child, "parentSpanId")), ROOT);
  assert_string_equal(json_string_value(json_object_get(child, "name")), "replicaset");
  const char *rp = json_string_value(json_object_get(root, "parentSpanId"));
  assert_true(!rp || !*rp); /* the root has none */

  json_t *links = json_object_get(root, "links");
  assert_int_equal(json_array_size(links), 1);
  json_t *l = json_array_get(links, 0);
  assert_string_equal(json_string_value(json_object_get(l, "traceId")), LINK_TRACE);
  assert_string_equal(json_string_value(json_object_get(l, "spanId")), LINK_SPAN);
  json_t *la = json_array_get(json_object_get(l, "attributes"), 0);
  assert_string_equal(json_string_value(json_object_get(la, "key")), "ripple.relation");
  assert_string_equal(
      json_string_value(json_object_get(json_object_get(la, "value"), "stringValue")), "cause");
  json_decref(res);

  json_t *got = NULL;
  assert_int_equal(jaeger_lab_wait_spans(J, TRACE, 2, 1000, &got), RIPPLE_OK);
  assert_int_equal(jaeger_lab_count_spans(got), 2);
  json_decref(got);
  got = NULL;
  assert_int_equal(jaeger_lab_wait_spans(J, TRACE, 3, 200, &got), RIPPLE_ETIMEDOUT);
  assert_null(got);
}

static void test_unknown_trace_is_enoent(void **state) {
  (void)state;
  json_t *res = NULL;
  assert_int_equal(jaeger_lab_trace(J, UNKNOWN, &res), RIPPLE_ENOENT);
  assert_null(res);
  assert_int_equal(jaeger_lab_trace(J, "not-hex", &res), RIPPLE_EINVAL);
  assert_int_equal(jaeger_lab_count_spans(NULL), 0);
}

static void test_kill_and_restart(void **state) {
  (void)state;
  char err[2048];
  json_t *res = NULL;
  assert_int_equal(jaeger_lab_kill(J), RIPPLE_OK);
  assert_int_equal(jaeger_lab_pid(J), -1);
  assert_int_equal(jaeger_lab_kill(J), RIPPLE_ESTATE);
  assert_int_equal(jaeger_lab_trace(J, TRACE, &res), RIPPLE_ESTATE);
  if (jaeger_lab_restart(J, err, sizeof err) != RIPPLE_OK) fail_msg("%s", err);
  /* Memory storage starts empty. */
  assert_int_equal(jaeger_lab_trace(J, TRACE, &res), RIPPLE_ENOENT);
  assert_null(res);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_listens_on_loopback_only),
      cmocka_unit_test(test_export_and_read_back),
      cmocka_unit_test(test_unknown_trace_is_enoent),
      cmocka_unit_test(test_kill_and_restart),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
