/*
 * bench_server.c - the trace server's parts in-process, against the targets
 * of the trace-server issue:
 *
 *   phases    where one ingested record's time goes: JSON parse, the rest of
 *             decoding, the durable write, the graph; then all of it through
 *             srv_ingest (everything but HTTP)
 *   graph     related-CPIDs query on a synthetic merge graph: p99 < 5 ms at
 *             10 million vertices; memory per vertex < 100 bytes
 *   startup   rebuilding the graph from a database of mergelogs at start
 *   otlp      POST /v1/traces in-process: an OTLP protobuf request of 1,000
 *             spans decoded into records, and through srv_ingest_otlp
 *
 *   bench_server [phases|graph|startup|otlp|all] [--vertices N] [--startup-n N]
 *   bench_server otlp-request FILE [--spans N]
 *             writes one OTLP/HTTP protobuf request (an ExportTraceServiceRequest
 *             of N spans, 8 string attributes each) for bench-vs-jaeger.sh
 *
 * Defaults keep `make bench` short (graph at 10M vertices, start-up at 1M);
 * RIPPLE_BENCH_FULL=1 measures start-up at 10M too. HTTP on top of this is
 * bench_ingest's job (the real binary, over loopback).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"
#include "graph/graph.h"
#include "ingest/decode.h"
#include "ingest/otlp.h"
#include "ingest/otlp.pb-c.h"
#include "ripplex/clock.h"
#include "ripplex/sbuf.h"
#include "ripplex/wire.h"
#include "serve/server.h"
#include "store/store.h"

static int failures;

/* A fast deterministic generator, so graphs and bodies are the same each run. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rng(void) {
  uint64_t x = (rng_state += 0x9e3779b97f4a7c15ULL);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static void random_cpid(ripple_cpid_t *id) {
  uint64_t a = rng(), b = rng();
  memcpy(id->b, &a, 8);
  memcpy(id->b + 8, &b, 8);
  id->b[6] = (uint8_t)((id->b[6] & 0x0f) | 0x40);
  id->b[8] = (uint8_t)((id->b[8] & 0x3f) | 0x80);
}

static char *temp_dir(void) {
  static char dir[64];
  snprintf(dir, sizeof dir, "/tmp/bench_server.XXXXXX");
  return mkdtemp(dir);
}

/* ---- a synthetic merge graph -------------------------------------------------- */

/* The CPID of vertex i: a hash of i, so no table of 10 million ids is kept
 * and the query side can name any vertex. */
static void cpid_of(uint64_t i, ripple_cpid_t *id) {
  uint64_t save = rng_state;
  rng_state = i * 0x2545f4914f6cdd1dULL;
  random_cpid(id);
  rng_state = save;
}

/* Cascades of 5 to 50 CPIDs: a root (an operator's change), then CPIDs that
 * each merge 1 to 3 earlier CPIDs of the cascade (60% one, 30% two, 10%
 * three; the first source one of the last three). 3% of mergelogs also merge
 * a CPID of one of the ~1000 cascades before, which joins cascades the way a
 * shared object (a Service, a node) joins changes in a cluster. */
typedef struct shape {
  uint64_t next, cascade, end;
} shape_t;

static size_t shape_next(shape_t *sh, uint64_t *src) {
  uint64_t i = sh->next++;
  if (i >= sh->end) {
    sh->cascade = i;
    sh->end = i + 5 + rng() % 46;
    return 0;
  }
  uint64_t span = i - sh->cascade;
  int r = (int)(rng() % 100), n = r < 60 ? 1 : r < 90 ? 2 : 3;
  src[0] = i - 1 - rng() % (span < 3 ? span : 3);
  size_t k = 1;
  for (int j = 1; j < n; j++) {
    uint64_t c = sh->cascade + rng() % span;
    if (c != src[0] && (k < 2 || c != src[1])) src[k++] = c;
  }
  if (sh->cascade > 0 && rng() % 100 < 3) {
    uint64_t back = sh->cascade < 27000 ? sh->cascade : 27000;
    src[k++] = sh->cascade - 1 - rng() % back;
  }
  return k;
}

/* The first n mergelogs of the shape, each given to fn with its CPIDs. */
static void shape_build(uint64_t n,
                        void (*fn)(void *ud, uint64_t i, const ripple_cpid_t *cpid,
                                   const ripple_cpid_t *src, size_t nsrc),
                        void *ud) {
  shape_t sh = {0, 0, 0};
  rng_state = 42;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t s[4];
    ripple_cpid_t cpid, src[4];
    size_t nsrc = shape_next(&sh, s);
    cpid_of(i, &cpid);
    for (size_t k = 0; k < nsrc; k++) cpid_of(s[k], &src[k]);
    fn(ud, i, &cpid, src, nsrc);
  }
}

/* ---- phases of ingest -------------------------------------------------------- */

#define BATCH 1000
#define BODIES 200

static const char *components[] = {"kube-controller-manager", "kubectl", "kube-scheduler",
                                   "kubelet"};
static const char *kinds[] = {"Deployment", "ReplicaSet", "Pod", "Service"};

/* Mergelog i of the shape as a client sends it: with a component and the
 * object written, about 330 bytes of JSON. */
static void mergelog_of(uint64_t i, const ripple_cpid_t *cpid, const ripple_cpid_t *src,
                        size_t nsrc, sbuf_t *out) {
  char name[32], uid[40];
  snprintf(name, sizeof name, "web-7d9f8b6c5-%05d", (int)(i % 100000));
  ripple_cpid_t u;
  cpid_of(i ^ 0x5555555555ULL, &u);
  ripple_cpid_format(&u, uid);
  ripple_objref_t obj = {"apps/v1", kinds[i % 4], "default", name, uid};
  ripple_mergelog_t ml = {.cpid = *cpid,
                          .sources = src,
                          .nsources = nsrc,
                          .time_ns = 1795300000000000000 + (int64_t)i,
                          .component = components[i / 3 % 4],
                          .object = &obj};
  wire_mergelog(out, &ml);
}

typedef struct bodies {
  sbuf_t b[BODIES];
  size_t n;
} bodies_t;

/* BODIES request bodies of BATCH mergelogs each. */
static void body_add(void *ud, uint64_t i, const ripple_cpid_t *cpid, const ripple_cpid_t *src,
                     size_t nsrc) {
  bodies_t *bs = ud;
  sbuf_t *b = &bs->b[i / BATCH];
  sbuf_putc(b, i % BATCH ? ',' : '[');
  mergelog_of(i, cpid, src, nsrc, b);
  if (i % BATCH == BATCH - 1) sbuf_putc(b, ']');
}

static const dec_limits_t limits = {10000, 4096, 64, 4096};

static int64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A phase's cost: CPU time of the whole process (so the store's writer thread
 * counts) and elapsed time, per record. */
typedef struct cost {
  int64_t wall, cpu;
} cost_t;

static cost_t cost_start(void) { return (cost_t){mono_ns(), cpu_ns()}; }

static cost_t per_record(cost_t t0, size_t records) {
  return (cost_t){(mono_ns() - t0.wall) / (int64_t)records, (cpu_ns() - t0.cpu) / (int64_t)records};
}

static cost_t phase_parse(sbuf_t *bodies) {
  cost_t t0 = cost_start();
  for (int i = 0; i < BODIES; i++) {
    json_t *j = json_loadb(bodies[i].p, bodies[i].len, JSON_REJECT_DUPLICATES, NULL);
    if (!j) failures++;
    json_decref(j);
  }
  return per_record(t0, (size_t)BODIES * BATCH);
}

static cost_t phase_decode(sbuf_t *bodies, dec_batch_t *out) {
  cost_t t0 = cost_start();
  for (int i = 0; i < BODIES; i++) {
    dec_error_t err;
    if (dec_decode(DEC_MERGELOGS, bodies[i].p, bodies[i].len, &limits, &out[i], &err) !=
        RIPPLE_OK) {
      fprintf(stderr, "bench_server: decode: %s\n", err.msg);
      failures++;
    }
  }
  return per_record(t0, (size_t)BODIES * BATCH);
}

static cost_t phase_store(const char *dir, int sync_full, dec_batch_t *batches) {
  char path[128], err[256];
  snprintf(path, sizeof path, "%s/store-%d.db", dir, sync_full);
  store_t *st;
  store_hooks_t hooks = {0};
  if (store_open(path, sync_full, &st, err, sizeof err) != RIPPLE_OK ||
      store_start(st, &hooks) != RIPPLE_OK) {
    fprintf(stderr, "bench_server: %s\n", err);
    failures++;
    return (cost_t){0, 0};
  }
  cost_t t0 = cost_start();
  for (int i = 0; i < BODIES; i++)
    if (store_write(st, &batches[i]) != RIPPLE_OK) failures++;
  cost_t us = per_record(t0, (size_t)BODIES * BATCH);
  store_close(st);
  return us;
}

static cost_t phase_graph(dec_batch_t *batches) {
  graph_t *g = NULL;
  if (graph_new(&g) != RIPPLE_OK) {
    fprintf(stderr, "bench_server: out of memory\n");
    exit(1);
  }
  uint64_t seq = 1;
  cost_t t0 = cost_start();
  for (int i = 0; i < BODIES; i++) {
    const dec_batch_t *b = &batches[i];
    for (size_t k = 0; k < b->n; k++)
      graph_add_mergelog(g, &b->rec[k].cpid, b->src + b->rec[k].src_off, b->rec[k].nsrc,
                         dec_trigger(b, &b->rec[k]), b->rec[k].time, seq++);
  }
  cost_t us = per_record(t0, (size_t)BODIES * BATCH);
  graph_free(g);
  return us;
}

static cost_t phase_ingest(const char *dir, sbuf_t *bodies) {
  srv_config_t cfg = {.query_limit = 100000, .limits = limits};
  char path[128], err[256];
  snprintf(path, sizeof path, "%s/srv.db", dir);
  cfg.db_path = path;
  static srv_t s;
  if (srv_open(&s, &cfg, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "bench_server: %s\n", err);
    failures++;
    return (cost_t){0, 0};
  }
  cost_t t0 = cost_start();
  for (int i = 0; i < BODIES; i++) {
    size_t accepted;
    dec_error_t derr;
    if (srv_ingest(&s, DEC_MERGELOGS, bodies[i].p, bodies[i].len, &accepted, &derr) != 200)
      failures++;
  }
  cost_t us = per_record(t0, (size_t)BODIES * BATCH);
  srv_close(&s);
  return us;
}

static void show(const char *what, cost_t c) {
  printf("  %-52s %6.2f us %6.2f us\n", what, (double)c.cpu / 1e3, (double)c.wall / 1e3);
}

static void bench_phases(void) {
  static bodies_t bs;
  static dec_batch_t batches[BODIES];
  sbuf_t *bodies = bs.b;
  shape_build((uint64_t)BODIES * BATCH, body_add, &bs);
  size_t bytes = 0;
  for (int i = 0; i < BODIES; i++) bytes += bodies[i].len;
  char *dir = temp_dir();
  printf(
      "ingest phases, in-process, one thread, %d requests of %d mergelogs (%zu bytes of JSON "
      "per record); per record: CPU of the process, elapsed\n",
      BODIES, BATCH, bytes / ((size_t)BODIES * BATCH));
  show("jansson parse + free (json_loadb, json_decref)", phase_parse(bodies));
  show("dec_decode (parse, validate, canonical re-encode)", phase_decode(bodies, batches));
  show("store_write, sync=normal (1 request per commit)", phase_store(dir, 0, batches));
  show("store_write, sync=full (1 request per commit)", phase_store(dir, 1, batches));
  show("graph_add_mergelog", phase_graph(batches));
  cost_t all = phase_ingest(dir, bodies);
  show("srv_ingest: all of it but HTTP", all);
  printf("  => %.0f records per CPU-second\n", 1e9 / (double)all.cpu);
  for (int i = 0; i < BODIES; i++) sbuf_free(&bodies[i]), dec_batch_free(&batches[i]);
  bench_rmtree(dir);
}

/* Resident memory: the second field of /proc/self/statm, in pages. */
static int64_t rss_bytes(void) {
  char buf[128] = "";
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (!fgets(buf, sizeof buf, f)) buf[0] = '\0';
    fclose(f);
  }
  char *p = strchr(buf, ' ');
  return p ? strtoll(p + 1, NULL, 10) * sysconf(_SC_PAGESIZE) : 0;
}

static void add_to_graph(void *ud, uint64_t i, const ripple_cpid_t *cpid, const ripple_cpid_t *src,
                         size_t nsrc) {
  if (graph_add_mergelog(ud, cpid, src, nsrc, NULL, 1795300000000000000 + (int64_t)i, i + 1) != 1)
    failures++;
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

/* Index of the p-th percentile in a sorted array of n. */
static size_t pct(size_t n, int p) { return n * (size_t)p / 100; }

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* p50/p99/max of ns, sorted in place. */
static void show_latency(const char *what, int64_t *ns, size_t n, double target_ms) {
  qsort(ns, n, sizeof *ns, cmp_i64);
  double p99 = (double)ns[pct(n, 99)] / 1e6;
  int ok = target_ms <= 0 || p99 < target_ms;
  if (!ok) failures++;
  printf("  %-40s p50 %7.1f us  p99 %7.1f us  max %8.1f us", what, (double)ns[pct(n, 50)] / 1e3,
         p99 * 1e3, (double)ns[n - 1] / 1e3);
  if (target_ms > 0) printf("   target p99 < %.0f ms  %s", target_ms, ok ? "ok" : "MISSED");
  printf("\n");
}

#define QUERIES 200000

/* Related-CPIDs queries from random vertices: the graph alone, then through
 * srv_query (the read lock and the JSON answer, as the HTTP handler does). */
static void graph_queries(srv_t *s, uint64_t nv) {
  int64_t *lat = malloc(QUERIES * sizeof *lat), *lat2 = malloc(QUERIES * sizeof *lat2);
  size_t total = 0, biggest = 0, *sizes = malloc(QUERIES * sizeof *sizes);
  sbuf_t out;
  sbuf_init(&out);
  for (int q = 0; q < QUERIES; q++) {
    ripple_cpid_t id;
    cpid_of(rng() % nv, &id);
    vid_t *vs;
    size_t n;
    int trunc;
    int64_t t0 = mono_ns();
    int rc = graph_related(s->core.g, &id, s->cfg.query_limit, &vs, &n, &trunc);
    lat[q] = mono_ns() - t0;
    if (rc != RIPPLE_OK)
      failures++;
    else
      free(vs);
    sizes[q] = n;
    total += n;
    if (n > biggest) biggest = n;
    cpid_of(rng() % nv, &id); /* another vertex: not one the walk above brought into cache */
    out.len = 0;
    t0 = mono_ns();
    if (srv_query(s, Q_RELATED, &id, GRAPH_REACHABLE, 0, &out) != 200) failures++;
    lat2[q] = mono_ns() - t0;
  }
  qsort(sizes, QUERIES, sizeof *sizes, cmp_size);
  printf("  %d queries from random CPIDs; related CPIDs per answer: mean %.1f, p99 %zu, max %zu\n",
         QUERIES, (double)total / QUERIES, sizes[pct(QUERIES, 99)], biggest);
  show_latency("graph_related", lat, QUERIES, 5);
  show_latency("srv_query related (lock + JSON)", lat2, QUERIES, 5);
  sbuf_free(&out);
  free(lat), free(lat2), free(sizes);
}

/* The worst an answer can be: a tree of 200,000 CPIDs under one root, so the
 * walk from the root stops at the server's default query limit (100,000). */
static void graph_worst(srv_t *s, uint64_t nv) {
  enum { TREE = 200000, RUNS = 21 };
  for (uint64_t k = 0; k < TREE; k++) {
    ripple_cpid_t id, parent;
    cpid_of(nv + k, &id);
    cpid_of(nv + (k ? (k - 1) / 4 : 0), &parent);
    if (graph_add_mergelog(s->core.g, &id, &parent, k ? 1 : 0, NULL, 0, nv + k + 1) != 1)
      failures++;
  }
  ripple_cpid_t root;
  cpid_of(nv, &root);
  int64_t lat[RUNS], lat2[RUNS];
  sbuf_t out;
  sbuf_init(&out);
  for (int r = 0; r < RUNS; r++) {
    vid_t *vs;
    size_t n;
    int trunc;
    int64_t t0 = mono_ns();
    if (graph_related(s->core.g, &root, s->cfg.query_limit, &vs, &n, &trunc) != RIPPLE_OK || !trunc)
      failures++;
    else
      free(vs);
    lat[r] = mono_ns() - t0;
    out.len = 0;
    t0 = mono_ns();
    if (srv_query(s, Q_RELATED, &root, GRAPH_REACHABLE, 0, &out) != 200) failures++;
    lat2[r] = mono_ns() - t0;
  }
  printf("  worst case, the walk cut at the query limit (%zu CPIDs, %zu bytes of JSON):\n",
         s->cfg.query_limit, out.len);
  show_latency("graph_related", lat, RUNS, 0);
  show_latency("srv_query related (lock + JSON)", lat2, RUNS, 0);
  sbuf_free(&out);
}

static void bench_graph(uint64_t nv) {
  char *dir = temp_dir(), path[128], err[256];
  snprintf(path, sizeof path, "%s/graph.db", dir);
  srv_config_t cfg = {.db_path = path, .query_limit = 100000, .limits = limits};
  static srv_t s;
  if (srv_open(&s, &cfg, err, sizeof err) != RIPPLE_OK) {
    fprintf(stderr, "bench_server: %s\n", err);
    failures++;
    return;
  }
  /* The graph is filled directly: the store plays no part in these queries. */
  int64_t rss0 = rss_bytes(), t0 = mono_ns();
  shape_build(nv, add_to_graph, s.core.g);
  double build_s = (double)(mono_ns() - t0) / 1e9;
  int64_t rss = rss_bytes() - rss0;
  size_t v = graph_vertices(s.core.g), mem = graph_memory(s.core.g);
  printf(
      "merge graph of %zu vertices, %zu edges (cascades of 5-50, 3%% joined), built in %.1f s "
      "(%.2f us per mergelog)\n",
      v, graph_edges(s.core.g), build_s, build_s * 1e6 / (double)nv);
  double per = (double)mem / (double)v, per_rss = (double)rss / (double)v;
  int ok = per < 100 && per_rss < 100;
  if (!ok) failures++;
  printf(
      "  memory per vertex: %.1f bytes (graph_memory), %.1f bytes (process RSS growth)   "
      "target < 100  %s\n",
      per, per_rss, ok ? "ok" : "MISSED");
  graph_queries(&s, nv);
  graph_worst(&s, nv);
  srv_close(&s);
  bench_rmtree(dir);
}

/* ---- OTLP: POST /v1/traces ------------------------------------------------------ */

/* The text of attribute k of span i (64 bytes at most). */
static void attr_text(size_t i, int k, const ripple_cpid_t *c, char *t) {
  switch (k) {
    case 0: ripple_cpid_format(c, t); break;
    case 1: snprintf(t, 64, "%s", kinds[i % 4]); break;
    case 2: snprintf(t, 64, "default"); break;
    case 3: snprintf(t, 64, "web-7d9f8b6c5-%05zu", i % 100000); break;
    case 4:
      snprintf(t, 64, "5b0c1f7e-2b7a-4c39-9b1e-%012" PRIu64, (uint64_t)(rng() % 1000000000000ULL));
      break;
    case 5: snprintf(t, 64, "%" PRIu64, rng() % 1000000); break;
    case 6: snprintf(t, 64, "system:serviceaccount:kube-system:%s", components[i % 4]); break;
    default: snprintf(t, 64, "UPDATE"); break;
  }
}

/* An ExportTraceServiceRequest of n spans as an instrumented controller sends
 * them: one resource (service.name), one scope, each span in its own CPID's
 * trace, 8 string attributes (ripple.cpid, so that ripple takes a CPID it has
 * not seen, and the 7 the webhook gives its spans). The same bytes go to
 * ripple and to Jaeger (bench-vs-jaeger.sh). */
static void otlp_request(size_t n, sbuf_t *out) {
  enum { NA = 8 };
  static const char *const keys[NA] = {"ripple.cpid",     "kind", "namespace", "name", "uid",
                                       "resourceVersion", "user", "operation"};
  Ripple__Otlp__Span *spans = calloc(n, sizeof *spans);
  Ripple__Otlp__Span **sp = calloc(n, sizeof(Ripple__Otlp__Span *));
  Ripple__Otlp__KeyValue *kv = calloc(n * NA, sizeof *kv);
  Ripple__Otlp__KeyValue **kvp = calloc(n * NA, sizeof(Ripple__Otlp__KeyValue *));
  Ripple__Otlp__AnyValue *av = calloc(n * NA + 1, sizeof *av);
  char *text = calloc(n * NA, 64);
  uint8_t *ids = calloc(n, 32);
  if (!spans || !sp || !kv || !kvp || !av || !text || !ids) abort();
  for (size_t i = 0; i < n; i++) {
    ripple_cpid_t c;
    random_cpid(&c);
    uint64_t sid = rng() | 1, pid = rng() | 1;
    uint8_t *id = ids + 32 * i;
    memcpy(id, c.b, 16), memcpy(id + 16, &sid, 8), memcpy(id + 24, &pid, 8);
    ripple__otlp__span__init(&spans[i]);
    Ripple__Otlp__Span *s = &spans[i];
    s->trace_id = (ProtobufCBinaryData){16, id};
    s->span_id = (ProtobufCBinaryData){8, id + 16};
    if (i % 4) s->parent_span_id = (ProtobufCBinaryData){8, id + 24};
    s->name = (char *)(i % 2 ? "syncReplicaSet" : "syncDeployment");
    s->kind = 1;
    s->start_time_unix_nano = 1795300000000000000ULL + i * 1000;
    s->end_time_unix_nano = s->start_time_unix_nano + 250000;
    s->n_attributes = NA;
    s->attributes = kvp + NA * i;
    for (int k = 0; k < NA; k++) {
      size_t j = NA * i + (size_t)k;
      char *t = text + 64 * j;
      attr_text(i, k, &c, t);
      ripple__otlp__any_value__init(&av[j]);
      av[j].value_case = RIPPLE__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
      av[j].string_value = t;
      ripple__otlp__key_value__init(&kv[j]);
      kv[j].key = (char *)keys[k];
      kv[j].value = &av[j];
      kvp[j] = &kv[j];
    }
    sp[i] = s;
  }
  Ripple__Otlp__AnyValue svc = RIPPLE__OTLP__ANY_VALUE__INIT;
  svc.value_case = RIPPLE__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
  svc.string_value = (char *)"bench-controller";
  Ripple__Otlp__KeyValue svc_kv = RIPPLE__OTLP__KEY_VALUE__INIT, *svc_kvp = &svc_kv;
  svc_kv.key = (char *)"service.name";
  svc_kv.value = &svc;
  Ripple__Otlp__Resource res = RIPPLE__OTLP__RESOURCE__INIT;
  res.n_attributes = 1;
  res.attributes = &svc_kvp;
  Ripple__Otlp__InstrumentationScope scope = RIPPLE__OTLP__INSTRUMENTATION_SCOPE__INIT;
  scope.name = (char *)"bench";
  Ripple__Otlp__ScopeSpans ss = RIPPLE__OTLP__SCOPE_SPANS__INIT, *ssp = &ss;
  ss.scope = &scope;
  ss.n_spans = n;
  ss.spans = sp;
  Ripple__Otlp__ResourceSpans rs = RIPPLE__OTLP__RESOURCE_SPANS__INIT, *rsp = &rs;
  rs.resource = &res;
  rs.n_scope_spans = 1;
  rs.scope_spans = &ssp;
  Ripple__Otlp__ExportTraceServiceRequest req = RIPPLE__OTLP__EXPORT_TRACE_SERVICE_REQUEST__INIT;
  req.n_resource_spans = 1;
  req.resource_spans = &rsp;
  size_t len = ripple__otlp__export_trace_service_request__get_packed_size(&req);
  uint8_t *buf = malloc(len);
  if (!buf) abort();
  ripple__otlp__export_trace_service_request__pack(&req, buf);
  sbuf_put(out, (const char *)buf, len);
  free(buf), free(spans), free(sp), free(kv), free(kvp), free(av), free(text), free(ids);
}

static int write_otlp_request(const char *path, size_t n) {
  sbuf_t b;
  sbuf_init(&b);
  otlp_request(n, &b);
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(b.p, 1, b.len, f) == b.len;
  if (f && fclose(f) != 0) ok = 0;
  sbuf_free(&b);
  if (!ok) fprintf(stderr, "bench_server: cannot write %s\n", path);
  return ok ? 0 : 1;
}

static int otlp_known_none(void *ud, const ripple_cpid_t *c) { return (void)ud, (void)c, 0; }

/* Decoding alone (into records, as the server does), then all of POST
 * /v1/traces but HTTP (srv_ingest_otlp: decode and the durable write). */
static void bench_otlp(void) {
  enum { REQS = 100, SPANS = 1000 };
  sbuf_t body;
  sbuf_init(&body);
  otlp_request(SPANS, &body);
  otlp_recv_t r = {.lim = &limits, .known = otlp_known_none};
  printf(
      "OTLP ingest, in-process, one thread, %d requests of %d spans (%zu bytes of protobuf "
      "per span); per span: CPU of the process, elapsed\n",
      REQS, SPANS, body.len / SPANS);
  cost_t t0 = cost_start();
  for (int i = 0; i < REQS; i++) {
    otlp_result_t res;
    sbuf_t json;
    sbuf_init(&json);
    dec_batch_t b;
    dec_error_t err;
    if (otlp_receive(OTLP_PROTOBUF, body.p, body.len, &r, &json, &res) != RIPPLE_OK ||
        dec_decode(DEC_SPANS, json.p, json.len, &limits, &b, &err) != RIPPLE_OK)
      failures++;
    else
      dec_batch_free(&b);
    sbuf_free(&json);
  }
  show("otlp_receive + dec_decode (the JSON round trip)", per_record(t0, (size_t)REQS * SPANS));

  t0 = cost_start();
  for (int i = 0; i < REQS; i++) {
    otlp_result_t res;
    dec_batch_t b;
    dec_error_t err;
    if (otlp_receive_batch(OTLP_PROTOBUF, body.p, body.len, &r, &b, &res, &err) != RIPPLE_OK ||
        res.accepted != SPANS)
      failures++;
    else
      dec_batch_free(&b);
  }
  show("otlp_receive_batch (protobuf into records)", per_record(t0, (size_t)REQS * SPANS));
  char *dir = temp_dir(), path[128], e[256];
  snprintf(path, sizeof path, "%s/otlp.db", dir);
  srv_config_t cfg = {.query_limit = 100000, .limits = limits, .db_path = path};
  static srv_t s;
  if (srv_open(&s, &cfg, e, sizeof e) != RIPPLE_OK) {
    fprintf(stderr, "bench_server: %s\n", e);
    failures++;
  } else {
    t0 = cost_start();
    for (int i = 0; i < REQS; i++) {
      sbuf_t ans;
      sbuf_init(&ans);
      dec_error_t err;
      if (srv_ingest_otlp(&s, 0, body.p, body.len, &ans, &err) != 200) failures++;
      sbuf_free(&ans);
    }
    cost_t all = per_record(t0, (size_t)REQS * SPANS);
    show("srv_ingest_otlp: all of it but HTTP", all);
    printf("  => %.0f spans per CPU-second\n", 1e9 / (double)all.cpu);
    srv_close(&s);
  }
  bench_rmtree(dir);
  sbuf_free(&body);
}

/* ---- start-up: rebuilding the graph from storage ------------------------------ */

#define GEN_BATCH 10000

typedef struct gen {
  dec_batch_t b;
  store_t *st;
} gen_t;

static void gen_flush(gen_t *g) {
  if (g->b.n && store_write(g->st, &g->b) != RIPPLE_OK) failures++;
  g->b.n = g->b.nsrc = 0;
  g->b.body.len = 0;
}

/* Append one mergelog to the batch as the decoder would have produced it
 * (canonical body, CPIDs, sources), so the rows are exactly the server's. */
static void gen_one(void *ud, uint64_t i, const ripple_cpid_t *cpid, const ripple_cpid_t *src,
                    size_t nsrc) {
  gen_t *g = ud;
  dec_rec_t *r = &g->b.rec[g->b.n++];
  *r = (dec_rec_t){0}; /* no object uid: not a root the index takes */
  r->cpid = *cpid;
  r->time = 1795300000000000000 + (int64_t)i;
  r->src_off = g->b.nsrc;
  r->nsrc = (uint32_t)nsrc;
  memcpy(g->b.src + g->b.nsrc, src, nsrc * sizeof *src);
  g->b.nsrc += nsrc;
  r->body_off = g->b.body.len;
  mergelog_of(i, cpid, src, nsrc, &g->b.body);
  r->body_len = (uint32_t)(g->b.body.len - r->body_off);
  if (g->b.n == GEN_BATCH) gen_flush(g);
}

/* Write n mergelogs of the synthetic shape through the store, as the server
 * would have after n acknowledged records. */
static int generate_db(const char *path, uint64_t n) {
  gen_t g = {.b = {.kind = DEC_MERGELOGS}};
  char err[256];
  store_hooks_t hooks = {0};
  g.b.rec = malloc(GEN_BATCH * sizeof *g.b.rec);
  g.b.src = malloc(GEN_BATCH * 4 * sizeof *g.b.src);
  sbuf_init(&g.b.body);
  if (!g.b.rec || !g.b.src || store_open(path, 0, &g.st, err, sizeof err) != RIPPLE_OK ||
      store_start(g.st, &hooks) != RIPPLE_OK) {
    fprintf(stderr, "bench_server: cannot generate %s\n", path);
    return RIPPLE_ESYS;
  }
  shape_build(n, gen_one, &g);
  gen_flush(&g);
  store_close(g.st);
  dec_batch_free(&g.b);
  return RIPPLE_OK;
}

/* Drop the database from the page cache, so the next open reads the disk. */
static void evict(const char *path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return;
  fdatasync(fd);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
}

/* srv_open's seconds, or -1. */
static double time_open(const char *path, uint64_t n, size_t *bytes) {
  static srv_t s;
  char err[256];
  srv_config_t cfg = {.db_path = path, .query_limit = 100000, .limits = limits};
  int64_t t0 = mono_ns();
  int rc = srv_open(&s, &cfg, err, sizeof err);
  double secs = (double)(mono_ns() - t0) / 1e9;
  if (rc != RIPPLE_OK || graph_vertices(s.core.g) != n) {
    fprintf(stderr, "bench_server: %s\n", rc ? err : "the rebuilt graph is not the one written");
    failures++;
    secs = -1;
  }
  if (rc == RIPPLE_OK) {
    *bytes = (size_t)store_size_bytes(s.core.store);
    srv_close(&s);
  }
  return secs;
}

static void bench_startup(uint64_t n) {
  char *dir = temp_dir(), path[128];
  snprintf(path, sizeof path, "%s/startup.db", dir);
  int64_t t0 = mono_ns();
  if (generate_db(path, n) != RIPPLE_OK) {
    failures++;
    return;
  }
  double gen_s = (double)(mono_ns() - t0) / 1e9;
  size_t bytes = 0;
  evict(path);
  double cold = time_open(path, n, &bytes), warm = time_open(path, n, &bytes);
  printf("start-up with %" PRIu64
         " mergelogs (%.0f MB of database, written through the store "
         "in %.1f s); srv_open = open, read every mergelog, rebuild the graph:\n",
         n, (double)bytes / 1e6, gen_s);
  const char *how = n == 10000000 ? "" : " (extrapolated, linear)";
  printf("  database in the page cache:   %6.2f s, %.2f us per mergelog; at 10M: %.1f s%s\n", warm,
         warm * 1e6 / (double)n, warm * 1e7 / (double)n, how);
  printf("  database read from the disk:  %6.2f s, %.2f us per mergelog; at 10M: %.1f s%s\n", cold,
         cold * 1e6 / (double)n, cold * 1e7 / (double)n, how);
  bench_rmtree(dir);
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "all";
  int all = !strcmp(what, "all");
  if (!strcmp(what, "otlp-request") && (argc == 3 || (argc == 5 && !strcmp(argv[3], "--spans"))))
    return write_otlp_request(argv[2], argc == 5 ? strtoull(argv[4], NULL, 10) : 1000);
  ripple_log_setup("bench_server", RIPPLE_LOG_WARN, NULL, NULL);
  const char *full = getenv("RIPPLE_BENCH_FULL");
  uint64_t vertices = 10000000, startup = full && !strcmp(full, "1") ? 10000000 : 1000000;
  for (int i = 2; i + 1 < argc; i += 2)
    if (!strcmp(argv[i], "--vertices"))
      vertices = strtoull(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--startup-n"))
      startup = strtoull(argv[i + 1], NULL, 10);
  if (!all && strcmp(what, "phases") != 0 && strcmp(what, "graph") != 0 &&
      strcmp(what, "startup") != 0 && strcmp(what, "otlp") != 0) {
    fprintf(stderr,
            "usage: bench_server [phases|graph|startup|otlp|all] [--vertices N] "
            "[--startup-n N]\n"
            "       bench_server otlp-request FILE [--spans N]\n");
    return 2;
  }
  if (all || !strcmp(what, "phases")) bench_phases();
  if (all || !strcmp(what, "graph")) bench_graph(vertices);
  if (all || !strcmp(what, "startup")) bench_startup(startup);
  if (all || !strcmp(what, "otlp")) bench_otlp();
  return failures ? 1 : 0;
}
