/*
 * bench_own.c - what a change's own cascade (docs/api.md, "Own cascade and
 * everything reachable") costs the trace server, in-process (issue 31):
 *
 *   trace    GET /v1/cpids/{cpid}/trace's work (trace_answer: the walk under
 *            the read lock, the rows read from the store, the JSON answer) for
 *            a change whose own cascade is 10,000 spans over 200 CPIDs, and
 *            which reaches as many again through later changes that carried
 *            its context along: own and reachable, p50/p99; the graph walk
 *            alone; the Find listing's summaries (GET /v1/roots) of the
 *            changes, own and reachable; the critical path of the first
 *            change and its comparison with the second (GET
 *            /v1/cpids/{cpid}/critical-path, GET /v1/compare)
 *   ingest   srv_ingest (everything but HTTP) of mergelogs of two sources
 *            with and without a trigger list, alternated, per record
 *   hops     GET /v1/hops's work (hops_answer) over the 50 newest of 50
 *            scales of the same shape, 2,500 spans each: every cascade read,
 *            grouped and added up
 *
 *   bench_own [trace|ingest|hops|all]
 *
 * The cascade is a Deployment scaled SCALES times: scale k's root P_k, its
 * ReplicaSet update N_k = [P_k, N_{k-1}] triggered by P_k, and Pod contexts
 * from N_k with spans under them; the first scale's are 10,000 spans, each
 * later scale's 2,500.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/hops.h"
#include "analysis/paths.h"
#include "benchutil.h"
#include "graph/search.h"
#include "graph/trace.h"
#include "ripplex/clock.h"
#include "ripplex/sbuf.h"
#include "serve/server.h"

#define SCALES 5
#define FIRST_SPANS 10000
#define LATER_SPANS 2500
#define PODS 198 /* Pod contexts per scale: with P_k and N_k, 200 CPIDs */
#define RUNS 201
#define HOPS_SCALES 50
#define HOPS_RUNS 21

static int failures;
static const dec_limits_t limits = {10000, 4096, 64, 4096};

static void cpid_text(unsigned scale, unsigned i, char out[40]) {
  snprintf(out, 40, "%08x-0000-4000-8000-%012x", scale, i);
}

static void ingest(srv_t *s, dec_kind_t kind, sbuf_t *b) {
  size_t accepted;
  dec_error_t err;
  sbuf_putc(b, ']');
  if (srv_ingest(s, kind, b->p, b->len, &accepted, &err) != 200) {
    fprintf(stderr, "bench_own: refused: %s %s\n", err.field, err.msg);
    failures++;
  }
  b->len = 0;
  sbuf_putc(b, '[');
}

/* Scale k (1..SCALES) of the Deployment, spans spread over its Pods. */
static void post_scale(srv_t *s, unsigned k, size_t spans) {
  sbuf_t m, sp;
  sbuf_init(&m);
  sbuf_init(&sp);
  sbuf_putc(&m, '[');
  sbuf_putc(&sp, '[');
  char p[40], n[40], prev[40], q[40];
  cpid_text(k, 0, p);
  cpid_text(k, 1, n);
  cpid_text(k - 1, 1, prev);
  sbuf_printf(
      &m,
      "{\"cpid\":\"%s\",\"sources\":[],\"time\":\"2026-11-24T10:%02u:00Z\",\"component\":"
      "\"kubectl\",\"object\":{\"kind\":\"Deployment\",\"namespace\":\"b\",\"name\":\"web\"}}",
      p, k);
  if (k == 1)
    sbuf_printf(&m, ",{\"cpid\":\"%s\",\"sources\":[],\"time\":\"2026-11-24T10:00:00Z\"}", prev);
  sbuf_printf(&m,
              ",{\"cpid\":\"%s\",\"sources\":[\"%s\",\"%s\"],\"trigger\":[\"%s\"],\"time\":"
              "\"2026-11-24T10:%02u:01Z\",\"component\":\"deployment-controller\"}",
              n, p, prev, p, k);
  for (unsigned i = 0; i < PODS; i++) {
    cpid_text(k, 2 + i, q);
    sbuf_printf(&m, ",{\"cpid\":\"%s\",\"sources\":[\"%s\"],\"time\":\"2026-11-24T10:%02u:02Z\"}",
                q, n, k);
  }
  ingest(s, DEC_MERGELOGS, &m);
  for (size_t i = 0; i < spans; i++) {
    cpid_text(k, 2 + (unsigned)(i % PODS), q);
    sbuf_printf(&sp,
                "%s{\"cpid\":\"%s\",\"span_id\":\"%08x%08zx\",\"service\":\"kubelet\",\"name\":"
                "\"update pods/status\",\"start\":\"2026-11-24T10:%02u:03Z\",\"end\":"
                "\"2026-11-24T10:%02u:%02zuZ\",\"attributes\":{\"kind\":\"Pod\",\"namespace\":"
                "\"b\",\"name\":\"web-%zu\"}}",
                sp.len > 1 ? "," : "", q, k, i + 1, k, k, 4 + i % 50, i % PODS);
    if ((i + 1) % 5000 == 0) ingest(s, DEC_SPANS, &sp);
  }
  if (sp.len > 1) ingest(s, DEC_SPANS, &sp);
  sbuf_free(&m);
  sbuf_free(&sp);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void show(const char *what, int64_t *ns, size_t n, size_t size, const char *unit) {
  qsort(ns, n, sizeof *ns, cmp_i64);
  size_t p50 = n / 2, p99 = n * 99 / 100;
  printf("  %-44s p50 %9.1f us  p99 %9.1f us  (%zu %s)\n", what, (double)ns[p50] / 1e3,
         (double)ns[p99] / 1e3, size, unit);
}

static void time_trace(srv_t *s, const ripple_cpid_t *c, graph_scope_t scope, const char *what) {
  static int64_t lat[RUNS];
  sbuf_t out;
  sbuf_init(&out);
  for (int r = 0; r < RUNS; r++) {
    out.len = 0;
    int64_t t0 = mono_ns();
    if (trace_answer(&s->core, c, scope, 100000, NULL, &out) != 200) failures++;
    lat[r] = mono_ns() - t0;
  }
  show(what, lat, RUNS, out.len, "bytes of JSON");
  sbuf_free(&out);
}

static void time_walk(srv_t *s, const ripple_cpid_t *c, graph_scope_t scope, const char *what) {
  static int64_t lat[RUNS];
  size_t n = 0;
  for (int r = 0; r < RUNS; r++) {
    vid_t *vs;
    int trunc;
    int64_t t0 = mono_ns();
    pthread_rwlock_rdlock(&s->core.lock);
    if (graph_cascade(s->core.g, c, scope, 100000, &vs, &n, &trunc) != RIPPLE_OK) failures++;
    pthread_rwlock_unlock(&s->core.lock);
    lat[r] = mono_ns() - t0;
    free(vs);
  }
  show(what, lat, RUNS, n, "CPIDs");
}

/* GET /v1/cpids/{cpid}/critical-path's work (b NULL) or GET /v1/compare's
 * (a against b): the traces read and parsed, the path or comparison made. */
static void time_paths(srv_t *s, const ripple_cpid_t *a, const ripple_cpid_t *b, const char *what) {
  static int64_t lat[RUNS];
  sbuf_t out;
  sbuf_init(&out);
  for (int r = 0; r < RUNS; r++) {
    out.len = 0;
    int64_t t0 = mono_ns();
    int st = b ? paths_compare(&s->core, a, b, GRAPH_OWN, 100000, &out)
               : paths_critical(&s->core, &s->details, a, GRAPH_OWN, 100000, &out);
    if (st != 200) failures++;
    lat[r] = mono_ns() - t0;
  }
  show(what, lat, RUNS, out.len, "bytes of JSON");
  sbuf_free(&out);
}

static void time_roots(srv_t *s, graph_scope_t scope, const char *what) {
  static int64_t lat[RUNS];
  sbuf_t out;
  sbuf_init(&out);
  search_roots_query_t q = {
      .since = INT64_MIN, .component = "kubectl", .limit = 50, .scope = scope};
  char err[128];
  for (int r = 0; r < RUNS; r++) {
    out.len = 0;
    int64_t t0 = mono_ns();
    if (search_roots(&s->core, &q, &out, err, sizeof err) != 200) failures++;
    lat[r] = mono_ns() - t0;
  }
  show(what, lat, RUNS, out.len, "bytes of JSON");
  sbuf_free(&out);
}

/* The server keeps the configuration's paths (it derives the details
 * database's from db_path later): they must outlive the call. */
static srv_t *open_server(char *dir) {
  static char path[128];
  char err[256];
  snprintf(path, sizeof path, "%s/own.db", dir);
  srv_config_t cfg = {.db_path = path, .query_limit = 100000, .limits = limits};
  static srv_t s;
  if (srv_open(&s, &cfg, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "bench_own: %s\n", err);
    exit(1);
  }
  return &s;
}

static char *temp_dir(void) {
  static char dir[64];
  snprintf(dir, sizeof dir, "/tmp/ripple-bench-own-XXXXXX");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(1);
  }
  return dir;
}

static void bench_trace(void) {
  char *dir = temp_dir();
  srv_t *s = open_server(dir);
  for (unsigned k = 1; k <= SCALES; k++) post_scale(s, k, k == 1 ? FIRST_SPANS : LATER_SPANS);
  char text[40];
  ripple_cpid_t p1;
  cpid_text(1, 0, text);
  ripple_cpid_parse(text, strlen(text), &p1);
  printf(
      "a change whose own cascade is %d spans over 200 CPIDs; it reaches %d spans over %d "
      "CPIDs (%d later scales carried its context); %d runs each:\n",
      FIRST_SPANS, FIRST_SPANS + (SCALES - 1) * LATER_SPANS, 1 + SCALES * 199, SCALES - 1, RUNS);
  time_walk(s, &p1, GRAPH_OWN, "graph_cascade own (the walk, read lock)");
  time_walk(s, &p1, GRAPH_REACHABLE, "graph_cascade reachable");
  time_trace(s, &p1, GRAPH_OWN, "trace_answer own (/trace)");
  time_trace(s, &p1, GRAPH_REACHABLE, "trace_answer reachable (/trace?scope=...)");
  ripple_cpid_t p2;
  cpid_text(2, 0, text);
  ripple_cpid_parse(text, strlen(text), &p2);
  time_paths(s, &p1, NULL, "paths_critical own (/critical-path)");
  time_paths(s, &p1, &p2, "paths_compare own, 10,000 vs 2,500 (/v1/compare)");
  time_roots(s, GRAPH_OWN, "search_roots own, 5 summaries (/v1/roots)");
  time_roots(s, GRAPH_REACHABLE, "search_roots reachable, 5 summaries");
  srv_close(s);
  bench_rmtree(dir);
}

static void bench_hops(void) {
  char *dir = temp_dir();
  srv_t *s = open_server(dir);
  for (unsigned k = 1; k <= HOPS_SCALES; k++) post_scale(s, k, LATER_SPANS);
  static int64_t lat[HOPS_RUNS];
  hops_query_t q = {.since = INT64_MIN,
                    .kind = "Deployment",
                    .limit = HOPS_SCALES,
                    .cpid_limit = 100000,
                    .scope = GRAPH_OWN};
  sbuf_t out;
  sbuf_init(&out);
  printf("%d scales of %d spans over 200 CPIDs each; %d runs:\n", HOPS_SCALES, LATER_SPANS,
         HOPS_RUNS);
  for (int r = 0; r < HOPS_RUNS; r++) {
    out.len = 0;
    int64_t t0 = mono_ns();
    if (hops_answer(&s->core, &q, &out) != 200) failures++;
    lat[r] = mono_ns() - t0;
  }
  show("hops_answer own, 50 roots (/v1/hops)", lat, HOPS_RUNS, out.len, "bytes of JSON");
  sbuf_free(&out);
  srv_close(s);
  bench_rmtree(dir);
}

/* n mergelogs of two sources (the previous two), with a trigger list or not. */
static double ingest_run(unsigned run, int trigger, size_t n) {
  char *dir = temp_dir();
  srv_t *s = open_server(dir);
  sbuf_t m;
  sbuf_init(&m);
  sbuf_putc(&m, '[');
  char c[40], a[40], b[40];
  cpid_text(0x100 + run, 0, a);
  cpid_text(0x100 + run, 1, b);
  sbuf_printf(&m, "{\"cpid\":\"%s\",\"sources\":[],\"time\":\"2026-11-24T10:00:00Z\"},", a);
  sbuf_printf(&m, "{\"cpid\":\"%s\",\"sources\":[],\"time\":\"2026-11-24T10:00:00Z\"}", b);
  ingest(s, DEC_MERGELOGS, &m);
  int64_t t0 = mono_ns();
  for (size_t i = 2; i < n + 2; i++) {
    cpid_text(0x100 + run, (unsigned)i, c);
    cpid_text(0x100 + run, (unsigned)i - 1, a);
    cpid_text(0x100 + run, (unsigned)i - 2, b);
    sbuf_printf(&m, "%s{\"cpid\":\"%s\",\"sources\":[\"%s\",\"%s\"],", m.len > 1 ? "," : "", c, a,
                b);
    if (trigger) sbuf_printf(&m, "\"trigger\":[\"%s\"],", a);
    sbuf_puts(&m, "\"time\":\"2026-11-24T10:00:01Z\",\"component\":\"deployment-controller\"}");
    if ((i - 1) % 1000 == 0) ingest(s, DEC_MERGELOGS, &m);
  }
  if (m.len > 1) ingest(s, DEC_MERGELOGS, &m);
  double us = (double)(mono_ns() - t0) / 1e3 / (double)n;
  sbuf_free(&m);
  srv_close(s);
  bench_rmtree(dir);
  return us;
}

static void bench_ingest(void) {
  enum { N = 200000, ROUNDS = 5 };
  printf(
      "srv_ingest (all but HTTP) of %d mergelogs of two sources, 1,000 per request, "
      "alternated, wall us per record:\n",
      N);
  for (unsigned r = 0; r < ROUNDS; r++) {
    double without = ingest_run(2 * r, 0, N), with = ingest_run(2 * r + 1, 1, N);
    printf("  round %u: without trigger %.2f us, with trigger %.2f us\n", r + 1, without, with);
  }
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "all";
  ripple_log_setup("bench_own", RIPPLE_LOG_WARN, NULL, NULL);
  int all = !strcmp(what, "all");
  if (!all && strcmp(what, "trace") != 0 && strcmp(what, "ingest") != 0 &&
      strcmp(what, "hops") != 0) {
    fprintf(stderr, "usage: bench_own [trace|ingest|hops|all]\n");
    return 2;
  }
  if (all || !strcmp(what, "trace")) bench_trace();
  if (all || !strcmp(what, "hops")) bench_hops();
  if (all || !strcmp(what, "ingest")) bench_ingest();
  return failures ? 1 : 0;
}
