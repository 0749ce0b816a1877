/*
 * test_kubectl_lab.c - the real kubectl-ripple against the lab, with the real
 * ripple-server and ripple-webhook (started as tests/webhook/test_webhook_lab.c
 * starts them; the webhook registered with failurePolicy Ignore for this
 * test's namespace only, and always removed afterwards).
 *
 * `kubectl-ripple apply` creates a Deployment of 10 replicas,
 * `kubectl-ripple scale deploy/x --replicas=20` scales it and prints its CPID,
 * which the Deployment then carries; `kubectl-ripple trace CPID -o json`
 * shows the Deployment, its ReplicaSet and the 10 new Pods with the
 * components that wrote them; `kubectl-ripple last deploy/x` shows the same
 * CPID's trace.
 */
#include <curl/curl.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ripplex/sbuf.h"
#include "rw_lab.h"
#include "wh_lab.h"

static whlab_t lab;
static char dir[64] = "/tmp/ripple-kp-lab-XXXXXX";

/* Run kubectl-ripple with args (a shell word list of safe words); its
 * standard output into out (a new string). Returns its exit status. */
static int kr_run(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int kr_run(char **out, const char *fmt, ...) {
  char args[1024], cmd[1400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "'%s' --kubeconfig '%s' %s", getenv("RIPPLE_KUBECTL_BIN"),
           getenv("KUBECONFIG"), args);
  /* The shell is wanted: the arguments are the test's own, quoted above. */
  return lab_sh(out, "%s", cmd);
}

/* The value after "cpid: " in a change's output, into id (37 bytes). */
static void printed_cpid(const char *out, char *id) {
  const char *c = strstr(out, "cpid: ");
  if (!c) {
    fail_msg("no \"cpid: \" line in:\n%s", out);
    return;
  }
  ripple_cpid_t parsed;
  assert_int_equal(ripple_cpid_parse(c + 6, RIPPLE_CPID_STRLEN, &parsed), RIPPLE_OK);
  assert_true(c[6 + RIPPLE_CPID_STRLEN] == '\n');
  ripple_cpid_format(&parsed, id);
}

static int setup(void **state) {
  (void)state;
  if (!getenv("RIPPLE_KUBECTL_BIN")) fail_msg("RIPPLE_KUBECTL_BIN is needed (ctest sets it)");
  whlab_begin(&lab, "ripple-kp", "ripple-kp-test");
  assert_non_null(mkdtemp(dir));
  return 0;
}

/* Always: the registration goes, then the namespace (which must go), then
 * the processes. */
static int teardown(void **state) {
  (void)state;
  whlab_unregister(&lab);
  if (lab.kc) whlab_ns_delete(&lab); /* no client: setup failed before it */
  whlab_end(&lab);
  return 0;
}

/* ---- the test --------------------------------------------------------------- */

static json_t *get_deployment(void) { return whlab_get(&lab, "deployments", "x"); }

/* The CPID in the Deployment's own annotation, into out (37 bytes). */
static void deployment_cpid(char *out) {
  json_t *d = get_deployment();
  if (!whlab_obj_cpid(d, "Deployment", out)) fail_msg("the Deployment carries no valid context");
  json_decref(d);
}

static int deployment_ready(void *ud) {
  const int *want = ud;
  json_t *d = get_deployment();
  int ok = lab_int(d, "status.readyReplicas") == *want &&
           lab_int(d, "status.updatedReplicas") == *want &&
           lab_int(d, "status.observedGeneration") == lab_int(d, "metadata.generation");
  json_decref(d);
  return ok;
}

static json_t *pod_names(void) { return lab_names(lab.kc, "pods", lab.ns, "app=x"); }

/* What a trace's JSON tree shows of the scale. */
typedef struct seen {
  const char *cpid;
  json_t *fresh;         /* the 10 new Pods' names */
  int root;              /* the tree's root: Deployment x, kubernetes-admin, the CPID */
  int rs;                /* the ReplicaSet, written by deployment-controller */
  int creates;           /* create pods by replicaset-controller */
  json_t *bound, *ready; /* new Pods bound by kube-scheduler, given status by kwok */
  json_t *doc;
} seen_t;

static int is(const json_t *n, const char *key, const char *want) {
  const char *v = json_string_value(json_object_get(n, key));
  return v && !strcmp(v, want);
}

static void walk(seen_t *s, const json_t *nodes) {
  size_t i;
  const json_t *n;
  json_array_foreach(nodes, i, n) {
    const char *name = json_string_value(json_object_get(n, "name"));
    int fresh = name && json_object_get(s->fresh, name);
    if (is(n, "kind", "ReplicaSet") && is(n, "component", "deployment-controller")) s->rs = 1;
    if (is(n, "write", "create pods") && is(n, "component", "replicaset-controller")) s->creates++;
    if (fresh && is(n, "write", "create pods/binding") && is(n, "component", "kube-scheduler"))
      json_object_set_new(s->bound, name, json_true());
    if (fresh && is(n, "write", "update pods/status") && is(n, "component", "kwok"))
      json_object_set_new(s->ready, name, json_true());
    walk(s, json_object_get(n, "children"));
  }
}

static int trace_complete(void *ud) {
  seen_t *s = ud;
  char *out = NULL;
  int rc = kr_run(&out, "trace %s -o json --server %s", s->cpid, lab.trace);
  json_decref(s->doc);
  s->doc = rc == 0 ? json_loads(out, 0, NULL) : NULL;
  free(out);
  if (!s->doc) return 0;
  const json_t *root = json_array_get(json_object_get(s->doc, "tree"), 0);
  s->root = is(root, "kind", "Deployment") && is(root, "name", "x") &&
            is(root, "component", "kubernetes-admin") && is(root, "cpid", s->cpid);
  s->rs = s->creates = 0;
  json_object_clear(s->bound);
  json_object_clear(s->ready);
  walk(s, json_object_get(s->doc, "tree"));
  return s->root && s->rs && s->creates >= 10 && json_object_size(s->ready) == 10 &&
         json_object_size(s->bound) == 10;
}

static void check_trace(const char *x, json_t *fresh) {
  seen_t s = {x, fresh, 0, 0, 0, json_object(), json_object(), NULL};
  int ok = lab_wait(trace_complete, &s, 60000);
  fprintf(stderr,
          "# trace %s: root %d, replicaset %d, %d pod creates, %zu of 10 new pods bound, %zu "
          "with status\n",
          x, s.root, s.rs, s.creates, json_object_size(s.bound), json_object_size(s.ready));
  if (!ok) {
    char *dump = s.doc ? json_dumps(s.doc, JSON_INDENT(1)) : NULL;
    fail_msg("the trace does not show the scale's cascade:\n%s", dump ? dump : "(no answer)");
  }
  assert_true(s.root);
  assert_true(s.rs);
  assert_true(s.creates >= 10);
  assert_int_equal(json_object_size(s.ready), 10);
  assert_int_equal(json_object_size(s.bound), 10); /* every binding, generateName or not */
  const json_t *hops = json_object_get(s.doc, "hops");
  assert_true(json_array_size(hops) >= 4);
  json_decref(s.bound);
  json_decref(s.ready);
  json_decref(s.doc);

  char *out = NULL; /* the same trace for people */
  assert_int_equal(kr_run(&out, "trace %s --server %s", x, lab.trace), 0);
  char want[256];
  snprintf(want, sizeof want, "cpid %s: ", x);
  assert_int_equal(strncmp(out, want, strlen(want)), 0);
  snprintf(want, sizeof want, "\nDeployment %s/x  kubernetes-admin  update deployments  +", lab.ns);
  if (!strstr(out, want)) fail_msg("no root line \"%s\" in:\n%s", want + 1, out);
  assert_non_null(strstr(out, "\ncomponent "));
  assert_null(strchr(out, '\033')); /* not a terminal: no colours */
  fprintf(stderr, "%s", out);
  free(out);
}

static void test_apply_scale_trace(void **state) {
  (void)state;
  char path[300], *out = NULL, a[RIPPLE_CPID_STRLEN + 1], x[RIPPLE_CPID_STRLEN + 1];
  char got[RIPPLE_CPID_STRLEN + 1];
  snprintf(path, sizeof path, "%s/x.yaml", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(
      "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  replicas: 10\n"
      "  selector:\n    matchLabels: {app: x}\n  template:\n    metadata:\n"
      "      labels: {app: x}\n    spec:\n      containers:\n      - name: c\n"
      "        image: ripple.invalid/noop:1\n",
      f);
  fclose(f);
  assert_int_equal(kr_run(&out, "apply -f '%s' -n %s", path, lab.ns), 0);
  assert_non_null(strstr(out, "deployment.apps/x serverside-applied\n"));
  printed_cpid(out, a);
  free(out);
  deployment_cpid(got);
  assert_string_equal(got, a); /* the webhook kept the plugin's root CPID */
  int ten = 10, twenty = 20;
  if (!lab_wait(deployment_ready, &ten, 120000)) fail_msg("10 replicas not ready in 120 s");

  json_t *before = pod_names();
  assert_int_equal(kr_run(&out, "--namespace=%s scale deploy/x --replicas=20", lab.ns), 0);
  assert_non_null(strstr(out, "deployment.apps/x scaled\n"));
  printed_cpid(out, x);
  free(out);
  assert_string_not_equal(x, a);
  /* The scale's root is held by the webhook; the annotation stays the
   * apply's (docs/webhook.md: a Deployment's context is held). */
  deployment_cpid(got);
  assert_string_equal(got, a);
  json_t *d = get_deployment();
  assert_int_equal(lab_int(d, "spec.replicas"), 20);
  json_decref(d);
  if (!lab_wait(deployment_ready, &twenty, 120000)) fail_msg("20 replicas not ready in 120 s");
  json_t *all = pod_names(), *fresh = json_object();
  const char *k;
  json_t *v;
  json_object_foreach(all, k, v) if (!json_object_get(before, k)) json_object_set(fresh, k, v);
  assert_int_equal(json_object_size(fresh), 10);
  check_trace(x, fresh);

  assert_int_equal(kr_run(&out, "last deploy/x -n %s -o json --server %s", lab.ns, lab.trace), 0);
  json_t *last = json_loads(out, 0, NULL);
  if (!last) fail_msg("last -o json printed no JSON:\n%s", out);
  free(out);
  assert_string_equal(json_string_value(json_object_get(last, "cpid")), x);
  const json_t *root = json_array_get(json_object_get(last, "tree"), 0);
  assert_string_equal(json_string_value(json_object_get(root, "cpid")), x);
  assert_true(json_integer_value(json_object_get(last, "writes")) >= 21);
  json_decref(last);

  assert_int_equal(kr_run(&out, "trace not-a-cpid --server %s", lab.trace), 1);
  free(out);
  json_decref(all);
  json_decref(fresh);
  json_decref(before);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_apply_scale_trace, setup, teardown)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
