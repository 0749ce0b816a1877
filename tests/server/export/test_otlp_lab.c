/*
 * test_otlp_lab.c - ripple's traces in a real Jaeger (the lab's Jaeger v2,
 * tests/support/jaeger_lab.h), exported by the real ripple-server over
 * OTLP/HTTP.
 *
 * 1. A scale traced on the lab's control plane with the real webhook, while
 *    another workload changes too: every CPID of the scale's trace is a trace
 *    in Jaeger whose root span carries a link to the root span of each CPID
 *    it was merged from, and every span ripple holds for it arrived with its
 *    id, its parent (or the CPID's root span) and its service.
 * 2. ripple-server killed with SIGKILL while it exports and started again on
 *    the same database: every span posted before and after is in Jaeger,
 *    none invented; spans sent twice are counted (at-least-once allows them).
 * 3. KEP-5915 (the webhook's --traceparent): a person's create carrying a
 *    client's traceparent becomes a cascade whose CPID is the client's trace
 *    id, so the client's span, the webhook's write under it and ripple's
 *    cascade are one trace in Jaeger; the ReplicaSet keeps the copy the
 *    Deployment controller made, the Pods get their own; and a scale makes
 *    exactly the spec writes it makes without the webhook.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cascade_lab.h"
#include "http_client.h"
#include "jaeger_lab.h"
#include "ripplex/sbuf.h"

static jaeger_lab_t *jaeger;

static int setup(void **state) {
  (void)state;
  char err[512];
  if (jaeger_lab_start(&jaeger, err, sizeof err) != RIPPLE_OK) fail_msg("%s", err);
  return 0;
}

static int teardown(void **state) {
  cl_teardown(state);
  jaeger_lab_stop(jaeger);
  jaeger = NULL;
  return 0;
}

/* A CPID as the hex of its trace id, and the hex of its root span's id. */
static void ids(const char *cpid, char trace[33], char root[17]) {
  size_t n = 0;
  for (const char *p = cpid; *p; p++)
    if (*p != '-') trace[n++] = *p;
  trace[n] = '\0';
  memcpy(root, trace + 16, 17);
}

/* The value of a metric line "name{labels} v" in a server's /metrics. */
static double metric(const char *base, const char *series) {
  hc_resp_t r;
  char url[128];
  snprintf(url, sizeof url, "%s/metrics", base);
  if (hc_request("GET", url, NULL, 0, NULL, &r) != RIPPLE_OK || r.status != 200)
    fail_msg("GET %s failed", url);
  const char *p = strstr(r.body, series);
  double v = p ? strtod(p + strlen(series), NULL) : -1;
  hc_resp_free(&r);
  return v;
}

typedef struct drained {
  const char *base;
} drained_t;

static int is_drained(void *ud) {
  const char *base = ((drained_t *)ud)->base;
  return metric(base, "ripple_otlp_export_backlog_rows{table=\"mergelogs\"} ") == 0 &&
         metric(base, "ripple_otlp_export_backlog_rows{table=\"spans\"} ") == 0 &&
         metric(base, "ripple_otlp_export_lag_seconds_count ") > 0;
}

static void wait_drained(const char *base) {
  drained_t d = {base};
  cl_wait(is_drained, &d, 60000, "the OTLP backlog to reach 0");
}

static const char *attr_str(const json_t *attrs, const char *key) {
  size_t i;
  json_t *a;
  json_array_foreach(attrs, i, a) {
    if (!strcmp(json_string_value(json_object_get(a, "key")), key))
      return json_string_value(json_object_get(json_object_get(a, "value"), "stringValue"));
  }
  return NULL;
}

/* The service.name of the resource holding span id, in result. */
static const char *service_of(const json_t *result, const char *span_hex) {
  size_t i, j;
  json_t *rs, *ss;
  json_array_foreach(json_object_get(result, "resourceSpans"), i, rs) {
    json_array_foreach(json_object_get(rs, "scopeSpans"), j, ss) {
      json_t *one = json_pack("{s:[o]}", "resourceSpans", json_pack("{s:[O]}", "scopeSpans", ss));
      int here = jaeger_lab_find_span(one, span_hex) != NULL;
      json_decref(one);
      if (here)
        return attr_str(json_object_get(json_object_get(rs, "resource"), "attributes"),
                        "service.name");
    }
  }
  return NULL;
}

/* Every CPID of cpid's trace in Jaeger as ripple has it. */
static void check_in_jaeger(const char *cpid, size_t *ncpids, size_t *nspans, size_t *nlinks) {
  json_t *ml = whlab_trace(&cl, cpid, "mergelogs"), *sp = whlab_trace(&cl, cpid, "spans");
  size_t i, k;
  json_t *m, *s, *src;
  json_array_foreach(json_object_get(ml, "mergelogs"), i, m) {
    const char *c = json_string_value(json_object_get(m, "cpid"));
    char trace[33], root[17];
    ids(c, trace, root);
    size_t want = 1;
    json_array_foreach(json_object_get(sp, "spans"), k, s) {
      want += !strcmp(json_string_value(json_object_get(s, "cpid")), c);
    }
    json_t *got = NULL;
    if (jaeger_lab_wait_spans(jaeger, trace, want, 30000, &got) != RIPPLE_OK)
      fail_msg("CPID %s: %s", c, jaeger_lab_last_error(jaeger));
    json_t *r = jaeger_lab_find_span(got, root);
    if (!r) fail_msg("CPID %s has no root span %s in Jaeger", c, root);
    json_t *links = json_object_get(r, "links");
    json_t *sources = json_object_get(m, "sources");
    assert_int_equal(json_array_size(links), json_array_size(sources));
    assert_string_equal(json_string_value(json_object_get(r, "name")),
                        json_array_size(sources) ? "ripple.merge" : "ripple.root");
    json_array_foreach(sources, k, src) {
      char st[33], sr[17];
      ids(json_string_value(src), st, sr);
      size_t l;
      json_t *link;
      int found = 0;
      json_array_foreach(links, l, link) {
        found |= !strcasecmp(json_string_value(json_object_get(link, "traceId")), st) &&
                 !strcasecmp(json_string_value(json_object_get(link, "spanId")), sr);
      }
      if (!found) fail_msg("CPID %s: no link to source %s", c, json_string_value(src));
      (*nlinks)++;
    }
    assert_string_equal(service_of(got, root), json_string_value(json_object_get(m, "component")));
    json_array_foreach(json_object_get(sp, "spans"), k, s) {
      if (strcmp(json_string_value(json_object_get(s, "cpid")), c) != 0) continue;
      const char *id = json_string_value(json_object_get(s, "span_id"));
      json_t *js = jaeger_lab_find_span(got, id);
      if (!js) fail_msg("span %s of CPID %s is not in Jaeger", id, c);
      const char *parent = json_string_value(json_object_get(s, "parent_id"));
      assert_string_equal(json_string_value(json_object_get(js, "parentSpanId")),
                          parent ? parent : root);
      assert_string_equal(json_string_value(json_object_get(js, "name")),
                          json_string_value(json_object_get(s, "name")));
      assert_string_equal(service_of(got, id), json_string_value(json_object_get(s, "service")));
      assert_string_equal(attr_str(json_object_get(js, "attributes"), "ripple.cpid"), c);
      (*nspans)++;
    }
    json_decref(got);
    (*ncpids)++;
  }
  json_decref(ml);
  json_decref(sp);
}

static void test_scale_in_jaeger(void **state) {
  (void)state;
  whlab_begin_cluster(&cl, "rotlp");
  cl.server_args[0] = "--otlp-endpoint";
  cl.server_args[1] = jaeger_lab_otlp_url(jaeger);
  cl.server_args[2] = "--otlp-batch";
  cl.server_args[3] = "7"; /* many requests, so the cascade crosses batch boundaries */
  cl_start_webhook();
  char c_web[CL_CPID], c_db[CL_CPID], c_scale[CL_CPID], c_db2[CL_CPID];
  cl_create_root("deployments", cl_deployment("web", 2), c_web);
  cl_create_root("deployments", cl_deployment("db", 1), c_db);
  cl_wait_fields("deployments", "web", 2, CL_READY_APPS, 120000);
  cl_patch_root("deployments", "Deployment", "web", "\"spec\":{\"replicas\":5}", c_scale);
  cl_patch_root("deployments", "Deployment", "db", "\"spec\":{\"replicas\":3}", c_db2);
  cl_wait_fields("deployments", "web", 5, CL_READY_APPS, 120000);
  cl_wait_fields("deployments", "db", 3, CL_READY_APPS, 120000);
  cl_spans_settle();
  wait_drained(cl.trace);
  size_t ncpids = 0, nspans = 0, nlinks = 0;
  check_in_jaeger(c_scale, &ncpids, &nspans, &nlinks);
  check_in_jaeger(c_db2, &ncpids, &nspans, &nlinks);
  fprintf(stderr, "# in Jaeger: %zu CPIDs, %zu spans, %zu links, as ripple has them\n", ncpids,
          nspans, nlinks);
  assert_true(ncpids >= 4);
  assert_true(nspans >= 10);
  assert_true(nlinks >= 1); /* the scale's cascade merges (a ReplicaSet's Pods into Endpoints) */
  /* Nothing failed on the way. */
  assert_true(metric(cl.trace, "ripple_otlp_export_requests_total{result=\"rejected\"} ") == 0);
  assert_true(metric(cl.trace, "ripple_otlp_export_rejected_spans_total ") == 0);
  cl_unregister();
}

/* n spans of cpid, ids first+1..first+n, posted in batches of 500. */
static void post_spans(const char *base, const char *cpid, size_t first, size_t n) {
  for (size_t done = 0; done < n;) {
    sbuf_t b;
    sbuf_init(&b);
    sbuf_putc(&b, '[');
    size_t k = n - done < 500 ? n - done : 500;
    for (size_t i = 0; i < k; i++)
      sbuf_printf(&b,
                  "%s{\"cpid\":\"%s\",\"span_id\":\"%016zx\",\"service\":\"load\",\"name\":\"w\","
                  "\"start\":\"2026-11-24T10:00:00Z\",\"end\":\"2026-11-24T10:00:00.001Z\"}",
                  i ? "," : "", cpid, first + done + i + 1);
    sbuf_putc(&b, ']');
    char url[128];
    snprintf(url, sizeof url, "%s/v1/spans", base);
    hc_resp_t r;
    if (hc_request("POST", url, b.p, b.len, NULL, &r) != RIPPLE_OK || r.status != 200)
      fail_msg("POST %s failed", url);
    hc_resp_free(&r);
    sbuf_free(&b);
    done += k;
  }
}

static void spawn_server(whlab_proc_t *p, const char *dir, const char *db, int n) {
  const char *bin = getenv("RIPPLE_SERVER_BIN");
  assert_non_null(bin);
  snprintf(p->log, sizeof p->log, "%s/server-%d.log", dir, n);
  char *argv[] = {(char *)bin,
                  "--listen",
                  "127.0.0.1:0",
                  "--db",
                  (char *)db,
                  "--otlp-endpoint",
                  (char *)jaeger_lab_otlp_url(jaeger),
                  "--otlp-batch",
                  "50",
                  "--no-web",
                  NULL};
  whlab_spawn(p, argv);
}

static void test_kill_mid_export(void **state) {
  (void)state;
  enum { N = 6000 };
  char dir[] = "/tmp/ripple-otlp-lab-XXXXXX", db[96], base[64], cpid[CL_CPID], trace[33], root[17];
  assert_non_null(mkdtemp(dir));
  snprintf(db, sizeof db, "%s/trace.db", dir);
  whlab_new_cpid(cpid);
  ids(cpid, trace, root);
  whlab_proc_t p = {.pid = -1};
  spawn_server(&p, dir, db, 1);
  snprintf(base, sizeof base, "http://127.0.0.1:%u", p.port);
  post_spans(base, cpid, 0, N / 2);
  double sent = metric(base, "ripple_otlp_export_rows_total{table=\"spans\"} ");
  whlab_kill(&p); /* SIGKILL, while it exports */
  fprintf(stderr, "# killed after %.0f of %d spans were exported\n", sent, N / 2);
  spawn_server(&p, dir, db, 2);
  snprintf(base, sizeof base, "http://127.0.0.1:%u", p.port);
  post_spans(base, cpid, N / 2, N / 2);
  wait_drained(base);
  json_t *got = NULL;
  if (jaeger_lab_wait_spans(jaeger, trace, N, 60000, &got) != RIPPLE_OK)
    fail_msg("%s", jaeger_lab_last_error(jaeger));
  /* Every span posted is there; nothing else is. */
  static unsigned char seen[N];
  memset(seen, 0, sizeof seen);
  size_t total = 0, dups = 0, i, j, k;
  json_t *rs, *ss, *s;
  json_array_foreach(json_object_get(got, "resourceSpans"), i, rs) {
    json_array_foreach(json_object_get(rs, "scopeSpans"), j, ss) {
      json_array_foreach(json_object_get(ss, "spans"), k, s) {
        unsigned long id = strtoul(json_string_value(json_object_get(s, "spanId")), NULL, 16);
        if (id < 1 || id > N) fail_msg("Jaeger has a span that was never posted: %lx", id);
        dups += seen[id - 1]++ > 0;
        total++;
      }
    }
  }
  for (size_t n = 0; n < N; n++)
    if (!seen[n]) fail_msg("span %zx never reached Jaeger", n + 1);
  fprintf(stderr, "# Jaeger holds all %d spans; %zu sent twice (at least once), %zu in all\n", N,
          dups, total);
  json_decref(got);
  whlab_stop(&p);
  test_rmtree(dir);
}

/* {name: traceparent annotation} of resource's objects labelled app=kep. */
static void collect_tp(void *ud, json_t *o) {
  if (!o) return;
  json_t *ann = json_object_get(json_object_get(o, "metadata"), "annotations");
  const char *tp = json_string_value(json_object_get(ann, "tracing.k8s.io/traceparent"));
  json_object_set_new(ud,
                      json_string_value(json_object_get(json_object_get(o, "metadata"), "name")),
                      json_string(tp ? tp : ""));
}

static json_t *traceparents(const char *resource) {
  json_t *out = json_object();
  ripple_kube_list_opts_t lo = {.namespace_ = cl.ns, .label_selector = "app=kep"};
  ripple_kube_status_t st;
  if (ripple_kube_list(cl.kc, lab_resolve(cl.kc, resource), &lo, collect_tp, out, NULL, &st) !=
      RIPPLE_OK)
    fail_msg("cannot list %s", resource);
  return out;
}

static const char *const WRITES[] = {"pods", "replicasets", "deployments", NULL};

static void scale_kep(int n) {
  char patch[64];
  snprintf(patch, sizeof patch, "{\"spec\":{\"replicas\":%d}}", n);
  whlab_patch(&cl, "deployments", "kep", patch);
  cl_wait_fields("deployments", "kep", n, CL_READY_APPS, 120000);
}

static void test_traceparent_in_jaeger(void **state) {
  (void)state;
  whlab_begin_cluster(&cl, "rkep");
  cl.server_args[0] = "--otlp-endpoint";
  cl.server_args[1] = jaeger_lab_otlp_url(jaeger);
  cl.webhook_args[0] = "--traceparent";
  cl_start_webhook();
  /* The client's trace: a trace id (any 16 bytes; here a fresh UUID's) and its span. */
  char tid_uuid[CL_CPID], trace[33], root[17], client_span[17] = "00f067aa0ba902b7", tp[64];
  whlab_new_cpid(tid_uuid);
  ids(tid_uuid, trace, root);
  snprintf(tp, sizeof tp, "00-%s-%s-01", trace, client_span);
  json_t *d = cl_deployment("kep", 2);
  json_object_set_new(json_object_get(d, "metadata"), "annotations",
                      json_pack("{s:s}", "tracing.k8s.io/traceparent", tp));
  whlab_create(&cl, "deployments", d);
  cl_wait_fields("deployments", "kep", 2, CL_READY_APPS, 120000);
  cl_spans_settle();

  /* The Deployment's CPID is the client's trace id; its traceparent is the client's. */
  json_t *dep = cl_get("deployments", "kep");
  char cpid[CL_CPID];
  assert_true(whlab_obj_cpid(dep, "Deployment", cpid));
  assert_string_equal(cpid, tid_uuid);
  json_decref(dep);
  json_t *rs = traceparents("replicasets"), *pods = traceparents("pods");
  const char *name;
  json_t *v;
  assert_int_equal(json_object_size(rs), 1);
  json_object_foreach(rs, name, v) { assert_string_equal(json_string_value(v), tp); /* the copy */ }
  json_t *pod_cpids = cl_cpids("pods", "app=kep", "Pod");
  assert_int_equal(json_object_size(pods), 2);
  json_object_foreach(pods, name, v) {
    char t[33], r[17], want[64];
    ids(json_string_value(json_object_get(pod_cpids, name)), t, r);
    snprintf(want, sizeof want, "00-%s-%s-01", t, r);
    assert_string_equal(json_string_value(v), want); /* each Pod's own */
  }
  json_decref(pod_cpids);

  /* One trace in Jaeger: the webhook's write span under the client's span,
   * the CPID's root span, and the cascade beneath. */
  wait_drained(cl.trace);
  json_t *got = NULL;
  if (jaeger_lab_wait_spans(jaeger, trace, 3, 30000, &got) != RIPPLE_OK)
    fail_msg("%s", jaeger_lab_last_error(jaeger));
  assert_non_null(jaeger_lab_find_span(got, root));
  size_t i, j, k, under_client = 0;
  json_t *rsj, *ss, *sp;
  json_array_foreach(json_object_get(got, "resourceSpans"), i, rsj) {
    json_array_foreach(json_object_get(rsj, "scopeSpans"), j, ss) {
      json_array_foreach(json_object_get(ss, "spans"), k, sp) {
        const char *p = json_string_value(json_object_get(sp, "parentSpanId"));
        under_client += p && !strcasecmp(p, client_span);
      }
    }
  }
  assert_int_equal(under_client, 1);
  json_decref(got);

  /* A scale with the webhook and one without: the same spec writes. */
  json_t *b1 = cl_quiet_counts(WRITES);
  scale_kep(4);
  json_t *a1 = cl_quiet_counts(WRITES), *with = cl_counts_diff(b1, a1);
  cl_unregister();
  json_t *b2 = cl_quiet_counts(WRITES);
  scale_kep(6);
  json_t *a2 = cl_quiet_counts(WRITES), *without = cl_counts_diff(b2, a2);
  char *tw = json_dumps(with, JSON_SORT_KEYS), *tn = json_dumps(without, JSON_SORT_KEYS);
  fprintf(stderr, "# writes of a scale by 2: with the webhook %s, without %s\n", tw, tn);
  static const char *const exact[] = {"replicasets PUT", "replicasets PATCH", "pods POST",
                                      "deployments PATCH", NULL};
  for (const char *const *key = exact; *key; key++)
    if (json_integer_value(json_object_get(with, *key)) !=
        json_integer_value(json_object_get(without, *key)))
      fail_msg("%s: %lld with the webhook, %lld without", *key,
               (long long)json_integer_value(json_object_get(with, *key)),
               (long long)json_integer_value(json_object_get(without, *key)));
  free(tw);
  free(tn);
  json_decref(b1), json_decref(a1), json_decref(with), json_decref(b2), json_decref(a2);
  json_decref(without), json_decref(rs), json_decref(pods);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_scale_in_jaeger, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kill_mid_export, setup, teardown),
      cmocka_unit_test_setup_teardown(test_traceparent_in_jaeger, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
