/*
 * test_server.c - the trace server as its clients see it: libripple's shipper
 * sends, HTTP queries answer. The server runs in this process (its parts are a
 * library) on a free loopback port over a temporary database, so each test can
 * stop and reopen it: that is how the restart test checks that the answers
 * come back the same and that the shipper's retries bridge the gap.
 */
#include <curl/curl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_client.h"
#include "ripplex/sbuf.h"
#include "server_rig.h"
#include "testutil.h"

static int rig_setup_open(void **state) {
  rig_t *r = rig_new();
  rig_open(r);
  *state = r;
  return 0;
}

/* ---- helpers ------------------------------------------------------------- */

typedef struct client {
  ripple_shipper_t *s;
  ripple_tracer_t *t;
} client_t;

static void client_new(client_t *c, const rig_t *r, const char *component) {
  ripple_shipper_opts_t so = {
      .url = r->base, .backoff_min_ms = 20, .backoff_max_ms = 200, .flush_interval_ms = 10};
  assert_int_equal(ripple_shipper_new(&so, &c->s), RIPPLE_OK);
  ripple_tracer_opts_t to = {.component = component, .sink = ripple_shipper_sink(c->s)};
  assert_int_equal(ripple_tracer_new(&to, &c->t), RIPPLE_OK);
}

/* Everything enqueued must have been acknowledged: nothing dropped, refused or
 * left behind. */
static void client_free_checked(client_t *c) {
  assert_int_equal(ripple_shipper_flush(c->s, 30000), RIPPLE_OK);
  ripple_shipper_stats_t st;
  ripple_shipper_stats(c->s, &st);
  assert_int_equal(st.sent, st.enqueued);
  assert_int_equal(st.dropped, 0);
  assert_int_equal(st.rejected, 0);
  ripple_tracer_free(c->t);
  ripple_shipper_free(c->s, 1000);
}

static const char *str(const ripple_ctx_t *c, char buf[RIPPLE_CPID_STRLEN + 1]) {
  ripple_cpid_format(&c->cpid, buf);
  return buf;
}

static json_t *query(const rig_t *r, const ripple_ctx_t *c, const char *what) {
  char id[RIPPLE_CPID_STRLEN + 1], path[128];
  snprintf(path, sizeof path, "/v1/cpids/%s/%s", str(c, id), what);
  json_t *j = hc_get_json(r->base, path, 200);
  assert_non_null(j);
  return j;
}

static int related_has(const rig_t *r, const ripple_ctx_t *from, const ripple_ctx_t *x) {
  char id[RIPPLE_CPID_STRLEN + 1];
  json_t *j = query(r, from, "related");
  int has = hc_array_has(json_object_get(j, "related"), str(x, id));
  json_decref(j);
  return has;
}

static void span(ripple_tracer_t *t, const ripple_ctx_t *ctx, const char *name) {
  ripple_span_t *s;
  assert_int_equal(ripple_span_start(t, ctx, name, &s), RIPPLE_OK);
  assert_int_equal(ripple_span_set_attr(s, "object", name), RIPPLE_OK);
  ripple_span_end(s);
}

/* Count the records of an array field whose "cpid" is id. */
static size_t count_cpid(const json_t *arr, const char *id) {
  size_t i, n = 0;
  json_t *v;
  json_array_foreach(arr, i, v) {
    if (!strcmp(json_string_value(json_object_get(v, "cpid")), id)) n++;
  }
  return n;
}

/* ---- the paper's figure 5, end to end ------------------------------------ */

static void test_figure5_end_to_end(void **state) {
  rig_t *r = *state;
  client_t c;
  client_new(&c, r, "test");
  ripple_objref_t dep = {"apps/v1", "Deployment", "default", "web", NULL};
  ripple_objref_t svc = {"v1", "Service", "default", "web", NULL};
  ripple_objref_t ep = {"v1", "Endpoints", "default", "web", NULL};
  ripple_ctx_t a, b, g, pod, unrelated;
  assert_int_equal(ripple_root(c.t, &dep, &a), RIPPLE_OK);
  assert_int_equal(ripple_root(c.t, &svc, &b), RIPPLE_OK);
  assert_int_equal(ripple_root(c.t, NULL, &unrelated), RIPPLE_OK);
  /* A Pod created from the Deployment's change reuses α: no mergelog. */
  const ripple_ctx_t *from_a[] = {&a};
  ripple_merge_kind_t how;
  assert_int_equal(ripple_merge(c.t, NULL, from_a, 1, NULL, &pod, &how), RIPPLE_OK);
  assert_int_equal(how, RIPPLE_MERGE_REUSED);
  const ripple_ctx_t *ab[] = {&a, &b};
  assert_int_equal(ripple_merge(c.t, NULL, ab, 2, &ep, &g, &how), RIPPLE_OK);
  assert_int_equal(how, RIPPLE_MERGE_NEW);
  span(c.t, &a, "scale");
  span(c.t, &g, "endpoints");
  span(c.t, &g, "endpoints-again");
  client_free_checked(&c);

  /* related: α reaches γ (and itself), β reaches γ, γ reaches only itself. */
  assert_true(related_has(r, &a, &a));
  assert_true(related_has(r, &a, &g));
  assert_false(related_has(r, &a, &b));
  assert_true(related_has(r, &b, &g));
  assert_false(related_has(r, &g, &a));
  assert_false(related_has(r, &a, &unrelated));

  /* origins of γ: α and β, each with its path to γ. */
  char ida[RIPPLE_CPID_STRLEN + 1], idb[RIPPLE_CPID_STRLEN + 1], idg[RIPPLE_CPID_STRLEN + 1];
  str(&a, ida), str(&b, idb), str(&g, idg);
  json_t *o = query(r, &g, "origins");
  json_t *origins = json_object_get(o, "origins"), *paths = json_object_get(o, "paths");
  assert_int_equal(json_array_size(origins), 2);
  assert_true(hc_array_has(origins, ida));
  assert_true(hc_array_has(origins, idb));
  for (size_t i = 0; i < 2; i++) {
    json_t *p = json_array_get(paths, i);
    assert_int_equal(json_array_size(p), 2);
    assert_string_equal(json_string_value(json_array_get(p, 1)), idg);
    assert_string_equal(json_string_value(json_array_get(p, 0)),
                        json_string_value(json_array_get(origins, i)));
  }
  json_decref(o);

  /* mergelogs of α's cascade: α's root and γ's merge {α, β}. */
  json_t *m = query(r, &a, "mergelogs");
  json_t *ml = json_object_get(m, "mergelogs");
  assert_int_equal(json_array_size(ml), 2);
  assert_int_equal(count_cpid(ml, ida), 1);
  assert_int_equal(count_cpid(ml, idg), 1);
  size_t i;
  json_t *v;
  json_array_foreach(ml, i, v) {
    if (strcmp(json_string_value(json_object_get(v, "cpid")), idg) != 0) continue;
    json_t *src = json_object_get(v, "sources");
    assert_int_equal(json_array_size(src), 2);
    assert_true(hc_array_has(src, ida));
    assert_true(hc_array_has(src, idb));
    assert_string_equal(json_string_value(json_object_get(json_object_get(v, "object"), "kind")),
                        "Endpoints");
  }
  json_decref(m);

  /* spans of α's cascade: one on α, two on γ, with their attributes. */
  json_t *s = query(r, &a, "spans");
  json_t *sp = json_object_get(s, "spans");
  assert_int_equal(json_array_size(sp), 3);
  assert_int_equal(count_cpid(sp, ida), 1);
  assert_int_equal(count_cpid(sp, idg), 2);
  json_decref(s);

  /* An unknown CPID is a 404 with a JSON error; a malformed one a 400. */
  json_t *e = hc_get_json(r->base, "/v1/cpids/00000000-0000-4000-8000-000000000000/related", 404);
  assert_non_null(json_object_get(e, "error"));
  json_decref(e);
  e = hc_get_json(r->base, "/v1/cpids/not-a-cpid/related", 400);
  assert_string_equal(json_string_value(json_object_get(e, "field")), "cpid");
  json_decref(e);
}

/* ---- restart in the middle ----------------------------------------------- */

#define CHAINS 40

/* A chain of merges: each new root merged with the previous merge, so the
 * first root reaches every merge. */
static void ship_chains(client_t *c, ripple_ctx_t *roots, ripple_ctx_t *merged, size_t from,
                        size_t to) {
  for (size_t k = from; k < to; k++) {
    assert_int_equal(ripple_root(c->t, NULL, &roots[k]), RIPPLE_OK);
    if (k == 0) {
      merged[0] = roots[0];
      continue;
    }
    const ripple_ctx_t *src[] = {&roots[k], &merged[k - 1]};
    ripple_merge_kind_t how;
    assert_int_equal(ripple_merge(c->t, NULL, src, 2, NULL, &merged[k], &how), RIPPLE_OK);
    assert_int_equal(how, RIPPLE_MERGE_NEW);
    span(c->t, &merged[k], "work");
  }
}

static char *get_body(const rig_t *r, const char *path) {
  char url[256];
  snprintf(url, sizeof url, "%s%s", r->base, path);
  hc_resp_t resp;
  assert_int_equal(hc_request("GET", url, NULL, 0, NULL, &resp), 0);
  assert_int_equal(resp.status, 200);
  return resp.body;
}

static void test_restart_in_the_middle(void **state) {
  rig_t *r = *state;
  static ripple_ctx_t roots[CHAINS], merged[CHAINS];
  client_t c;
  client_new(&c, r, "test");
  ship_chains(&c, roots, merged, 0, CHAINS / 2);
  assert_int_equal(ripple_shipper_flush(c.s, 30000), RIPPLE_OK);
  char id[RIPPLE_CPID_STRLEN + 1], path[128];
  snprintf(path, sizeof path, "/v1/cpids/%s/related", str(&roots[0], id));
  char *before = get_body(r, path);

  /* The server goes away; the client keeps working and its shipper retries. */
  rig_close(r);
  ship_chains(&c, roots, merged, CHAINS / 2, CHAINS);
  ripple_shipper_stats_t st;
  ripple_shipper_stats(c.s, &st);
  assert_true(st.queued > 0 || st.failures > 0);
  rig_open(r);
  client_free_checked(&c);

  /* Everything from both halves is there, linked across the restart. */
  json_t *j = query(r, &roots[0], "related");
  json_t *rel = json_object_get(j, "related");
  for (size_t k = 1; k < CHAINS; k++) assert_true(hc_array_has(rel, str(&merged[k], id)));
  assert_int_equal(json_array_size(rel), 1 + (CHAINS - 1));
  json_decref(j);

  /* A restart brings back the answers: everything the first query returned
   * is still returned after two restarts. */
  rig_close(r);
  rig_open(r);
  char *after = get_body(r, path);
  json_t *jb = json_loads(before, 0, NULL), *ja = json_loads(after, 0, NULL);
  json_t *rb = json_object_get(jb, "related"), *ra = json_object_get(ja, "related");
  for (size_t i = 0; i < json_array_size(rb); i++)
    assert_true(hc_array_has(ra, json_string_value(json_array_get(rb, i))));
  json_decref(jb);
  json_decref(ja);
  free(before);
  free(after);
}

/* ---- bad input ------------------------------------------------------------- */

static hc_resp_t post(const rig_t *r, const char *route, const char *body, const char *token) {
  char url[256];
  snprintf(url, sizeof url, "%s%s", r->base, route);
  hc_resp_t resp;
  assert_int_equal(hc_request("POST", url, body, strlen(body), token, &resp), 0);
  return resp;
}

/* Assert a JSON error answer with the given status, index and field. */
static void expect_error(hc_resp_t resp, long status, long index, const char *field) {
  if (resp.status != status) fail_msg("status %ld, want %ld: %s", resp.status, status, resp.body);
  json_t *j = json_loads(resp.body, 0, NULL);
  assert_non_null(j);
  assert_true(json_is_string(json_object_get(j, "error")));
  json_t *ix = json_object_get(j, "index");
  if (index >= 0)
    assert_int_equal(json_integer_value(ix), index);
  else
    assert_null(ix);
  if (field) assert_string_equal(json_string_value(json_object_get(j, "field")), field);
  json_decref(j);
  hc_resp_free(&resp);
}

static void expect_get_error(const rig_t *r, const char *path, long status, const char *field) {
  char url[256];
  snprintf(url, sizeof url, "%s%s", r->base, path);
  hc_resp_t resp;
  assert_int_equal(hc_request("GET", url, NULL, 0, NULL, &resp), 0);
  expect_error(resp, status, -1, field);
}

#define ML(id) "{\"cpid\":\"" id "\",\"sources\":[],\"time\":\"2026-11-22T10:00:00.000000001Z\"}"
#define ID1 "11111111-1111-4111-8111-111111111111"
#define ID2 "22222222-2222-4222-8222-222222222222"

static void test_bad_input_is_refused_whole(void **state) {
  rig_t *r = *state;
  expect_error(post(r, "/v1/mergelogs", "{not json", NULL), 400, -1, NULL);
  expect_error(post(r, "/v1/mergelogs", "[" ML(ID1) ",{\"cpid\":\"nope\"}]", NULL), 400, 1, "cpid");
  expect_error(post(r, "/v1/spans", "[" ML(ID1) "]", NULL), 400, 0, NULL);
  /* All or nothing: the good first record of the refused request is absent. */
  json_t *e = hc_get_json(r->base, "/v1/cpids/" ID1 "/related", 404);
  assert_non_null(e);
  json_decref(e);

  /* Too many records (the rig allows 1000) and too large a body (1 MiB). */
  sbuf_t b;
  sbuf_init(&b);
  sbuf_putc(&b, '[');
  for (int i = 0; i < 1001; i++) sbuf_printf(&b, "%s" ML(ID2), i ? "," : "");
  sbuf_putc(&b, ']');
  sbuf_putc(&b, '\0');
  expect_error(post(r, "/v1/mergelogs", b.p, NULL), 413, -1, NULL);
  b.len = 0;
  sbuf_putc(&b, '[');
  while (b.len < (2u << 20)) sbuf_puts(&b, "                ");
  sbuf_puts(&b, "]");
  sbuf_putc(&b, '\0');
  expect_error(post(r, "/v1/mergelogs", b.p, NULL), 413, -1, NULL);
  sbuf_free(&b);

  /* Unknown routes and methods. */
  expect_error(post(r, "/v1/nothing", "[]", NULL), 404, -1, NULL);
  json_t *j = hc_get_json(r->base, "/v1/cpids/" ID1 "/sideways", 404);
  assert_non_null(j);
  json_decref(j);

  /* Still serving, and it counted the refusals. */
  hc_resp_t ok = post(r, "/v1/mergelogs", "[" ML(ID1) "]", NULL);
  assert_int_equal(ok.status, 200);
  hc_resp_free(&ok);
  char *metrics = get_body(r, "/metrics");
  assert_non_null(strstr(metrics, "ripple_rejected_requests_total{kind=\"mergelog\"} 4"));
  assert_non_null(strstr(metrics, "ripple_records_total{kind=\"mergelog\"} 1"));
  assert_non_null(strstr(metrics, "ripple_graph_vertices 1"));
  free(metrics);
}

/* ---- retries ------------------------------------------------------------------- */

static size_t listed_mergelogs(const rig_t *r) {
  json_t *j = hc_get_json(r->base, "/v1/mergelogs", 200);
  assert_non_null(j);
  size_t n = json_array_size(json_object_get(j, "mergelogs"));
  json_decref(j);
  return n;
}

/* A shipper that never got its answer sends the batch again: the server
 * acknowledges it, keeps the first mergelog, and stores nothing twice. */
static void test_retried_mergelogs_are_stored_once(void **state) {
  rig_t *r = *state;
  const char *batch = "[" ML(ID1) "," ML(ID2) "]";
  for (int i = 0; i < 3; i++) {
    hc_resp_t ok = post(r, "/v1/mergelogs", batch, NULL);
    assert_int_equal(ok.status, 200);
    hc_resp_free(&ok);
  }
  assert_int_equal(listed_mergelogs(r), 2);
  char *metrics = get_body(r, "/metrics");
  assert_non_null(strstr(metrics, "ripple_duplicate_mergelogs_total 4"));
  free(metrics);
  rig_close(r);
  rig_open(r);
  assert_int_equal(listed_mergelogs(r), 2);
}

/* The same in one request (a root admitted twice before the shipper sent its
 * batch): the first mergelog of the CPID is kept, the repeat is acknowledged and
 * counted, and the rest of the request is stored; before, the whole request was
 * refused, and a shipper does not retry a 400: it lost every record with it. */
static void test_repeated_cpid_in_one_request(void **state) {
  rig_t *r = *state;
  hc_resp_t ok = post(r, "/v1/mergelogs", "[" ML(ID1) "," ML(ID2) "," ML(ID1) "]", NULL);
  assert_int_equal(ok.status, 200);
  assert_non_null(strstr(ok.body, "\"accepted\":2"));
  hc_resp_free(&ok);
  assert_int_equal(listed_mergelogs(r), 2);
  char *metrics = get_body(r, "/metrics");
  assert_non_null(strstr(metrics, "ripple_duplicate_mergelogs_total 1"));
  free(metrics);
  rig_close(r);
  rig_open(r);
  assert_int_equal(listed_mergelogs(r), 2);
}

/* ---- tokens ------------------------------------------------------------------ */

/* GET url (POST body when there is one) with these header lines; the
 * status (0: no answer). */
static long send_with(const char *url, const char *body, const char *const *hdrs) {
  CURL *c = curl_easy_init();
  struct curl_slist *h = NULL;
  for (; *hdrs; hdrs++) h = curl_slist_append(h, *hdrs);
  FILE *sink = fopen("/dev/null", "w");
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  if (body) curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, sink);
  long status = 0;
  if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  if (sink) fclose(sink);
  return status;
}

/* X-Ripple-Token (what comes through the API server's service proxy, which
 * deletes Authorization) is checked against the same lists as a bearer
 * token; either header with a good token will do. */
static void check_x_ripple_token(const rig_t *r) {
  char get_url[256];
  snprintf(get_url, sizeof get_url, "%s/v1/cpids/" ID1 "/related", r->base);
  static const struct {
    const char *h[3];
    long want;
  } t[] = {
      {{"X-Ripple-Token: r-secret", NULL}, 200},
      {{"X-Ripple-Token: r-secre", NULL}, 401},
      {{"X-Ripple-Token: r-secretx", NULL}, 401},
      {{"X-Ripple-Token: w-secret", NULL}, 401}, /* a writer's token is not a reader's */
      {{"X-Ripple-Token:", NULL}, 401},
      {{"X-Ripple-Token: Bearer r-secret", NULL}, 401}, /* the bare token, no scheme */
      {{"Authorization: Bearer k8s-token", "X-Ripple-Token: r-secret", NULL}, 200},
      {{"Authorization: Bearer r-secret", "X-Ripple-Token: nope", NULL}, 200},
      {{"Authorization: Bearer nope", "X-Ripple-Token: nope", NULL}, 401},
      /* The scheme's name in any case (RFC 9110, 11.1); the token exactly. */
      {{"Authorization: bearer r-secret", NULL}, 200},
      {{"Authorization: BEARER r-secret", NULL}, 200},
      {{"Authorization: Bearer R-SECRET", NULL}, 401},
      {{"Authorization: Basic r-secret", NULL}, 401},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    long got = send_with(get_url, NULL, t[i].h);
    if (got != t[i].want)
      fail_msg("GET with \"%s\" \"%s\": %ld, want %ld", t[i].h[0], t[i].h[1] ? t[i].h[1] : "", got,
               t[i].want);
  }
  char post_url[256];
  snprintf(post_url, sizeof post_url, "%s/v1/mergelogs", r->base);
  const char *w[] = {"Content-Type: application/json", "X-Ripple-Token: w-other", NULL};
  assert_int_equal(send_with(post_url, "[" ML(ID1) "]", w), 200);
  const char *wr[] = {"Content-Type: application/json", "X-Ripple-Token: r-secret", NULL};
  assert_int_equal(send_with(post_url, "[" ML(ID1) "]", wr), 401);
}

static void test_tokens(void **state) {
  rig_t *r = *state;
  rig_close(r);
  char *writers[] = {"w-secret", "w-other", NULL}, *readers[] = {"r-secret", NULL};
  r->ho.writer_tokens = writers;
  r->ho.reader_tokens = readers;
  rig_open(r);
  expect_error(post(r, "/v1/mergelogs", "[" ML(ID1) "]", NULL), 401, -1, NULL);
  expect_error(post(r, "/v1/mergelogs", "[" ML(ID1) "]", "r-secret"), 401, -1, NULL);
  expect_error(post(r, "/v1/mergelogs", "[" ML(ID1) "]", "w-secre"), 401, -1, NULL);
  hc_resp_t ok = post(r, "/v1/mergelogs", "[" ML(ID1) "]", "w-other");
  assert_int_equal(ok.status, 200);
  hc_resp_free(&ok);

  char url[256];
  hc_resp_t resp;
  snprintf(url, sizeof url, "%s/v1/cpids/" ID1 "/related", r->base);
  assert_int_equal(hc_request("GET", url, NULL, 0, "w-secret", &resp), 0);
  expect_error(resp, 401, -1, NULL);
  assert_int_equal(hc_request("GET", url, NULL, 0, "r-secret", &resp), 0);
  assert_int_equal(resp.status, 200);
  hc_resp_free(&resp);
  check_x_ripple_token(r);
  /* Probes stay open so a kubelet can use them without a token. */
  snprintf(url, sizeof url, "%s/healthz", r->base);
  assert_int_equal(hc_request("GET", url, NULL, 0, NULL, &resp), 0);
  assert_int_equal(resp.status, 200);
  hc_resp_free(&resp);
  snprintf(url, sizeof url, "%s/metrics", r->base);
  assert_int_equal(hc_request("GET", url, NULL, 0, NULL, &resp), 0);
  expect_error(resp, 401, -1, NULL);
  r->ho.writer_tokens = r->ho.reader_tokens = NULL;
}

/* ---- listing --------------------------------------------------------------- */

static void test_listing_pages_and_time_filters(void **state) {
  rig_t *r = *state;
  enum { TOTAL = 250 };
  /* Records with times one second apart, posted out of order. */
  sbuf_t b;
  sbuf_init(&b);
  sbuf_putc(&b, '[');
  for (int k = 0; k < TOTAL; k++) {
    int i = (k * 7) % TOTAL; /* 7 is coprime with 250: a permutation */
    sbuf_printf(&b,
                "%s{\"cpid\":\"%08x-0000-4000-8000-000000000000\",\"sources\":[],"
                "\"time\":\"2026-11-22T10:%02d:%02d.000000000Z\"}",
                k ? "," : "", i, i / 60, i % 60);
  }
  sbuf_puts(&b, "]");
  sbuf_putc(&b, '\0');
  hc_resp_t ok = post(r, "/v1/mergelogs", b.p, NULL);
  assert_int_equal(ok.status, 200);
  hc_resp_free(&ok);
  sbuf_free(&b);

  /* Walk all pages: every record once, in time order. */
  char path[256], cursor[64] = "";
  int seen = 0;
  for (int page = 0; page < 10; page++) {
    snprintf(path, sizeof path, "/v1/mergelogs?limit=100%s%s", *cursor ? "&cursor=" : "", cursor);
    json_t *j = hc_get_json(r->base, path, 200);
    assert_non_null(j);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(j, "mergelogs"), i, v) {
      const char *id = json_string_value(json_object_get(v, "cpid"));
      assert_int_equal(strtoul(id, NULL, 16), (unsigned long)seen++);
    }
    json_t *next = json_object_get(j, "next");
    if (json_is_null(next)) {
      json_decref(j);
      break;
    }
    snprintf(cursor, sizeof cursor, "%s", json_string_value(next));
    json_decref(j);
  }
  assert_int_equal(seen, TOTAL);

  /* since is inclusive, until exclusive: [10:01:00, 10:02:00) is 60 records. */
  json_t *j = hc_get_json(
      r->base, "/v1/mergelogs?since=2026-11-22T10:01:00Z&until=2026-11-22T10:02:00Z", 200);
  assert_non_null(j);
  assert_int_equal(json_array_size(json_object_get(j, "mergelogs")), 60);
  assert_true(json_is_null(json_object_get(j, "next")));
  json_decref(j);
  expect_get_error(r, "/v1/mergelogs?since=yesterday", 400, "since");
  expect_get_error(r, "/v1/mergelogs?cursor=12x", 400, "cursor");
  expect_get_error(r, "/v1/mergelogs?limit=0", 400, "limit");
  char url[256];
  hc_resp_t resp;
  snprintf(url, sizeof url, "%s/v2/mergelogs", r->base);
  assert_int_equal(hc_request("GET", url, NULL, 0, NULL, &resp), 0);
  assert_int_equal(resp.status, 404);
  assert_non_null(strstr(resp.body, "speaks v1"));
  hc_resp_free(&resp);
}

/* ---- TLS ------------------------------------------------------------------- */

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  sbuf_t b;
  sbuf_init(&b);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) sbuf_put(&b, buf, n);
  fclose(f);
  char *out;
  assert_int_equal(sbuf_take(&b, &out, NULL), RIPPLE_OK);
  return out;
}

/* Over HTTPS with a self-signed certificate for 127.0.0.1: the shipper, given
 * the certificate as its CA, delivers; a plain-HTTP client gets nothing. */
static void test_tls(void **state) {
  rig_t *r = *state;
  rig_close(r);
  char crt[128], key[128];
  rig_self_signed(r, crt, sizeof crt, key, sizeof key);
  r->ho.tls_cert = slurp(crt);
  r->ho.tls_key = slurp(key);
  rig_open(r);
  char https[80];
  snprintf(https, sizeof https, "https://127.0.0.1:%u", r->ho.port);

  ripple_shipper_opts_t so = {.url = https, .ca_file = crt, .flush_interval_ms = 10};
  client_t c;
  assert_int_equal(ripple_shipper_new(&so, &c.s), RIPPLE_OK);
  ripple_tracer_opts_t to = {.component = "tls-test", .sink = ripple_shipper_sink(c.s)};
  assert_int_equal(ripple_tracer_new(&to, &c.t), RIPPLE_OK);
  ripple_ctx_t root;
  assert_int_equal(ripple_root(c.t, NULL, &root), RIPPLE_OK);
  client_free_checked(&c);

  hc_resp_t resp;
  char url[160];
  snprintf(url, sizeof url, "%s/healthz", r->base); /* http:// to a TLS port */
  hc_request("GET", url, NULL, 0, NULL, &resp);
  assert_int_not_equal(resp.status, 200);
  hc_resp_free(&resp);
  rig_close(r);
  free((char *)r->ho.tls_cert);
  free((char *)r->ho.tls_key);
  r->ho.tls_cert = r->ho.tls_key = NULL;
  rig_open(r);
  /* The record sent over TLS is in the database. */
  json_t *j = query(r, &root, "mergelogs");
  assert_int_equal(json_array_size(json_object_get(j, "mergelogs")), 1);
  json_decref(j);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_figure5_end_to_end, rig_setup_open, rig_teardown),
      cmocka_unit_test_setup_teardown(test_restart_in_the_middle, rig_setup_open, rig_teardown),
      cmocka_unit_test_setup_teardown(test_bad_input_is_refused_whole, rig_setup_open,
                                      rig_teardown),
      cmocka_unit_test_setup_teardown(test_repeated_cpid_in_one_request, rig_setup_open,
                                      rig_teardown),
      cmocka_unit_test_setup_teardown(test_retried_mergelogs_are_stored_once, rig_setup_open,
                                      rig_teardown),
      cmocka_unit_test_setup_teardown(test_tokens, rig_setup_open, rig_teardown),
      cmocka_unit_test_setup_teardown(test_listing_pages_and_time_filters, rig_setup_open,
                                      rig_teardown),
      cmocka_unit_test_setup_teardown(test_tls, rig_setup_open, rig_teardown),
  };
  ripple_log_setup("test_server", RIPPLE_LOG_WARN, NULL, NULL);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
