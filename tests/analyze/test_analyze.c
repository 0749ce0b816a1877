/*
 * test_analyze.c - `ripple analyze` on a hand-made change log whose times are
 * known: every hop's instances and percentiles are asserted exactly, bad lines
 * are counted, and the same log compressed with zstd (rotated files, several
 * frames, in a run directory) gives the same result. The plots: round axis
 * ticks with units, PNGs read back with cairo, SVGs checked for shape.
 */
#include <cairo.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "testutil.h"

#include "analyze.h"
#include "ripplex/sbuf.h"

#define MS 1000000LL
/* A realistic epoch in ns, plus an odd 7 ns so nothing is rounded to ms. */
#define T0 1763770000000000007LL

static void put(sbuf_t *b, const char *s) {
  sbuf_puts(b, s);
  assert_false(b->oom);
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

/* The scenario's change log analysed into *log and *res; its text, for
 * analysed_free(). */
static char *scenario_analysed(cl_log_t *log, hop_result_t *res) {
  size_t len;
  char *text = scenario(&len);
  *log = (cl_log_t){0};
  analyze_text(text, len, log, res);
  return text;
}

/* Free an analysis and the text it was made from. */
static void analysed_free(char *text, cl_log_t *log, hop_result_t *res) {
  hops_free(res);
  cl_log_free(log);
  free(text);
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
  cl_log_t log;
  hop_result_t res;
  char *text = scenario_analysed(&log, &res);
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
  analysed_free(text, &log, &res);
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
  analysed_free(b.p, &log, &res);
}

/* The EndpointSlice listing a Pod as ready is seen before the Pod's Ready
 * (another watch; a loaded agent on the real node): the hop is counted, as 0,
 * not dropped. */
static void slice_before_ready(void **state) {
  (void)state;
  sbuf_t b = {0};
  rec(&b, -100, "add", "services", service("web"), NULL, false);
  rec(&b, 0, "add", "deployments.apps", deploy(1, 1), NULL, false);
  rec(&b, 10, "add", "replicasets.apps", rs(1), NULL, false);
  pod_life(&b, "web-abc-1", "10.0.0.1", 30, 100, 300, 500);
  rec(&b, 490, "add", "endpointslices.discovery.k8s.io",
      endpoints("EndpointSlice", "10.0.0.1", NULL, NULL), NULL, false);
  rec(&b, 495, "update", "endpoints", endpoints("Endpoints", "10.0.0.1", NULL, NULL), NULL, false);
  cl_log_t log = {0};
  hop_result_t res;
  analyze_text(b.p, b.len, &log, &res);
  expect(&res, HOP_POD_READY_SLICE, "0");
  expect(&res, HOP_POD_READY_ENDPOINTS, "0");
  analysed_free(b.p, &log, &res);
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
  analysed_free(text, &log, &res);
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
  sbuf_t b = {.p = text, .len = len, .cap = len + 1};
  put(&b, malformed);
  cl_log_t log = {0};
  hop_result_t res;
  analyze_text(b.p, b.len, &log, &res);
  assert_int_equal(log.malformed, 6); /* the blank line is not counted */
  assert_int_equal(log.n, 28);
  assert_int_equal(log.lines, 34);
  assert_int_equal(res.stats[HOP_RS_DELETE_POD_DELETE].count, 3);
  analysed_free(b.p, &log, &res);
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

/* The labels as "a,b,c". */
static void expect_labels(const plot_ticks_t *t, const char *want) {
  char got[PLOT_MAX_TICKS * (PLOT_LABEL_LEN + 1)] = "";
  size_t off = 0;
  for (size_t i = 0; i < t->n; i++)
    off += (size_t)snprintf(got + off, sizeof got - off, "%s%s", i ? "," : "", t->label[i]);
  if (strcmp(got, want) != 0) fprintf(stderr, "ticks: got [%s] want [%s]\n", got, want);
  assert_string_equal(got, want);
}

/* Round ticks: the step is 1, 2 or 5 times a power of ten, every tick a
 * multiple of it, the first at or below lo and the last at or above hi. */
static bool ticks_sound(const plot_ticks_t *t, double lo, double hi, int max) {
  double mant = t->step / pow(10, floor(log10(t->step)));
  bool ok = t->n >= 2 && t->n <= (size_t)max + 1 && t->lo == t->v[0] && t->hi == t->v[t->n - 1] &&
            t->lo <= lo + t->step * 1e-6 && t->hi >= hi - t->step * 1e-6 &&
            (fabs(mant - 1) < 1e-9 || fabs(mant - 2) < 1e-9 || fabs(mant - 5) < 1e-9);
  for (size_t i = 0; ok && i < t->n; i++) {
    /* Within what doubles can tell apart at this magnitude. */
    double k = t->v[i] / t->step, slack = t->step * 1e-6 + fabs(t->v[i]) * 1e-12;
    ok = fabs(k - round(k)) < 1e-6 + fabs(k) * 1e-12 &&
         fabs(t->v[i] - t->lo - (double)i * t->step) < slack;
    /* A label is a plain number with its unit, and differs from the last. */
    ok =
        ok && !strpbrk(t->label[i], "eEn") && (i == 0 || strcmp(t->label[i], t->label[i - 1]) != 0);
  }
  return ok;
}

/* What cairo wrote is a whole SVG document of the canvas's size with text
 * (cairo draws glyphs as <use> of outlines) and balanced tags. Returns it. */
static char *check_svg(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  char *doc = calloc(1, 1 << 22);
  assert_non_null(doc);
  size_t len = fread(doc, 1, (1 << 22) - 1, f);
  fclose(f);
  assert_true(len > 200 && len < (1 << 22) - 1);
  assert_true(!strncmp(doc, "<?xml", 5));
  assert_non_null(strstr(doc, "width=\"640px\" height=\"400px\""));
  assert_non_null(strstr(doc, "<use xlink:href=\"#glyph"));
  int depth = 0, roots = 0;
  for (const char *p = strchr(doc, '<'); p; p = strchr(p + 1, '<')) {
    const char *end = strchr(p, '>');
    assert_non_null(end);
    if (p[1] == '?' || p[1] == '!') continue;
    if (p[1] == '/')
      depth--;
    else if (end[-1] != '/' && ++depth == 1)
      roots++;
    assert_true(depth >= 0);
  }
  assert_int_equal(depth, 0);
  assert_int_equal(roots, 1);
  assert_non_null(strstr(doc, "</svg>"));
  return doc;
}

/* A PNG of the canvas's size whose outermost pixels are all white (nothing
 * cut at the edge) and which shows text; bars: some of the bars' colour. */
static void check_png(const char *path, bool bars) {
  cairo_surface_t *s = cairo_image_surface_create_from_png(path);
  assert_int_equal(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
  assert_int_equal(cairo_image_surface_get_width(s), PLOT_W);
  assert_int_equal(cairo_image_surface_get_height(s), PLOT_H);
  cairo_surface_flush(s);
  const unsigned char *px = cairo_image_surface_get_data(s);
  int stride = cairo_image_surface_get_stride(s);
  size_t edge_ink = 0, dark = 0, bar = 0;
  for (int y = 0; y < PLOT_H; y++)
    for (int x = 0; x < PLOT_W; x++) {
      uint32_t c;
      memcpy(&c, px + (size_t)y * (size_t)stride + (size_t)x * 4, 4);
      c &= 0xffffff;
      bool edge = x < 3 || y < 3 || x >= PLOT_W - 3 || y >= PLOT_H - 3;
      if (edge && c != 0xffffff) edge_ink++;
      if ((c >> 16) < 0x40 && (c >> 8 & 0xff) < 0x40 && (c & 0xff) < 0x40) dark++;
      if (c == 0x4878a8) bar++;
    }
  cairo_surface_destroy(s);
  assert_int_equal(edge_ink, 0);
  assert_true(dark > 500); /* the title, tick labels and axis names */
  if (bars) assert_true(bar > 50);
}

/* Ticks where a person would put them, labelled with units. */
static void ticks_round(void **state) {
  (void)state;
  plot_ticks_t t;
  plot_ticks(0, 3380, PLOT_UNIT_MS, 8, &t); /* 0..3.38 s */
  expect_labels(&t, "0 s,0.5 s,1 s,1.5 s,2 s,2.5 s,3 s,3.5 s");
  assert_true(t.step == 500 && t.lo == 0 && t.hi == 3500);
  plot_ticks(0, 3380, PLOT_UNIT_MS, 4, &t);
  expect_labels(&t, "0 s,1 s,2 s,3 s,4 s");
  plot_ticks(0, 2380, PLOT_UNIT_MS, 6, &t); /* once 2.38e+03 */
  expect_labels(&t, "0 s,0.5 s,1 s,1.5 s,2 s,2.5 s");
  plot_ticks(4.57, 3957, PLOT_UNIT_MS, 8, &t); /* fig5-add-n100's range */
  expect_labels(&t, "0 s,0.5 s,1 s,1.5 s,2 s,2.5 s,3 s,3.5 s,4 s");
  plot_ticks(20, 35, PLOT_UNIT_MS, 8, &t);
  expect_labels(&t, "20 ms,22 ms,24 ms,26 ms,28 ms,30 ms,32 ms,34 ms,36 ms");
  plot_ticks(0, 950, PLOT_UNIT_MS, 5, &t); /* the last tick is 1 s, so seconds */
  expect_labels(&t, "0 s,0.2 s,0.4 s,0.6 s,0.8 s,1 s");
  plot_ticks(0, 450, PLOT_UNIT_MS, 5, &t);
  expect_labels(&t, "0 ms,100 ms,200 ms,300 ms,400 ms,500 ms");
  plot_ticks(100, 300, PLOT_UNIT_MS, 5, &t);
  expect_labels(&t, "100 ms,150 ms,200 ms,250 ms,300 ms");
  plot_ticks(3.6, 4.6, PLOT_UNIT_MS, 6, &t); /* one value of 3.6 ms, binned over 1 ms */
  expect_labels(&t, "3.6 ms,3.8 ms,4 ms,4.2 ms,4.4 ms,4.6 ms");
  plot_ticks(0, 0.004, PLOT_UNIT_MS, 4, &t);
  expect_labels(&t, "0 \xc2\xb5s,1 \xc2\xb5s,2 \xc2\xb5s,3 \xc2\xb5s,4 \xc2\xb5s");
  plot_ticks(0, 264, PLOT_UNIT_COUNT, 5, &t);
  expect_labels(&t, "0,100,200,300");
  plot_ticks(0, 264, PLOT_UNIT_COUNT, 6, &t);
  expect_labels(&t, "0,50,100,150,200,250,300");
  plot_ticks(0, 4, PLOT_UNIT_COUNT, 5, &t);
  expect_labels(&t, "0,1,2,3,4");
  plot_ticks(0, 1, PLOT_UNIT_COUNT, 5, &t); /* no half counts */
  expect_labels(&t, "0,1");
  plot_ticks(0, 0.8, PLOT_UNIT_PERCENT, 5, &t);
  expect_labels(&t, "0%,0.2%,0.4%,0.6%,0.8%");
  plot_ticks(0, 13.2, PLOT_UNIT_MIB, 5, &t);
  expect_labels(&t, "0 MiB,5 MiB,10 MiB,15 MiB");
  plot_ticks(-3, 3, PLOT_UNIT_PERCENT, 4, &t); /* never "-0" */
  expect_labels(&t, "-4%,-2%,0%,2%,4%");
}

/* A range of one value, a reversed one and nonsense still give an axis. */
static void ticks_degenerate(void **state) {
  (void)state;
  plot_ticks_t t;
  plot_ticks(5, 5, PLOT_UNIT_MS, 8, &t);
  assert_true(ticks_sound(&t, 5, 5, 8) && t.lo < 5 && t.hi > 5);
  expect_labels(&t, "4.7 ms,4.8 ms,4.9 ms,5 ms,5.1 ms,5.2 ms,5.3 ms");
  plot_ticks(0, 0, PLOT_UNIT_COUNT, 5, &t);
  expect_labels(&t, "0,1");
  plot_ticks(1500, 1500, PLOT_UNIT_MS, 8, &t);
  assert_true(ticks_sound(&t, 1500, 1500, 8) && t.lo < 1500 && t.hi > 1500);
  plot_ticks(10, 0, PLOT_UNIT_MIB, 5, &t);
  expect_labels(&t, "0 MiB,2 MiB,4 MiB,6 MiB,8 MiB,10 MiB");
  plot_ticks(NAN, INFINITY, PLOT_UNIT_MS, 0, &t);
  assert_true(ticks_sound(&t, 0, 1, 1));
  plot_ticks(0, 1e300, PLOT_UNIT_COUNT, 100, &t);
  assert_true(ticks_sound(&t, 0, 1e300, PLOT_MAX_TICKS - 1));
  plot_ticks(-1e300, 1e300, PLOT_UNIT_MIB, 5, &t);
  assert_true(ticks_sound(&t, -1e300, 1e300, 5));
  plot_ticks(0, 1e-310, PLOT_UNIT_PERCENT, 5, &t);
  assert_true(t.n >= 2 && t.lo <= 0 && t.hi >= 1e-310);
}

/* Every range gives sound ticks: seeded, and the seed is printed when not. */
static void ticks_random_ranges(void **state) {
  (void)state;
  const uint64_t seed = 0x9e3779b97f4a7c15ULL;
  uint64_t x = seed;
  for (int i = 0; i < 20000; i++) {
    double r[4];
    for (int k = 0; k < 4; k++) {
      x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
      r[k] = (double)((x * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
    }
    double lo = (r[0] < 0.3 ? 0 : (r[0] < 0.4 ? -1 : 1) * pow(10, r[1] * 12 - 4));
    double hi = lo + pow(10, r[2] * 12 - 5) * (1 + r[3] * 9);
    plot_unit_t unit = (plot_unit_t)(i % 4);
    int max = 1 + i % 10;
    plot_ticks_t t;
    plot_ticks(lo, hi, unit, max, &t);
    if (!ticks_sound(&t, lo, hi, max)) {
      fprintf(stderr, "seed %#llx, case %d: %.17g..%.17g unit %d max %d: step %g, n %zu\n",
              (unsigned long long)seed, i, lo, hi, (int)unit, max, t.step, t.n);
      fail();
    }
  }
}

/* Labels far wider than usual still fit on the canvas, as PNG and SVG. */
static void plot_labels_fit(void **state) {
  (void)state;
  char dir[] = "/tmp/ripple-plot-XXXXXX";
  assert_non_null(mkdtemp(dir));
  size_t bins[HIST_BINS] = {0};
  bins[0] = 123456, bins[HIST_BINS - 1] = 99999;
  plot_t p = {.title =
                  "a title much longer than the canvas is wide, which must be made smaller "
                  "rather than cut off at both of its ends",
              .xtitle = "latency",
              .ytitle = "count",
              .xunit = PLOT_UNIT_MS,
              .yunit = PLOT_UNIT_COUNT,
              .xlo = 999999.3,
              .xhi = 1000000.9,
              .ylo = 0,
              .yhi = 123456,
              .bins = bins,
              .nbins = HIST_BINS};
  assert_int_equal(plot_write(&p, PLOT_PNG, test_path(dir, "wide.png")), RIPPLE_OK);
  check_png(test_path(dir, "wide.png"), true);
  assert_int_equal(plot_write(&p, PLOT_SVG, test_path(dir, "wide.svg")), RIPPLE_OK);
  free(check_svg(test_path(dir, "wide.svg")));
  /* Lines, a legend, and an empty series. */
  const double xy[] = {0, 0, 500, 250000, 1500, 120000};
  plot_series_t lines[] = {{"kube-apiserver", xy, 3}, {"nothing", NULL, 0}};
  plot_t q = {.title = "Resident memory",
              .xtitle = "time",
              .ytitle = "resident memory",
              .xunit = PLOT_UNIT_MS,
              .yunit = PLOT_UNIT_MIB,
              .xlo = 0,
              .xhi = 1500,
              .ylo = 0,
              .yhi = 275000,
              .series = lines,
              .nseries = 2};
  assert_int_equal(plot_write(&q, PLOT_PNG, test_path(dir, "lines.png")), RIPPLE_OK);
  check_png(test_path(dir, "lines.png"), false);
  test_rmtree(dir);
}

/* A file that cannot be written is an error for the caller, not a crash. */
static void plot_write_fails(void **state) {
  (void)state;
  cl_log_t log;
  hop_result_t res;
  char *text = scenario_analysed(&log, &res);
  char dir[] = "/tmp/ripple-plot-XXXXXX";
  assert_non_null(mkdtemp(dir));
  /* Where the histograms would go are directories. */
  assert_int_equal(mkdir(test_path(dir, "pod-add_to_scheduled.svg"), 0755), 0);
  assert_int_equal(mkdir(test_path(dir, "pod-add_to_scheduled.png"), 0755), 0);
  assert_int_equal(report_svg(dir, &res), RIPPLE_ESYS);
  assert_int_equal(report_png(dir, &res), RIPPLE_ESYS);
  /* And the output directory cannot be made. */
  assert_int_equal(report_svg(test_path(dir, "no/such/dir"), &res), RIPPLE_ESYS);
  test_rmtree(dir);
  analysed_free(text, &log, &res);
}

static void outputs_written(void **state) {
  (void)state;
  cl_log_t log;
  hop_result_t res;
  char *text = scenario_analysed(&log, &res);
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
  free(check_svg(svg));
  /* Its x axis: 30, 70 and 85 ms binned from 30 to 85, ticks every 10 ms. */
  hop_hist_t hist;
  hop_hist(&res, HOP_POD_ADD_SCHEDULED, &hist);
  plot_ticks_t t;
  plot_ticks(hist.lo, hist.hi, PLOT_UNIT_MS, PLOT_X_INTERVALS, &t);
  expect_labels(&t, "30 ms,40 ms,50 ms,60 ms,70 ms,80 ms,90 ms");
  assert_int_equal(report_png(svgdir, &res), RIPPLE_OK);
  snprintf(svg, sizeof svg, "%s/e2e_deployment-change_to_last-pod-ready.png", svgdir);
  FILE *png = fopen(svg, "rb");
  assert_non_null(png);
  unsigned char head[24];
  assert_int_equal(fread(head, 1, sizeof head, png), sizeof head);
  fclose(png);
  /* The signature, then IHDR of a 640x400 image. */
  assert_memory_equal(head, "\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\x02\x80\0\0\x01\x90", 24);
  check_png(svg, true);
  snprintf(svg, sizeof svg, "%s/pod-add_to_scheduled.png", svgdir);
  check_png(svg, true);
  test_rmtree(dir);
  analysed_free(text, &log, &res);
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
  /* One line per process in each (cairo writes a stroke's width in its style). */
  const char *plots[] = {"plots/resources-cpu.svg", "plots/resources-memory.svg"};
  for (int i = 0; i < 2; i++) {
    char *doc = check_svg(test_path(dir, plots[i]));
    size_t lines = 0;
    for (const char *p = doc; (p = strstr(p, "stroke-width:1.5;")) != NULL; p++) lines++;
    assert_int_equal(lines, 2);
    free(doc);
  }
  /* The axes they have: 0..2 s of samples, 10%..50% CPU, 20..200 MiB. */
  plot_ticks_t t;
  plot_ticks(0, 2000, PLOT_UNIT_MS, PLOT_X_INTERVALS, &t);
  expect_labels(&t, "0 s,0.5 s,1 s,1.5 s,2 s");
  plot_ticks(0, 50 * 1.1, PLOT_UNIT_PERCENT, PLOT_Y_INTERVALS, &t);
  expect_labels(&t, "0%,20%,40%,60%");
  plot_ticks(0, 200 * 1.1, PLOT_UNIT_MIB, PLOT_Y_INTERVALS, &t);
  expect_labels(&t, "0 MiB,50 MiB,100 MiB,150 MiB,200 MiB,250 MiB");
  assert_int_equal(resplot_svg(test_path(dir, "none.csv"), NULL, NULL, 0), RIPPLE_ENOENT);
  test_rmtree(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(known_hops),
      cmocka_unit_test(effect_before_cause),
      cmocka_unit_test(slice_before_ready),
      cmocka_unit_test(service_must_select_pod),
      cmocka_unit_test(percentiles_nearest_rank),
      cmocka_unit_test(malformed_lines_counted),
      cmocka_unit_test(zstd_reads_like_plain),
      cmocka_unit_test(ticks_round),
      cmocka_unit_test(ticks_degenerate),
      cmocka_unit_test(ticks_random_ranges),
      cmocka_unit_test(outputs_written),
      cmocka_unit_test(plot_labels_fit),
      cmocka_unit_test(plot_write_fails),
      cmocka_unit_test(resources_plotted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
