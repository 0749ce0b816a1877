/*
 * test_otlp.c - ripple records as OTLP and OTLP as ripple spans (otlp.h), on
 * their own: what the exporter encodes (read back with protobuf-c), what
 * POST /v1/traces makes of protobuf and JSON requests (every output checked
 * by the server's own decoder), gzip in both directions, the exporter's
 * cursor file, and the store's seqs that are never reused.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "export/otlp_export.h"
#include "ingest/decode.h"
#include "ingest/gzip.h"
#include "ingest/otlp.h"
#include "ingest/otlp.pb-c.h"
#include "ripplex/cpid.h"
#include "store/store.h"
#include "testutil.h"

#define C1 "11111111-1111-4111-8111-111111111111"
#define C2 "22222222-2222-4222-8222-222222222222"
#define C3 "33333333-3333-4333-8333-333333333333"
#define C1HEX "11111111111141118111111111111111"

static const dec_limits_t lim = {
    .max_records = 1000, .max_sources = 64, .max_attrs = 8, .max_string = 64};

/* ---- export encoding -------------------------------------------------------------- */

static Ripple__Otlp__ExportTraceServiceRequest *encode(const char *const *ml, size_t nml,
                                                       const char *const *sp, size_t nsp) {
  otlp_batch_t *b;
  assert_int_equal(otlp_batch_new(&b), RIPPLE_OK);
  for (size_t i = 0; i < nml; i++)
    assert_int_equal(otlp_batch_add(b, DEC_MERGELOGS, ml[i], strlen(ml[i])), RIPPLE_OK);
  for (size_t i = 0; i < nsp; i++)
    assert_int_equal(otlp_batch_add(b, DEC_SPANS, sp[i], strlen(sp[i])), RIPPLE_OK);
  assert_int_equal(otlp_batch_spans(b), nml + nsp);
  sbuf_t out;
  sbuf_init(&out);
  assert_int_equal(otlp_batch_encode(b, &out), RIPPLE_OK);
  otlp_batch_free(b);
  Ripple__Otlp__ExportTraceServiceRequest *req =
      ripple__otlp__export_trace_service_request__unpack(NULL, out.len, (uint8_t *)out.p);
  sbuf_free(&out);
  assert_non_null(req);
  return req;
}

static const char *attr(Ripple__Otlp__KeyValue **kv, size_t n, const char *key) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(kv[i]->key, key)) return kv[i]->value->string_value;
  return NULL;
}

static const char *service_of(const Ripple__Otlp__ResourceSpans *rs) {
  return attr(rs->resource->attributes, rs->resource->n_attributes, "service.name");
}

/* The span with this id (8 bytes) and its service. */
static const Ripple__Otlp__Span *find(const Ripple__Otlp__ExportTraceServiceRequest *r,
                                      const uint8_t *id, const char **service) {
  for (size_t i = 0; i < r->n_resource_spans; i++)
    for (size_t j = 0; j < r->resource_spans[i]->n_scope_spans; j++) {
      const Ripple__Otlp__ScopeSpans *ss = r->resource_spans[i]->scope_spans[j];
      for (size_t k = 0; k < ss->n_spans; k++)
        if (ss->spans[k]->span_id.len == 8 && !memcmp(ss->spans[k]->span_id.data, id, 8)) {
          *service = service_of(r->resource_spans[i]);
          return ss->spans[k];
        }
    }
  return NULL;
}

static ripple_cpid_t cpid(const char *s) {
  ripple_cpid_t c;
  assert_int_equal(ripple_cpid_parse(s, strlen(s), &c), RIPPLE_OK);
  return c;
}

static void test_root_span_id(void **state) {
  (void)state;
  ripple_cpid_t c = cpid("3f2b8e4c-9a1d-4c7e-8f00-1b2c3d4e5f60");
  uint8_t id[8];
  cpid_root_span(&c, id);
  static const uint8_t want[8] = {0x8f, 0x00, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f, 0x60};
  assert_memory_equal(id, want, 8);
  /* A trace id ending in 8 zero bytes (not a UUID ripple makes): its first 8. */
  c = cpid("01234567-89ab-cdef-0000-000000000000");
  cpid_root_span(&c, id);
  static const uint8_t first[8] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
  assert_memory_equal(id, first, 8);
}

static void test_encode_mergelogs_and_spans(void **state) {
  (void)state;
  const char *ml[] = {
      "{\"cpid\":\"" C1
      "\",\"sources\":[],\"time\":\"2026-11-24T10:00:00.000000001Z\","
      "\"component\":\"kubectl\",\"object\":{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
      "\"namespace\":\"default\",\"name\":\"web\",\"uid\":\"u-1\"}}",
      "{\"cpid\":\"" C3 "\",\"sources\":[\"" C1 "\",\"" C2
      "\"],"
      "\"time\":\"2026-11-24T10:00:01Z\",\"component\":\"ripple-webhook\"}"};
  const char *sp[] = {
      "{\"cpid\":\"" C1
      "\",\"span_id\":\"00000000000000a1\",\"service\":\"deployment-controller\","
      "\"name\":\"update ReplicaSet\",\"start\":\"2026-11-24T10:00:00.5Z\","
      "\"end\":\"2026-11-24T10:00:00.75Z\",\"attributes\":{\"verb\":\"update\",\"user\":\"u\"}}",
      "{\"cpid\":\"" C1
      "\",\"span_id\":\"00000000000000a2\",\"parent_id\":\"00000000000000a1\","
      "\"service\":\"kubectl\",\"name\":\"child\",\"start\":\"2026-11-24T10:00:00.6Z\","
      "\"end\":\"2026-11-24T10:00:00.6Z\"}"};
  Ripple__Otlp__ExportTraceServiceRequest *r = encode(ml, 2, sp, 2);
  /* Spans are grouped by service: kubectl (root + child), ripple-webhook,
   * deployment-controller. */
  assert_int_equal(r->n_resource_spans, 3);
  ripple_cpid_t c1 = cpid(C1), c2 = cpid(C2), c3 = cpid(C3);
  uint8_t id[8];
  const char *svc = NULL;

  cpid_root_span(&c1, id);
  const Ripple__Otlp__Span *root = find(r, id, &svc);
  assert_non_null(root);
  assert_string_equal(svc, "kubectl");
  assert_string_equal(root->name, "ripple.root");
  assert_memory_equal(root->trace_id.data, c1.b, 16);
  assert_int_equal(root->parent_span_id.len, 0);
  assert_int_equal(root->n_links, 0);
  assert_true(root->start_time_unix_nano % 1000000000 == 1);
  assert_int_equal(root->end_time_unix_nano, root->start_time_unix_nano);
  assert_string_equal(attr(root->attributes, root->n_attributes, "ripple.cpid"), C1);
  assert_string_equal(attr(root->attributes, root->n_attributes, "k8s.deployment.name"), "web");
  assert_string_equal(attr(root->attributes, root->n_attributes, "k8s.namespace.name"), "default");
  assert_string_equal(attr(root->attributes, root->n_attributes, "ripple.object.uid"), "u-1");

  cpid_root_span(&c3, id);
  const Ripple__Otlp__Span *merge = find(r, id, &svc);
  assert_non_null(merge);
  assert_string_equal(svc, "ripple-webhook");
  assert_string_equal(merge->name, "ripple.merge");
  assert_int_equal(merge->n_links, 2);
  const ripple_cpid_t *srcs[2] = {&c1, &c2};
  for (int i = 0; i < 2; i++) {
    cpid_root_span(srcs[i], id);
    assert_memory_equal(merge->links[i]->trace_id.data, srcs[i]->b, 16);
    assert_memory_equal(merge->links[i]->span_id.data, id, 8);
    assert_string_equal(
        attr(merge->links[i]->attributes, merge->links[i]->n_attributes, "ripple.link"),
        "merged_from");
  }
  /* No object: no object attributes. */
  assert_null(attr(merge->attributes, merge->n_attributes, "ripple.object.kind"));

  static const uint8_t a1[8] = {0, 0, 0, 0, 0, 0, 0, 0xa1}, a2[8] = {0, 0, 0, 0, 0, 0, 0, 0xa2};
  const Ripple__Otlp__Span *s1 = find(r, a1, &svc);
  assert_non_null(s1);
  assert_string_equal(svc, "deployment-controller");
  cpid_root_span(&c1, id);
  assert_memory_equal(s1->parent_span_id.data, id, 8); /* no parent: under the CPID's root */
  assert_int_equal(s1->end_time_unix_nano - s1->start_time_unix_nano, 250000000);
  assert_string_equal(attr(s1->attributes, s1->n_attributes, "verb"), "update");
  assert_string_equal(attr(s1->attributes, s1->n_attributes, "ripple.cpid"), C1);
  const Ripple__Otlp__Span *s2 = find(r, a2, &svc);
  assert_non_null(s2);
  assert_memory_equal(s2->parent_span_id.data, a1, 8); /* its own parent kept */
  ripple__otlp__export_trace_service_request__free_unpacked(r, NULL);
}

/* A write's span that names kube-apiserver's span of its webhook call
 * (apiserverTraceId, apiserverSpanId: webhook/emit.c) gets one link to it,
 * marked remote; a span whose ids are malformed or zero (a writer may send
 * anything) gets none, and its attributes are exported as they are. */
static void test_encode_apiserver_link(void **state) {
  (void)state;
#define AS_SPAN(id, t, s)                                                              \
  "{\"cpid\":\"" C1 "\",\"span_id\":\"" id                                             \
  "\",\"service\":\"kubectl\",\"name\":\"create "                                      \
  "deployments\",\"start\":\"2026-11-24T10:00:00Z\",\"end\":\"2026-11-24T10:00:01Z\"," \
  "\"attributes\":{\"apiserverTraceId\":\"" t "\",\"apiserverSpanId\":\"" s "\"}}"
  const char *sp[] = {
      AS_SPAN("00000000000000b1", "aac6227b5404bff5db076f6f9484a89d", "d10b89f27e22770b"),
      AS_SPAN("00000000000000b2", "AAC6227B5404BFF5DB076F6F9484A89D", "d10b89f27e22770b"),
      AS_SPAN("00000000000000b3", "00000000000000000000000000000000", "d10b89f27e22770b"),
      AS_SPAN("00000000000000b4", "aac6227b5404bff5db076f6f9484a89d", "0000000000000000"),
      AS_SPAN("00000000000000b5", "aac6227b5404bff5db076f6f9484a89", "d10b89f27e22770b"),
      AS_SPAN("00000000000000b6", "aac6227b5404bff5db076f6f9484a89d", "d10b89f27e22770bb"),
      AS_SPAN("00000000000000b7", "aac6227b5404bff5db076f6f9484a89d", "d10b89f27e2277-b"),
      "{\"cpid\":\"" C1
      "\",\"span_id\":\"00000000000000b8\",\"service\":\"kubectl\","
      "\"name\":\"x\",\"attributes\":{\"apiserverTraceId\":\"aac6227b5404bff5db076f6f9484a89d\"}}",
  };
#undef AS_SPAN
  Ripple__Otlp__ExportTraceServiceRequest *r = encode(NULL, 0, sp, 8);
  static const uint8_t trace[16] = {0xaa, 0xc6, 0x22, 0x7b, 0x54, 0x04, 0xbf, 0xf5,
                                    0xdb, 0x07, 0x6f, 0x6f, 0x94, 0x84, 0xa8, 0x9d};
  static const uint8_t span[8] = {0xd1, 0x0b, 0x89, 0xf2, 0x7e, 0x22, 0x77, 0x0b};
  uint8_t id[8] = {0, 0, 0, 0, 0, 0, 0, 0xb1};
  const char *svc = NULL;
  const Ripple__Otlp__Span *s = find(r, id, &svc);
  assert_non_null(s);
  assert_int_equal(s->n_links, 1);
  assert_int_equal(s->links[0]->trace_id.len, 16);
  assert_memory_equal(s->links[0]->trace_id.data, trace, 16);
  assert_int_equal(s->links[0]->span_id.len, 8);
  assert_memory_equal(s->links[0]->span_id.data, span, 8);
  assert_int_equal(s->links[0]->flags, 0x300);
  assert_string_equal(attr(s->links[0]->attributes, s->links[0]->n_attributes, "ripple.link"),
                      "apiserver_request");
  /* The link is beside the span's place, not instead of it. */
  ripple_cpid_t c1 = cpid(C1);
  uint8_t root[8];
  cpid_root_span(&c1, root);
  assert_memory_equal(s->trace_id.data, c1.b, 16);
  assert_memory_equal(s->parent_span_id.data, root, 8);
  assert_string_equal(attr(s->attributes, s->n_attributes, "apiserverSpanId"), "d10b89f27e22770b");
  for (uint8_t k = 0xb2; k <= 0xb8; k++) {
    id[7] = k;
    s = find(r, id, &svc);
    assert_non_null(s);
    if (s->n_links != 0) fail_msg("span %02x has a link", k);
  }
  ripple__otlp__export_trace_service_request__free_unpacked(r, NULL);
}

static void test_encode_refuses_garbage(void **state) {
  (void)state;
  otlp_batch_t *b;
  assert_int_equal(otlp_batch_new(&b), RIPPLE_OK);
  assert_int_equal(otlp_batch_add(b, DEC_SPANS, "[1]", 3), RIPPLE_EJSON);
  assert_int_equal(otlp_batch_add(b, DEC_SPANS, "{\"cpid\":\"x\"}", 12), RIPPLE_EJSON);
  assert_int_equal(otlp_batch_add(b, DEC_MERGELOGS, "{", 1), RIPPLE_EJSON);
  assert_int_equal(otlp_batch_spans(b), 0);
  otlp_batch_reset(b);
  otlp_batch_free(b);
}

/* ---- receive ------------------------------------------------------------------------ */

static int knows_c1(void *ud, const ripple_cpid_t *c) {
  (void)ud;
  ripple_cpid_t c1 = cpid(C1);
  return ripple_cpid_equal(c, &c1);
}

/* Convert; the output must be what the server's decoder accepts. */
static json_t *receive(otlp_encoding_t enc, const void *body, size_t len, otlp_result_t *res,
                       int want) {
  otlp_recv_t rv = {.lim = &lim, .known = knows_c1};
  sbuf_t out;
  sbuf_init(&out);
  assert_int_equal(otlp_receive(enc, body, len, &rv, &out, res), want);
  json_t *j = NULL;
  if (want == RIPPLE_OK) {
    dec_batch_t b;
    dec_error_t e;
    int rc = dec_decode(DEC_SPANS, out.p, out.len, &lim, &b, &e);
    if (rc != RIPPLE_OK)
      fail_msg("decoder refused the output: %s %s: %.*s", e.field, e.msg, (int)out.len, out.p);
    assert_int_equal(b.n, res->accepted);
    dec_batch_free(&b);
    j = json_loadb(out.p, out.len, 0, NULL);
    assert_non_null(j);
  }
  sbuf_free(&out);
  return j;
}

static Ripple__Otlp__KeyValue *kv_str(const char *k, const char *v) {
  Ripple__Otlp__KeyValue *kv = calloc(1, sizeof *kv);
  Ripple__Otlp__AnyValue *av = calloc(1, sizeof *av);
  ripple__otlp__key_value__init(kv);
  ripple__otlp__any_value__init(av);
  kv->key = (char *)k;
  av->value_case = RIPPLE__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
  av->string_value = (char *)v;
  kv->value = av;
  return kv;
}

static Ripple__Otlp__KeyValue *kv_int(const char *k, int64_t v) {
  Ripple__Otlp__KeyValue *kv = kv_str(k, "");
  kv->value->value_case = RIPPLE__OTLP__ANY_VALUE__VALUE_INT_VALUE;
  kv->value->int_value = v;
  return kv;
}

static void kvs_free(Ripple__Otlp__KeyValue **kv, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(kv[i]->value);
    free(kv[i]);
  }
}

/* A protobuf request with spans of one service. */
static sbuf_t pb_request(const char *service, Ripple__Otlp__Span **spans, size_t n) {
  Ripple__Otlp__KeyValue *svc = kv_str("service.name", service);
  Ripple__Otlp__Resource res = RIPPLE__OTLP__RESOURCE__INIT;
  res.attributes = &svc;
  res.n_attributes = 1;
  Ripple__Otlp__ScopeSpans ss = RIPPLE__OTLP__SCOPE_SPANS__INIT, *ssp = &ss;
  ss.spans = spans;
  ss.n_spans = n;
  Ripple__Otlp__ResourceSpans rs = RIPPLE__OTLP__RESOURCE_SPANS__INIT, *rsp = &rs;
  rs.resource = &res;
  rs.scope_spans = &ssp;
  rs.n_scope_spans = 1;
  Ripple__Otlp__ExportTraceServiceRequest req = RIPPLE__OTLP__EXPORT_TRACE_SERVICE_REQUEST__INIT;
  req.resource_spans = &rsp;
  req.n_resource_spans = 1;
  size_t len = ripple__otlp__export_trace_service_request__get_packed_size(&req);
  uint8_t *buf = malloc(len + 1);
  ripple__otlp__export_trace_service_request__pack(&req, buf);
  sbuf_t b;
  sbuf_init(&b);
  sbuf_put(&b, (const char *)buf, len);
  free(buf);
  kvs_free(&svc, 1);
  return b;
}

static uint8_t c1_bytes[16], other_trace[16] = {1, 2, 3}, sid1[8] = {0, 0, 0, 0, 0, 0, 0, 1},
                             sid2[8] = {0, 0, 0, 0, 0, 0, 0, 2}, zero8[8];

static void span_init(Ripple__Otlp__Span *s, const uint8_t *trace, const uint8_t *id,
                      const char *name) {
  ripple__otlp__span__init(s);
  s->trace_id = (ProtobufCBinaryData){16, (uint8_t *)trace};
  s->span_id = (ProtobufCBinaryData){8, (uint8_t *)id};
  s->name = (char *)name;
  s->start_time_unix_nano = 1795600800000000000ULL;
  s->end_time_unix_nano = 1795600800500000000ULL;
}

static json_t *span_named(json_t *arr, const char *name) {
  size_t i;
  json_t *s;
  json_array_foreach(arr, i, s) {
    if (!strcmp(json_string_value(json_object_get(s, "name")), name)) return s;
  }
  return NULL;
}

static void test_receive_protobuf(void **state) {
  (void)state;
  ripple_cpid_t c1 = cpid(C1);
  memcpy(c1_bytes, c1.b, 16);
  Ripple__Otlp__Span a, b, c, d, e, *all[5] = {&a, &b, &c, &d, &e};
  /* a: trace id = a known CPID, with a parent and attributes of every kind. */
  span_init(&a, c1_bytes, sid1, "reconcile");
  a.parent_span_id = (ProtobufCBinaryData){8, sid2};
  Ripple__Otlp__KeyValue *akv[4] = {kv_str("k8s.pod.name", "p-1"), kv_int("retries", -3),
                                    kv_str("k8s.pod.name", "second"), kv_str("bad", "x\xff y")};
  a.attributes = akv;
  a.n_attributes = 4;
  Ripple__Otlp__Status st = RIPPLE__OTLP__STATUS__INIT;
  st.code = 2;
  st.message = "boom";
  a.status = &st;
  /* b: another trace, joined by ripple.cpid: its parent is not this trace's. */
  span_init(&b, other_trace, sid2, "from elsewhere");
  b.parent_span_id = (ProtobufCBinaryData){8, sid1};
  Ripple__Otlp__KeyValue *bkv[1] = {kv_str("ripple.cpid", C2)};
  b.attributes = bkv;
  b.n_attributes = 1;
  /* c: an unknown trace without ripple.cpid; d: a zero span id; e: end before start. */
  span_init(&c, other_trace, sid1, "unrelated");
  span_init(&d, c1_bytes, zero8, "zero id");
  span_init(&e, c1_bytes, sid1, "backwards");
  e.end_time_unix_nano = e.start_time_unix_nano - 1;
  sbuf_t body = pb_request("my-operator", all, 5);
  otlp_result_t res;
  json_t *j = receive(OTLP_PROTOBUF, body.p, body.len, &res, RIPPLE_OK);
  assert_int_equal(res.spans, 5);
  assert_int_equal(res.accepted, 2);
  assert_int_equal(res.rejected, 3);
  assert_non_null(strstr(res.msg, "span 2"));
  json_t *ja = span_named(j, "reconcile"), *jb = span_named(j, "from elsewhere");
  assert_non_null(ja);
  assert_non_null(jb);
  assert_string_equal(json_string_value(json_object_get(ja, "cpid")), C1);
  assert_string_equal(json_string_value(json_object_get(ja, "service")), "my-operator");
  assert_string_equal(json_string_value(json_object_get(ja, "span_id")), "0000000000000001");
  assert_string_equal(json_string_value(json_object_get(ja, "parent_id")), "0000000000000002");
  assert_string_equal(json_string_value(json_object_get(ja, "end")),
                      "2026-11-25T10:00:00.500000000Z");
  json_t *aa = json_object_get(ja, "attributes");
  assert_string_equal(json_string_value(json_object_get(aa, "k8s.pod.name")), "p-1"); /* first */
  assert_string_equal(json_string_value(json_object_get(aa, "retries")), "-3");
  assert_string_equal(json_string_value(json_object_get(aa, "bad")), "x\xef\xbf\xbd y");
  assert_string_equal(json_string_value(json_object_get(aa, "otel.status_code")), "ERROR");
  assert_string_equal(json_string_value(json_object_get(aa, "otel.status_description")), "boom");
  assert_string_equal(json_string_value(json_object_get(jb, "cpid")), C2);
  assert_null(json_object_get(jb, "parent_id"));
  assert_string_equal(
      json_string_value(json_object_get(json_object_get(jb, "attributes"), "otel.trace_id")),
      "01020300000000000000000000000000");
  assert_null(json_object_get(json_object_get(jb, "attributes"), "ripple.cpid"));
  json_decref(j);
  sbuf_free(&body);
  kvs_free(akv, 4);
  kvs_free(bkv, 1);

  /* The answer names the rejected spans in a partial success. */
  sbuf_t ans;
  sbuf_init(&ans);
  otlp_response(OTLP_PROTOBUF, &res, &ans);
  int64_t rejected;
  char msg[200];
  otlp_read_response(ans.p, ans.len, &rejected, msg, sizeof msg);
  assert_int_equal(rejected, 3);
  assert_string_equal(msg, res.msg);
  sbuf_free(&ans);
}

static void test_receive_limits(void **state) {
  (void)state;
  ripple_cpid_t c1 = cpid(C1);
  memcpy(c1_bytes, c1.b, 16);
  Ripple__Otlp__Span a, *all[1] = {&a};
  char longv[300];
  memset(longv, 'v', sizeof longv - 1);
  longv[sizeof longv - 1] = '\0';
  longv[63] = '\xc3'; /* a 2-byte character across the 64-byte cut */
  longv[64] = '\xa9';
  span_init(&a, c1_bytes, sid1, longv);
  Ripple__Otlp__KeyValue *kv[12];
  char keys[12][8];
  for (int i = 0; i < 12; i++) {
    snprintf(keys[i], sizeof keys[i], "k%d", i);
    kv[i] = kv_str(keys[i], longv);
  }
  a.attributes = kv;
  a.n_attributes = 12;
  sbuf_t body = pb_request(longv, all, 1);
  otlp_result_t res;
  json_t *j = receive(OTLP_PROTOBUF, body.p, body.len, &res, RIPPLE_OK);
  assert_int_equal(res.accepted, 1);
  json_t *s = json_array_get(j, 0);
  assert_int_equal(strlen(json_string_value(json_object_get(s, "name"))), 63); /* cut whole */
  assert_int_equal(json_object_size(json_object_get(s, "attributes")), lim.max_attrs);
  json_decref(j);
  sbuf_free(&body);
  kvs_free(kv, 12);
}

static void test_receive_json(void **state) {
  (void)state;
  const char *body =
      "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
      "\"value\":{\"stringValue\":\"op\"}}]},\"scopeSpans\":[{\"spans\":["
      "{\"traceId\":\"" C1HEX
      "\",\"spanId\":\"00000000000000aa\",\"name\":\"r\","
      "\"startTimeUnixNano\":\"1795600800000000000\",\"endTimeUnixNano\":1795600800000000100,"
      "\"attributes\":[{\"key\":\"flag\",\"value\":{\"boolValue\":true}},"
      "{\"key\":\"list\",\"value\":{\"arrayValue\":{\"values\":[{\"intValue\":\"1\"}]}}}]},"
      "{\"traceId\":\"nothex\",\"spanId\":\"00000000000000bb\",\"name\":\"bad id\"},"
      "{\"traceId\":\"" C1HEX
      "\",\"spanId\":\"00000000000000cc\",\"name\":\"neg\","
      "\"startTimeUnixNano\":\"-5\",\"endTimeUnixNano\":\"7\"}"
      "]}]}]}";
  otlp_result_t res;
  json_t *j = receive(OTLP_JSON, body, strlen(body), &res, RIPPLE_OK);
  assert_int_equal(res.spans, 3);
  assert_int_equal(res.accepted, 1);
  json_t *s = json_array_get(j, 0);
  assert_string_equal(json_string_value(json_object_get(s, "span_id")), "00000000000000aa");
  assert_string_equal(json_string_value(json_object_get(s, "service")), "op");
  json_t *a = json_object_get(s, "attributes");
  assert_string_equal(json_string_value(json_object_get(a, "flag")), "true");
  assert_non_null(strstr(json_string_value(json_object_get(a, "list")), "\"1\""));
  json_decref(j);
  sbuf_t ans;
  sbuf_init(&ans);
  otlp_response(OTLP_JSON, &res, &ans);
  json_t *aj = json_loadb(ans.p, ans.len, 0, NULL);
  assert_string_equal(
      json_string_value(json_object_get(json_object_get(aj, "partialSuccess"), "rejectedSpans")),
      "2");
  json_decref(aj);
  sbuf_free(&ans);
  /* Nothing to reject: an empty answer object. */
  otlp_result_t none = {.spans = 1, .accepted = 1};
  sbuf_init(&ans);
  otlp_response(OTLP_JSON, &none, &ans);
  assert_memory_equal(ans.p, "{}", 2);
  sbuf_free(&ans);
}

static void test_receive_malformed(void **state) {
  (void)state;
  otlp_result_t res;
  const char *bad_json[] = {"", "[]", "{\"resourceSpans\":7}", "{\"a\":1,\"a\":2}", "nul"};
  for (size_t i = 0; i < sizeof bad_json / sizeof *bad_json; i++) {
    receive(OTLP_JSON, bad_json[i], strlen(bad_json[i]), &res, RIPPLE_EJSON);
    assert_true(res.msg[0] != '\0');
  }
  /* An empty request is valid: nothing in it. */
  json_t *j = receive(OTLP_JSON, "{}", 2, &res, RIPPLE_OK);
  assert_int_equal(json_array_size(j), 0);
  json_decref(j);
  /* Protobuf that is not a request (a truncated length-delimited field). */
  static const uint8_t trunc[] = {0x0a, 0x10, 0x01};
  receive(OTLP_PROTOBUF, trunc, sizeof trunc, &res, RIPPLE_EJSON);
}

/* Protobuf written backwards from the end of a buffer: a field's payload
 * first, then its tag and length in front of it. */
typedef struct back {
  uint8_t *buf;
  size_t pos, cap;
} back_t;

static void back_bytes(back_t *b, const void *p, size_t n) {
  assert_true(b->pos >= n);
  b->pos -= n;
  memcpy(b->buf + b->pos, p, n);
}

/* Tag and length of a length-delimited field whose payload starts at pos and
 * ends at end. */
static void back_field(back_t *b, unsigned field, size_t end) {
  uint8_t v[12];
  size_t len = end - b->pos, n = 0;
  do {
    v[n++] = (uint8_t)((len & 0x7f) | (len > 0x7f ? 0x80 : 0));
    len >>= 7;
  } while (len);
  back_bytes(b, v, n);
  uint8_t tag = (uint8_t)(field << 3 | 2);
  back_bytes(b, &tag, 1);
}

/* A span whose attribute nests arrays 200,000 deep: unpacking never recurses
 * into them (they are bytes in otlp.proto), and the value is shown one level
 * deep. */
static void test_receive_deep_nesting(void **state) {
  (void)state;
  ripple_cpid_t c1 = cpid(C1);
  back_t b = {.cap = (size_t)8 << 20};
  b.buf = malloc(b.cap);
  b.pos = b.cap;
  size_t end = b.pos;
  for (int i = 0; i < 200000; i++) {
    back_field(&b, 1, end); /* ArrayValue.values: the AnyValue so far */
    back_field(&b, 5, end); /* AnyValue.array_value */
  }
  back_field(&b, 2, end); /* KeyValue.value */
  size_t kv_end = end;
  back_bytes(&b, "deep", 4);
  back_field(&b, 1, b.pos + 4); /* KeyValue.key */
  back_field(&b, 9, kv_end);    /* Span.attributes */
  back_bytes(&b, sid1, 8);
  back_field(&b, 2, b.pos + 8); /* Span.span_id */
  back_bytes(&b, c1.b, 16);
  back_field(&b, 1, b.pos + 16); /* Span.trace_id */
  back_field(&b, 2, end);        /* ScopeSpans.spans */
  back_field(&b, 2, end);        /* ResourceSpans.scope_spans */
  back_field(&b, 1, end);        /* request.resource_spans */
  otlp_result_t res;
  json_t *j = receive(OTLP_PROTOBUF, b.buf + b.pos, b.cap - b.pos, &res, RIPPLE_OK);
  assert_int_equal(res.accepted, 1);
  const char *v = json_string_value(
      json_object_get(json_object_get(json_array_get(j, 0), "attributes"), "deep"));
  assert_non_null(v);
  assert_string_equal(v, "[[...]]");
  json_decref(j);
  free(b.buf);
}

/* ---- gzip, the cursor file, the store's seqs ----------------------------------------- */

static void test_gzip(void **state) {
  (void)state;
  char *z, *back;
  size_t zlen, blen;
  const char *text = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa span";
  assert_int_equal(gzip_encode(text, strlen(text), &z, &zlen), RIPPLE_OK);
  assert_int_equal(gzip_decode(z, zlen, 1000, &back, &blen), RIPPLE_OK);
  assert_int_equal(blen, strlen(text));
  assert_memory_equal(back, text, blen);
  free(back);
  /* It inflates past the limit: refused, however little it is compressed. */
  assert_int_equal(gzip_decode(z, zlen, 10, &back, &blen), RIPPLE_ERANGE);
  /* Truncated, and not gzip at all. */
  assert_int_equal(gzip_decode(z, zlen - 4, 1000, &back, &blen), RIPPLE_EJSON);
  assert_int_equal(gzip_decode("plain", 5, 1000, &back, &blen), RIPPLE_EJSON);
  free(z);
  /* A bomb: 64 MiB of zeros, limited to 1 MiB. */
  size_t big = (size_t)64 << 20;
  char *zeros = calloc(1, big);
  assert_int_equal(gzip_encode(zeros, big, &z, &zlen), RIPPLE_OK);
  free(zeros);
  assert_true(zlen < big / 100);
  assert_int_equal(gzip_decode(z, zlen, (size_t)1 << 20, &back, &blen), RIPPLE_ERANGE);
  free(z);
}

static void test_cursor_parse(void **state) {
  (void)state;
  uint64_t a, b;
  assert_int_equal(exp_cursor_parse("ripple-otlp-cursor 1 7 18446744073709551615\n", &a, &b),
                   RIPPLE_OK);
  assert_int_equal(a, 7);
  assert_int_equal(b, UINT64_MAX);
  const char *bad[] = {"",
                       "ripple-otlp-cursor 1 7\n",
                       "ripple-otlp-cursor 2 7 8\n",
                       "ripple-otlp-cursor 1 -7 8\n",
                       "ripple-otlp-cursor 1 7 8",
                       "ripple-otlp-cursor 1 7 8\nmore",
                       "ripple-otlp-cursor 1 7 99999999999999999999999\n"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    if (exp_cursor_parse(bad[i], &a, &b) != RIPPLE_EINVAL) fail_msg("accepted '%s'", bad[i]);
}

static void write_spans(store_t *st, const char *id, size_t n, uint64_t *last) {
  sbuf_t body;
  sbuf_init(&body);
  sbuf_putc(&body, '[');
  for (size_t i = 0; i < n; i++)
    sbuf_printf(&body,
                "%s{\"cpid\":\"%s\",\"span_id\":\"%016zx\",\"service\":\"s\",\"name\":\"n\","
                "\"start\":\"2026-11-24T10:00:00Z\",\"end\":\"2026-11-24T10:00:00Z\"}",
                i ? "," : "", id, i + 1);
  sbuf_putc(&body, ']');
  dec_batch_t b;
  dec_error_t e;
  assert_int_equal(dec_decode(DEC_SPANS, body.p, body.len, &lim, &b, &e), RIPPLE_OK);
  assert_int_equal(store_write(st, &b), RIPPLE_OK);
  dec_batch_free(&b);
  sbuf_free(&body);
  *last = store_last_seq(st, DEC_SPANS);
}

static void count_row(void *ud, uint64_t seq, const char *body, size_t len) {
  (void)seq, (void)body, (void)len;
  (*(size_t *)ud)++;
}

/* Deleting the newest rows never lets their seqs be given out again, in this
 * process or after a reopen: a cursor past them sees every later row. */
static void test_seqs_never_reused(void **state) {
  (void)state;
  char dir[] = "/tmp/ripple-test-otlp-XXXXXX", db[96];
  assert_non_null(mkdtemp(dir));
  snprintf(db, sizeof db, "%s/t.db", dir);
  char err[256];
  store_t *st;
  store_hooks_t hooks = {0};
  for (int round = 0; round < 2; round++) {
    assert_int_equal(store_open(db, 0, &st, err, sizeof err), RIPPLE_OK);
    assert_int_equal(store_start(st, &hooks), RIPPLE_OK);
    uint64_t last, before = store_last_seq(st, DEC_SPANS);
    write_spans(st, C1, 3, &last);
    assert_int_equal(last, before + 3);
    assert_int_equal(store_max_seq(st, DEC_SPANS), last);
    uint64_t newest[2] = {last - 1, last};
    assert_int_equal(store_delete(st, DEC_SPANS, newest, 2), RIPPLE_OK);
    assert_int_equal(store_max_seq(st, DEC_SPANS), last - 2);
    uint64_t cursor = last, again;
    write_spans(st, C2, 2, &again);
    assert_int_equal(again, last + 2);
    size_t seen = 0;
    uint64_t to;
    assert_int_equal(store_scan(st, DEC_SPANS, cursor, 100, count_row, &seen, &to), RIPPLE_OK);
    assert_int_equal(seen, 2);
    assert_int_equal(to, again);
    /* The newest rows deleted again; the next open must still go past them. */
    uint64_t top[2] = {again - 1, again};
    assert_int_equal(store_delete(st, DEC_SPANS, top, 2), RIPPLE_OK);
    store_close(st);
    assert_int_equal(store_open(db, 0, &st, err, sizeof err), RIPPLE_OK);
    assert_int_equal(store_last_seq(st, DEC_SPANS), again);
    store_close(st);
  }
  test_rmtree(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_root_span_id),
      cmocka_unit_test(test_encode_mergelogs_and_spans),
      cmocka_unit_test(test_encode_apiserver_link),
      cmocka_unit_test(test_encode_refuses_garbage),
      cmocka_unit_test(test_receive_protobuf),
      cmocka_unit_test(test_receive_limits),
      cmocka_unit_test(test_receive_json),
      cmocka_unit_test(test_receive_malformed),
      cmocka_unit_test(test_receive_deep_nesting),
      cmocka_unit_test(test_gzip),
      cmocka_unit_test(test_cursor_parse),
      cmocka_unit_test(test_seqs_never_reused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
