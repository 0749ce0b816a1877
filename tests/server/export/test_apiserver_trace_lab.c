/*
 * test_apiserver_trace_lab.c - kube-apiserver's own request traces beside
 * ripple's (docs/otlp.md, "kube-apiserver's own traces"), on the lab.
 *
 * Needs the lab up with `lab/lab up --apiserver-tracing` (skipped, exit 77,
 * without: `make test-lab` brings its lab up so): kube-apiserver
 * then exports every request's spans over OTLP gRPC to 127.0.0.1:
 * $RIPPLE_LAB_OTLP_PORT, where this test runs the lab's Jaeger with a gRPC
 * receiver; the real trace server exports ripple's spans to the same Jaeger
 * over OTLP/HTTP. A person's create through the real webhook:
 *
 * - the write's span in ripple carries apiserverTraceId/apiserverSpanId, and
 *   nothing else of it changed: its CPID is ripple's own (not the API
 *   server's trace id) and it has no parent;
 * - in Jaeger, the API server's trace of that id holds the span of that id:
 *   "HTTP POST" (service "apiserver"), under "Call mutating webhook", under
 *   the request's handler span "Create";
 * - ripple's span in Jaeger carries one link to exactly that span.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cascade_lab.h"
#include "http_client.h"
#include "jaeger_lab.h"

static jaeger_lab_t *jaeger;

static int setup(void **state) {
  (void)state;
  char err[2048];
  const char *port = getenv("RIPPLE_LAB_OTLP_PORT"); /* main() checked it is set */
  if (jaeger_lab_start_grpc(&jaeger, (unsigned)strtoul(port ? port : "0", NULL, 10), err,
                            sizeof err) != RIPPLE_OK)
    fail_msg("%s", err);
  return 0;
}

static int teardown(void **state) {
  cl_teardown(state);
  jaeger_lab_stop(jaeger);
  jaeger = NULL;
  return 0;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* The value of the line "name{labels} v" in a /metrics text (not its HELP
 * line), -1 when absent. */
static double series(const char *text, const char *name) {
  for (const char *p = text; p && (p = strstr(p, name)); p++)
    if (p == text || p[-1] == '\n') return strtod(p + strlen(name), NULL);
  return -1;
}

static double trace_metric(const char *name) {
  hc_resp_t r;
  char url[160];
  snprintf(url, sizeof url, "%s/metrics", cl.trace);
  if (hc_request("GET", url, NULL, 0, NULL, &r) != RIPPLE_OK || r.status != 200)
    fail_msg("GET %s failed", url);
  double v = series(r.body, name);
  hc_resp_free(&r);
  return v;
}

static int is_hex(const char *s, size_t n) {
  if (strlen(s) != n) return 0;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return 1;
}

static const char *name_of(const json_t *span) {
  const char *n = json_string_value(json_object_get(span, "name"));
  return n ? n : "";
}

/* The span's parent in result, NULL when absent. */
static json_t *parent_of(const json_t *result, const json_t *span) {
  const char *p = json_string_value(json_object_get(span, "parentSpanId"));
  return p && *p ? jaeger_lab_find_span(result, p) : NULL;
}

/* The resource's service.name of the span span_hex in result. */
static const char *service_of(const json_t *result, const char *span_hex) {
  size_t i, k;
  json_t *rs, *ss;
  json_array_foreach(json_object_get(result, "resourceSpans"), i, rs) {
    json_array_foreach(json_object_get(rs, "scopeSpans"), k, ss) {
      json_t *one = json_pack("{s:[{s:[O]}]}", "resourceSpans", "scopeSpans", ss);
      int here = jaeger_lab_find_span(one, span_hex) != NULL;
      json_decref(one);
      if (!here) continue;
      size_t a;
      json_t *kv;
      json_array_foreach(json_object_get(json_object_get(rs, "resource"), "attributes"), a, kv) {
        if (!strcmp(json_string_value(json_object_get(kv, "key")), "service.name"))
          return json_string_value(json_object_get(json_object_get(kv, "value"), "stringValue"));
      }
    }
  }
  return NULL;
}

/* The API server's trace, once it holds span_hex and its two ancestors
 * (its batch span processor sends every 5 s, and a parent ends after its
 * children: the chain may arrive in parts). */
static json_t *apiserver_trace(const char *trace_hex, const char *span_hex) {
  char last[600] = "";
  for (int i = 0; i < 1200; i++) { /* 60 s */
    json_t *res = NULL;
    int rc = jaeger_lab_trace(jaeger, trace_hex, &res);
    if (rc == RIPPLE_OK) {
      json_t *s = jaeger_lab_find_span(res, span_hex);
      json_t *p = s ? parent_of(res, s) : NULL;
      if (p && parent_of(res, p)) return res;
      json_decref(res);
    } else if (rc != RIPPLE_ENOENT) {
      fail_msg("Jaeger: %s", jaeger_lab_last_error(jaeger));
    }
    snprintf(last, sizeof last, "%s", jaeger_lab_last_error(jaeger));
    sleep_ms(50);
  }
  fail_msg(
      "the API server's trace %s never held span %s with two ancestors (is the lab up "
      "with --apiserver-tracing? last: %s; kube-apiserver's log: `lab/lab logs "
      "kube-apiserver`)",
      trace_hex, span_hex, last);
  return NULL;
}

/* ripple's write span in cpid's trace, exported with its link. */
static json_t *ripple_span_in_jaeger(const char *cpid, const char *span_id) {
  char trace[33];
  size_t n = 0;
  for (const char *p = cpid; *p && n < 32; p++)
    if (*p != '-') trace[n++] = *p;
  trace[n] = '\0';
  for (int i = 0; i < 1200; i++) {
    json_t *res = NULL;
    if (jaeger_lab_trace(jaeger, trace, &res) == RIPPLE_OK) {
      json_t *s = jaeger_lab_find_span(res, span_id);
      if (s) {
        json_incref(s);
        json_decref(res);
        return s;
      }
      json_decref(res);
    }
    sleep_ms(50);
  }
  fail_msg("ripple's span %s of CPID %s never reached Jaeger: %s", span_id, cpid,
           jaeger_lab_last_error(jaeger));
  return NULL;
}

static int has_apiserver_service(void) {
  char url[128];
  snprintf(url, sizeof url, "%s/api/v3/services", jaeger_lab_query_url(jaeger));
  hc_resp_t r;
  int yes = hc_request("GET", url, NULL, 0, NULL, &r) == RIPPLE_OK && r.status == 200 && r.body &&
            strstr(r.body, "\"apiserver\"");
  hc_resp_free(&r);
  return yes;
}

/* Until kube-apiserver's exporter has reached this Jaeger (any of its spans
 * arrived: the lab's controllers make requests all the time). Its gRPC
 * channel retries a refused connection with a backoff that grows to 120 s
 * while nothing listens (between tests), and a batch sent while it is down
 * is dropped: the write is made only once spans flow. */
static void wait_apiserver_exporting(void) {
  for (int i = 0; i < 1800; i++) { /* 180 s */
    if (has_apiserver_service()) return;
    sleep_ms(100);
  }
  fail_msg(
      "no span of service apiserver reached Jaeger on 127.0.0.1:%s in 180 s (is the lab "
      "up with --apiserver-tracing? `lab/lab logs kube-apiserver`)",
      getenv("RIPPLE_LAB_OTLP_PORT"));
}

static void test_write_links_apiserver_span(void **state) {
  (void)state;
  wait_apiserver_exporting();
  whlab_begin_cluster(&cl, "rastr");
  cl.server_args[0] = "--otlp-endpoint";
  cl.server_args[1] = jaeger_lab_otlp_url(jaeger);
  cl_start_webhook();
  char cpid[CL_CPID];
  cl_create_root("deployments", cl_deployment("web", 1), cpid);
  cl_spans_settle();

  /* 1. ripple's span of the person's create names the API server's span. */
  json_t *sp = whlab_trace(&cl, cpid, "spans");
  json_t *mine = NULL, *s;
  size_t i;
  json_array_foreach(json_object_get(sp, "spans"), i, s) {
    if (!strcmp(name_of(s), "create deployments") && !strcmp(cl_attr(s, "name"), "web")) mine = s;
  }
  if (!mine) fail_msg("no span 'create deployments' of web in CPID %s", cpid);
  char as_trace[33], as_span[17], span_id[17];
  snprintf(as_trace, sizeof as_trace, "%s", cl_attr(mine, "apiserverTraceId"));
  snprintf(as_span, sizeof as_span, "%s", cl_attr(mine, "apiserverSpanId"));
  snprintf(span_id, sizeof span_id, "%s", json_string_value(json_object_get(mine, "span_id")));
  fprintf(stderr, "# ripple span %s of %s: apiserver trace %s span %s\n", span_id, cpid, as_trace,
          as_span);
  assert_true(is_hex(as_trace, 32));
  assert_true(is_hex(as_span, 16));
  /* The CPID and the parent are ripple's, whatever the API server sent. */
  char hexcpid[33];
  size_t n = 0;
  for (const char *p = cpid; *p && n < 32; p++)
    if (*p != '-') hexcpid[n++] = *p;
  hexcpid[n] = '\0';
  assert_string_not_equal(hexcpid, as_trace);
  json_t *parent = json_object_get(mine, "parent_id");
  assert_true(!parent || json_is_null(parent));
  json_decref(sp);

  /* 2. The API server's trace holds that span: its webhook call. */
  json_t *as = apiserver_trace(as_trace, as_span);
  json_t *post = jaeger_lab_find_span(as, as_span);
  json_t *call = parent_of(as, post), *handler = parent_of(as, call);
  fprintf(stderr, "# in Jaeger: %s <- %s <- %s (%zu spans in the API server's trace)\n",
          name_of(post), name_of(call), name_of(handler), jaeger_lab_count_spans(as));
  assert_string_equal(name_of(post), "HTTP POST");
  assert_string_equal(name_of(call), "Call mutating webhook");
  assert_string_equal(name_of(handler), "Create");
  assert_string_equal(service_of(as, as_span), "apiserver");
  json_decref(as);

  /* 3. ripple's span in Jaeger links to it. */
  long st;
  for (int k = 0; k < 600; k++) {
    if (trace_metric("ripple_otlp_export_backlog_rows{table=\"spans\"} ") == 0) break;
    sleep_ms(100);
  }
  json_t *js = ripple_span_in_jaeger(cpid, span_id);
  json_t *links = json_object_get(js, "links");
  char *dump = json_dumps(links, JSON_COMPACT);
  fprintf(stderr, "# ripple span's links in Jaeger: %s\n", dump ? dump : "null");
  free(dump);
  assert_int_equal(json_array_size(links), 1);
  json_t *l = json_array_get(links, 0);
  assert_true(!strcasecmp(json_string_value(json_object_get(l, "traceId")), as_trace));
  assert_true(!strcasecmp(json_string_value(json_object_get(l, "spanId")), as_span));
  json_decref(js);

  /* The webhook counted the headers it took, and none malformed. */
  char *text = NULL;
  st = whlab_webhook_get(&cl, "/metrics", &text);
  assert_int_equal(st, 200);
  fprintf(stderr, "# webhook took %.0f API server traceparents\n",
          series(text, "ripple_webhook_apiserver_traceparents_total "));
  assert_true(series(text, "ripple_webhook_apiserver_traceparents_total ") >= 1);
  assert_true(series(text, "ripple_webhook_apiserver_traceparents_invalid_total ") == 0);
  free(text);
}

int main(void) {
  const char *port = getenv("RIPPLE_LAB_OTLP_PORT");
  if (!port || !*port) {
    fprintf(stderr,
            "test_apiserver_trace_lab: skipped: it needs a lab with kube-apiserver's "
            "tracing (lab/lab up --apiserver-tracing; $RIPPLE_LAB_OTLP_PORT from lab/lab "
            "env)\n");
    return 77;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_write_links_apiserver_span, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
