/*
 * test_replicas_lab.c - the webhook as a real control plane runs it: several
 * replicas behind a Service (lbproxy, tests/support/wh_replicas.c), called
 * by two API servers on one etcd (`lab/lab up --apiservers 2`).
 *
 * A person writes through the second API server with plain kubectl: creates a
 * Deployment of 10 replicas and scales it five times, 10 -> 12 -> ... -> 20,
 * each time until every replica is ready. The controllers write through the
 * first, so consecutive writes of one cascade reach different replicas. Each
 * write's root CPID comes from the webhook's admission warning ("ripple: cpid
 * X", which kubectl prints).
 *
 * Then the trace server must put each change's own Pods under its root and
 * under no later change's: the bindings of the Pods a change made (by name)
 * in its trace and in no later root's, and exactly its own number of Pod
 * creates (10 for the creation, 2 per scale) in its trace but in no later
 * root's. Not "in no other root's trace": the ReplicaSet's context merges
 * each scale's root with the one it had (the CPID paper's merge), so a root's
 * related CPIDs include every later scale's, and the creation's trace holds
 * every Pod; that is the method, not a fault. A replica that did not admit a
 * scale leaves the scale's Pods under an earlier change: they are missing
 * from the scale's own trace.
 *
 * It needs a lab with two API servers ($RIPPLE_LAB_KUBECONFIG2, which
 * `lab/lab env` prints then); without one it exits 77, which CTest reports as
 * skipped.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cascade_lab.h"

#define REPLICAS 3 /* webhook replicas; $RIPPLE_TEST_WEBHOOK_REPLICAS for others */
#define SCALES 5
#define FIRST 10 /* the Deployment's replicas at its creation */
#define STEP 2

static const char *kubeconfig2(void) {
  static char path[300];
  const char *k = getenv("RIPPLE_LAB_KUBECONFIG2"), *dir = getenv("RIPPLE_LAB_DIR");
  if (k) return k;
  snprintf(path, sizeof path, "%s/kubeconfig-2", dir ? dir : "/tmp/ripple-lab");
  return access(path, R_OK) == 0 ? path : NULL;
}

static const char *kubectl(void) {
  static char path[300];
  const char *bin = getenv("RIPPLE_LAB_BIN");
  snprintf(path, sizeof path, "%s%s", bin ? bin : "", bin ? "/kubectl" : "kubectl");
  return path;
}

/* kubectl on the second API server in the test's namespace; its output and
 * warnings into *out (the caller's). Fails the test unless it exits 0. */
static void kubectl2(char **out, const char *args) {
  int rc =
      lab_sh(out, "'%s' --kubeconfig '%s' -n '%s' %s 2>&1", kubectl(), kubeconfig2(), cl.ns, args);
  if (rc != 0) fail_msg("kubectl %s: exit %d: %s", args, rc, *out ? *out : "");
}

/* The CPID of the "ripple: cpid X" warning kubectl printed; fails without one. */
static void warning_cpid(const char *out, char cpid[CL_CPID]) {
  const char *w = strstr(out, "ripple: cpid ");
  if (!w || strlen(w + 13) < RIPPLE_CPID_STRLEN) {
    fail_msg("no ripple warning in: %s", out);
    return;
  }
  memcpy(cpid, w + 13, RIPPLE_CPID_STRLEN);
  cpid[RIPPLE_CPID_STRLEN] = '\0';
}

/* Does a dry-run write through the second API server come back annotated?
 * Each API server learns of the registration from its own watch. */
static int second_calls_webhook(void *ud) {
  (void)ud;
  char *out = NULL;
  int rc = lab_sh(&out,
                  "'%s' --kubeconfig '%s' -n '%s' create service clusterip probe --tcp=80 "
                  "--dry-run=server -o jsonpath='{.metadata.annotations}' 2>&1",
                  kubectl(), kubeconfig2(), cl.ns);
  int ok = rc == 0 && out && strstr(out, "cpid.ripple.dev/service");
  free(out);
  return ok;
}

/* One person's change: its root, the Pods it made, and what its trace holds. */
typedef struct change {
  char cpid[CL_CPID];
  int replicas;
  json_t *pods;     /* {name: true} of its new Pods */
  json_t *creates;  /* {span_id: true} of the Pod creates in its trace */
  json_t *bindings; /* {pod name: true} of the bindings in its trace */
} change_t;

/* Wait until the Deployment has c->replicas ready; its new Pods are the ones
 * not in *seen, which then holds every Pod. */
static void settle(change_t *c, json_t *seen) {
  cl_wait_fields("deployments", "web", c->replicas, CL_READY_APPS, 120000);
  json_t *all = lab_names(cl.kc, "pods", cl.ns, "app=web");
  c->pods = json_object();
  const char *k;
  json_t *v;
  json_object_foreach(all, k, v) {
    if (!json_object_get(seen, k)) json_object_set(c->pods, k, json_true());
  }
  json_object_update(seen, all);
  json_decref(all);
}

/* ---- what the trace server holds -------------------------------------------- */

static int problems;

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void problem(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "# PROBLEM: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  problems++;
}

/* The Pod creates and bindings in c's trace. */
static void load_trace(change_t *c) {
  json_t *t = whlab_trace(&cl, c->cpid, "spans");
  c->creates = json_object();
  c->bindings = json_object();
  size_t i;
  json_t *s;
  json_array_foreach(json_object_get(t, "spans"), i, s) {
    const char *name = json_string_value(json_object_get(s, "name"));
    if (!strcmp(name, "create pods"))
      json_object_set_new(c->creates, json_string_value(json_object_get(s, "span_id")),
                          json_true());
    if (!strcmp(name, "create pods/binding"))
      json_object_set_new(c->bindings, cl_attr(s, "name"), json_true());
  }
  json_decref(t);
}

/* Change k of ch[0..n-1]: its Pods in its trace and in no later one's, and
 * want Pod creates that no later trace has. */
static void check_change(const change_t *ch, int n, int k, size_t want) {
  const change_t *c = &ch[k];
  const char *key;
  json_t *v;
  json_object_foreach(c->pods, key, v) {
    if (!json_object_get(c->bindings, key))
      problem("Pod %s of the change to %d replicas is not in its trace", key, c->replicas);
    for (int j = k + 1; j < n; j++)
      if (json_object_get(ch[j].bindings, key))
        problem("Pod %s of the change to %d replicas is in the later change's to %d", key,
                c->replicas, ch[j].replicas);
  }
  size_t own = 0;
  json_object_foreach(c->creates, key, v) {
    int later = 0;
    for (int j = k + 1; j < n && !later; j++) later = json_object_get(ch[j].creates, key) != NULL;
    own += !later;
  }
  if (own != want)
    problem("root %s (to %d replicas): %zu Pod creates of its own in its trace, want %zu", c->cpid,
            c->replicas, own, want);
  fprintf(stderr, "# root %s (to %d replicas): %zu Pod creates in its trace, %zu of its own\n",
          c->cpid, c->replicas, json_object_size(c->creates), own);
}

/* On failure, for whoever reads the log: each root's merges, as
 * "merged <- sources (object)", and which CPIDs its Pod creates carry. */
static void dump_root(const change_t *c) {
  json_t *m = whlab_trace(&cl, c->cpid, "mergelogs"), *t = whlab_trace(&cl, c->cpid, "spans");
  fprintf(stderr, "# root %s (to %d replicas):\n", c->cpid, c->replicas);
  size_t i;
  json_t *ml;
  json_array_foreach(json_object_get(m, "mergelogs"), i, ml) {
    char *src = json_dumps(json_object_get(ml, "sources"), JSON_COMPACT);
    const json_t *o = json_object_get(ml, "object");
    fprintf(stderr, "#   merge %.8s <- %s (%s %s) by %s\n",
            json_string_value(json_object_get(ml, "cpid")), src ? src : "?",
            lab_str(o, "kind") ? lab_str(o, "kind") : "",
            lab_str(o, "name") ? lab_str(o, "name") : "",
            lab_str(ml, "component") ? lab_str(ml, "component") : "");
    free(src);
  }
  json_array_foreach(json_object_get(t, "spans"), i, ml) {
    const char *name = json_string_value(json_object_get(ml, "name"));
    if (strcmp(name, "create pods") != 0 && strcmp(name, "update replicasets") != 0 &&
        strcmp(name, "update deployments/scale") != 0)
      continue;
    fprintf(stderr, "#   span %s %s cpid %.8s\n", name, cl_attr(ml, "name"),
            json_string_value(json_object_get(ml, "cpid")));
  }
  json_decref(m);
  json_decref(t);
}

/* ---- the test ------------------------------------------------------------------ */

static void scales_through_the_second_apiserver(void **state) {
  (void)state;
  whlab_begin_cluster(&cl, "t-replicas");
  const char *r = getenv("RIPPLE_TEST_WEBHOOK_REPLICAS");
  cl.replicas = r ? (int)strtol(r, NULL, 10) : REPLICAS;
  if (cl.replicas < 1 || cl.replicas > WHLAB_REPLICAS_MAX)
    fail_msg("replicas: 1 to %d", WHLAB_REPLICAS_MAX);
  /* RIPPLE_TEST_NO_DECIDER=1: replicas that share nothing, to see the bug. */
  cl.no_decider = getenv("RIPPLE_TEST_NO_DECIDER") != NULL;
  whlab_start(&cl);
  whlab_register(&cl, "ripple-repl");
  cl_wait(second_calls_webhook, NULL, 60000, "the second API server to call the webhook");

  change_t ch[1 + SCALES] = {{.replicas = FIRST}};
  json_t *seen = json_object();
  char *out = NULL, args[128];
  snprintf(args, sizeof args, "create deployment web --image=%s:1 --replicas=%d", CL_IMAGE, FIRST);
  kubectl2(&out, args);
  warning_cpid(out, ch[0].cpid);
  free(out);
  settle(&ch[0], seen);
  for (int s = 1; s <= SCALES; s++) {
    ch[s].replicas = FIRST + STEP * s;
    snprintf(args, sizeof args, "scale deployment web --replicas=%d", ch[s].replicas);
    kubectl2(&out, args);
    warning_cpid(out, ch[s].cpid);
    free(out);
    settle(&ch[s], seen);
    fprintf(stderr, "# scale to %d: root %s\n", ch[s].replicas, ch[s].cpid);
  }

  cl_spans_settle();
  for (int s = 0; s <= SCALES; s++) load_trace(&ch[s]);
  for (int s = 0; s <= SCALES; s++) check_change(ch, 1 + SCALES, s, s ? STEP : FIRST);
  if (problems) {
    for (int s = 0; s <= SCALES; s++) dump_root(&ch[s]);
    json_t *all = cl_all_spans();
    cl_dump_spans("every span", all);
    json_decref(all);
    fail_msg("%d problems with %d webhook replicas (above): a change's Pods under another one",
             problems, cl.replicas);
  }
  for (int s = 0; s <= SCALES; s++) {
    json_decref(ch[s].pods);
    json_decref(ch[s].creates);
    json_decref(ch[s].bindings);
  }
  json_decref(seen);
  whlab_unregister(&cl);
  whlab_ns_delete(&cl);
}

int main(void) {
  if (!kubeconfig2()) {
    fprintf(stderr,
            "test_replicas_lab: skipped: it needs a lab with two API servers "
            "(lab/lab up --apiservers 2; $RIPPLE_LAB_KUBECONFIG2 from lab/lab env)\n");
    return 77;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(scales_through_the_second_apiserver, cl_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
