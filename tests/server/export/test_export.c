/*
 * test_export.c - the OTLP exporter (export.h) in this process, against
 * endpoints that answer as OTLP allows: a scripted peer (429 and 503 with
 * Retry-After, 502, 400, partial success, no listener at all) and a second
 * real trace server's POST /v1/traces, across restarts of the exporting one.
 * What is asserted is what an operator relies on: nothing acknowledged is
 * skipped, a refused batch is not retried, the backlog stays bounded, the
 * cursor survives a restart. (Against a real Jaeger: test_otlp_lab.)
 */
#include <curl/curl.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "export/export.h"
#include "export/otlp_export.h"
#include "http_client.h"
#include "ingest/gzip.h"
#include "ingest/otlp.h"
#include "ingest/otlp.pb-c.h"
#include "ripplex/httpd.h"
#include "server_rig.h"
#include "testutil.h"

#define C1 "11111111-1111-4111-8111-111111111111"

/* ---- a scripted OTLP endpoint ----------------------------------------------------- */

typedef struct peer {
  struct MHD_Daemon *d;
  uint16_t port;
  char url[64];
  pthread_mutex_t mu;
  const int *script; /* statuses to answer, in turn; past the end: 200 */
  size_t nscript, requests;
  int64_t partial; /* rejected spans to claim in each 200 */
  size_t spans;    /* spans in requests answered 200 */
  int gzipped;     /* requests that came compressed */
} peer_t;

static size_t count_spans(const char *p, size_t n) {
  Ripple__Otlp__ExportTraceServiceRequest *r =
      ripple__otlp__export_trace_service_request__unpack(NULL, n, (const uint8_t *)p);
  assert_non_null(r);
  size_t spans = 0;
  for (size_t i = 0; i < r->n_resource_spans; i++)
    for (size_t j = 0; j < r->resource_spans[i]->n_scope_spans; j++)
      spans += r->resource_spans[i]->scope_spans[j]->n_spans;
  ripple__otlp__export_trace_service_request__free_unpacked(r, NULL);
  return spans;
}

static enum MHD_Result peer_request(void *cls, struct MHD_Connection *c, const char *url,
                                    const char *method, const char *version, const char *data,
                                    size_t *size, void **con_cls) {
  (void)url, (void)method, (void)version;
  peer_t *p = cls;
  httpd_req_t *r;
  int rc = httpd_req_feed(c, con_cls, data, size, 16 << 20, &r);
  if (rc <= 0) return rc == 0 ? MHD_YES : MHD_NO;
  const char *ce = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Encoding");
  char *plain = NULL;
  size_t len = r->body.len;
  if (ce && !strcmp(ce, "gzip"))
    assert_int_equal(gzip_decode(r->body.p, r->body.len, 64 << 20, &plain, &len), RIPPLE_OK);
  pthread_mutex_lock(&p->mu);
  int status = p->requests < p->nscript ? p->script[p->requests] : 200;
  p->requests++;
  p->gzipped += plain != NULL;
  if (status == 200) p->spans += count_spans(plain ? plain : r->body.p, len);
  int64_t partial = p->partial;
  pthread_mutex_unlock(&p->mu);
  free(plain);
  static const char *const retry_after[] = {"Retry-After", "1", NULL};
  if (status == 200 && partial) {
    Ripple__Otlp__ExportTraceServiceResponse a = RIPPLE__OTLP__EXPORT_TRACE_SERVICE_RESPONSE__INIT;
    Ripple__Otlp__ExportTracePartialSuccess ps = RIPPLE__OTLP__EXPORT_TRACE_PARTIAL_SUCCESS__INIT;
    ps.rejected_spans = partial;
    ps.error_message = "too old";
    a.partial_success = &ps;
    uint8_t buf[128];
    size_t n = ripple__otlp__export_trace_service_response__pack(&a, buf);
    return httpd_send(c, 200, "application/x-protobuf", (const char *)buf, n);
  }
  return httpd_send_headers(c, (unsigned)status, "text/plain", "no", 2,
                            status == 503 ? retry_after : NULL);
}

static void peer_start(peer_t *p, const int *script, size_t n) {
  memset(p, 0, sizeof *p);
  pthread_mutex_init(&p->mu, NULL);
  p->script = script;
  p->nscript = n;
  httpd_opts_t o = {.host = "127.0.0.1",
                    .max_connections = 16,
                    .timeout_s = 10,
                    .on_request = peer_request,
                    .on_completed = httpd_req_done,
                    .cls = p};
  char err[256];
  assert_int_equal(httpd_start(&o, &p->d, &p->port, err, sizeof err), RIPPLE_OK);
  snprintf(p->url, sizeof p->url, "http://127.0.0.1:%u/v1/traces", p->port);
}

static void peer_stop(peer_t *p) {
  MHD_stop_daemon(p->d);
  pthread_mutex_destroy(&p->mu);
}

static size_t peer_get(peer_t *p, const size_t *field) {
  pthread_mutex_lock(&p->mu);
  size_t v = *field;
  pthread_mutex_unlock(&p->mu);
  return v;
}

static size_t collect_answer(void *p, size_t size, size_t n, void *ud) {
  sbuf_put(ud, p, size * n);
  return size * n;
}

/* ---- the exporting server ------------------------------------------------------------ */

static exp_config_t config(const rig_t *r, const char *url, char *cursor, size_t cap) {
  snprintf(cursor, cap, "%s.otlp-cursor", r->db);
  return (exp_config_t){.url = url,
                        .gzip = 1,
                        .batch = 50,
                        .max_backlog = 100000,
                        .timeout_ms = 5000,
                        .backoff_min_ms = 20,
                        .backoff_max_ms = 200,
                        .cursor_path = cursor};
}

/* Open the rig and start an exporter to url (max_backlog 0: the default). */
static exp_t *open_exporter(rig_t *r, const char *url, char *cursor, size_t cap,
                            size_t max_backlog) {
  rig_open(r);
  exp_config_t c = config(r, url, cursor, cap);
  if (max_backlog) c.max_backlog = max_backlog;
  exp_t *e;
  char err[256];
  if (exp_start(srv_export_source(&r->srv), &c, &e, err, sizeof err) != RIPPLE_OK)
    fail_msg("exp_start: %s", err);
  return e;
}

/* n spans of C1 (span ids first+1 .. first+n), in one POST. */
static void post_spans(const rig_t *r, size_t first, size_t n) {
  sbuf_t b;
  sbuf_init(&b);
  sbuf_putc(&b, '[');
  for (size_t i = 0; i < n; i++)
    sbuf_printf(&b,
                "%s{\"cpid\":\"" C1
                "\",\"span_id\":\"%016zx\",\"service\":\"svc\",\"name\":"
                "\"write\",\"start\":\"2026-11-24T10:00:00Z\",\"end\":\"2026-11-24T10:00:01Z\"}",
                i ? "," : "", first + i + 1);
  sbuf_putc(&b, ']');
  rig_post(r, "spans", b.p);
  sbuf_free(&b);
}

/* Wait (up to 30 s) until the exporter has delivered or given up on every
 * span committed so far. */
static void settle(exp_t *e, exp_stats_t *st) {
  for (int i = 0; i < 3000; i++) {
    exp_stats(e, st);
    if (st->cursor[1] >= st->last[1] && st->cursor[0] >= st->last[0]) return;
    usleep(10000);
  }
  fail_msg("the exporter did not catch up: spans %" PRIu64 " of %" PRIu64, st->cursor[1],
           st->last[1]);
}

static void test_retries_then_delivers(void **state) {
  rig_t *r = *state;
  static const int script[] = {503, 429, 502, 504};
  peer_t p;
  peer_start(&p, script, 4);
  char cursor[128];
  exp_t *e = open_exporter(r, p.url, cursor, sizeof cursor, 0);
  post_spans(r, 0, 30);
  exp_stats_t st;
  settle(e, &st);
  assert_int_equal(st.exported[1], 30);
  assert_int_equal(st.requests_retry, 4);
  assert_int_equal(st.requests_ok, 1);
  assert_int_equal(peer_get(&p, &p.requests), 5); /* the same batch, five times */
  assert_int_equal(peer_get(&p, &p.spans), 30);
  assert_int_equal(p.gzipped, 5);
  exp_stop(e);
  rig_close(r);
  peer_stop(&p);
}

/* A 400 can never succeed: that batch is dropped, counted, not sent again,
 * and the next one goes through. */
static void test_refused_batch_is_dropped(void **state) {
  rig_t *r = *state;
  static const int script[] = {400};
  peer_t p;
  peer_start(&p, script, 1);
  char cursor[128];
  exp_t *e = open_exporter(r, p.url, cursor, sizeof cursor, 0);
  post_spans(r, 0, 10);
  exp_stats_t st;
  settle(e, &st);
  assert_int_equal(st.dropped_rejected[1], 10);
  assert_int_equal(st.requests_rejected, 1);
  post_spans(r, 10, 5);
  settle(e, &st);
  assert_int_equal(st.exported[1], 5);
  assert_int_equal(peer_get(&p, &p.requests), 2);
  assert_int_equal(peer_get(&p, &p.spans), 5);
  exp_stop(e);
  rig_close(r);
  peer_stop(&p);
}

/* A partial success is delivered (the endpoint decided): counted, never sent again. */
static void test_partial_success_not_retried(void **state) {
  rig_t *r = *state;
  peer_t p;
  peer_start(&p, NULL, 0);
  p.partial = 3;
  char cursor[128];
  exp_t *e = open_exporter(r, p.url, cursor, sizeof cursor, 0);
  post_spans(r, 0, 10);
  exp_stats_t st;
  settle(e, &st);
  assert_int_equal(st.exported[1], 10);
  assert_int_equal(st.spans_rejected, 3);
  assert_int_equal(peer_get(&p, &p.requests), 1);
  exp_stop(e);
  rig_close(r);
  peer_stop(&p);
}

/* Nobody listening: retried until somebody does, with a bounded backlog:
 * past max_backlog the oldest rows are skipped and counted. */
static void test_dead_endpoint_bounded_backlog(void **state) {
  rig_t *r = *state;
  peer_t p;
  peer_start(&p, NULL, 0);
  uint16_t port = p.port;
  peer_stop(&p); /* the port is now closed: connections are refused */
  char cursor[128], url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%u/v1/traces", port);
  exp_t *e = open_exporter(r, url, cursor, sizeof cursor, 20);
  post_spans(r, 0, 50);
  exp_stats_t st;
  for (int i = 0; i < 1000; i++) { /* until the bound has acted */
    exp_stats(e, &st);
    if (st.dropped_backlog[1] && st.requests_retry) break;
    usleep(10000);
  }
  assert_int_equal(st.dropped_backlog[1], 30);
  assert_int_equal(st.last[1] - st.cursor[1], 20);
  assert_int_equal(st.exported[1], 0);
  exp_stop(e);
  rig_close(r);
}

/* Ids of spans a server holds for C1. */
static size_t spans_of(const rig_t *r, int *seen, size_t cap) {
  json_t *j = hc_get_json(r->base, "/v1/cpids/" C1 "/spans", 200);
  assert_non_null(j);
  size_t i, n = 0;
  json_t *s;
  json_array_foreach(json_object_get(j, "spans"), i, s) {
    unsigned long id = strtoul(json_string_value(json_object_get(s, "span_id")), NULL, 16);
    if (id && id <= cap) seen[id - 1]++;
    n++;
  }
  json_decref(j);
  return n;
}

/* Server A exports to server B's POST /v1/traces (exported spans carry
 * ripple.cpid, so B takes them). A is stopped and opened again between
 * batches and while a batch is waiting: B ends up with every span, and the
 * cursor file says where A got to. */
static void test_restart_sends_rest(void **state) {
  rig_t *a = *state, *b = rig_new();
  rig_open(b);
  char url[96], cursor[128];
  snprintf(url, sizeof url, "%s/v1/traces", b->base);
  enum { N = 400 };
  size_t posted = 0;
  for (int round = 0; round < 4; round++) {
    rig_open(a);
    exp_config_t c = config(a, url, cursor, sizeof cursor);
    exp_t *e;
    char err[256];
    assert_int_equal(exp_start(srv_export_source(&a->srv), &c, &e, err, sizeof err), RIPPLE_OK);
    for (int k = 0; k < 2; k++, posted += N / 8) post_spans(a, posted, N / 8);
    exp_stop(e); /* at once: some rows may still be waiting */
    rig_close(a);
  }
  /* The last start sends what is left. */
  rig_open(a);
  exp_config_t c = config(a, url, cursor, sizeof cursor);
  exp_t *e;
  char err[256];
  assert_int_equal(exp_start(srv_export_source(&a->srv), &c, &e, err, sizeof err), RIPPLE_OK);
  exp_stats_t st;
  settle(e, &st);
  exp_stop(e);
  int seen[N] = {0};
  size_t total = spans_of(b, seen, N);
  for (size_t i = 0; i < N; i++)
    if (seen[i] < 1) fail_msg("span %zu never reached the endpoint", i + 1);
  assert_true(total >= N);
  char *text = NULL;
  uint64_t ml, sp;
  assert_int_equal(sbuf_read_file(cursor, &text), RIPPLE_OK);
  assert_int_equal(exp_cursor_parse(text, &ml, &sp), RIPPLE_OK);
  assert_int_equal(sp, store_max_seq(a->srv.core.store, DEC_SPANS));
  free(text);
  rig_close(a);
  rig_close(b);
  rig_teardown((void **)&b);
}

/* A cursor file that is garbage, or ahead of the database (the database was
 * replaced), sends everything again rather than skipping anything. */
static void test_bad_cursor_sends_all(void **state) {
  rig_t *r = *state;
  peer_t p;
  peer_start(&p, NULL, 0);
  rig_open(r);
  post_spans(r, 0, 7);
  char cursor[128];
  exp_config_t c = config(r, p.url, cursor, sizeof cursor);
  const char *bad[] = {"garbage\n", "ripple-otlp-cursor 1 0 999999\n"};
  for (int i = 0; i < 2; i++) {
    FILE *f = fopen(cursor, "w");
    fputs(bad[i], f);
    fclose(f);
    exp_t *e;
    char err[256];
    assert_int_equal(exp_start(srv_export_source(&r->srv), &c, &e, err, sizeof err), RIPPLE_OK);
    exp_stats_t st;
    settle(e, &st);
    assert_int_equal(st.exported[1], 7);
    exp_stop(e);
  }
  assert_int_equal(peer_get(&p, &p.spans), 14);
  /* A cursor that cannot be written stops the start, saying so. */
  c.cursor_path = "/nonexistent-dir/cursor";
  exp_t *e;
  char err[256];
  assert_int_equal(exp_start(srv_export_source(&r->srv), &c, &e, err, sizeof err), RIPPLE_ESYS);
  assert_non_null(strstr(err, "/nonexistent-dir/cursor"));
  rig_close(r);
  peer_stop(&p);
}

/* POST to a rig's /v1/traces with these headers (NULL-terminated); the status,
 * the answer in *ans (may be NULL). */
static long post_traces(const rig_t *r, const char *const *hdrs, const void *body, size_t len,
                        sbuf_t *ans) {
  char url[96];
  snprintf(url, sizeof url, "%s/v1/traces", r->base);
  CURL *c = curl_easy_init();
  struct curl_slist *h = NULL;
  for (; hdrs && *hdrs; hdrs++) h = curl_slist_append(h, *hdrs);
  sbuf_t sink;
  sbuf_init(&sink);
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect_answer);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, ans ? ans : &sink);
  long status = 0;
  if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  sbuf_free(&sink);
  return status;
}

/* POST /v1/traces over HTTP: protobuf gzip'd joins the CPID's trace and shows
 * in its spans; JSON answers JSON; tokens, content types, encodings and
 * bombs are refused as docs/otlp.md says. */
static void test_traces_endpoint(void **state) {
  rig_t *r = *state;
  char *writers[] = {"w-token", NULL};
  r->ho.writer_tokens = writers;
  rig_open(r);
  const char *ml = "[{\"cpid\":\"" C1 "\",\"sources\":[],\"time\":\"2026-11-24T10:00:00Z\"}]";
  char url[96];
  snprintf(url, sizeof url, "%s/v1/mergelogs", r->base);
  hc_resp_t hr;
  assert_int_equal(hc_request("POST", url, ml, strlen(ml), "w-token", &hr), RIPPLE_OK);
  assert_int_equal(hr.status, 200);
  hc_resp_free(&hr);
  const char *json_body =
      "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
      "\"value\":{\"stringValue\":\"my-operator\"}}]},\"scopeSpans\":[{\"spans\":["
      "{\"traceId\":\"11111111111141118111111111111111\",\"spanId\":\"00000000000000aa\","
      "\"name\":\"reconcile\",\"startTimeUnixNano\":\"1795600800000000000\","
      "\"endTimeUnixNano\":\"1795600800100000000\"},"
      "{\"traceId\":\"99999999999999999999999999999999\",\"spanId\":\"00000000000000bb\","
      "\"name\":\"other\"}]}]}]}";
  const char *json_hdrs[] = {"Content-Type: application/json", "Authorization: Bearer w-token",
                             NULL};
  sbuf_t ans;
  sbuf_init(&ans);
  assert_int_equal(post_traces(r, json_hdrs, json_body, strlen(json_body), &ans), 200);
  json_t *a = json_loadb(ans.p, ans.len, 0, NULL);
  assert_string_equal(
      json_string_value(json_object_get(json_object_get(a, "partialSuccess"), "rejectedSpans")),
      "1");
  json_decref(a);
  sbuf_free(&ans);
  /* The same span in protobuf, gzip'd: accepted whole. */
  Ripple__Otlp__Span sp = RIPPLE__OTLP__SPAN__INIT, *spp = &sp;
  static uint8_t tid[16] = {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x41, 0x11,
                            0x81, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11};
  static uint8_t sid[8] = {0, 0, 0, 0, 0, 0, 0, 0xcc};
  sp.trace_id = (ProtobufCBinaryData){16, tid};
  sp.span_id = (ProtobufCBinaryData){8, sid};
  sp.name = "reconcile-pb";
  Ripple__Otlp__ScopeSpans ss = RIPPLE__OTLP__SCOPE_SPANS__INIT, *ssp = &ss;
  ss.spans = &spp;
  ss.n_spans = 1;
  Ripple__Otlp__ResourceSpans rs = RIPPLE__OTLP__RESOURCE_SPANS__INIT, *rsp = &rs;
  rs.scope_spans = &ssp;
  rs.n_scope_spans = 1;
  Ripple__Otlp__ExportTraceServiceRequest req = RIPPLE__OTLP__EXPORT_TRACE_SERVICE_REQUEST__INIT;
  req.resource_spans = &rsp;
  req.n_resource_spans = 1;
  uint8_t pb[256];
  size_t n = ripple__otlp__export_trace_service_request__pack(&req, pb);
  char *z;
  size_t zlen;
  assert_int_equal(gzip_encode((const char *)pb, n, &z, &zlen), RIPPLE_OK);
  const char *pb_hdrs[] = {"Content-Type: application/x-protobuf", "Content-Encoding: gzip",
                           "Authorization: Bearer w-token", NULL};
  sbuf_init(&ans);
  assert_int_equal(post_traces(r, pb_hdrs, z, zlen, &ans), 200);
  int64_t rejected = -1;
  char msg[64];
  otlp_read_response(ans.p, ans.len, &rejected, msg, sizeof msg);
  assert_int_equal(rejected, 0);
  sbuf_free(&ans);
  /* Both joined C1's trace, under the service their resource named. */
  json_t *j = hc_get_json(r->base, "/v1/cpids/" C1 "/spans", 200);
  assert_int_equal(json_array_size(json_object_get(j, "spans")), 2);
  size_t i, found = 0;
  json_t *s;
  json_array_foreach(json_object_get(j, "spans"), i, s) {
    const char *name = json_string_value(json_object_get(s, "name"));
    const char *svc = json_string_value(json_object_get(s, "service"));
    found += !strcmp(name, "reconcile") && !strcmp(svc, "my-operator");
    found += !strcmp(name, "reconcile-pb") && !strcmp(svc, "unknown_service");
  }
  assert_int_equal(found, 2);
  json_decref(j);
  /* Refusals. */
  const char *no_token[] = {"Content-Type: application/json", NULL};
  assert_int_equal(post_traces(r, no_token, json_body, strlen(json_body), NULL), 401);
  const char *bad_type[] = {"Content-Type: text/plain", "Authorization: Bearer w-token", NULL};
  assert_int_equal(post_traces(r, bad_type, json_body, strlen(json_body), NULL), 415);
  const char *bad_enc[] = {"Content-Type: application/json", "Content-Encoding: br",
                           "Authorization: Bearer w-token", NULL};
  assert_int_equal(post_traces(r, bad_enc, json_body, strlen(json_body), NULL), 415);
  assert_int_equal(post_traces(r, json_hdrs, "{\"resourceSpans\":", 17, NULL), 400);
  assert_int_equal(post_traces(r, pb_hdrs, "not gzip", 8, NULL), 400);
  free(z);
  /* A bomb: 64 MiB of zeros inflating past --max-body. */
  size_t big = (size_t)64 << 20;
  char *zeros = calloc(1, big);
  assert_int_equal(gzip_encode(zeros, big, &z, &zlen), RIPPLE_OK);
  free(zeros);
  assert_int_equal(post_traces(r, pb_hdrs, z, zlen, NULL), 413);
  free(z);
  rig_close(r);
  r->ho.writer_tokens = NULL;
}

/* To an https endpoint (a second server with a self-signed certificate and a
 * writer token): with the certificate as CA and the token as a header, every
 * span arrives; an endpoint the exporter cannot verify is retried, never
 * delivered in the clear; a 401 (no token) is refused for good. */
static void test_tls_and_headers(void **state) {
  rig_t *a = *state, *b = rig_new();
  char crt[128], key[128];
  rig_self_signed(b, crt, sizeof crt, key, sizeof key);
  char *pem_crt, *pem_key, *writers[] = {"exp-token", NULL};
  assert_int_equal(sbuf_read_file(crt, &pem_crt), RIPPLE_OK);
  assert_int_equal(sbuf_read_file(key, &pem_key), RIPPLE_OK);
  b->ho.tls_cert = pem_crt;
  b->ho.tls_key = pem_key;
  b->ho.writer_tokens = writers;
  rig_open(b);
  char url[96], cursor[128];
  snprintf(url, sizeof url, "https://127.0.0.1:%u/v1/traces", b->ho.port);
  rig_open(a);
  post_spans(a, 0, 20);
  char err[256];
  exp_stats_t st;
  exp_t *e;

  /* No CA for the self-signed certificate: retried, nothing delivered. */
  exp_config_t c = config(a, url, cursor, sizeof cursor);
  assert_int_equal(exp_start(srv_export_source(&a->srv), &c, &e, err, sizeof err), RIPPLE_OK);
  for (int i = 0; i < 500; i++) {
    exp_stats(e, &st);
    if (st.requests_retry >= 2) break;
    usleep(10000);
  }
  assert_true(st.requests_retry >= 2);
  assert_int_equal(st.exported[1], 0);
  exp_stop(e);

  /* The CA, but no token: 401, dropped, not retried. */
  c.ca_file = crt;
  assert_int_equal(exp_start(srv_export_source(&a->srv), &c, &e, err, sizeof err), RIPPLE_OK);
  settle(e, &st);
  assert_int_equal(st.requests_rejected, 1);
  assert_int_equal(st.dropped_rejected[1], 20);
  exp_stop(e);

  /* The CA and the token (and another header): delivered. */
  post_spans(a, 20, 20);
  char *headers[] = {"Authorization: Bearer exp-token", "X-Scope-OrgID: ripple", NULL};
  c.headers = headers;
  assert_int_equal(exp_start(srv_export_source(&a->srv), &c, &e, err, sizeof err), RIPPLE_OK);
  settle(e, &st);
  assert_int_equal(st.exported[1], 20);
  assert_int_equal(st.requests_rejected, 0);
  exp_stop(e);
  rig_close(a);
  rig_close(b); /* open again over plain HTTP, to read what arrived */
  b->ho.writer_tokens = NULL;
  b->ho.tls_cert = b->ho.tls_key = NULL;
  free(pem_crt);
  free(pem_key);
  rig_open(b);
  int seen[40] = {0};
  assert_int_equal(spans_of(b, seen, 40), 20);
  for (int i = 20; i < 40; i++) assert_int_equal(seen[i], 1);
  rig_close(b);
  rig_teardown((void **)&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_retries_then_delivers, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_refused_batch_is_dropped, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_partial_success_not_retried, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_dead_endpoint_bounded_backlog, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_restart_sends_rest, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_bad_cursor_sends_all, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_traces_endpoint, rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(test_tls_and_headers, rig_setup, rig_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
