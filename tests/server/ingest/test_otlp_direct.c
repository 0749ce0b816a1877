/*
 * test_otlp_direct.c - POST /v1/traces straight into records
 * (otlp_receive_batch, otlp.h) against the route it replaced (otlp_receive's
 * JSON, then dec_decode): the same records, the same counts, the same
 * refusals, in both OTLP encodings; and what the records hold.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/decode.h"
#include "ingest/otlp.h"
#include "ingest/otlp.pb-c.h"
#include "ripplex/cpid.h"
#include "testutil.h"

#define C1 "11111111-1111-4111-8111-111111111111"
#define C1HEX "11111111111141118111111111111111"
#define C2 "22222222-2222-4222-8222-222222222222"

static int knows_c1(void *ud, const ripple_cpid_t *c) {
  (void)ud;
  ripple_cpid_t c1;
  ripple_cpid_parse(C1, strlen(C1), &c1);
  return cpid_eq(c, &c1);
}

static void same_str(const dec_batch_t *a, dec_str_t x, const dec_batch_t *b, dec_str_t y) {
  assert_int_equal(x.len, y.len);
  assert_memory_equal(dec_str(a, x), dec_str(b, y), x.len);
}

static void same_batch(const dec_batch_t *a, const dec_batch_t *b) {
  assert_int_equal(a->n, b->n);
  for (size_t i = 0; i < a->n; i++) {
    const dec_rec_t *x = &a->rec[i], *y = &b->rec[i];
    assert_true(cpid_eq(&x->cpid, &y->cpid));
    assert_int_equal(x->time, y->time);
    assert_int_equal(x->end, y->end);
    assert_int_equal(x->span_id, y->span_id);
    assert_int_equal(x->body_len, y->body_len);
    assert_memory_equal(a->body.p + x->body_off, b->body.p + y->body_off, x->body_len);
    same_str(a, x->kind, b, y->kind);
    same_str(a, x->ns, b, y->ns);
    same_str(a, x->name, b, y->name);
    same_str(a, x->service, b, y->service);
    same_str(a, x->span_name, b, y->span_name);
    same_str(a, x->owner, b, y->owner);
    same_str(a, x->operation, b, y->operation);
  }
}

/* Both routes over one body: they must agree. Returns the direct route's
 * code; *b holds its batch on RIPPLE_OK. */
static int both(otlp_encoding_t enc, const char *body, size_t len, const dec_limits_t *lim,
                dec_batch_t *b, otlp_result_t *res, dec_error_t *err) {
  otlp_recv_t r = {.lim = lim, .known = knows_c1};
  otlp_result_t ores;
  sbuf_t json;
  sbuf_init(&json);
  dec_batch_t ob;
  dec_error_t oe;
  memset(&ob, 0, sizeof ob); /* read only when both routes succeed (the analyzer cannot tell) */
  memset(&oe, 0, sizeof oe);
  int orc = otlp_receive(enc, body, len, &r, &json, &ores);
  if (orc == RIPPLE_OK) orc = dec_decode(DEC_SPANS, json.p, json.len, lim, &ob, &oe);
  int rc = otlp_receive_batch(enc, body, len, &r, b, res, err);
  assert_int_equal(rc, orc);
  if (rc == RIPPLE_OK) {
    assert_int_equal(res->spans, ores.spans);
    assert_int_equal(res->accepted, ores.accepted);
    assert_int_equal(res->rejected, ores.rejected);
    assert_string_equal(res->msg, ores.msg);
    same_batch(&ob, b);
    dec_batch_free(&ob);
  } else if (oe.msg[0]) {
    assert_int_equal(err->index, oe.index);
    assert_string_equal(err->field, oe.field);
    assert_string_equal(err->msg, oe.msg);
  } else {
    assert_string_equal(err->msg, ores.msg);
  }
  sbuf_free(&json);
  return rc;
}

static const dec_limits_t lim = {
    .max_records = 1000, .max_sources = 64, .max_attrs = 8, .max_string = 64};

/* Three spans that join (their own trace; another trace with ripple.cpid; an
 * error status) and one that does not. */
static const char *request_json =
    "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":"
    "{\"stringValue\":\"ctrl\"}}]},\"scopeSpans\":[{\"spans\":["
    "{\"traceId\":\"" C1HEX
    "\",\"spanId\":\"00000000000000a1\",\"parentSpanId\":"
    "\"00000000000000a0\",\"name\":\"syncPod\",\"startTimeUnixNano\":\"1795300000000000000\","
    "\"endTimeUnixNano\":\"1795300000000001000\",\"attributes\":["
    "{\"key\":\"kind\",\"value\":{\"stringValue\":\"Pod\"}},"
    "{\"key\":\"namespace\",\"value\":{\"stringValue\":\"default\"}},"
    "{\"key\":\"name\",\"value\":{\"stringValue\":\"web-1\"}},"
    "{\"key\":\"owner\",\"value\":{\"stringValue\":\"ReplicaSet/web\"}},"
    "{\"key\":\"operation\",\"value\":{\"stringValue\":\"UPDATE\"}},"
    "{\"key\":\"kind\",\"value\":{\"stringValue\":\"Repeated\"}},"
    "{\"key\":\"n\",\"value\":{\"intValue\":\"42\"}}]},"
    "{\"traceId\":\"0102030405060708090a0b0c0d0e0f10\",\"spanId\":\"00000000000000b1\","
    "\"parentSpanId\":\"00000000000000b0\",\"name\":\"other\",\"startTimeUnixNano\":\"5\","
    "\"endTimeUnixNano\":\"6\",\"attributes\":[{\"key\":\"ripple.cpid\",\"value\":"
    "{\"stringValue\":\"" C2
    "\"}}]},"
    "{\"traceId\":\"" C1HEX
    "\",\"spanId\":\"00000000000000c1\",\"name\":\"fails\","
    "\"startTimeUnixNano\":\"7\",\"endTimeUnixNano\":\"8\",\"status\":{\"code\":2,"
    "\"message\":\"boom\"}},"
    "{\"traceId\":\"0102030405060708090a0b0c0d0e0f11\",\"spanId\":\"00000000000000d1\","
    "\"name\":\"unknown\",\"startTimeUnixNano\":\"1\",\"endTimeUnixNano\":\"2\"}"
    "]}]}]}";

static void test_json_same_records(void **state) {
  (void)state;
  dec_batch_t b;
  otlp_result_t res;
  dec_error_t err;
  assert_int_equal(both(OTLP_JSON, request_json, strlen(request_json), &lim, &b, &res, &err),
                   RIPPLE_OK);
  assert_int_equal(res.spans, 4);
  assert_int_equal(res.accepted, 3);
  assert_int_equal(res.rejected, 1);
  assert_int_equal(b.n, 3);
  /* The first: its own trace, so its parent kept; the indexes' strings. */
  assert_int_equal(b.rec[0].span_id, 0xa1);
  assert_int_equal(b.rec[0].time, 1795300000000000000LL);
  assert_int_equal(b.rec[0].end, 1795300000000001000LL);
  assert_memory_equal(dec_str(&b, b.rec[0].kind), "Pod", 3); /* the first of a repeated key */
  assert_memory_equal(dec_str(&b, b.rec[0].owner), "ReplicaSet/web", 14);
  assert_memory_equal(dec_str(&b, b.rec[0].service), "ctrl", 4);
  assert_non_null(strstr(b.body.p, "\"parent_id\":\"00000000000000a0\""));
  assert_non_null(strstr(b.body.p, "\"n\":\"42\""));
  /* The second: another trace, so no parent, and its trace id kept. */
  ripple_cpid_t c2;
  ripple_cpid_parse(C2, strlen(C2), &c2);
  assert_true(cpid_eq(&b.rec[1].cpid, &c2));
  assert_null(strstr(b.body.p + b.rec[1].body_off, "parent_id"));
  assert_non_null(strstr(b.body.p + b.rec[1].body_off,
                         "\"otel.trace_id\":\"0102030405060708090a0b0c0d0e0f10\""));
  assert_non_null(strstr(b.body.p + b.rec[2].body_off, "\"otel.status_code\":\"ERROR\""));
  dec_batch_free(&b);
}

/* More accepted spans than a request may hold: refused whole, as POST
 * /v1/spans refuses them (a 413). */
static void test_too_many_records(void **state) {
  (void)state;
  dec_limits_t two = lim;
  two.max_records = 2;
  dec_batch_t b;
  otlp_result_t res;
  dec_error_t err;
  assert_int_equal(both(OTLP_JSON, request_json, strlen(request_json), &two, &b, &res, &err),
                   RIPPLE_ERANGE);
  assert_int_equal(err.index, -1);
  assert_string_equal(err.msg, "3 records in one request; at most 2 are accepted");
}

/* Strings cut to the limit, attributes past it left out: the same records.
 * A limit below 16 bytes refuses every span on both routes: the ids' text
 * (16 hex digits) is held to it too. */
static void test_tight_limits(void **state) {
  (void)state;
  dec_limits_t small = {.max_records = 10, .max_sources = 4, .max_attrs = 3, .max_string = 5};
  dec_batch_t b;
  otlp_result_t res;
  dec_error_t err;
  assert_int_equal(both(OTLP_JSON, request_json, strlen(request_json), &small, &b, &res, &err),
                   RIPPLE_ERANGE);
  assert_int_equal(err.index, 0);
  assert_string_equal(err.field, "span_id");
  small.max_string = 16;
  assert_int_equal(both(OTLP_JSON, request_json, strlen(request_json), &small, &b, &res, &err),
                   RIPPLE_OK);
  assert_int_equal(b.n, 3);
  assert_memory_equal(dec_str(&b, b.rec[0].service), "ctrl", 4);
  assert_int_equal(b.rec[0].owner.len, 0); /* the 4th attribute: left out */
  assert_non_null(strstr(b.body.p + b.rec[1].body_off, "\"otel.trace_id\":\"0102030405060708\""));
  dec_batch_free(&b);
}

static void test_protobuf_same_records(void **state) {
  (void)state;
  uint8_t trace[16], sid[8] = {0, 0, 0, 0, 0, 0, 0, 7}, bad_sid[8] = {0};
  ripple_cpid_t c1;
  ripple_cpid_parse(C1, strlen(C1), &c1);
  memcpy(trace, c1.b, 16);
  Ripple__Otlp__AnyValue v = RIPPLE__OTLP__ANY_VALUE__INIT;
  v.value_case = RIPPLE__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
  v.string_value = (char *)"bad\xff\x00text";
  Ripple__Otlp__KeyValue kv = RIPPLE__OTLP__KEY_VALUE__INIT, *kvp = &kv;
  kv.key = (char *)"name";
  kv.value = &v;
  Ripple__Otlp__Span s[2], *sp[2] = {&s[0], &s[1]};
  for (int i = 0; i < 2; i++) {
    ripple__otlp__span__init(&s[i]);
    s[i].trace_id = (ProtobufCBinaryData){16, trace};
    s[i].span_id = (ProtobufCBinaryData){8, i ? bad_sid : sid};
    s[i].name = (char *)"reconcile";
    s[i].start_time_unix_nano = 10;
    s[i].end_time_unix_nano = 20;
    s[i].n_attributes = 1;
    s[i].attributes = &kvp;
  }
  Ripple__Otlp__ScopeSpans ss = RIPPLE__OTLP__SCOPE_SPANS__INIT, *ssp = &ss;
  ss.n_spans = 2;
  ss.spans = sp;
  Ripple__Otlp__ResourceSpans rs = RIPPLE__OTLP__RESOURCE_SPANS__INIT, *rsp = &rs;
  rs.n_scope_spans = 1;
  rs.scope_spans = &ssp;
  Ripple__Otlp__ExportTraceServiceRequest req = RIPPLE__OTLP__EXPORT_TRACE_SERVICE_REQUEST__INIT;
  req.n_resource_spans = 1;
  req.resource_spans = &rsp;
  uint8_t buf[1024];
  size_t n = ripple__otlp__export_trace_service_request__pack(&req, buf);
  dec_batch_t b;
  otlp_result_t res;
  dec_error_t err;
  assert_int_equal(both(OTLP_PROTOBUF, (const char *)buf, n, &lim, &b, &res, &err), RIPPLE_OK);
  assert_int_equal(res.accepted, 1);
  assert_int_equal(res.rejected, 1); /* the zero span id */
  assert_int_equal(b.rec[0].span_id, 7);
  assert_memory_equal(dec_str(&b, b.rec[0].service), "unknown_service", 15);
  /* The invalid byte as U+FFFD; the NUL and what follows it: protobuf-c's
   * strings end at the NUL. */
  assert_int_equal(b.rec[0].name.len, 6);
  assert_memory_equal(dec_str(&b, b.rec[0].name), "bad\xef\xbf\xbd", 6);
  dec_batch_free(&b);
}

static void test_refusals(void **state) {
  (void)state;
  dec_batch_t b;
  otlp_result_t res;
  dec_error_t err;
  assert_int_equal(both(OTLP_JSON, "not json", 8, &lim, &b, &res, &err), RIPPLE_EJSON);
  assert_non_null(strstr(err.msg, "not JSON"));
  assert_int_equal(both(OTLP_PROTOBUF, "\xff\xff\xff", 3, &lim, &b, &res, &err), RIPPLE_EJSON);
  /* An empty request: no spans, a batch with its records array all the same. */
  assert_int_equal(both(OTLP_PROTOBUF, "", 0, &lim, &b, &res, &err), RIPPLE_OK);
  assert_int_equal(b.n, 0);
  assert_non_null(b.rec);
  dec_batch_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json_same_records), cmocka_unit_test(test_too_many_records),
      cmocka_unit_test(test_tight_limits),      cmocka_unit_test(test_protobuf_same_records),
      cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
