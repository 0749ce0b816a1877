/*
 * test_paths_lab.c - which hop decided how long a cascade took, and two
 * cascades compared (GET /v1/cpids/{cpid}/critical-path, GET /v1/compare),
 * with the real ripple-webhook and ripple-server on the lab.
 *
 * A Deployment of 2 replicas is scaled by a person to 4, then to 6 with the
 * lab's kube-scheduler stopped (SIGSTOP) for two seconds. The second scale's
 * critical path must run through the scheduler's bindings, the binding hop
 * the longest on it; compared with the first scale, the bindings must be the
 * hop that changed most, slower. No time is asserted: which hop is longest,
 * and which changed most, are.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cascade_lab.h"
#include "http_client.h"

static const char *str(const json_t *o, const char *k) {
  const char *v = json_string_value(json_object_get(o, k));
  return v ? v : "";
}

static void scale(int n, char cpid[CL_CPID], int stop_scheduler) {
  char fields[64];
  snprintf(fields, sizeof fields, "\"spec\":{\"replicas\":%d}", n);
  if (stop_scheduler) cl_scheduler_stop();
  cl_patch_root("deployments", "Deployment", "web", fields, cpid);
  if (stop_scheduler) {
    sleep(2);
    cl_scheduler_resume();
  }
  cl_wait_fields("deployments", "web", n, CL_READY_APPS, 120000);
}

static void test_slow_scheduler(void **state) {
  (void)state;
  cl_begin("ripple-paths");
  whlab_create(&cl, "deployments", cl_deployment("web", 2));
  cl_wait_fields("deployments", "web", 2, CL_READY_APPS, 120000);
  char quick[CL_CPID], slow[CL_CPID];
  scale(4, quick, 0);
  scale(6, slow, 1);
  cl_spans_settle();

  json_t *path = whlab_trace(&cl, slow, "critical-path");
  const json_t *hops = json_object_get(path, "hops"), *h, *longest = NULL;
  size_t i, bindings = 0;
  json_array_foreach(hops, i, h) {
    fprintf(stderr, "# %8.1f ms  %s %s %s\n", json_real_value(json_object_get(h, "ms")),
            str(h, "component"), str(h, "write"), str(h, "name"));
    bindings += !strcmp(str(h, "write"), "create pods/binding");
    if (!longest ||
        json_real_value(json_object_get(h, "ms")) > json_real_value(json_object_get(longest, "ms")))
      longest = h;
  }
  if (bindings != 1) fail_msg("the slow scale's critical path has %zu bindings, not 1", bindings);
  assert_non_null(longest);
  assert_string_equal(str(longest, "component"), "kube-scheduler");
  assert_string_equal(str(longest, "write"), "create pods/binding");
  assert_string_equal(str(json_array_get(hops, 0), "cpid"), slow); /* from the person's write */
  json_decref(path);

  char q[256];
  snprintf(q, sizeof q, "/v1/compare?a=%s&b=%s", quick, slow);
  json_t *cmp = hc_get_json(cl.trace, q, 200);
  if (!cmp) fail_msg("GET %s did not answer 200", q);
  json_array_foreach(json_object_get(cmp, "hops"), i, h) {
    fprintf(stderr, "# %-12s %+8.1f ms  %s %s\n", str(h, "change"),
            json_real_value(json_object_get(h, "delta_ms")), str(h, "component"), str(h, "write"));
  }
  const json_t *first = json_array_get(json_object_get(cmp, "hops"), 0);
  assert_string_equal(str(first, "component"), "kube-scheduler");
  assert_string_equal(str(first, "write"), "create pods/binding");
  assert_string_equal(str(first, "change"), "slower");
  json_decref(cmp);
  cl_nothing_refused();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_slow_scheduler, cl_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
