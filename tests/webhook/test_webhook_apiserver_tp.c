/*
 * test_webhook_apiserver_tp.c - kube-apiserver's own traceparent header of a
 * /mutate call (its tracing, wh.h: wh_apiserver_tp, wh_handle_call), which is
 * not KEP-5915's annotation (--traceparent, test_webhook_traceparent.c):
 * parsed strictly (every malformed shape ignored and counted), a valid and
 * sampled one recorded on the write's span as apiserverTraceId and
 * apiserverSpanId, and never the CPID or the span's parent, with or without
 * --traceparent. The HTTP side (one header, several) is in
 * test_webhook_clientca.c; the link it becomes in test_otlp.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripplex/sbuf.h"
#include "traceparent.h"
#include "wh_fixture.h"

#define TP_KEY "tracing.k8s.io/traceparent"
/* A client's, in the annotation (the W3C specification's example). */
#define W3C_TP "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
#define W3C_CPID "4bf92f35-77b3-4da6-a3ce-929d0e0e4736"
#define RAW_CPID "01234567-89ab-cdef-0123-456789abcdef"

#define M(f, field) atomic_load(&wh_metrics((f)->w)->field)

/* The last span's CPID as text. */
static const char *last_cpid(fx_t *f, char out[40]) {
  assert_true(f->cap->nsp > 0);
  fmt(&f->cap->sp[f->cap->nsp - 1].cpid, out);
  return out;
}

/* The API server's header of one call (its "HTTP POST" span), not a client's. */
#define AS_TP "00-aac6227b5404bff5db076f6f9484a89d-d10b89f27e22770b-01"

/* Answer a review as http.c does with the header value hdr (NULL: none). */
static void post_with(fx_t *f, const char *hdr, const char *body) {
  sbuf_t out;
  sbuf_init(&out);
  const char *tp = wh_apiserver_tp(f->w, hdr);
  assert_int_equal(wh_handle_call(f->w, WH_DECIDER, tp, body, strlen(body), &out), 200);
  json_decref(f->answer);
  f->answer = json_loadb(out.p, out.len, 0, NULL);
  assert_non_null(f->answer);
  sbuf_free(&out);
}

static void test_apiserver_header_parse(void **state) {
  fx_t *f = *state;
  assert_ptr_equal(wh_apiserver_tp(f->w, AS_TP), AS_TP);
  assert_null(wh_apiserver_tp(f->w, NULL)); /* none: not counted */
  assert_int_equal(M(f, as_tp), 1);
  assert_int_equal(M(f, as_tp_invalid), 0);
  static const char *const bad[] = {
      "",
      "00-aac6227b5404bff5db076f6f9484a89d-d10b89f27e22770b-0",   /* 54 */
      "00-aac6227b5404bff5db076f6f9484a89d-d10b89f27e22770b-011", /* 56 */
      "00-aac6227b5404bff5db076f6f9484a89d-d10b89f27e22770b-01 ", /* trailing blank */
      "01-aac6227b5404bff5db076f6f9484a89d-d10b89f27e22770b-01",  /* version 01 */
      "ff-aac6227b5404bff5db076f6f9484a89d-d10b89f27e22770b-01",  /* forbidden version */
      "00-AAC6227B5404BFF5DB076F6F9484A89D-d10b89f27e22770b-01",  /* upper case */
      "00-aac6227b5404bff5db076f6f9484a89d-D10B89F27E22770B-01",
      "00-00000000000000000000000000000000-d10b89f27e22770b-01", /* zero trace id */
      "00-aac6227b5404bff5db076f6f9484a89d-0000000000000000-01", /* zero span id */
      "00-aac6227b5404bff5db076f6f9484a89d-d10b89f27e22770b-0g",
      "00_aac6227b5404bff5db076f6f9484a89d-d10b89f27e22770b-01",
      "00-aac6227b5404bff5db076f6f9484a89d_d10b89f27e22770b-01",
      "00-aac6227b5404bff5db076f6f9484a89d-d10b89f27e22770b_01",
      "00-aac6227b5404bff5db076f6f9484a8\n-d10b89f27e22770b-01",
      "00-aac6227b-5404-bff5-db07-6f6f9484a89d-d10b89f27e22770b-01",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    if (wh_apiserver_tp(f->w, bad[i])) fail_msg("taken: '%s'", bad[i]);
  assert_null(wh_apiserver_tp(f->w, WH_APISERVER_TP_MANY)); /* several headers */
  assert_int_equal(M(f, as_tp), 1);
  assert_int_equal(M(f, as_tp_invalid), sizeof bad / sizeof *bad + 1);
  /* The engine parses again what it is given: a malformed value that got
   * past the check names no span. */
  wh_review_t r;
  memset(&r, 0, sizeof r);
  wh_apiserver_tp_take(bad[6], &r);
  assert_string_equal(r.apiserver_trace, "");
  wh_apiserver_tp_take(AS_TP, &r);
  assert_string_equal(r.apiserver_trace, "aac6227b5404bff5db076f6f9484a89d");
  assert_string_equal(r.apiserver_span, "d10b89f27e22770b");
}

/* A person's create with the API server's header: the span names the API
 * server's span and nothing else changes (ripple's own random root, no
 * parent); without the header or with a malformed one, no attributes. */
static void test_apiserver_header_span(void **state) {
  fx_t *f = *state;
  const char *dep =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{"
      "\"name\":\"web\",\"namespace\":\"d\"},\"spec\":{}}";
  char body[4096];
  review(body, sizeof body, "CREATE", "alice", "Deployment", "deployments", "", "d", "web", dep,
         "null");
  post_with(f, AS_TP, body);
  assert_int_equal(f->cap->nsp, 1);
  const cap_span_t *sp = &f->cap->sp[0];
  assert_string_equal(attr(sp, "apiserverTraceId"), "aac6227b5404bff5db076f6f9484a89d");
  assert_string_equal(attr(sp, "apiserverSpanId"), "d10b89f27e22770b");
  assert_true(sp->parent_id == 0);
  char id[40];
  fmt(&sp->cpid, id);
  assert_string_not_equal(id, "aac6227b-5404-bff5-db07-6f6f9484a89d");
  assert_int_equal(f->cap->nml, 1);
  assert_int_equal(f->cap->ml[0].nsources, 0);
  post_with(f, NULL, body);
  assert_int_equal(f->cap->nsp, 2);
  assert_null(attr(&f->cap->sp[1], "apiserverTraceId"));
  assert_null(attr(&f->cap->sp[1], "apiserverSpanId"));
  post_with(f, "00-AAC6227B5404BFF5DB076F6F9484A89D-d10b89f27e22770b-01", body);
  assert_int_equal(f->cap->nsp, 3);
  assert_null(attr(&f->cap->sp[2], "apiserverTraceId"));
  assert_int_equal(M(f, as_tp_invalid), 1);
  /* Valid but not sampled: kube-apiserver exports no such span, so no link. */
  post_with(f, "00-aac6227b5404bff5db076f6f9484a89d-d10b89f27e22770b-00", body);
  assert_int_equal(f->cap->nsp, 4);
  assert_null(attr(&f->cap->sp[3], "apiserverTraceId"));
  assert_null(attr(&f->cap->sp[3], "apiserverSpanId"));
  assert_int_equal(M(f, as_tp), 2);
  assert_int_equal(M(f, as_tp_invalid), 1);
}

/* With --traceparent, the client's annotation decides the CPID and the
 * parent, and the API server's header only adds the attributes: the two
 * trace contexts are never mixed up. */
static void test_apiserver_header_not_client(void **state) {
  fx_t *f = *state;
  const char *dep =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
      "\"namespace\":\"d\",\"annotations\":{\"" TP_KEY "\":\"" W3C_TP "\"}},\"spec\":{}}";
  char body[4096];
  review(body, sizeof body, "CREATE", "alice", "Deployment", "deployments", "", "d", "web", dep,
         "null");
  post_with(f, AS_TP, body);
  assert_string_equal(warning(f), "ripple: cpid " W3C_CPID);
  assert_int_equal(f->cap->nsp, 1);
  char id[40];
  assert_string_equal(last_cpid(f, id), W3C_CPID);
  assert_true(f->cap->sp[0].parent_id == 0x00f067aa0ba902b7ULL);
  assert_string_equal(attr(&f->cap->sp[0], "apiserverTraceId"), "aac6227b5404bff5db076f6f9484a89d");
  assert_string_equal(attr(&f->cap->sp[0], "apiserverSpanId"), "d10b89f27e22770b");
  /* And a client's traceparent as the header is still not a CPID. */
  const char *cm = "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\",\"namespace\":\"d\"}}";
  review(body, sizeof body, "CREATE", "alice", "ConfigMap", "configmaps", "", "d", "c", cm, "null");
  post_with(f, "00-0123456789abcdef0123456789abcdef-b7ad6b7169203331-01", body);
  assert_string_not_equal(last_cpid(f, id), RAW_CPID);
  assert_true(f->cap->sp[1].parent_id == 0);
  assert_string_equal(attr(&f->cap->sp[1], "apiserverSpanId"), "b7ad6b7169203331");
  assert_int_equal(M(f, tp_roots), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_apiserver_header_parse, setup, teardown),
      cmocka_unit_test_setup_teardown(test_apiserver_header_span, setup, teardown),
      cmocka_unit_test_setup_teardown(test_apiserver_header_not_client, setup_traceparent,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
