/*
 * test_kubectl_why.c - `kubectl ripple why` and the stalls of `kubectl
 * ripple trace`, from hand-written answers of the trace server (docs/api.md:
 * related, mergelogs, spans, details, stalls) as ripple-webhook, the watch
 * agent and the API server's audit make them. A scale of a Deployment, its
 * ReplicaSet (a CPID merged from the scale), a Pod created by generateName,
 * its binding and status writes, the last of them refused. Checked: the
 * chain from a Pod's latest write back to the person's change (through the
 * binding, not the Pod's nameless create), the times of each hop, the diffs
 * (values as JSON, cut, redacted), a refusal, a create's fields, the notes
 * for missing details, the JSON document, which roots are traced, and the
 * stalls as text and JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kr.h"
#include "testutil.h"

#define X "11111111-1111-4111-8111-111111111111" /* the scale's root */
#define Y "22222222-2222-4222-8222-222222222222" /* the ReplicaSet's merge of X */
#define C "33333333-3333-4333-8333-333333333333" /* a create's root */
#define DEP_UID "d0000000-0000-4000-8000-000000000001"
#define RS_UID "d0000000-0000-4000-8000-000000000002"
#define POD_UID "d0000000-0000-4000-8000-000000000003"
#define DC "system:serviceaccount:kube-system:deployment-controller"

static int64_t base_ns;

static json_t *time_at(double ms) {
  char buf[RIPPLE_TIME_STRLEN + 1];
  ripple_time_format(base_ns + (int64_t)(ms * 1e6), buf);
  return json_string(buf);
}

typedef struct sp {
  const char *cpid, *id, *service, *user, *name, *kind, *oname, *uid;
  double start, end;
} sp_t;

static json_t *span(const sp_t *s) {
  json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:{s:s, s:s, s:s, s:s, s:s, s:s}}", "cpid",
                        s->cpid, "span_id", s->id, "service", s->service, "name", s->name, "start",
                        time_at(s->start), "end", time_at(s->end), "attributes", "kind", s->kind,
                        "namespace", "demo", "name", s->oname, "uid", s->uid, "user", s->user,
                        "operation", strncmp(s->name, "create", 6) ? "UPDATE" : "CREATE");
  assert_non_null(j);
  return j;
}

static const sp_t scale_spans[] = {
    {X, "0000000000000001", "kubernetes-admin", "kubernetes-admin", "update deployments",
     "Deployment", "web", DEP_UID, 0, 1},
    {Y, "0000000000000002", "deployment-controller", DC, "update replicasets", "ReplicaSet",
     "web-1", RS_UID, 1, 3},
    {Y, "0000000000000003", "replicaset-controller",
     "system:serviceaccount:kube-system:replicaset-controller", "create pods", "Pod", "", "", 3, 5},
    {Y, "0000000000000004", "kube-scheduler", "system:kube-scheduler", "create pods/binding", "Pod",
     "web-1-a", POD_UID, 3, 10},
    {Y, "0000000000000005", "kwok", "system:node:kwok-node-0", "update pods/status", "Pod",
     "web-1-a", POD_UID, 3, 20},
    {Y, "0000000000000006", "kwok", "system:node:kwok-node-0", "update pods/status", "Pod",
     "web-1-a", POD_UID, 3, 22},
    {X, "0000000000000007", "deployment-controller", DC, "update deployments/status", "Deployment",
     "web", DEP_UID, 1, 30},
    /* An earlier Pod of the same name (another uid): not the object asked about. */
    {Y, "0000000000000008", "kwok", "system:node:kwok-node-0", "update pods/status", "Pod",
     "web-1-a", "d0000000-0000-4000-8000-0000000000ff", 3, 40},
};

static const char *details_scale =
    "{\"cpid\":\"" X
    "\",\"truncated\":false,\"writes\":["
    "{\"span_id\":\"0000000000000001\",\"change\":{\"type\":\"change\",\"op\":\"update\","
    " \"diff\":[{\"path\":\"/spec/replicas\",\"old\":2,\"new\":3},"
    "  {\"path\":\"/spec/template/spec/containers/0/env/0/value\",\"redacted\":true},"
    "  {\"path\":\"/spec/template/metadata/annotations/note\",\"old\":null,"
    "   \"new\":\"0123456789012345678901234567890123456789012345678901234567890123456789"
    "0123456789-cut-here\"}]},"
    " \"audit\":{\"type\":\"audit\",\"code\":200,\"user\":\"kubernetes-admin\"}},"
    "{\"span_id\":\"0000000000000002\",\"change\":{\"op\":\"update\",\"diff\":["
    "  {\"path\":\"/spec/replicas\",\"old\":2,\"new\":3},"
    "  {\"path\":\"/metadata/annotations/deployment.kubernetes.io~1desired-replicas\","
    "   \"old\":\"2\",\"new\":\"3\"}]},\"audit\":null},"
    "{\"span_id\":\"0000000000000004\",\"change\":{\"op\":\"update\",\"diff\":["
    "  {\"path\":\"/spec/nodeName\",\"new\":\"kwok-node-0\"}]}},"
    "{\"span_id\":\"0000000000000005\",\"change\":{\"op\":\"update\",\"diff\":["
    "  {\"path\":\"/status/phase\",\"old\":\"Pending\",\"new\":\"Running\"}]}},"
    "{\"span_id\":\"0000000000000006\",\"change\":null,\"audit\":{\"type\":\"audit\","
    " \"code\":409,\"status\":\"Failure\",\"reason\":\"Conflict\",\"message\":"
    " \"Operation cannot be fulfilled on pods \\\"web-1-a\\\": the object has been modified"
    "\\u001b[2J\"}}],"
    "\"changes\":[],\"events\":[],\"audit\":[]}";

static void answers(kr_answers_t *a, const sp_t *spans, size_t n, const char *root,
                    const char *details) {
  assert_int_equal(ripple_time_parse("2026-11-22T00:00:00Z", 20, &base_ns), RIPPLE_OK);
  memset(a, 0, sizeof *a);
  if (!strcmp(root, X)) {
    a->related = json_pack("{s:s, s:b, s:[ss]}", "cpid", X, "truncated", 0, "related", X, Y);
    a->mergelogs = json_pack("{s:[{s:s, s:[]}, {s:s, s:[s]}]}", "mergelogs", "cpid", X, "sources",
                             "cpid", Y, "sources", X);
  } else {
    a->related = json_pack("{s:s, s:[s]}", "cpid", root, "related", root);
    a->mergelogs = json_pack("{s:[{s:s, s:[]}]}", "mergelogs", "cpid", root, "sources");
  }
  json_t *arr = json_array();
  for (size_t i = n; i-- > 0;) json_array_append_new(arr, span(&spans[i]));
  a->spans = json_pack("{s:s, s:o}", "cpid", root, "spans", arr);
  if (details) a->details = json_loads(details, 0, NULL);
  assert_non_null(a->related);
  assert_non_null(a->mergelogs);
  assert_non_null(a->spans);
  assert_true(!details || a->details);
}

static void build(kr_trace_t *t, const char *details) {
  kr_answers_t a;
  answers(&a, scale_spans, sizeof scale_spans / sizeof *scale_spans, X, details);
  char err[256];
  if (kr_trace_build(&a, t, err, sizeof err) != RIPPLE_OK) fail_msg("build: %s", err);
  kr_answers_free(&a);
}

static const kr_why_target_t pod = {"Pod", "demo", "web-1-a", POD_UID, Y};

static char *render_why(const kr_trace_t *t, const kr_why_target_t *o, int colour) {
  kr_why_t w;
  assert_int_equal(kr_why_chain(t, o, &w), RIPPLE_OK);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  kr_render_why(f, &w, colour);
  fclose(f);
  kr_why_free(&w);
  return text;
}

static void expect_text(const char *got, const char *want) {
  if (strcmp(got, want) != 0) fail_msg("got:\n%s\nwant:\n%s", got, want);
}

/* The Pod's latest write is its refused status write; its chain goes through
 * the binding (the first write of the Pod under the ReplicaSet's update), not
 * the nameless create, to the person's scale. */
static void test_why_chain(void **state) {
  (void)state;
  kr_trace_t t;
  build(&t, details_scale);
  kr_why_t w;
  assert_int_equal(kr_why_chain(&t, &pod, &w), RIPPLE_OK);
  assert_int_equal(w.n, 4);
  const char *want[] = {"0000000000000001", "0000000000000002", "0000000000000004",
                        "0000000000000006"};
  for (size_t k = 0; k < 4; k++) assert_string_equal(t.spans[w.hops[k]].span_id, want[k]);
  kr_why_free(&w);
  /* A name and no uid matches a create; another uid does not match. */
  kr_why_target_t other = {"Pod", "demo", "web-1-a", "d0000000-0000-4000-8000-0000000000ff", NULL};
  assert_string_equal(t.spans[kr_why_latest(&t, &other)].span_id, "0000000000000008");
  kr_why_target_t gone = {"Pod", "demo", "web-1-z", "d0000000-0000-4000-8000-0000000000aa", NULL};
  assert_int_equal(kr_why_latest(&t, &gone), -1);
  assert_int_equal(kr_why_chain(&t, &gone, &w), RIPPLE_ENOENT);
  kr_trace_free(&t);
}

static void test_why_text(void **state) {
  (void)state;
  kr_trace_t t;
  build(&t, details_scale);
  char *text = render_why(&t, &pod, 0);
  expect_text(
      text,
      "Pod demo/web-1-a: 4 writes since the root change, cpid " X
      "\n"
      " +0.0ms            kubernetes-admin  update deployments  Deployment demo/web\n"
      "                     /spec/replicas: 2 -> 3\n"
      "                     /spec/template/spec/containers/0/env/0/value: (redacted)\n"
      "                     /spec/template/metadata/annotations/note: null -> "
      "\"0123456789012345678901234567890123456789012345678901234567890123456789012345678…\n"
      " +2.0ms   (2.0ms)  deployment-controller (" DC
      ")  update replicasets  ReplicaSet demo/web-1\n"
      "                     /spec/replicas: 2 -> 3\n"
      "                     /metadata/annotations/deployment.kubernetes.io~1desired-replicas: "
      "\"2\" -> \"3\"\n"
      " +9.0ms   (7.0ms)  kube-scheduler (system:kube-scheduler)  create pods/binding  Pod "
      "demo/web-1-a\n"
      "                     /spec/nodeName: (none) -> \"kwok-node-0\"\n"
      "+21.0ms  (12.0ms)  kwok (system:node:kwok-node-0)  update pods/status  Pod demo/web-1-a\n"
      "                     refused: 409 Conflict: Operation cannot be fulfilled on pods "
      "\"web-1-a\": the object has been modified?[2J\n");
  free(text);
  /* The Deployment's status write, under the person's write of it. */
  kr_why_target_t dep = {"Deployment", "demo", "web", DEP_UID, X};
  text = render_why(&t, &dep, 0);
  assert_non_null(strstr(text, "Deployment demo/web: 2 writes since the root change"));
  assert_non_null(strstr(text, "+29.0ms  (29.0ms)  deployment-controller (" DC
                               ")  update deployments/status  Deployment demo/web\n"));
  /* No details for the status write: said once, at the end. */
  assert_non_null(strstr(text, "\n(no details: is ripple watch running with --trace-server?)\n"));
  free(text);
  text = render_why(&t, &pod, 1);
  assert_non_null(strstr(text, "\033[31mrefused: 409 Conflict"));
  assert_non_null(strstr(text, "\033[36mkube-scheduler\033[0m"));
  free(text);
  kr_trace_free(&t);
}

/* Details missing for some hops, or not served at all. */
static void test_why_missing_details(void **state) {
  (void)state;
  kr_trace_t t;
  build(&t,
        "{\"writes\":[{\"span_id\":\"0000000000000001\",\"change\":{\"op\":\"update\","
        "\"diff\":[]}}]}");
  char *text = render_why(&t, &pod, 0);
  assert_non_null(strstr(text, "Deployment demo/web\n                     no field changed\n"));
  const char *note = "(no details: is ripple watch running with --trace-server?)\n";
  const char *at = strstr(text, note);
  assert_non_null(at);
  assert_string_equal(at, note); /* last, once */
  free(text);
  kr_trace_free(&t);
  build(&t, NULL);
  text = render_why(&t, &pod, 0);
  assert_non_null(strstr(text, "(no details: the trace server does not serve them"));
  assert_null(strstr(text, "ripple watch"));
  free(text);
  kr_trace_free(&t);
  /* A details answer of another shape is refused like the others. */
  kr_answers_t a;
  answers(&a, scale_spans, 2, X, "{\"writes\":{}}");
  char err[256];
  assert_int_equal(kr_trace_build(&a, &t, err, sizeof err), RIPPLE_EJSON);
  assert_non_null(strstr(err, "details needs writes[]"));
  kr_answers_free(&a);
}

/* A create: "created" and a few fields of its spec. */
static void test_why_created(void **state) {
  (void)state;
  static const sp_t spans[] = {
      {C, "00000000000000c1", "kubernetes-admin", "kubernetes-admin", "create deployments",
       "Deployment", "web", "", 0, 1},
      {C, "00000000000000c2", "deployment-controller", DC, "create replicasets", "ReplicaSet",
       "web-1", "", 1, 4},
  };
  kr_answers_t a;
  answers(&a, spans, 2, C,
          "{\"writes\":[{\"span_id\":\"00000000000000c2\",\"change\":{\"op\":\"create\","
          "\"snapshot\":{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{},"
          "\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":{\"app\":\"web\"}},"
          "\"minReadySeconds\":0,\"revisionHistoryLimit\":10,\"template\":{}}}}},"
          "{\"span_id\":\"00000000000000c1\",\"change\":{\"op\":\"create\",\"snapshot\":"
          "{\"kind\":\"ConfigMap\",\"metadata\":{},\"data\":{\"a\":\"b\"}},\"truncated\":true}}]}");
  kr_trace_t t;
  char err[256];
  assert_int_equal(kr_trace_build(&a, &t, err, sizeof err), RIPPLE_OK);
  kr_answers_free(&a);
  kr_why_target_t rs = {"ReplicaSet", "demo", "web-1", RS_UID, C};
  char *text = render_why(&t, &rs, 0);
  expect_text(text, "ReplicaSet demo/web-1: 2 writes since the root change, cpid " C
                    "\n"
                    "+0.0ms           kubernetes-admin  create deployments  Deployment demo/web\n"
                    "                   created\n"
                    "                   data: {\"a\":\"b\"}\n"
                    "                   … (the watch agent cut this change to its size limit)\n"
                    "+3.0ms  (3.0ms)  deployment-controller (" DC
                    ")  create replicasets  ReplicaSet demo/web-1\n"
                    "                   created\n"
                    "                   spec.replicas: 3\n"
                    "                   spec.selector: {\"matchLabels\":{\"app\":\"web\"}}\n"
                    "                   spec.minReadySeconds: 0\n"
                    "                   spec.revisionHistoryLimit: 10\n"
                    "                   … 1 more field\n");
  free(text);
  kr_trace_free(&t);
}

static void test_why_json(void **state) {
  (void)state;
  kr_trace_t t;
  build(&t, details_scale);
  kr_why_t w;
  assert_int_equal(kr_why_chain(&t, &pod, &w), RIPPLE_OK);
  json_t *j = kr_why_json(&w);
  kr_why_free(&w);
  kr_trace_free(&t); /* the document holds copies */
  assert_non_null(j);
  assert_string_equal(json_string_value(json_object_get(j, "root")), X);
  assert_true(json_is_true(json_object_get(j, "details")));
  const json_t *o = json_object_get(j, "object");
  assert_string_equal(json_string_value(json_object_get(o, "kind")), "Pod");
  assert_string_equal(json_string_value(json_object_get(o, "uid")), POD_UID);
  assert_string_equal(json_string_value(json_object_get(o, "cpid")), Y);
  const json_t *hops = json_object_get(j, "hops");
  assert_int_equal(json_array_size(hops), 4);
  const json_t *h0 = json_array_get(hops, 0), *h2 = json_array_get(hops, 2),
               *h3 = json_array_get(hops, 3);
  assert_true(json_is_null(json_object_get(h0, "hop_ns")));
  assert_true(json_is_null(json_object_get(h0, "cause")));
  assert_int_equal(json_integer_value(json_object_get(h0, "at_ns")), 0);
  assert_string_equal(json_string_value(json_object_get(h2, "write")), "create pods/binding");
  assert_string_equal(json_string_value(json_object_get(h2, "user")), "system:kube-scheduler");
  assert_int_equal(json_integer_value(json_object_get(h2, "at_ns")), 9000000);
  assert_int_equal(json_integer_value(json_object_get(h2, "hop_ns")), 7000000);
  assert_int_equal(json_integer_value(json_object_get(h2, "since_cause_ns")), 7000000);
  assert_string_equal(json_string_value(json_object_get(h2, "cause")), "0000000000000002");
  const json_t *diff = json_object_get(json_object_get(h2, "change"), "diff");
  assert_string_equal(json_string_value(json_object_get(json_array_get(diff, 0), "path")),
                      "/spec/nodeName");
  assert_true(json_is_null(json_object_get(h2, "audit")));
  assert_int_equal(json_integer_value(json_object_get(h3, "hop_ns")), 12000000);
  assert_true(json_is_null(json_object_get(h3, "change")));
  assert_int_equal(json_integer_value(json_object_get(json_object_get(h3, "audit"), "code")), 409);
  json_decref(j);
}

/* The roots traced: the origins of the object's CPID and its newest root,
 * canonical, each once; junk skipped. */
static void test_why_roots(void **state) {
  (void)state;
  char out[8][RIPPLE_CPID_STRLEN + 1];
  json_t *origins = json_pack("{s:s, s:[sssi]}", "cpid", Y, "origins", X, "nope", C, 7);
  json_t *roots = json_pack("{s:[{s:s}]}", "roots", "cpid", "33333333-3333-4333-8333-333333333333");
  assert_int_equal(kr_why_roots(origins, roots, out, 8), 2);
  assert_string_equal(out[0], X);
  assert_string_equal(out[1], C);
  json_decref(roots);
  roots = json_pack("{s:[{s:s}]}", "roots", "cpid", "AAAAAAAA-AAAA-4AAA-8AAA-AAAAAAAAAAAA");
  assert_int_equal(kr_why_roots(NULL, roots, out, 8), 1);
  assert_string_equal(out[0], "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa");
  assert_int_equal(kr_why_roots(origins, roots, out, 1), 1);
  assert_int_equal(kr_why_roots(NULL, NULL, out, 8), 0);
  json_decref(origins);
  json_decref(roots);
}

/* ---- stalls ----------------------------------------------------------------------- */

static const char *stalls_answer =
    "{\"enabled\":true,\"stalls\":["
    "{\"cpid\":\"" Y
    "\",\"span_id\":\"0000000000000003\",\"service\":\"replicaset-controller\","
    " \"name\":\"create pods\",\"object\":{\"kind\":\"Pod\",\"namespace\":\"demo\","
    " \"name\":\"web-1-c\",\"owner\":\"ReplicaSet/web-1\"},"
    " \"expect\":{\"service\":\"kube-scheduler\",\"name\":\"create pods/binding\"},"
    " \"waiting_seconds\":41.2,\"p99_seconds\":0.35,\"samples\":24,\"share\":1.0,"
    " \"events\":[{\"type\":\"event\",\"reason\":\"FailedScheduling\",\"eventType\":\"Warning\","
    "  \"message\":\"0/3 nodes are available: 3 Insufficient cpu.\"}]},"
    "{\"cpid\":\"" Y
    "\",\"span_id\":\"0000000000000002\",\"service\":\"deployment-controller\","
    " \"name\":\"update replicasets\",\"object\":{\"kind\":\"ReplicaSet\",\"name\":\"web-1\"},"
    " \"expect\":null,\"waiting_seconds\":75,\"p99_seconds\":1.5,\"events\":[]}]}";

static char *render_trace(const kr_trace_t *t, int colour) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  kr_render_tree(f, t, colour);
  kr_render_stalls(f, t, colour);
  fclose(f);
  return text;
}

static void build_stalls(kr_trace_t *t, const char *stalls, const char *details) {
  kr_answers_t a;
  answers(&a, scale_spans, 2, X, details);
  a.stalls = json_loads(stalls, 0, NULL);
  assert_non_null(a.stalls);
  char err[256];
  if (kr_trace_build(&a, t, err, sizeof err) != RIPPLE_OK) fail_msg("build: %s", err);
  kr_answers_free(&a);
}

static void test_stalls_text(void **state) {
  (void)state;
  kr_trace_t t;
  build_stalls(&t, stalls_answer, details_scale);
  char *text = render_trace(&t, 0);
  expect_text(
      text,
      "cpid " X
      ": 2 writes, 2 CPIDs\n"
      "Deployment demo/web  kubernetes-admin  update deployments  +0.0ms  3 fields\n"
      "└─ ReplicaSet demo/web-1  deployment-controller  update replicasets  +2.0ms  (2.0ms after "
      "cause)  2 fields\n"
      "\n"
      "STALLED replicaset-controller create pods Pod/web-1-c for 41.20s, expected kube-scheduler "
      "create pods/binding (usually within 350.0ms)\n"
      "    FailedScheduling: 0/3 nodes are available: 3 Insufficient cpu.\n"
      "STALLED deployment-controller update replicasets ReplicaSet/web-1 for 1m15s, expected any "
      "next hop (usually within 1.50s)\n");
  free(text);
  text = render_trace(&t, 1);
  assert_non_null(strstr(text, "\033[31mSTALLED replicaset-controller create pods"));
  free(text);
  kr_trace_free(&t);
  /* A refused write in the tree. */
  build(&t, details_scale);
  text = render_trace(&t, 0);
  assert_non_null(strstr(text, "update pods/status  +21.0ms  (19.0ms after cause)  refused 409\n"));
  free(text);
  kr_trace_free(&t);
}

static void test_stalls_json(void **state) {
  (void)state;
  kr_trace_t t;
  build_stalls(&t, stalls_answer, NULL);
  json_t *j = kr_trace_json(&t);
  json_t *want = json_loads(stalls_answer, 0, NULL);
  assert_true(json_equal(json_object_get(j, "stalls"), json_object_get(want, "stalls")));
  json_decref(want);
  json_decref(j);
  kr_trace_free(&t);
  /* Not known (an older server): null, and no section. */
  build(&t, NULL);
  j = kr_trace_json(&t);
  assert_true(json_is_null(json_object_get(j, "stalls")));
  json_decref(j);
  char *text = render_trace(&t, 0);
  assert_null(strstr(text, "STALLED"));
  free(text);
  kr_trace_free(&t);
  /* The detector off: none. */
  build_stalls(&t, "{\"enabled\":false}", NULL);
  j = kr_trace_json(&t);
  assert_int_equal(json_array_size(json_object_get(j, "stalls")), 0);
  assert_true(json_is_array(json_object_get(j, "stalls")));
  json_decref(j);
  kr_trace_free(&t);
  /* Another shape is refused; entries of another shape are shown as far as they go. */
  kr_answers_t a;
  answers(&a, scale_spans, 2, X, NULL);
  a.stalls = json_pack("{s:b, s:{}}", "enabled", 1, "stalls");
  char err[256];
  assert_int_equal(kr_trace_build(&a, &t, err, sizeof err), RIPPLE_EJSON);
  assert_non_null(strstr(err, "stalls needs stalls[]"));
  kr_answers_free(&a);
  build_stalls(&t, "{\"stalls\":[7, {\"expect\":3, \"waiting_seconds\":-1, \"events\":[1]}]}",
               NULL);
  text = render_trace(&t, 0);
  assert_non_null(strstr(text, "\nSTALLED ? ? ?/?, expected any next hop\n"));
  free(text);
  kr_trace_free(&t);
}

/* ---- why's fields and fights (whyfields.c) ------------------------------------------ */

#define MF                                                                                        \
  "{\"metadata\":{\"name\":\"web\",\"managedFields\":["                                           \
  "{\"manager\":\"kubectl-create\",\"operation\":\"Update\",\"time\":\"2026-11-25T10:00:00Z\","   \
  "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{\".\":{},"             \
  "\"f:app\":{}}},\"f:spec\":{\"f:template\":{\"f:spec\":{\"f:containers\":{"                     \
  "\"k:{\\\"name\\\":\\\"web\\\"}\":{\".\":{},\"f:image\":{},\"f:name\":{}}}}}}}},"               \
  "{\"manager\":\"hpa-like\",\"operation\":\"Update\",\"time\":\"2026-11-25T10:00:09Z\","         \
  "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{\"f:replicas\":{}}}},"                   \
  "{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\",\"subresource\":\"status\"," \
  "\"fieldsV1\":{\"f:status\":{\"f:replicas\":{}}}},"                                             \
  "{\"manager\":42,\"fieldsV1\":[\"not\",\"a\",\"tree\"]}]}}"

#define SRV                                                                                  \
  "{\"enabled\":true,\"fights\":[{\"object\":{\"kind\":\"Deployment\",\"uid\":\"u\"},"       \
  "\"path\":\"/spec/replicas\",\"managers\":[{\"writer\":\"kubernetes-admin\"},{\"writer\":" \
  "\"hpa-like\"}],\"reversals\":2,\"first\":\"2026-11-25T10:00:01Z\",\"last\":"              \
  "\"2026-11-25T10:00:09Z\",\"writes\":[{\"writer\":\"kubernetes-admin\",\"cpid\":\"" X      \
  "\",\"time\":\"2026-11-25T10:00:01Z\"},{\"writer\":\"hpa-like\",\"cpid\":\"" Y             \
  "\",\"time\":\"2026-11-25T10:00:09Z\"}]}],\"fields\":[{\"path\":\"/spec/replicas\","       \
  "\"writer\":\"hpa-like\",\"cpid\":\"" Y                                                    \
  "\",\"time\":\"2026-11-25T10:00:09Z\"},"                                                   \
  "{\"path\":\"/spec/template/spec/containers/0/image\",\"writer\":\"x\",\"cpid\":\"" C "\"}]}"

static const json_t *field_of(const json_t *fields, const char *name) {
  size_t i;
  const json_t *e;
  json_array_foreach(fields, i, e) {
    if (!strcmp(json_string_value(json_object_get(e, "field")), name)) return e;
  }
  fail_msg("no field %s", name);
  return NULL;
}

static void has(const char *text, const char *want) {
  if (!strstr(text, want)) fail_msg("got:\n%s\nwithout:\n%s", text, want);
}

static void test_why_fields(void **state) {
  (void)state;
  json_t *obj = json_loads(MF, 0, NULL), *srv = json_loads(SRV, 0, NULL);
  assert_non_null(obj);
  assert_non_null(srv);
  json_t *wf = kr_why_fields(obj, srv);
  const json_t *fields = json_object_get(wf, "fields");
  assert_int_equal(json_array_size(fields), 5);
  const json_t *r = field_of(fields, "spec.replicas");
  assert_string_equal(json_string_value(json_object_get(
                          json_array_get(json_object_get(r, "managers"), 0), "manager")),
                      "hpa-like");
  assert_string_equal(json_string_value(json_object_get(json_object_get(r, "set_by"), "cpid")), Y);
  assert_true(json_is_null(json_object_get(field_of(fields, "metadata.labels.app"), "set_by")));
  field_of(fields, "spec.template.spec.containers[name=web].image");
  field_of(fields, "spec.template.spec.containers[name=web].name");
  field_of(fields, "status.replicas");
  assert_int_equal(json_array_size(json_object_get(wf, "fights")), 1);

  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  kr_render_why_fields(f, wf, 0);
  fclose(f);
  has(text, "  spec.replicas                           hpa-like                    cpid " Y
            " (hpa-like, 10:00:09)\n");
  has(text, "  status.replicas                         kube-controller-manager (status)\n");
  has(text,
      "Fights (two writers setting a field back and forth):\n"
      "  /spec/replicas: kubernetes-admin <-> hpa-like, 2 reversals, 10:00:01 .. 10:00:09\n"
      "    10:00:01  kubernetes-admin  cpid " X
      "\n"
      "    10:00:09  hpa-like  cpid " Y "\n");
  free(text);
  json_decref(wf);

  /* No server answer, no managedFields: nothing is said. */
  json_t *bare = json_pack("{s:{s:s}}", "metadata", "name", "web");
  wf = kr_why_fields(bare, NULL);
  text = NULL;
  f = open_memstream(&text, &len);
  kr_render_why_fields(f, wf, 0);
  fclose(f);
  assert_string_equal(text, "");
  free(text);
  json_decref(wf);
  json_decref(bare);
  json_decref(obj);
  json_decref(srv);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_why_chain),
      cmocka_unit_test(test_why_text),
      cmocka_unit_test(test_why_missing_details),
      cmocka_unit_test(test_why_created),
      cmocka_unit_test(test_why_json),
      cmocka_unit_test(test_why_roots),
      cmocka_unit_test(test_stalls_text),
      cmocka_unit_test(test_stalls_json),
      cmocka_unit_test(test_why_fields),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
