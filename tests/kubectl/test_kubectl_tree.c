/*
 * test_kubectl_tree.c - the cascade tree of `kubectl ripple trace` from
 * hand-written answers of the trace server (docs/api.md) carrying spans as
 * ripple-webhook writes them (docs/webhook.md): a scale of a Deployment, its
 * ReplicaSet (a merged CPID), Pods, bindings, status writes and Endpoints
 * (another merge). Checked: the exact plain text (tree and per-hop table),
 * the JSON document, colours only when asked, several roots of one apply,
 * and answers that are not the documented shape.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kr.h"
#include "testutil.h"

#define X "11111111-1111-4111-8111-111111111111" /* the scale's root */
#define Y "22222222-2222-4222-8222-222222222222" /* the ReplicaSet's merge of X and W */
#define Z "33333333-3333-4333-8333-333333333333" /* the Endpoints' merge of Y and S */
#define W "99999999-9999-4999-8999-999999999999" /* an earlier change, not related */
#define S "88888888-8888-4888-8888-888888888888" /* the Service's root, not related */

static int64_t base_ns;

static json_t *time_at(double ms) {
  char buf[RIPPLE_TIME_STRLEN + 1];
  ripple_time_format(base_ns + (int64_t)(ms * 1e6), buf);
  return json_string(buf);
}

static json_t *span(const char *cpid, const char *id, const char *service, const char *name,
                    const char *kind, const char *oname, double start_ms, double end_ms) {
  json_t *s = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:{s:s, s:s, s:s, s:s, s:s, s:s}}", "cpid",
                        cpid, "span_id", id, "service", service, "name", name, "start",
                        time_at(start_ms), "end", time_at(end_ms), "attributes", "kind", kind,
                        "namespace", "demo", "name", oname, "uid", "", "user", service, "operation",
                        strncmp(name, "create", 6) ? "UPDATE" : "CREATE");
  assert_non_null(s);
  return s;
}

static void answers_scale(kr_answers_t *a) {
  assert_int_equal(ripple_time_parse("2026-11-22T00:00:00Z", 20, &base_ns), RIPPLE_OK);
  a->related = json_pack("{s:s, s:b, s:[sss]}", "cpid", X, "truncated", 0, "related", X, Y, Z);
  a->mergelogs =
      json_pack("{s:s, s:[{s:s, s:[]}, {s:s, s:[ss]}, {s:s, s:[ss]}]}", "cpid", X, "mergelogs",
                "cpid", X, "sources", "cpid", Y, "sources", W, X, "cpid", Z, "sources", Y, S);
  json_t *sp = json_array();
  /* Out of order on purpose (the server gives each CPID's most recent first),
   * and one span delivered twice. */
  json_array_append_new(sp, span(Z, "000000000000000b", "endpoint-controller", "update endpoints",
                                 "Endpoints", "web", 40, 50));
  json_array_append_new(sp, span(X, "0000000000000001", "kubernetes-admin", "update deployments",
                                 "Deployment", "web", 0, 1));
  json_array_append_new(sp, span(Y, "0000000000000005", "kube-scheduler", "create pods/binding",
                                 "Pod", "web-1-a", 3, 10));
  json_array_append_new(sp, span(Y, "0000000000000002", "deployment-controller",
                                 "update replicasets", "ReplicaSet", "web-1", 0, 3));
  json_array_append_new(
      sp, span(Y, "0000000000000003", "replicaset-controller", "create pods", "Pod", "", 3, 5));
  json_array_append_new(
      sp, span(Y, "0000000000000004", "replicaset-controller", "create pods", "Pod", "", 3, 6));
  json_array_append_new(
      sp, span(Y, "0000000000000006", "kwok", "update pods/status", "Pod", "web-1-a", 3, 20));
  json_array_append_new(
      sp, span(Y, "0000000000000006", "kwok", "update pods/status", "Pod", "web-1-a", 3, 20));
  json_array_append_new(
      sp, span(Y, "0000000000000007", "kwok", "update pods/status", "Pod", "web-1-b", 3, 22));
  json_array_append_new(sp, span(Y, "0000000000000008", "replicaset-controller",
                                 "update replicasets/status", "ReplicaSet", "web-1", 3, 25));
  json_array_append_new(sp, span(X, "0000000000000009", "deployment-controller",
                                 "update deployments/status", "Deployment", "web", 0, 30));
  json_array_append_new(sp, span(Z, "000000000000000a", "endpoint-controller", "update endpoints",
                                 "Endpoints", "web", 3, 40));
  a->spans = json_pack("{s:s, s:b, s:o}", "cpid", X, "truncated", 0, "spans", sp);
  assert_non_null(a->related);
  assert_non_null(a->mergelogs);
  assert_non_null(a->spans);
}

static char *render(const kr_trace_t *t, int colour) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  kr_render_tree(f, t, colour);
  kr_render_hops(f, t, colour);
  fclose(f);
  return text;
}

static void build(kr_trace_t *t) {
  kr_answers_t a = {0};
  answers_scale(&a);
  char err[256];
  assert_int_equal(kr_trace_build(&a, t, err, sizeof err), RIPPLE_OK);
  kr_answers_free(&a); /* the trace keeps what it needs */
}

static void test_tree_text(void **state) {
  (void)state;
  kr_trace_t t;
  build(&t);
  assert_int_equal(t.n, 11);
  char *text = render(&t, 0);
  const char *want =
      "cpid " X
      ": 11 writes, 3 CPIDs\n"
      "Deployment demo/web  kubernetes-admin  update deployments  +0.0ms\n"
      "├─ ReplicaSet demo/web-1  deployment-controller  update replicasets  +2.0ms  (3.0ms after "
      "cause)\n"
      "│  ├─ Pod demo/(generated)  replicaset-controller  create pods  +4.0ms  (2.0ms after "
      "cause)\n"
      "│  ├─ Pod demo/(generated)  replicaset-controller  create pods  +5.0ms  (3.0ms after "
      "cause)\n"
      "│  ├─ Pod demo/web-1-a  kube-scheduler  create pods/binding  +9.0ms  (7.0ms after cause)\n"
      "│  │  └─ Pod demo/web-1-a  kwok  update pods/status  +19.0ms  (17.0ms after cause)\n"
      "│  ├─ Pod demo/web-1-b  kwok  update pods/status  +21.0ms  (19.0ms after cause)\n"
      "│  ├─ ReplicaSet demo/web-1  replicaset-controller  update replicasets/status  +24.0ms  "
      "(22.0ms after cause)\n"
      "│  └─ Endpoints demo/web  endpoint-controller  update endpoints  +39.0ms  (37.0ms after "
      "cause)\n"
      "│     └─ Endpoints demo/web  endpoint-controller  update endpoints  +49.0ms  (10.0ms after "
      "cause)\n"
      "└─ Deployment demo/web  deployment-controller  update deployments/status  +29.0ms  "
      "(30.0ms after cause)\n"
      "\n"
      "component              write                      count        p50        max\n"
      "deployment-controller  update replicasets             1      3.0ms      3.0ms\n"
      "replicaset-controller  create pods                    2      2.0ms      3.0ms\n"
      "kube-scheduler         create pods/binding            1      7.0ms      7.0ms\n"
      "kwok                   update pods/status             2     17.0ms     19.0ms\n"
      "replicaset-controller  update replicasets/status      1     22.0ms     22.0ms\n"
      "deployment-controller  update deployments/status      1     30.0ms     30.0ms\n"
      "endpoint-controller    update endpoints               2     10.0ms     37.0ms\n";
  if (strcmp(text, want) != 0) fail_msg("got:\n%s\nwant:\n%s", text, want);
  assert_false(strchr(text, '\033'));
  free(text);
  kr_trace_free(&t);
}

/* The node whose span_id is id, anywhere under arr; NULL if none. */
static const json_t *find(const json_t *arr, const char *id, const json_t **parent) {
  size_t i;
  const json_t *n;
  json_array_foreach(arr, i, n) {
    if (!strcmp(json_string_value(json_object_get(n, "span_id")), id)) return n;
    const json_t *hit = find(json_object_get(n, "children"), id, parent);
    if (hit) {
      if (!*parent) *parent = n;
      return hit;
    }
  }
  return NULL;
}

static void test_tree_json(void **state) {
  (void)state;
  kr_trace_t t;
  build(&t);
  json_t *j = kr_trace_json(&t);
  kr_trace_free(&t);
  assert_non_null(j);
  assert_string_equal(json_string_value(json_object_get(j, "cpid")), X);
  assert_int_equal(json_integer_value(json_object_get(j, "writes")), 11);
  assert_int_equal(json_integer_value(json_object_get(j, "cpids")), 3);
  assert_true(json_is_false(json_object_get(j, "truncated")));
  assert_string_equal(json_string_value(json_object_get(j, "start")),
                      "2026-11-22T00:00:00.001000000Z");
  const json_t *tree = json_object_get(j, "tree");
  assert_int_equal(json_array_size(tree), 1);
  const json_t *root = json_array_get(tree, 0);
  assert_true(json_is_null(json_object_get(root, "cause")));
  assert_string_equal(json_string_value(json_object_get(root, "component")), "kubernetes-admin");
  assert_int_equal(json_array_size(json_object_get(root, "children")), 2);
  const json_t *parent = NULL;
  const json_t *st = find(tree, "0000000000000006", &parent);
  assert_non_null(st);
  /* Shown under the Pod's binding, caused by the ReplicaSet's update. */
  assert_string_equal(json_string_value(json_object_get(parent, "span_id")), "0000000000000005");
  assert_string_equal(json_string_value(json_object_get(st, "cause")), "0000000000000002");
  assert_string_equal(json_string_value(json_object_get(st, "kind")), "Pod");
  assert_string_equal(json_string_value(json_object_get(st, "name")), "web-1-a");
  assert_string_equal(json_string_value(json_object_get(st, "component")), "kwok");
  assert_string_equal(json_string_value(json_object_get(st, "write")), "update pods/status");
  assert_string_equal(json_string_value(json_object_get(st, "operation")), "UPDATE");
  assert_int_equal(json_integer_value(json_object_get(st, "at_ns")), 19000000);
  assert_int_equal(json_integer_value(json_object_get(st, "since_cause_ns")), 17000000);
  assert_string_equal(json_string_value(json_object_get(st, "end")),
                      "2026-11-22T00:00:00.020000000Z");
  const json_t *hops = json_object_get(j, "hops");
  assert_int_equal(json_array_size(hops), 7);
  const json_t *ep = json_array_get(hops, 6);
  assert_string_equal(json_string_value(json_object_get(ep, "component")), "endpoint-controller");
  assert_int_equal(json_integer_value(json_object_get(ep, "count")), 2);
  assert_int_equal(json_integer_value(json_object_get(ep, "p50_ns")), 10000000);
  assert_int_equal(json_integer_value(json_object_get(ep, "max_ns")), 37000000);
  json_decref(j);
}

static void test_tree_colour(void **state) {
  (void)state;
  kr_trace_t t;
  build(&t);
  char *text = render(&t, 1);
  assert_non_null(strstr(text, "\033[36mkubernetes-admin\033[0m"));
  assert_non_null(strstr(text, "\033[1mDeployment demo/web\033[0m"));
  free(text);
  kr_trace_free(&t);
  setenv("NO_COLOR", "1", 1);
  assert_false(kr_want_colour(1));
  unsetenv("NO_COLOR");
}

/* One apply of a Service and a Deployment: one root CPID, two people's
 * writes, both roots of the tree; the Deployment's own status write goes
 * under the Deployment, the ReplicaSet under the change's first write. */
static void test_tree_apply_roots(void **state) {
  (void)state;
  assert_int_equal(ripple_time_parse("2026-11-22T00:00:00Z", 20, &base_ns), RIPPLE_OK);
  kr_answers_t a = {0};
  a.related = json_pack("{s:s, s:[s]}", "cpid", X, "related", X);
  a.mergelogs = json_pack("{s:[{s:s, s:[]}]}", "mergelogs", "cpid", X, "sources");
  a.spans = json_pack(
      "{s:[oooo]}", "spans",
      span(X, "00000000000000a1", "kubernetes-admin", "create services", "Service", "web", 0, 1),
      span(X, "00000000000000a2", "kubernetes-admin", "create deployments", "Deployment", "web", 2,
           3),
      span(X, "00000000000000a3", "deployment-controller", "create replicasets", "ReplicaSet",
           "web-1", 0, 5),
      span(X, "00000000000000a4", "deployment-controller", "update deployments/status",
           "Deployment", "web", 0, 6));
  kr_trace_t t;
  char err[256];
  assert_int_equal(kr_trace_build(&a, &t, err, sizeof err), RIPPLE_OK);
  kr_answers_free(&a);
  char *text = render(&t, 0);
  const char *want =
      "cpid " X
      ": 4 writes, 1 CPID\n"
      "Service demo/web  kubernetes-admin  create services  +0.0ms\n"
      "└─ ReplicaSet demo/web-1  deployment-controller  create replicasets  +4.0ms  (5.0ms after "
      "cause)\n"
      "Deployment demo/web  kubernetes-admin  create deployments  +2.0ms\n"
      "└─ Deployment demo/web  deployment-controller  update deployments/status  +5.0ms  (6.0ms "
      "after cause)\n";
  if (strncmp(text, want, strlen(want)) != 0) fail_msg("got:\n%s\nwant:\n%s", text, want);
  free(text);
  kr_trace_free(&t);
}

static void expect_bad(const char *related, const char *mergelogs, const char *spans) {
  kr_answers_t a = {json_loads(related, 0, NULL), json_loads(mergelogs, 0, NULL),
                    json_loads(spans, 0, NULL), NULL, NULL};
  kr_trace_t t;
  char err[256] = "";
  assert_int_equal(kr_trace_build(&a, &t, err, sizeof err), RIPPLE_EJSON);
  assert_non_null(strstr(err, "not the documented shape"));
  kr_answers_free(&a);
}

static void test_tree_bad_answers(void **state) {
  (void)state;
  const char *rel = "{\"cpid\":\"" X "\",\"related\":[\"" X "\"]}";
  expect_bad("{\"related\":[]}", "{\"mergelogs\":[]}", "{\"spans\":[]}");
  expect_bad("{\"cpid\":\"" X "\",\"related\":[1]}", "{\"mergelogs\":[]}", "{\"spans\":[]}");
  expect_bad(rel, "{}", "{\"spans\":[]}");
  expect_bad(rel, "{\"mergelogs\":[]}", "[]");
  /* Records that are not spans are skipped; the rest is a tree. */
  kr_answers_t a = {json_loads(rel, 0, NULL), json_loads("{\"mergelogs\":[]}", 0, NULL),
                    json_loads("{\"spans\":[{\"cpid\":\"" X "\"}, 7, {\"cpid\":\"" X
                               "\",\"span_id\":\"01\",\"service\":\"a\",\"name\":\"n\","
                               "\"start\":\"nope\",\"end\":\"2026-11-22T00:00:00Z\"}]}",
                               0, NULL),
                    NULL, NULL};
  kr_trace_t t;
  char err[256];
  assert_int_equal(kr_trace_build(&a, &t, err, sizeof err), RIPPLE_OK);
  assert_int_equal(t.n, 0);
  char *text = render(&t, 0);
  assert_string_equal(text, "cpid " X
                            ": 0 writes, 1 CPID\n"
                            "no spans yet (the webhook ships them within a second)\n");
  free(text);
  kr_trace_free(&t);
  kr_answers_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tree_text),        cmocka_unit_test(test_tree_json),
      cmocka_unit_test(test_tree_colour),      cmocka_unit_test(test_tree_apply_roots),
      cmocka_unit_test(test_tree_bad_answers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
