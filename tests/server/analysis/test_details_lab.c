/*
 * test_details_lab.c - who changed what, and which cascade is stuck, on the
 * lab's real control plane: the real webhook and trace server, the real
 * ripple-watch sending details (diffs, snapshots, Events), and kube-apiserver's
 * audit webhook backend posting to the trace server (the lab sends audit
 * events to $RIPPLE_LAB_AUDIT_PORT; the server listens there).
 *
 * 1. details: a person's scale of a Deployment, traced: the person's write
 *    and the Deployment controller's write of the ReplicaSet each carry their
 *    field diff and their audit event (user, code), a Pod created by
 *    generateName its snapshot (joined through its audit event), the
 *    Deployment's ScalingReplicaSet Event is in the trace; a write refused
 *    with 409 after admission shows as a span with its refusal; a Secret's
 *    writes never reach the webhook (its CPID is in no trace), and its value
 *    is never in an answer nor in the details database.
 * 2. stalls: after the server has learned the cluster's hops, kube-scheduler
 *    is paused (SIGSTOP) in the middle of a scale: the cascade is flagged at
 *    the ReplicaSet controller's Pod creates, expecting the scheduler's
 *    bindings, in the API and /metrics; when the scheduler resumes, the stall
 *    ends. kube-controller-manager paused while a person scales: flagged at
 *    the person's write. A Pod that can never be scheduled: flagged with its
 *    FailedScheduling Event.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cascade_lab.h"
#include "http_client.h"
#include "watch_lab.h"

static pid_t paused; /* a lab component this test stopped, resumed in teardown */

static int teardown(void **state) {
  if (paused) kill(paused, SIGCONT), paused = 0;
  cl_watch_stop();
  return cl_teardown(state);
}

/* ---- processes ------------------------------------------------------------------ */

/* ripple-watch on the test's namespace, sending spans and details to the
 * trace server; waits until its four watches are synced. */
static void start_watch(void) {
  static char out[300];
  snprintf(out, sizeof out, "%s/watch.jsonl", cl.dir);
  const char *const more[] = {
      "--resources", "deployments.apps,replicasets.apps,pods,events", "--out", out,
      "--redact",    "/spec/template/spec/containers/*/env",          NULL};
  cl_watch_start(more, 4);
}

/* The pid of a lab component (its pid file in the lab's state directory). */
static pid_t lab_pid(const char *component) {
  char path[512];
  const char *dir = getenv("RIPPLE_LAB_DIR");
  snprintf(path, sizeof path, "%s/run/%s.pid", dir ? dir : "/tmp/ripple-lab", component);
  FILE *f = fopen(path, "r");
  char text[32] = "";
  if (!f) {
    fail_msg("cannot open %s", path);
    return 0;
  }
  if (!fgets(text, sizeof text, f)) text[0] = '\0';
  fclose(f);
  long pid = strtol(text, NULL, 10);
  if (pid <= 0) fail_msg("no pid in %s", path);
  return (pid_t)pid;
}

static void pause_component(const char *component) {
  wl_lock(); /* other programs may use the lab: they wait while this test pauses it */
  paused = lab_pid(component);
  assert_int_equal(kill(paused, SIGSTOP), 0);
}

static void resume_component(void) {
  assert_int_equal(kill(paused, SIGCONT), 0);
  paused = 0;
}

/* ---- the trace server ------------------------------------------------------------- */

static json_t *server_get(const char *path) { return hc_get_json(cl.trace, path, 200); }

static json_t *details_of(const char *cpid) {
  char p[200];
  snprintf(p, sizeof p, "/v1/cpids/%s/details", cpid);
  return server_get(p);
}

/* The write of details whose change or audit event is about kind/name by
 * user (NULL: anyone) and whose change has a diff entry at path. */
static const json_t *find_write(const json_t *d, const char *kind, const char *name,
                                const char *user, const char *path) {
  size_t i;
  const json_t *w;
  json_array_foreach(json_object_get(d, "writes"), i, w) {
    const json_t *c = json_object_get(w, "change"), *a = json_object_get(w, "audit");
    const json_t *o = json_object_get(c, "object");
    const char *k = json_string_value(json_object_get(o, "kind"));
    const char *n = json_string_value(json_object_get(o, "name"));
    const char *u = json_string_value(json_object_get(a, "user"));
    if (!k || strcmp(k, kind) != 0 || (name && (!n || strcmp(n, name) != 0))) continue;
    if (user && (!u || !strstr(u, user))) continue;
    if (!path) return w;
    size_t j;
    const json_t *e;
    json_array_foreach(json_object_get(c, "diff"), j, e) {
      const char *p = json_string_value(json_object_get(e, "path"));
      if (p && !strcmp(p, path)) return w;
    }
  }
  return NULL;
}

static const json_t *diff_entry(const json_t *w, const char *path) {
  size_t j;
  const json_t *e;
  json_array_foreach(json_object_get(json_object_get(w, "change"), "diff"), j, e) {
    const char *p = json_string_value(json_object_get(e, "path"));
    if (p && !strcmp(p, path)) return e;
  }
  return NULL;
}

typedef struct scale_seen {
  const char *cpid;
} scale_seen_t;

/* Everything test 1 looks for has arrived (details come through the watch
 * agent, audit events within a second or two of the write). */
static int scale_details_in(void *ud) {
  json_t *d = details_of(((scale_seen_t *)ud)->cpid);
  int ok = d && find_write(d, "Deployment", "web", NULL, "/spec/replicas") &&
           find_write(d, "ReplicaSet", NULL, "deployment-controller", "/spec/replicas");
  size_t i, created = 0, scaling = 0;
  const json_t *w;
  json_array_foreach(json_object_get(d, "writes"), i, w) {
    const json_t *c = json_object_get(w, "change");
    const char *op = json_string_value(json_object_get(c, "op"));
    created += op && !strcmp(op, "create") && json_object_get(c, "snapshot") != NULL;
  }
  json_array_foreach(json_object_get(d, "events"), i, w) {
    const char *r = json_string_value(json_object_get(w, "reason"));
    scaling += r && !strcmp(r, "ScalingReplicaSet");
  }
  json_decref(d);
  return ok && created >= 2 && scaling >= 1;
}

static void test_details(void **state) {
  (void)state;
  /* A person creates a Deployment of 1 and scales it to 3. */
  char c0[CL_CPID], cpid[CL_CPID];
  cl_create_root("deployments", cl_deployment("web", 1), c0);
  cl_wait_pods("app=web", 1, 120000);
  cl_patch_root("deployments", "Deployment", "web", "\"spec\":{\"replicas\":3}", cpid);
  cl_wait_pods("app=web", 3, 120000);
  scale_seen_t s = {cpid};
  cl_wait(scale_details_in, &s, 60000, "the scale's diffs, audit events, snapshots and Events");
  json_t *d = details_of(cpid);

  /* The person's write: its diff and its audit event. */
  const json_t *w = find_write(d, "Deployment", "web", NULL, "/spec/replicas");
  const json_t *e = diff_entry(w, "/spec/replicas");
  assert_int_equal(json_integer_value(json_object_get(e, "old")), 1);
  assert_int_equal(json_integer_value(json_object_get(e, "new")), 3);
  const json_t *a = json_object_get(w, "audit");
  assert_non_null(a);
  assert_int_equal(json_integer_value(json_object_get(a, "code")), 200);
  assert_string_equal(json_string_value(json_object_get(a, "verb")), "patch");
  /* ripple's own annotation and the bookkeeping fields are never a change. */
  size_t i;
  json_array_foreach(json_object_get(json_object_get(w, "change"), "diff"), i, e) {
    const char *p = json_string_value(json_object_get(e, "path"));
    assert_null(strstr(p, "cpid.ripple.dev"));
    assert_null(strstr(p, "managedFields"));
    assert_string_not_equal(p, "/metadata/resourceVersion");
  }

  /* The Deployment controller's write of the ReplicaSet, by its ServiceAccount. */
  w = find_write(d, "ReplicaSet", NULL, "deployment-controller", "/spec/replicas");
  e = diff_entry(w, "/spec/replicas");
  assert_int_equal(json_integer_value(json_object_get(e, "old")), 1);
  assert_int_equal(json_integer_value(json_object_get(e, "new")), 3);
  a = json_object_get(w, "audit");
  assert_string_equal(json_string_value(json_object_get(a, "user")),
                      "system:serviceaccount:kube-system:deployment-controller");

  /* The Pods the ReplicaSet controller created by generateName: their
   * snapshots joined to their creates through their audit events. */
  size_t pods = 0;
  json_array_foreach(json_object_get(d, "writes"), i, w) {
    const json_t *c = json_object_get(w, "change");
    const char *op = json_string_value(json_object_get(c, "op"));
    if (!op || strcmp(op, "create") != 0) continue;
    a = json_object_get(w, "audit");
    assert_int_equal(json_integer_value(json_object_get(a, "code")), 201);
    const json_t *snap = json_object_get(c, "snapshot");
    assert_string_equal(json_string_value(json_object_get(snap, "kind")), "Pod");
    assert_null(json_object_get(json_object_get(snap, "metadata"), "managedFields"));
    pods++;
  }
  assert_int_equal(pods, 2);
  json_decref(d);

  /* kubectl ripple why: the chain from the person's scale to the
   * ReplicaSet's latest write, with what changed at each hop. */
  const char *kr = getenv("RIPPLE_KUBECTL_BIN");
  if (!kr) {
    fail_msg("RIPPLE_KUBECTL_BIN is needed (ctest sets it)");
    return;
  }
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "'%s' --kubeconfig '%s' why deployment/web -n %s --server %s", kr,
           getenv("KUBECONFIG"), cl.ns, cl.trace);
  FILE *p = popen(cmd, "r");  // NOLINT(cert-env33-c): the test's own words
  assert_non_null(p);
  char out[16384];
  size_t n = fread(out, 1, sizeof out - 1, p);
  out[n] = '\0';
  int st = pclose(p);
  if (st != 0 || !strstr(out, "/spec/replicas: 1 -> 3"))
    fail_msg("kubectl ripple why deployment/web (status %d):\n%s", st, out);
}

/* A write admitted by the webhook and then refused with 409 (a stale
 * resourceVersion): its span is in the trace with the refusal beside it. */
static int refused_in(void *ud) {
  json_t *d = details_of(ud);
  size_t i;
  const json_t *w;
  int found = 0;
  json_array_foreach(json_object_get(d, "writes"), i, w) {
    const json_t *a = json_object_get(w, "audit");
    found |= json_integer_value(json_object_get(a, "code")) == 409;
  }
  json_decref(d);
  return found;
}

static void test_refused_and_secret(void **state) {
  (void)state;
  json_t *cm = lab_json(
      "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
      "\"cfg\"},\"data\":{\"a\":\"1\"}}");
  char c0[CL_CPID], cpid[CL_CPID];
  cl_create_root("configmaps", cm, c0);
  json_t *cur = cl_get("configmaps", "cfg");
  const char *rv =
      json_string_value(json_object_get(json_object_get(cur, "metadata"), "resourceVersion"));
  char stale[64];
  snprintf(stale, sizeof stale, "%s", rv);
  cl_patch_root("configmaps", "ConfigMap", "cfg", "\"data\":{\"a\":\"2\"}", c0);
  json_decref(cur);
  /* A PUT from the first version: admitted (and traced), then refused. */
  char body[1024], path[256];
  snprintf(body, sizeof body,
           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cfg\","
           "\"resourceVersion\":\"%s\",\"annotations\":{\"cpid.ripple.dev/configmap\":\"1;%s\"}},"
           "\"data\":{\"a\":\"3\"}}",
           stale, "00000000-0000-4000-8000-000000000000");
  whlab_new_cpid(cpid);
  char *fixed = strstr(body, "00000000-0000-4000-8000-000000000000");
  memcpy(fixed, cpid, strlen(cpid));
  snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps/cfg", cl.ns);
  assert_int_equal(cl_api("PUT", path, body, NULL, NULL), 409);
  cl_wait(refused_in, cpid, 30000, "the refused write's audit event beside its span");

  /* A Secret: its writes never reach the webhook (the registration's matchCondition
   * not-secrets), so its CPID is in no trace; and its value is in neither the answer
   * nor the details database (where the watch agent's redacted details may be). */
  json_t *sec = lab_json(
      "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":"
      "\"pw\"},\"stringData\":{\"password\":\"hunter2-ripple-canary\"}}");
  char sc[CL_CPID];
  cl_create_root("secrets", sec, sc);
  cl_patch_root("secrets", "Secret", "pw", "\"stringData\":{\"password\":\"second-ripple-canary\"}",
                c0);
  wl_sleep_ms(3000); /* the watch agent's details and the audit batch */
  hc_resp_t r;
  char url[300];
  snprintf(url, sizeof url, "%s/v1/cpids/%s/details", cl.trace, sc);
  assert_int_equal(hc_request("GET", url, NULL, 0, NULL, &r), RIPPLE_OK);
  assert_int_equal(r.status, 404); /* no such CPID: the webhook never saw the writes */
  assert_null(r.body ? strstr(r.body, "hunter2") : NULL);
  assert_null(r.body ? strstr(r.body, "aHVudGVyMi") : NULL); /* base64 of the value's start */
  hc_resp_free(&r);
  snprintf(url, sizeof url, "%s/v1/cpids/%s/spans", cl.trace, sc);
  assert_int_equal(hc_request("GET", url, NULL, 0, NULL, &r), RIPPLE_OK);
  assert_null(r.body ? strstr(r.body, "\"Secret\"") : NULL); /* no span of the Secret */
  hc_resp_free(&r);
  char db[300], cmd[700];
  snprintf(db, sizeof db, "%s/trace.db.details", cl.dir);
  snprintf(cmd, sizeof cmd,
           "cat %s %s-wal 2>/dev/null | grep -a -c -e hunter2 -e aHVudGVyMi -e c2Vjb25k", db, db);
  FILE *p = popen(cmd, "r");  // NOLINT(cert-env33-c): the test's own words
  char count[32] = "";
  assert_non_null(p);
  assert_non_null(fgets(count, sizeof count, p));
  pclose(p);
  long hits = strtol(count, NULL, 10);
  assert_int_equal(hits, 0);
}

/* ---- stalls ------------------------------------------------------------------------ */

static json_t *stalls_of(const char *cpid) {
  char p[200];
  snprintf(p, sizeof p, "/v1/cpids/%s/stalls", cpid);
  return server_get(p);
}

/* Does the model expect `expect` after service's `name` writes? */
static int learned(const char *service, const char *name, const char *es, const char *en) {
  json_t *m = server_get("/v1/stalls/expected");
  size_t i;
  const json_t *x;
  int found = 0;
  json_array_foreach(json_object_get(m, "expected"), i, x) {
    const json_t *e = json_object_get(x, "expect");
    const char *s = json_string_value(json_object_get(x, "service"));
    const char *n = json_string_value(json_object_get(x, "name"));
    if (!s || strcmp(s, service) != 0 || !n || strcmp(n, name) != 0) continue;
    if (!es && json_is_null(e)) found = 1;
    const char *a = json_string_value(json_object_get(e, "service"));
    const char *b = json_string_value(json_object_get(e, "name"));
    if (es && a && b && !strcmp(a, es) && !strcmp(b, en)) found = 1;
  }
  json_decref(m);
  return found;
}

static int learned_binding(void *ud) {
  (void)ud;
  return learned("replicaset-controller", "create pods", "kube-scheduler", "create pods/binding");
}

typedef struct want_stall {
  const char *cpid, *service, *name, *expect_service; /* expect NULL: any */
  const char *reason;                                 /* an Event's, or NULL */
  int n;                                              /* stalls wanted (0: none) */
} want_stall_t;

static int stall_matches(const json_t *st, const want_stall_t *w) {
  const char *s = json_string_value(json_object_get(st, "service"));
  const char *n = json_string_value(json_object_get(st, "name"));
  const json_t *e = json_object_get(st, "expect");
  const char *es = json_string_value(json_object_get(e, "service"));
  if (!s || strcmp(s, w->service) != 0 || !n || strcmp(n, w->name) != 0) return 0;
  if (w->expect_service && (!es || strcmp(es, w->expect_service) != 0)) return 0;
  if (!w->reason) return 1;
  size_t i;
  const json_t *ev;
  json_array_foreach(json_object_get(st, "events"), i, ev) {
    const char *r = json_string_value(json_object_get(ev, "reason"));
    if (r && !strcmp(r, w->reason)) return 1;
  }
  return 0;
}

/* The cascade's stalls are all at w's hop, and at least w->n of its writes
 * stall on w's expectation (a write may stall on more than one: its usual
 * next hop and "any next hop"); w->n 0: no stall at all. */
static int stalls_are(void *ud) {
  const want_stall_t *w = ud;
  json_t *s = stalls_of(w->cpid), *writes = json_object();
  if (getenv("RIPPLE_TEST_DEBUG")) {
    json_t *all = server_get("/v1/stalls");
    json_dumpf(all, stderr, JSON_COMPACT), fputc('\n', stderr);
    json_decref(all);
    hc_resp_t m;
    char url[128];
    snprintf(url, sizeof url, "%s/metrics", cl.trace);
    if (hc_request("GET", url, NULL, 0, NULL, &m) == RIPPLE_OK && m.body)
      for (char *l = strtok(m.body, "\n"); l; l = strtok(NULL, "\n"))
        if (!strncmp(l, "ripple_stall", 12)) fprintf(stderr, "%s\n", l);
    hc_resp_free(&m);
  }
  size_t i, at_hop = 0, all = json_array_size(json_object_get(s, "stalls"));
  const json_t *st;
  json_array_foreach(json_object_get(s, "stalls"), i, st) {
    want_stall_t hop = {w->cpid, w->service, w->name, NULL, NULL, 0};
    at_hop += stall_matches(st, &hop);
    if (stall_matches(st, w))
      json_object_set_new(writes, json_string_value(json_object_get(st, "span_id")), json_true());
  }
  int ok = w->n ? (int)json_object_size(writes) >= w->n && at_hop == all : all == 0;
  json_decref(writes);
  json_decref(s);
  return ok;
}

static double metric(const char *series) {
  hc_resp_t r;
  char url[128];
  snprintf(url, sizeof url, "%s/metrics", cl.trace);
  if (hc_request("GET", url, NULL, 0, NULL, &r) != RIPPLE_OK || r.status != 200)
    fail_msg("GET %s failed", url);
  char line[256];
  snprintf(line, sizeof line, "\n%s", series); /* a sample, not its HELP line */
  const char *p = strstr(r.body, line);
  double v = p ? strtod(p + strlen(line), NULL) : -1;
  hc_resp_free(&r);
  return v;
}

/* Enough cascades for the detector to learn the Deployment's hops: creates
 * and scales of several Deployments, all run to the end; 24 Pod creates, so
 * that the few this test's stalls add as "not followed" leave creates
 * expected to be bound (at least 0.9 of them were). The scales come after
 * the horizon (4 s), as an operator's would: a person's next change is not
 * a hop of the last one. */
static void learn(void) {
  char name[32], c[CL_CPID];
  for (int i = 0; i < 6; i++) {
    snprintf(name, sizeof name, "learn-%d", i);
    cl_create_root("deployments", cl_deployment(name, 2), c);
  }
  cl_wait_pods("app in (learn-0,learn-1,learn-2,learn-3,learn-4,learn-5)", 12, 120000);
  wl_sleep_ms(5000);
  for (int i = 0; i < 6; i++) {
    snprintf(name, sizeof name, "learn-%d", i);
    cl_patch_root("deployments", "Deployment", name, "\"spec\":{\"replicas\":4}", c);
  }
  cl_wait_pods("app in (learn-0,learn-1,learn-2,learn-3,learn-4,learn-5)", 24, 120000);
  cl_wait(learned_binding, NULL, 60000, "the detector to learn that Pod creates are bound");
}

static void test_stalls(void **state) {
  (void)state;
  learn();
  /* kube-scheduler stops in the middle of a scale. */
  char c[CL_CPID], cpid[CL_CPID];
  cl_create_root("deployments", cl_deployment("stuck", 1), c);
  cl_wait_pods("app=stuck", 1, 120000);
  pause_component("kube-scheduler");
  cl_patch_root("deployments", "Deployment", "stuck", "\"spec\":{\"replicas\":3}", cpid);
  want_stall_t w = {cpid, "replicaset-controller", "create pods", "kube-scheduler", NULL, 2};
  /* A write is flagged after 3 times the p99 delay learned above (stall.h):
   * on a loaded machine that p99's bucket can reach 20-30 s, so the wait is
   * long enough for a threshold near 100 s (a CI run once timed out at 60). */
  cl_wait(stalls_are, &w, 240000, "the scale flagged at its Pod creates, waiting for bindings");
  assert_true(metric("ripple_stalls_active ") >= 2);
  assert_true(metric("ripple_stalled_writes{service=\"replicaset-controller\",name=\"create "
                     "pods\"} ") >= 2);
  resume_component();
  cl_wait_pods("app=stuck", 3, 120000);
  w.n = 0;
  cl_wait(stalls_are, &w, 60000, "the stall to end once the scheduler binds the Pods");
  assert_true(metric("ripple_stalls_total{event=\"resolved\"} ") >= 2);

  /* A Pod that can never be scheduled: flagged with its FailedScheduling. */
  json_t *dep = cl_deployment("nowhere", 1);
  json_object_set_new(
      json_object_get(json_object_get(json_object_get(dep, "spec"), "template"), "spec"),
      "nodeSelector", lab_json("{\"ripple.invalid/none\":\"x\"}"));
  char nc[CL_CPID];
  cl_create_root("deployments", dep, nc);
  want_stall_t nw = {
      nc, "replicaset-controller", "create pods", "kube-scheduler", "FailedScheduling", 1};
  if (getenv("RIPPLE_TEST_DEBUG")) {
    wl_sleep_ms(15000);
    json_t *all = cl_all_spans();
    size_t i;
    const json_t *sp;
    json_array_foreach(all, i, sp) {
      const char *o = cl_attr(sp, "owner");
      if (strstr(cl_attr(sp, "name"), "nowhere") || (o && strstr(o, "nowhere")))
        fprintf(stderr, "SPAN %s %s %s/%s owner=%s cpid=%s end=%s\n",
                json_string_value(json_object_get(sp, "service")),
                json_string_value(json_object_get(sp, "name")), cl_attr(sp, "kind"),
                cl_attr(sp, "name"), o ? o : "", json_string_value(json_object_get(sp, "cpid")),
                json_string_value(json_object_get(sp, "end")));
    }
    json_decref(all);
  }
  cl_wait(stalls_are, &nw, 240000, "the unschedulable Pod flagged with its FailedScheduling Event");
}

static int learned_root(void *ud) {
  json_t *m = server_get("/v1/stalls/expected");
  size_t i;
  const json_t *x;
  int found = 0;
  json_array_foreach(json_object_get(m, "expected"), i, x) {
    const char *n = json_string_value(json_object_get(x, "name"));
    const char *s = json_string_value(json_object_get(x, "service"));
    if (n && !strcmp(n, "update deployments") && s && !strcmp(s, (const char *)ud)) found = 1;
  }
  json_decref(m);
  return found;
}

/* The controller manager stops: a person's scale is flagged at the person's
 * own write (the next hop, the Deployment controller's, never comes). */
static void test_stall_at_root(void **state) {
  (void)state;
  learn();
  /* The service name the webhook gives the test's own writes. */
  char c[CL_CPID];
  json_t *spans = NULL;
  cl_create_root("deployments", cl_deployment("paused", 1), c);
  cl_wait_pods("app=paused", 1, 120000);
  spans = cl_all_spans();
  const char *svc = NULL;
  size_t i;
  const json_t *sp;
  json_array_foreach(spans, i, sp) {
    const char *n = json_string_value(json_object_get(sp, "name"));
    if (n && !strcmp(n, "update deployments") && !strcmp(cl_attr(sp, "name"), "learn-0"))
      svc = json_string_value(json_object_get(sp, "service"));
  }
  assert_non_null(svc);
  cl_wait(learned_root, (void *)svc, 60000, "the detector to learn what follows a person's scale");
  pause_component("kube-controller-manager");
  char cpid[CL_CPID];
  cl_patch_root("deployments", "Deployment", "paused", "\"spec\":{\"replicas\":2}", cpid);
  want_stall_t w = {cpid, svc, "update deployments", NULL, NULL, 1};
  cl_wait(stalls_are, &w, 60000, "the scale flagged at the person's write");
  resume_component();
  cl_wait_pods("app=paused", 2, 120000);
  w.n = 0;
  cl_wait(stalls_are, &w, 60000, "the stall to end once the controllers run again");
  json_decref(spans);
}

/* ---- setup --------------------------------------------------------------------------- */

static char audit_listen[32];

static int setup(void **state) {
  (void)state;
  whlab_begin_cluster(&cl, "details");
  const char *port = getenv("RIPPLE_LAB_AUDIT_PORT");
  if (!port) fail_msg("RIPPLE_LAB_AUDIT_PORT is not set: run under scripts/with-lab");
  snprintf(audit_listen, sizeof audit_listen, "127.0.0.1:%s", port);
  /* The server where kube-apiserver sends audit events, and a detector that
   * learns within seconds (the defaults wait minutes). */
  static const char *const args[] = {
      "--listen", audit_listen, "--stall-horizon", "4s", "--stall-min-samples", "5", NULL};
  memcpy(cl.server_args, args, sizeof args);
  cl_start_webhook();
  start_watch();
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_details, setup, teardown),
      cmocka_unit_test_setup_teardown(test_refused_and_secret, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stalls, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stall_at_root, setup, teardown),
  };
  const char *only = getenv("RIPPLE_TEST_ONLY"); /* one test by name, when debugging */
  if (only) cmocka_set_test_filter(only);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
