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
 *
 * The hops' parts: with the real ripple-watch sending each change and the
 * lab's kube-apiserver sending audit events to the trace server, a scale
 * with the scheduler stopped for two seconds: the binding hop on its
 * critical path is split into seen, wrote and admission, which add up to it,
 * and its "wrote" (until the API server received the binding) is the
 * largest: the scheduler, not the watch or admission, held it.
 */
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

/* ---- the hops' parts: ripple-watch and audit --------------------------------------- */

static int parts_teardown(void **state) {
  cl_watch_stop();
  return cl_teardown(state);
}

/* ripple-watch on the test's Deployments, ReplicaSets and Pods, sending
 * their changes to the trace server. */
static void start_watch(void) {
  static const char *const more[] = {"--resources", "deployments.apps,replicasets.apps,pods",
                                     "--no-records", NULL};
  cl_watch_start(more, 3);
}

static char audit_listen[32];

/* The server where kube-apiserver sends audit events, and ripple-watch. */
static int parts_setup(void **state) {
  (void)state;
  whlab_begin_cluster(&cl, "ripple-parts");
  const char *port = getenv("RIPPLE_LAB_AUDIT_PORT");
  if (!port) fail_msg("RIPPLE_LAB_AUDIT_PORT is not set: run under scripts/with-lab");
  snprintf(audit_listen, sizeof audit_listen, "127.0.0.1:%s", port);
  static const char *const args[] = {"--listen", audit_listen, NULL};
  memcpy(cl.server_args, args, sizeof args);
  cl_start_webhook();
  start_watch();
  return 0;
}

static double part(const json_t *h, const char *k) {
  const json_t *v = json_object_get(json_object_get(h, "parts"), k);
  return json_is_number(v) ? json_number_value(v) : -1;
}

/* The binding hop of cpid's critical path (a new reference in *path), or
 * NULL when it has none. */
static const json_t *binding_hop(const char *cpid, json_t **path) {
  *path = whlab_trace(&cl, cpid, "critical-path");
  const json_t *h;
  size_t i;
  json_array_foreach(json_object_get(*path, "hops"), i, h) {
    if (!strcmp(str(h, "write"), "create pods/binding")) return h;
  }
  return NULL;
}

/* The binding hop has all three parts: the details and audit have come. */
static int split(void *ud) {
  json_t *path;
  const json_t *h = binding_hop(ud, &path);
  int ok = h && part(h, "seen_ms") >= 0 && part(h, "wrote_ms") >= 0 && part(h, "admission_ms") >= 0;
  json_decref(path);
  return ok;
}

static void test_parts(void **state) {
  (void)state;
  whlab_create(&cl, "deployments", cl_deployment("web", 2));
  cl_wait_fields("deployments", "web", 2, CL_READY_APPS, 120000);
  char slow[CL_CPID];
  scale(4, slow, 1);
  cl_spans_settle();
  cl_wait(split, slow, 60000, "the binding hop split into seen, wrote and admission");

  json_t *path;
  const json_t *bind = binding_hop(slow, &path), *h;
  size_t i;
  json_array_foreach(json_object_get(path, "hops"), i, h) {
    /* -1: a part not known (the first hop has none). */
    fprintf(stderr, "# %8.1f ms = seen %7.1f + wrote %7.1f + admission %5.1f  %s %s\n",
            json_real_value(json_object_get(h, "ms")), part(h, "seen_ms"), part(h, "wrote_ms"),
            part(h, "admission_ms"), str(h, "component"), str(h, "write"));
  }
  assert_non_null(bind);
  double seen = part(bind, "seen_ms"), wrote = part(bind, "wrote_ms"),
         adm = part(bind, "admission_ms"), ms = json_real_value(json_object_get(bind, "ms"));
  /* The parts add up to the hop (to rounding). */
  if (fabs(seen + wrote + adm - ms) > 0.01)
    fail_msg("the binding's parts %.3f + %.3f + %.3f are not its %.3f ms", seen, wrote, adm, ms);
  /* The stopped scheduler is in "wrote", not in the watch's or admission's. */
  if (!(wrote > seen && wrote > adm))
    fail_msg("the binding's wrote (%.1f ms) is not its largest part (seen %.1f, admission %.1f)",
             wrote, seen, adm);
  json_decref(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_slow_scheduler, cl_teardown),
      cmocka_unit_test_setup_teardown(test_parts, parts_setup, parts_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
