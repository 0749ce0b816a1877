/*
 * bench_lib.c - libripple's hot paths against the targets of issue 2:
 *   merge decision, N=10, 5 sources        < 1 us
 *   encode + decode of a context, N=10      < 2 us
 *   shipper enqueue, trace server down      < 200 ns, never blocks
 * Each figure is the median of 7 rounds; a round times a tight loop with
 * CLOCK_MONOTONIC. Run through `make bench` (an optimised build).
 */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"
#include "ripple/ripple.h"

static int failures;

static void report(const char *what, double ns, double target) {
  int ok = target <= 0 || ns < target;
  if (!ok) failures++;
  if (target > 0)
    printf("  %-52s %9.1f ns/op   target < %6.0f ns  %s\n", what, ns, target, ok ? "ok" : "MISSED");
  else
    printf("  %-52s %9.1f ns/op\n", what, ns);
}

/* ---- merge ---- */

typedef struct merge_case {
  ripple_tracer_t *t;
  ripple_ctx_t target, src[5];
  const ripple_ctx_t *srcp[5];
} merge_case_t;

static void fill_list(ripple_ctx_t *c, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) ripple_cpid_generate(&c->anc[i]);
  c->nanc = n;
}

/* The common case in a cluster: a ReplicaSet written because its Deployment
 * and 4 Pods changed; the Deployment's CPID descends from everything. */
static void setup_reuse(merge_case_t *m) {
  memset(&m->target, 0, sizeof m->target);
  ripple_cpid_generate(&m->target.cpid);
  fill_list(&m->target, 10);
  ripple_ctx_t d;
  memset(&d, 0, sizeof d);
  ripple_cpid_generate(&d.cpid);
  fill_list(&d, 10);
  d.anc[3] = m->target.cpid;
  for (int i = 0; i < 5; i++) m->src[i] = d, m->srcp[i] = &m->src[i];
}

/* The expensive case: 6 unrelated contexts with full lists, so a new CPID is
 * generated and a mergelog emitted (to a null sink). */
static void setup_new(merge_case_t *m) {
  memset(&m->target, 0, sizeof m->target);
  ripple_cpid_generate(&m->target.cpid);
  fill_list(&m->target, 10);
  for (int i = 0; i < 5; i++) {
    memset(&m->src[i], 0, sizeof m->src[i]);
    ripple_cpid_generate(&m->src[i].cpid);
    fill_list(&m->src[i], 10);
    m->srcp[i] = &m->src[i];
  }
}

static void run_merge(void *ud, long iters) {
  merge_case_t *m = ud;
  ripple_ctx_t out;
  for (long i = 0; i < iters; i++) ripple_merge(m->t, &m->target, m->srcp, 5, NULL, &out, NULL);
}

/* ---- encode + decode ---- */

static void run_codec(void *ud, long iters) {
  const ripple_ctx_t *c = ud;
  char buf[RIPPLE_CTX_STRMAX + 1];
  ripple_ctx_t d;
  size_t len;
  for (long i = 0; i < iters; i++) {
    ripple_ctx_encode(c, buf, sizeof buf, &len);
    ripple_ctx_decode(buf, len, 10, &d);
  }
}

/* ---- object ---- */

typedef struct obj_case {
  const char *json;
  size_t len;
} obj_case_t;

static void run_object_get(void *ud, long iters) {
  obj_case_t *o = ud;
  ripple_ctx_t c;
  for (long i = 0; i < iters; i++) ripple_object_get_ctx(o->json, o->len, NULL, 10, &c);
}

/* ---- shipper ---- */

typedef struct ship_case {
  ripple_shipper_t *s;
  ripple_mergelog_t ml;
  ripple_span_rec_t sp;
} ship_case_t;

static void run_enqueue_ml(void *ud, long iters) {
  ship_case_t *k = ud;
  for (long i = 0; i < iters; i++) ripple_shipper_enqueue_mergelog(k->s, &k->ml);
}

static void run_enqueue_sp(void *ud, long iters) {
  ship_case_t *k = ud;
  for (long i = 0; i < iters; i++) ripple_shipper_enqueue_span(k->s, &k->sp);
}

static int dead_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
      getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
    perror("bench: bind");
    exit(1);
  }
  close(fd);
  return ntohs(sa.sin_port);
}

static void bench_shipper(void) {
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%d", dead_port());
  ripple_log_setup("bench", RIPPLE_LOG_ERROR, NULL, NULL);
  const long n = 200000;
  ripple_shipper_opts_t o = {.url = url, .queue_capacity = (size_t)(BENCH_ROUNDS + 1) * n * 2};
  ship_case_t k;
  if (ripple_shipper_new(&o, &k.s) != RIPPLE_OK) exit(1);
  ripple_cpid_t src[2];
  ripple_cpid_generate(&src[0]);
  ripple_cpid_generate(&src[1]);
  ripple_objref_t obj = {"apps/v1", "ReplicaSet", "default", "web-7d9f8b6c5", "1c0e2d7e-uid"};
  k.ml = (ripple_mergelog_t){.cpid = src[0],
                             .sources = src,
                             .nsources = 2,
                             .time_ns = ripple_now_ns(),
                             .component = "deployment-controller",
                             .object = &obj};
  ripple_attr_t attrs[3] = {
      {"object", "replicasets/web-7d9f8b6c5"}, {"verb", "update"}, {"rv", "48213"}};
  k.sp =
      (ripple_span_rec_t){src[0], 1, 2, "replicaset-controller", "syncReplicaSet", 1, 2, attrs, 3};
  report("shipper enqueue mergelog (server down, queue not full)",
         bench_measure(run_enqueue_ml, &k, n / 2), 200);
  report("shipper enqueue span, 3 attrs (server down, queue not full)",
         bench_measure(run_enqueue_sp, &k, n / 2), 200);
  ripple_shipper_free(k.s, 0);

  o.queue_capacity = 1000; /* now full almost at once: the drop path */
  if (ripple_shipper_new(&o, &k.s) != RIPPLE_OK) exit(1);
  report("shipper enqueue when full (record dropped, counted)",
         bench_measure(run_enqueue_ml, &k, n), 200);
  ripple_shipper_stats_t st;
  ripple_shipper_stats(k.s, &st);
  printf("  %-52s %9llu\n", "  records dropped and counted in that run",
         (unsigned long long)st.dropped);
  ripple_shipper_free(k.s, 0);
}

int main(void) {
  printf("libripple benchmarks (median of %d rounds)\n", BENCH_ROUNDS);
  ripple_tracer_opts_t to = {.component = "bench", .max_ancestors = 10};
  merge_case_t m;
  if (ripple_tracer_new(&to, &m.t) != RIPPLE_OK) return 1;
  setup_reuse(&m);
  report("merge N=10, target + 5 sources, CPID reused", bench_measure(run_merge, &m, 500000), 1000);
  setup_new(&m);
  report("merge N=10, target + 5 sources, new CPID + mergelog",
         bench_measure(run_merge, &m, 500000), 1000);
  ripple_ctx_t c;
  memset(&c, 0, sizeof c);
  ripple_cpid_generate(&c.cpid);
  fill_list(&c, 10);
  report("encode + decode, N=10", bench_measure(run_codec, &c, 500000), 2000);
  char pod[2048];
  char val[RIPPLE_CTX_STRMAX + 1];
  ripple_ctx_encode(&c, val, sizeof val, NULL);
  int len = snprintf(
      pod, sizeof pod,
      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-7d9f8b6c5-x2k4q\","
      "\"namespace\":\"default\",\"uid\":\"5b0c1f7e-2b7a-4c39-9b1e-0d8f1b5e7a11\","
      "\"resourceVersion\":\"48213\",\"labels\":{\"app\":\"web\",\"pod-template-hash\":"
      "\"7d9f8b6c5\"},\"annotations\":{\"cpid.ripple.dev/pod\":\"%s\"},\"ownerReferences\":"
      "[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web-7d9f8b6c5\","
      "\"uid\":\"1c0e2d7e\",\"controller\":true}]},\"spec\":{\"containers\":[{\"name\":\"web\","
      "\"image\":\"nginx:1.27\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}],"
      "\"nodeName\":\"kwok-node-1\"},\"status\":{\"phase\":\"Running\",\"conditions\":"
      "[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
      val);
  obj_case_t oc = {pod, (size_t)len};
  report("read the context of a 1 KiB Pod (JSON parse included)",
         bench_measure(run_object_get, &oc, 50000), 0);
  ripple_tracer_free(m.t);
  bench_shipper();
  printf("%s\n", failures ? "some targets MISSED" : "all targets met");
  return failures ? 1 : 0;
}
