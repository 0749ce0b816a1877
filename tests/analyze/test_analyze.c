/*
 * test_analyze.c - `ripple analyze` on a hand-made change log whose times are
 * known: every hop's instances and percentiles are asserted exactly, bad lines
 * are counted, and the same log compressed with zstd (rotated files, several
 * frames, in a run directory) gives the same result.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "testutil.h"

#include "analyze.h"

#define MS 1000000LL
/* A realistic epoch in ns, plus an odd 7 ns so nothing is rounded to ms. */
#define T0 1763770000000000007LL

typedef struct sbuf {
  char *p;
  size_t len, cap;
} sbuf_t;

static void put(sbuf_t *b, const char *s) {
  size_t n = strlen(s);
  if (b->len + n + 1 > b->cap) {
    b->cap = (b->len + n + 1) * 2;
    b->p = realloc(b->p, b->cap);
    assert_non_null(b->p);
  }
  memcpy(b->p + b->len, s, n + 1);
  b->len += n;
}

static json_t *meta(const char *name, const char *uid, const char *owner) {
  json_t *m = json_pack("{s:s, s:s, s:s, s:{s:s}}", "name", name, "namespace", "default", "uid",
                        uid, "labels", "app", "web");
  if (owner)
    json_object_set_new(m, "ownerReferences",
                        json_pack("[{s:s, s:b}]", "uid", owner, "controller", 1));
  return m;
}

static json_t *deploy(int gen, int replicas) {
  json_t *m = meta("web", "d1", NULL);
  json_object_set_new(m, "generation", json_integer(gen));
  return json_pack("{s:s, s:s, s:o, s:{s:i}}", "apiVersion", "apps/v1", "kind", "Deployment",
                   "metadata", m, "spec", "replicas", replicas);
}

/* Written without kind/apiVersion: the resource name must fill them in. */
static json_t *rs(int replicas) {
  return json_pack("{s:o, s:{s:i}}", "metadata", meta("web-abc", "r1", "d1"), "spec", "replicas",
                   replicas);
}

/* state: 0 created, 1 scheduled, 2 running, 3 ready */
static json_t *pod(const char *name, int state, const char *ip) {
  char uid[64];
  snprintf(uid, sizeof uid, "uid-%s", name);
  json_t *o = json_pack("{s:s, s:s, s:o, s:{}, s:{s:s}}", "apiVersion", "v1", "kind", "Pod",
                        "metadata", meta(name, uid, "r1"), "spec", "status", "phase",
                        state >= 2 ? "Running" : "Pending");
  if (state >= 1)
    json_object_set_new(json_object_get(o, "spec"), "nodeName", json_string("node-a"));
  if (state >= 3) {
    json_t *st = json_object_get(o, "status");
    json_object_set_new(st, "podIP", json_string(ip));
    json_object_set_new(st, "conditions",
                        json_pack("[{s:s, s:s}]", "type", "Ready", "status", "True"));
  }
  return o;
}

static json_t *endpoints(const char *kind, const char *ip1, const char *ip2, const char *ip3) {
  json_t *addrs = json_array();
  const char *ips[] = {ip1, ip2, ip3};
  bool slice = !strcmp(kind, "EndpointSlice");
  for (int i = 0; i < 3; i++) {
    if (!ips[i]) continue;
    json_array_append_new(
        addrs, slice ? json_pack("{s:[s], s:{s:b}}", "addresses", ips[i], "conditions", "ready", 1)
                     : json_pack("{s:s}", "ip", ips[i]));
  }
  json_t *m = json_pack("{s:s, s:s, s:s}", "name", slice ? "web-xyz" : "web", "namespace",
                        "default", "uid", slice ? "es1" : "ep1");
  if (slice)
    json_object_set_new(m, "labels", json_pack("{s:s}", "kubernetes.io/service-name", "web"));
  json_t *o = json_pack("{s:s, s:s, s:o}", "apiVersion", slice ? "discovery.k8s.io/v1" : "v1",
                        "kind", kind, "metadata", m);
  if (slice)
    json_object_set_new(o, "endpoints", addrs);
  else
    json_object_set_new(o, "subsets", json_pack("[{s:o}]", "addresses", addrs));
  return o;
}

static json_t *service(const char *app) {
  return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:{s:s}}}", "apiVersion", "v1", "kind",
                   "Service", "metadata", "name", "web", "namespace", "default", "uid", "s1",
                   "spec", "selector", "app", app);
}

/* One change line; takes the objects. */
static void rec(sbuf_t *b, long long ms, const char *op, const char *res, json_t *o, json_t *old,
                bool relist) {
  json_t *line = json_pack("{s:s, s:I, s:s, s:s, s:o}", "time", "2025-11-22T00:00:00Z", "time_ns",
                           (json_int_t)(T0 + ms * MS), "op", op, "resource", res, "object", o);
  if (old) json_object_set_new(line, "old", old);
  if (relist) json_object_set_new(line, "relist", json_true());
  char *s = json_dumps(line, JSON_COMPACT);
  put(b, s);
  put(b, "\n");
  free(s);
  json_decref(line);
}

static void pod_life(sbuf_t *b, const char *name, const char *ip, long long add, long long sched,
                     long long run, long long ready) {
  rec(b, add, "add", "pods", pod(name, 0, NULL), NULL, false);
  rec(b, sched, "update", "pods", pod(name, 1, NULL), pod(name, 0, NULL), false);
  rec(b, run, "update", "pods", pod(name, 2, NULL), NULL, false);
  rec(b, ready, "update", "pods", pod(name, 3, ip), NULL, false);
}

/* The scenario: create a Deployment of 2, scale it to 3, delete it. Lines
 * are written out of time order on purpose (the analyzer sorts). */
static char *scenario_selecting(const char *app, size_t *len) {
  sbuf_t b = {0};
  rec(&b, -100, "add", "services", service(app), NULL, false);
  rec(&b, 0, "add", "deployments.apps", deploy(1, 2), NULL, false);
  rec(&b, 10, "add", "replicasets.apps", rs(2), NULL, false);
  pod_life(&b, "web-abc-1", "10.0.0.1", 30, 100, 300, 500);
  pod_life(&b, "web-abc-2", "10.0.0.2", 45, 130, 400, 700);
  rec(&b, 520, "update", "endpoints", endpoints("Endpoints", "10.0.0.1", NULL, NULL), NULL, false);
  rec(&b, 530, "add", "endpointslices.discovery.k8s.io",
      endpoints("EndpointSlice", "10.0.0.1", NULL, NULL), NULL, false);
  rec(&b, 750, "update", "endpoints", endpoints("Endpoints", "10.0.0.1", "10.0.0.2", NULL), NULL,
      false);
  /* Found by a relist: its time says nothing about when it was made. */
  rec(&b, 800, "add", "pods", pod("web-abc-9", 0, NULL), NULL, true);
  /* Scale to 3; a status update of the Deployment (same generation) is no cause. */
  rec(&b, 1000, "update", "deployments.apps", deploy(2, 3), deploy(1, 2), false);
  rec(&b, 1020, "update", "replicasets.apps", rs(3), rs(2), false);
  rec(&b, 1030, "update", "deployments.apps", deploy(2, 3), deploy(2, 3), false);
  pod_life(&b, "web-abc-3", "10.0.0.3", 1050, 1080, 1200, 1600);
  rec(&b, 1650, "update", "endpoints", endpoints("Endpoints", "10.0.0.1", "10.0.0.2", "10.0.0.3"),
      NULL, false);
  /* Delete it all. */
  rec(&b, 2000, "delete", "deployments.apps", deploy(2, 3), NULL, false);
  rec(&b, 2010, "delete", "replicasets.apps", rs(3), NULL, false);
  rec(&b, 2040, "delete", "pods", pod("web-abc-1", 3, "10.0.0.1"), NULL, false);
  rec(&b, 2100, "delete", "pods", pod("web-abc-3", 3, "10.0.0.3"), NULL, false);
  rec(&b, 2060, "delete", "pods", pod("web-abc-2", 3, "10.0.0.2"), NULL, false);
  *len = b.len;
  return b.p;
}

static char *scenario(size_t *len) { return scenario_selecting("web", len); }

static const char malformed[] =
    "not json at all\n"
    "\n"
    "{}\n"
    "{\"time_ns\":1,\"op\":\"poke\",\"resource\":\"pods\",\"object\":{\"metadata\":{\"name\":"
    "\"a\",\"uid\":\"u\"}}}\n"
    "{\"time_ns\":\"soon\",\"op\":\"add\",\"resource\":\"pods\",\"object\":{}}\n"
    "{\"time_ns\":5,\"op\":\"add\",\"resource\":\"pods\",\"object\":{\"metadata\":{}}}\n"
    "{\"time_ns\":5,\"op\":\"add\",\"resource\":\"pods\",\"obj";

static void analyze_text(const char *text, size_t len, cl_log_t *log, hop_result_t *res) {
  ripple_rules_t *rules;
  assert_int_equal(ripple_rules_new(&rules), RIPPLE_OK);
  assert_int_equal(cl_log_read_buffer(log, text, len), RIPPLE_OK);
  cl_log_sort(log);
  assert_int_equal(hops_compute(log, rules, res), RIPPLE_OK);
  ripple_rules_free(rules);
}

/* The hop's instances' latencies in ms, sorted, as "a,b,c". */
static void hop_values(const hop_result_t *res, hop_id_t h, char *out, size_t cap) {
  long long v[64];
  size_t n = 0;
  for (size_t i = 0; i < res->n && n < 64; i++)
    if (res->v[i].hop == h) {
      assert_int_equal((res->v[i].end - res->v[i].start) % MS, 0);
      v[n++] = (res->v[i].end - res->v[i].start) / MS;
    }
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
      long long t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  size_t off = 0;
  out[0] = '\0';
  for (size_t i = 0; i < n; i++)
    off += (size_t)snprintf(out + off, cap - off, "%s%lld", i ? "," : "", v[i]);
}

static void expect(const hop_result_t *res, hop_id_t h, const char *want) {
  char got[512];
  hop_values(res, h, got, sizeof got);
  if (strcmp(got, want) != 0) fprintf(stderr, "%s: got [%s] want [%s]\n", hop_name(h), got, want);
  assert_string_equal(got, want);
}

static void known_hops(void **state) {
  (void)state;
  size_t len;
  char *text = scenario(&len);
  cl_log_t log = {0};
  hop_result_t res;
  analyze_text(text, len, &log, &res);
  assert_int_equal(log.malformed, 0);
  expect(&res, HOP_DEPLOY_ADD_RS_ADD, "10");
  expect(&res, HOP_DEPLOY_UPDATE_RS_UPDATE, "20");
  expect(&res, HOP_RS_ADD_POD_ADD, "20,35");
  expect(&res, HOP_RS_UPDATE_POD_ADD, "30");
  expect(&res, HOP_RS_DELETE_POD_DELETE, "30,50,90");
  expect(&res, HOP_POD_ADD_SCHEDULED, "30,70,85");
  expect(&res, HOP_POD_SCHEDULED_RUNNING, "120,200,270");
  expect(&res, HOP_POD_RUNNING_READY, "200,300,400");
  expect(&res, HOP_POD_READY_ENDPOINTS, "20,50,50");
  expect(&res, HOP_POD_READY_SLICE, "30");
  expect(&res, HOP_E2E_DEPLOY_READY, "600,700");
  expect(&res, HOP_E2E_DEPLOY_DELETE, "100");
  /* Percentiles by nearest rank over {30,50,90}: p50 is the 2nd, p90/p99 the 3rd. */
  const hop_stats_t *s = &res.stats[HOP_RS_DELETE_POD_DELETE];
  assert_int_equal(s->count, 3);
  assert_int_equal(s->min, 30 * MS);
  assert_int_equal(s->p50, 50 * MS);
  assert_int_equal(s->p90, 90 * MS);
  assert_int_equal(s->p99, 90 * MS);
  assert_int_equal(s->max, 90 * MS);
  assert_int_equal(res.stats[HOP_POD_ADD_SCHEDULED].p50, 70 * MS);
  hops_free(&res);
  cl_log_free(&log);
  free(text);
}

/* Each resource comes on a watch of its own, and the API server does not
 * order deliveries across watches: the ReplicaSet's add can arrive before
 * its Deployment's. The hop is still that one, with a duration of 0. */
static void effect_before_cause(void **state) {
  (void)state;
  sbuf_t b = {0};
  rec(&b, 10, "add", "deployments.apps", deploy(1, 2), NULL, false);
  rec(&b, 4, "add", "replicasets.apps", rs(2), NULL, false);
  cl_log_t log = {0};
  hop_result_t res;
  analyze_text(b.p, b.len, &log, &res);
  expect(&res, HOP_DEPLOY_ADD_RS_ADD, "0");
  hops_free(&res);
  cl_log_free(&log);
  free(b.p);
}

static void service_must_select_pod(void **state) {
  (void)state;
  /* The Service selects app=db now: the Endpoints with web's IPs are not
   * counted as the Pods' (the IP match alone would say they are). */
  size_t len;
  char *text = scenario_selecting("db", &len);
  cl_log_t log = {0};
  hop_result_t res;
  analyze_text(text, len, &log, &res);
  assert_int_equal(res.stats[HOP_POD_READY_ENDPOINTS].count, 0);
  assert_int_equal(res.stats[HOP_POD_READY_SLICE].count, 0);
  assert_int_equal(res.stats[HOP_RS_ADD_POD_ADD].count, 2);
  hops_free(&res);
  cl_log_free(&log);
  free(text);
}

static void percentiles_nearest_rank(void **state) {
  (void)state;
  const int64_t a[] = {15, 20, 35, 40, 50};
  assert_int_equal(hop_percentile(a, 5, 30), 20);
  assert_int_equal(hop_percentile(a, 5, 40), 20);
  assert_int_equal(hop_percentile(a, 5, 50), 35);
  assert_int_equal(hop_percentile(a, 5, 100), 50);
  assert_int_equal(hop_percentile(a, 5, 0), 15);
  int64_t b[100];
  for (int i = 0; i < 100; i++) b[i] = i + 1;
  assert_int_equal(hop_percentile(b, 100, 50), 50);
  assert_int_equal(hop_percentile(b, 100, 90), 90);
  assert_int_equal(hop_percentile(b, 100, 99), 99);
  assert_int_equal(hop_percentile(b, 1, 99), 1);
  assert_int_equal(hop_percentile(NULL, 0, 50), 0);
}

static void malformed_lines_counted(void **state) {
  (void)state;
  size_t len;
  char *text = scenario(&len);
  sbuf_t b = {text, len, len + 1};
  put(&b, malformed);
  cl_log_t log = {0};
  hop_result_t res;
  analyze_text(b.p, b.len, &log, &res);
  assert_int_equal(log.malformed, 6); /* the blank line is not counted */
  assert_int_equal(log.n, 28);
  assert_int_equal(log.lines, 34);
  assert_int_equal(res.stats[HOP_RS_DELETE_POD_DELETE].count, 3);
  hops_free(&res);
  cl_log_free(&log);
  free(b.p);
}

/* Compress as two zstd frames, as a rotated file written in pieces. */
static void *compress2(const char *text, size_t len, size_t *outlen) {
  size_t half = len / 2;
  size_t cap = ZSTD_compressBound(half) + ZSTD_compressBound(len - half);
  char *out = malloc(cap);
  assert_non_null(out);
  size_t a = ZSTD_compress(out, cap, text, half, 3);
  assert_false(ZSTD_isError(a));
  size_t c = ZSTD_compress(out + a, cap - a, text + half, len - half, 3);
  assert_false(ZSTD_isError(c));
  *outlen = a + c;
  return out;
}

static void write_file(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(p, 1, n, f), n);
  assert_int_equal(fclose(f), 0);
}

static void same_result(const hop_result_t *x, const hop_result_t *y) {
  assert_int_equal(x->n, y->n);
  for (int h = 0; h < HOP_COUNT; h++)
    assert_memory_equal(&x->stats[h], &y->stats[h], sizeof x->stats[h]);
}

static void zstd_reads_like_plain(void **state) {
  (void)state;
  size_t len, zlen;
  char *text = scenario(&len);
  void *z = compress2(text, len, &zlen);
  cl_log_t plain = {0}, packed = {0};
  hop_result_t rp, rz;
  analyze_text(text, len, &plain, &rp);
  analyze_text(z, zlen, &packed, &rz);
  assert_int_equal(packed.n, plain.n);
  assert_int_equal(packed.malformed, 0);
  same_result(&rp, &rz);

  /* A run directory: the first half rotated and compressed, the rest plain. */
  char dir[] = "/tmp/ripple-analyze-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256];
  const char *cut = text + len / 2;
  while (*cut != '\n') cut++;
  cut++;
  size_t zhead;
  void *head = compress2(text, (size_t)(cut - text), &zhead);
  snprintf(path, sizeof path, "%s/changes.jsonl.1.zst", dir);
  write_file(path, head, zhead);
  snprintf(path, sizeof path, "%s/changes.jsonl", dir);
  write_file(path, cut, len - (size_t)(cut - text));
  snprintf(path, sizeof path, "%s/params.yaml", dir);
  write_file(path, "n: 3\n", 5);
  cl_log_t fromdir = {0};
  char err[256];
  assert_int_equal(cl_log_read_path(&fromdir, dir, err, sizeof err), RIPPLE_OK);
  cl_log_sort(&fromdir);
  hop_result_t rd;
  ripple_rules_t *rules;
  assert_int_equal(ripple_rules_new(&rules), RIPPLE_OK);
  assert_int_equal(hops_compute(&fromdir, rules, &rd), RIPPLE_OK);
  assert_int_equal(fromdir.n, plain.n);
  assert_int_equal(fromdir.malformed, 0);
  same_result(&rp, &rd);

  /* A truncated compressed file keeps what it holds and counts the loss. */
  cl_log_t cut_log = {0};
  assert_int_equal(cl_log_read_buffer(&cut_log, z, zlen - 7), RIPPLE_OK);
  assert_true(cut_log.malformed >= 1);
  assert_true(cut_log.n > 0 && cut_log.n < plain.n);

  cl_log_free(&cut_log);
  ripple_rules_free(rules);
  hops_free(&rd);
  cl_log_free(&fromdir);
  test_rmtree(dir);
  free(head);
  hops_free(&rp);
  hops_free(&rz);
  cl_log_free(&plain);
  cl_log_free(&packed);
  free(z);
  free(text);
}

static size_t count_lines(const char *path) {
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  size_t n = 0;
  int c;
  while ((c = fgetc(f)) != EOF) n += c == '\n';
  fclose(f);
  return n;
}

static void outputs_written(void **state) {
  (void)state;
  size_t len;
  char *text = scenario(&len);
  cl_log_t log = {0};
  hop_result_t res;
  analyze_text(text, len, &log, &res);
  char dir[] = "/tmp/ripple-analyze-out-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char csv[256], js[256], svgdir[256], svg[300];
  snprintf(csv, sizeof csv, "%s/hops.csv", dir);
  snprintf(js, sizeof js, "%s/hops.json", dir);
  snprintf(svgdir, sizeof svgdir, "%s/svg", dir);
  assert_int_equal(report_csv(csv, &res), RIPPLE_OK);
  assert_int_equal(count_lines(csv), res.n + 1);
  assert_int_equal(report_json(js, &log, &res), RIPPLE_OK);
  json_t *doc = json_load_file(js, 0, NULL);
  assert_non_null(doc);
  json_t *h = json_object_get(json_object_get(doc, "hops"), "replicaset-delete->pod-delete");
  assert_int_equal(json_integer_value(json_object_get(h, "count")), 3);
  assert_true(json_real_value(json_object_get(h, "p50_ms")) == 50.0);
  json_decref(doc);
  /* The bins both histogram writers draw: every instance in one bin, the
   * range from min to max, the y top a multiple of 4 above the tallest bin. */
  for (int id = 0; id < HOP_COUNT; id++) {
    if (!res.stats[id].count) continue;
    hop_hist_t hist;
    hop_hist(&res, (hop_id_t)id, &hist);
    size_t total = 0, tallest = 0;
    for (int b = 0; b < HIST_BINS; b++) {
      total += hist.bins[b];
      if (hist.bins[b] > tallest) tallest = hist.bins[b];
    }
    assert_int_equal(total, res.stats[id].count);
    assert_true(hist.ymax >= tallest && hist.ymax % 4 == 0);
    assert_true(hist.lo == (double)res.stats[id].min / 1e6 && hist.hi > hist.lo);
  }
  assert_int_equal(report_svg(svgdir, &res), RIPPLE_OK);
  snprintf(svg, sizeof svg, "%s/pod-add_to_scheduled.svg", svgdir);
  struct stat st;
  assert_int_equal(stat(svg, &st), 0);
  assert_true(st.st_size > 200);
  assert_int_equal(report_png(svgdir, &res), RIPPLE_OK);
  snprintf(svg, sizeof svg, "%s/e2e_deployment-change_to_last-pod-ready.png", svgdir);
  FILE *png = fopen(svg, "rb");
  assert_non_null(png);
  unsigned char head[24];
  assert_int_equal(fread(head, 1, sizeof head, png), sizeof head);
  fclose(png);
  /* The signature, then IHDR of a 640x400 image. */
  assert_memory_equal(head, "\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\x02\x80\0\0\x01\x90", 24);
  test_rmtree(dir);
  hops_free(&res);
  cl_log_free(&log);
  free(text);
}

/* resources.csv from ripple run: CPU per interval and memory, per process. */
static void resources_plotted(void **state) {
  (void)state;
  char dir[] = "/tmp/ripple-resplot-XXXXXX";
  assert_non_null(mkdtemp(dir));
  FILE *f = fopen(test_path(dir, "resources.csv"), "w");
  assert_non_null(f);
  /* agent: 0.1 s of CPU per second (10%), 20 MiB; api: 0.5 s per second, 200 MiB. */
  fputs(
      "time_ns,process,pid,cpu_s,rss_kib\n"
      "1000000000,api,1,1.0,204800\n"
      "1000000000,agent,2,0.0,20480\n"
      "torn,row\n"
      "2000000000,api,1,1.5,204800\n"
      "2000000000,agent,2,0.1,20480\n"
      "3000000000,api,1,2.0,204800\n"
      "3000000000,agent,2,0.2,20480\n",
      f);
  fclose(f);
  char summary[1024];
  assert_int_equal(resplot_svg(test_path(dir, "resources.csv"), test_path(dir, "plots"), summary,
                               sizeof summary),
                   RIPPLE_OK);
  assert_non_null(
      strstr(summary, "api              cpu avg  50.00% of a core, memory avg    200.0 MiB"));
  assert_non_null(
      strstr(summary, "agent            cpu avg  10.00% of a core, memory avg     20.0 MiB"));
  FILE *svg = fopen(test_path(dir, "plots/resources-cpu.svg"), "r");
  assert_non_null(svg);
  fclose(svg);
  assert_non_null((svg = fopen(test_path(dir, "plots/resources-memory.svg"), "r")));
  fclose(svg);
  assert_int_equal(resplot_svg(test_path(dir, "none.csv"), NULL, NULL, 0), RIPPLE_ENOENT);
  test_rmtree(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(known_hops),
      cmocka_unit_test(effect_before_cause),
      cmocka_unit_test(service_must_select_pod),
      cmocka_unit_test(percentiles_nearest_rank),
      cmocka_unit_test(malformed_lines_counted),
      cmocka_unit_test(zstd_reads_like_plain),
      cmocka_unit_test(outputs_written),
      cmocka_unit_test(resources_plotted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
