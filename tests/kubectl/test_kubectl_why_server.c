/*
 * test_kubectl_why_server.c - `kubectl ripple why` against the real
 * ripple-server (on a free loopback port, over a temporary database, given
 * mergelogs, spans and the watch agent's changes by HTTP), from objects as
 * the API server gives them: no cluster needed (the object is read by the
 * plugin's Kubernetes client, which the lab test covers). Checked: a Pod's
 * chain from its CPID's origin (through its binding to its status write)
 * with the server's diffs joined where the server joins them; a Deployment
 * whose annotation names its creation but whose latest change is the newest
 * root indexed for its uid; and the errors: no ripple context, a CPID the
 * server does not know, a server that cannot be reached.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "http_client.h"
#include "kr.h"
#include "testutil.h"

#define C0 "c0c0c0c0-0000-4000-8000-000000000000" /* the Deployment's creation */
#define X "11111111-1111-4111-8111-111111111111"  /* a scale of it */
#define Y "22222222-2222-4222-8222-222222222222"  /* the ReplicaSet's, merged from X */
#define U "99999999-9999-4999-8999-999999999999"  /* a CPID nobody sent */
#define DEP_UID "d0000000-0000-4000-8000-000000000001"
#define RS_UID "d0000000-0000-4000-8000-000000000002"
#define POD_UID "d0000000-0000-4000-8000-000000000003"
#define T(ms) "2026-11-22T00:00:" ms "Z"

typedef struct rig {
  char dir[64], base[64];
  pid_t pid;
} rig_t;

/* ripple-server on a free port (test_server_start), without the dashboard. */
static void server_start(rig_t *r) {
  static const char *const more[] = {"--no-web", NULL};
  r->pid = test_server_start(r->dir, more, r->base, sizeof r->base);
}

static void post(const rig_t *r, const char *path, const char *body) {
  if (!hc_post_ok(r->base, path, body)) fail_msg("POST %s was not accepted", path);
}

static const char *span_json(const char *cpid, const char *id, const char *service,
                             const char *name, const char *kind, const char *oname, const char *uid,
                             const char *rv, const char *start, const char *end) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "{\"cpid\":\"%s\",\"span_id\":\"%s\",\"service\":\"%s\",\"name\":\"%s\","
           "\"start\":\"%s\",\"end\":\"%s\",\"attributes\":{\"kind\":\"%s\",\"namespace\":"
           "\"demo\",\"name\":\"%s\",\"uid\":\"%s\",\"resourceVersion\":\"%s\",\"user\":\"%s\","
           "\"operation\":\"%s\"}}",
           cpid, id, service, name, start, end, kind, oname, uid, rv, service,
           strncmp(name, "create", 6) ? "UPDATE" : "CREATE");
  return buf;
}

static void post_span(const rig_t *r, const char *cpid, const char *id, const char *service,
                      const char *name, const char *kind, const char *oname, const char *uid,
                      const char *rv, const char *start, const char *end) {
  char body[1100];
  snprintf(body, sizeof body, "[%s]",
           span_json(cpid, id, service, name, kind, oname, uid, rv, start, end));
  post(r, "/v1/spans", body);
}

/* Details are stored by a thread of the server's own: wait until they join. */
static void wait_details(const rig_t *r, const char *cpid, size_t writes) {
  char url[160];
  snprintf(url, sizeof url, "%s/v1/cpids/%s/details", r->base, cpid);
  for (int tries = 0; tries < 1000; tries++) { /* up to 10 s */
    hc_resp_t a;
    assert_int_equal(hc_request("GET", url, NULL, 0, NULL, &a), 0);
    json_t *j = a.status == 200 && a.body ? json_loads(a.body, 0, NULL) : NULL;
    size_t n = json_array_size(json_object_get(j, "writes"));
    json_decref(j);
    hc_resp_free(&a);
    if (n >= writes) return;
    usleep(10000);
  }
  fail_msg("the details of %s did not join its spans", cpid);
}

static int setup(void **state) {
  rig_t *r = calloc(1, sizeof *r);
  assert_non_null(r);
  snprintf(r->dir, sizeof r->dir, "/tmp/ripple-test-XXXXXX");
  assert_non_null(mkdtemp(r->dir));
  server_start(r);
  *state = r; /* the teardown stops the server even when the setup fails below */
  post(r, "/v1/mergelogs",
       "[{\"cpid\":\"" C0 "\",\"sources\":[],\"time\":\"" T("00") "\"},"
       "{\"cpid\":\"" X "\",\"sources\":[],\"time\":\"" T("01") "\",\"component\":"
       "\"kubernetes-admin\",\"object\":{\"kind\":\"Deployment\",\"namespace\":\"demo\","
       "\"name\":\"web\",\"uid\":\"" DEP_UID "\"}},"
       "{\"cpid\":\"" Y "\",\"sources\":[\"" X "\"],\"time\":\"" T("01.001") "\"}]");
  post_span(r, C0, "00000000000000c0", "kubernetes-admin", "create deployments", "Deployment",
            "web", "", "", T("00"), T("00.001"));
  post_span(r, X, "0000000000000001", "kubernetes-admin", "update deployments", "Deployment", "web",
            DEP_UID, "100", T("01"), T("01.001"));
  post_span(r, Y, "0000000000000002", "deployment-controller", "update replicasets", "ReplicaSet",
            "web-1", RS_UID, "200", T("01.001"), T("01.003"));
  post_span(r, Y, "0000000000000003", "kube-scheduler", "create pods/binding", "Pod", "web-1-a",
            POD_UID, "", T("01.003"), T("01.010"));
  post_span(r, Y, "0000000000000004", "kwok", "update pods/status", "Pod", "web-1-a", POD_UID,
            "301", T("01.003"), T("01.020"));
  post(r, "/v1/details",
       "[{\"type\":\"change\",\"op\":\"update\",\"time\":\"" T("01.002") "\","
       "\"object\":{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"namespace\":\"demo\","
       "\"name\":\"web\",\"uid\":\"" DEP_UID "\"},\"resourceVersion\":\"101\","
       "\"previousResourceVersion\":\"100\",\"cpid\":\"" C0 "\","
       "\"diff\":[{\"path\":\"/spec/replicas\",\"old\":1,\"new\":3}]},"
       "{\"type\":\"change\",\"op\":\"update\",\"time\":\"" T("01.011") "\","
       "\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"namespace\":\"demo\","
       "\"name\":\"web-1-a\",\"uid\":\"" POD_UID "\"},\"resourceVersion\":\"302\","
       "\"previousResourceVersion\":\"301\",\"cpid\":\"" Y "\","
       "\"diff\":[{\"path\":\"/status/phase\",\"old\":\"Pending\",\"new\":\"Running\"}]}]");
  wait_details(r, X, 2);
  *state = r;
  return 0;
}

static int teardown(void **state) {
  rig_t *r = *state;
  int st;
  if (!r) return 0;
  kill(r->pid, SIGTERM);
  waitpid(r->pid, &st, 0);
  test_rmtree(r->dir);
  free(r);
  return 0;
}

/* An object as the API server gives it; cpid NULL: no annotation. */
static json_t *object(const char *kind, const char *name, const char *uid, const char *cpid) {
  json_t *o = json_pack("{s:s, s:{s:s, s:s, s:s}}", "kind", kind, "metadata", "name", name,
                        "namespace", "demo", "uid", uid);
  if (cpid) {
    ripple_ctx_t ctx;
    memset(&ctx, 0, sizeof ctx);
    assert_int_equal(ripple_cpid_parse(cpid, strlen(cpid), &ctx.cpid), RIPPLE_OK);
    char key[RIPPLE_ANNOTATION_KEYMAX], value[RIPPLE_CTX_STRMAX + 1];
    assert_int_equal(ripple_annotation_key(kind, key, sizeof key), RIPPLE_OK);
    assert_int_equal(ripple_ctx_encode(&ctx, value, sizeof value, NULL), RIPPLE_OK);
    json_object_set_new(json_object_get(o, "metadata"), "annotations",
                        json_pack("{s:s}", key, value));
  }
  assert_non_null(o);
  return o;
}

/* kr_why_object's output; its return code in *rc, its message in err. */
static char *why(const char *server, int json_out, const json_t *obj, const char *kind, int *rc,
                 char *err, size_t cap) {
  kr_args_t a;
  memset(&a, 0, sizeof a);
  a.cmd = KR_CMD_WHY;
  a.server = server;
  a.json = json_out;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  err[0] = '\0';
  kr_where_t w = {.url = server, .from = "--server"};
  kr_ts_t *ts = NULL;
  *rc = kr_ts_open(&w, NULL, NULL, &ts, err, cap);
  if (*rc == RIPPLE_OK) *rc = kr_why_object(&a, ts, obj, kind, "the object", f, err, cap);
  kr_ts_free(ts);
  fclose(f);
  return text;
}

static void test_why_pod(void **state) {
  rig_t *r = *state;
  json_t *pod = object("Pod", "web-1-a", POD_UID, Y);
  char err[1024];
  int rc;
  char *text = why(r->base, 0, pod, "Pod", &rc, err, sizeof err);
  if (rc != RIPPLE_OK) fail_msg("why: %s", err);
  char want[2048];
  snprintf(want, sizeof want,
           "Pod demo/web-1-a: 4 writes since the root change, cpid " X
           "\n"
           " +0.0ms            kubernetes-admin  update deployments  Deployment demo/web\n"
           "                     /spec/replicas: 1 -> 3\n"
           " +2.0ms   (2.0ms)  deployment-controller  update replicasets  ReplicaSet demo/web-1\n"
           " +9.0ms   (7.0ms)  kube-scheduler  create pods/binding  Pod demo/web-1-a\n"
           "+19.0ms  (10.0ms)  kwok  update pods/status  Pod demo/web-1-a\n"
           "                     /status/phase: \"Pending\" -> \"Running\"\n"
           "(no details: is ripple watch running with --trace-server?)\n"
           "\n"
           "dashboard: %s/#/trace/" X "?scope=reachable\n",
           r->base);
  if (strcmp(text, want) != 0) fail_msg("got:\n%s\nwant:\n%s", text, want);
  free(text);
  text = why(r->base, 1, pod, "Pod", &rc, err, sizeof err);
  assert_int_equal(rc, RIPPLE_OK);
  json_t *j = json_loads(text, 0, NULL);
  assert_non_null(j);
  assert_string_equal(json_string_value(json_object_get(j, "root")), X);
  assert_string_equal(json_string_value(json_object_get(json_object_get(j, "object"), "cpid")), Y);
  const json_t *hops = json_object_get(j, "hops");
  assert_int_equal(json_array_size(hops), 4);
  const json_t *last = json_array_get(hops, 3);
  assert_string_equal(json_string_value(json_object_get(last, "span_id")), "0000000000000004");
  assert_true(json_is_null(json_object_get(json_array_get(hops, 2), "change")));
  assert_string_equal(
      json_string_value(json_object_get(
          json_array_get(json_object_get(json_object_get(last, "change"), "diff"), 0), "new")),
      "Running");
  json_decref(j);
  free(text);
  json_decref(pod);
}

/* The annotation names the creation (C0), the index the scale (X): the
 * scale's trace holds the latest write. */
static void test_why_newest_root(void **state) {
  rig_t *r = *state;
  json_t *dep = object("Deployment", "web", DEP_UID, C0);
  char err[1024];
  int rc;
  char *text = why(r->base, 1, dep, "Deployment", &rc, err, sizeof err);
  if (rc != RIPPLE_OK) fail_msg("why: %s", err);
  json_t *j = json_loads(text, 0, NULL);
  assert_non_null(j);
  assert_string_equal(json_string_value(json_object_get(j, "root")), X);
  assert_int_equal(json_array_size(json_object_get(j, "hops")), 1);
  json_decref(j);
  free(text);
  json_decref(dep);
  /* Without the index's root, the creation is all there is. */
  dep = object("Deployment", "web", "d0000000-0000-4000-8000-0000000000ee", C0);
  text = why(r->base, 0, dep, "Deployment", &rc, err, sizeof err);
  assert_int_equal(rc, RIPPLE_OK);
  assert_non_null(strstr(text, "Deployment demo/web: 1 write since the root change, cpid " C0));
  assert_non_null(strstr(text, "kubernetes-admin  create deployments  Deployment demo/web\n"));
  free(text);
  json_decref(dep);
}

static void expect_error(const char *server, const json_t *obj, int want_rc, const char *want) {
  char err[1024];
  int rc;
  char *text =
      why(server, 0, obj, json_string_value(json_object_get(obj, "kind")), &rc, err, sizeof err);
  assert_int_equal(rc, want_rc);
  if (!strstr(err, want)) fail_msg("error \"%s\" does not say \"%s\"", err, want);
  assert_string_equal(text, ""); /* nothing on stdout */
  free(text);
}

static void test_why_errors(void **state) {
  rig_t *r = *state;
  json_t *o = object("ConfigMap", "cm", "d0000000-0000-4000-8000-0000000000cc", NULL);
  expect_error(r->base, o, RIPPLE_ENOENT, "the object has no ripple context");
  expect_error(r->base, o, RIPPLE_ENOENT, "kubectl ripple");
  json_decref(o);
  o = object("ConfigMap", "cm", "d0000000-0000-4000-8000-0000000000cc", U);
  expect_error(r->base, o, RIPPLE_ENOENT, "does not know cpid " U);
  expect_error("http://127.0.0.1:1", o, RIPPLE_ESYS, "cannot reach the trace server");
  json_decref(o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_why_pod),
      cmocka_unit_test(test_why_newest_root),
      cmocka_unit_test(test_why_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
