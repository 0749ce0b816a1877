/*
 * test_own_cascade_lab.c - a change's own cascade (docs/api.md, "Own cascade
 * and everything reachable") on the lab, through the real webhook and trace
 * server: a Deployment scaled four times by a person (a merge patch with a
 * fresh root context, as `kubectl ripple scale` writes it), each scale
 * waiting until every replica is ready.
 *
 * The webhook names each merge's trigger (the newest change it merged), so
 * each scale's own cascade (scope=own) holds exactly its own new Pods: their
 * creates (as many as the scale added), their bindings (by Pod name) and the
 * Pods' contexts (by CPID), and none of another scale's. Everything reachable
 * from the first scale (the default of /related and /spans, the CPID paper's
 * set) still holds the later scales' Pods: each later scale's ReplicaSet
 * update merges the ReplicaSet's context from the scale before. The trace
 * answer (what kubectl ripple and the dashboard ask) is own by default.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cascade_lab.h"
#include "http_client.h"

#define FIRST 2 /* replicas at the creation */
#define STEP 2  /* Pods each scale adds */
#define SCALES 4

/* One scale: its root, its new Pods ({name: their context's CPID}) and what
 * its own cascade holds. */
typedef struct scale {
  char cpid[CL_CPID];
  int replicas;
  json_t *pods;
  json_t *own;      /* {cpid: true}: related?scope=own */
  json_t *bindings; /* {pod name: true} of the bindings in spans?scope=own */
  size_t creates;   /* Pod creates in spans?scope=own */
} scale_t;

static int problems;

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void problem(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "# problem: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  problems++;
}

/* The Pods of app=web not in seen ({name: cpid}), which then holds them all. */
static json_t *new_pods(json_t *seen) {
  json_t *all = cl_cpids("pods", "app=web", "pod"), *fresh = json_object();
  const char *k;
  json_t *v;
  json_object_foreach(all, k, v) {
    if (!json_object_get(seen, k)) json_object_set(fresh, k, v);
  }
  json_object_update(seen, all);
  json_decref(all);
  return fresh;
}

/* GET /v1/cpids/{cpid}/{what} as JSON (fails the test unless 200). */
static json_t *ask(const char *cpid, const char *what) { return whlab_trace(&cl, cpid, what); }

/* The Pod creates and bindings of a spans answer. */
static void pod_writes(const json_t *ans, size_t *creates, json_t *bindings) {
  size_t i;
  json_t *s;
  *creates = 0;
  json_array_foreach(json_object_get(ans, "spans"), i, s) {
    const char *name = json_string_value(json_object_get(s, "name"));
    if (!strcmp(name, "create pods")) ++*creates;
    if (!strcmp(name, "create pods/binding") && bindings)
      json_object_set_new(bindings, cl_attr(s, "name"), json_true());
  }
}

static json_t *cpid_set(const json_t *ans) {
  json_t *set = json_object(), *v;
  size_t i;
  if (json_is_true(json_object_get(ans, "truncated"))) fail_msg("a cascade was cut short");
  json_array_foreach(json_object_get(ans, "related"), i, v) {
    json_object_set_new(set, json_string_value(v), json_true());
  }
  return set;
}

static void load_own(scale_t *s) {
  json_t *rel = ask(s->cpid, "related?scope=own");
  if (strcmp(json_string_value(json_object_get(rel, "scope")), "own") != 0)
    fail_msg("related?scope=own answered another scope");
  s->own = cpid_set(rel);
  json_decref(rel);
  json_t *sp = ask(s->cpid, "spans?scope=own");
  s->bindings = json_object();
  pod_writes(sp, &s->creates, s->bindings);
  json_decref(sp);
  /* The trace answer is own by default, and the same. */
  json_t *t = ask(s->cpid, "trace");
  size_t creates;
  pod_writes(t, &creates, NULL);
  if (strcmp(json_string_value(json_object_get(t, "scope")), "own") != 0 || creates != s->creates)
    problem("scale to %d: /trace (scope %s) has %zu Pod creates, spans?scope=own %zu", s->replicas,
            json_string_value(json_object_get(t, "scope")), creates, s->creates);
  json_decref(t);
}

/* Scale k's own cascade: exactly its own Pods, none of another scale's. */
static void check_own(const scale_t *sc, int k) {
  const scale_t *s = &sc[k];
  fprintf(stderr, "# scale to %d (%s): %zu Pod creates, %zu bindings, %zu CPIDs of its own\n",
          s->replicas, s->cpid, s->creates, json_object_size(s->bindings),
          json_object_size(s->own));
  if (s->creates != STEP)
    problem("scale to %d: %zu Pod creates in its own cascade, want %d", s->replicas, s->creates,
            STEP);
  if (json_object_size(s->bindings) != STEP)
    problem("scale to %d: %zu bindings in its own cascade, want %d", s->replicas,
            json_object_size(s->bindings), STEP);
  const char *name;
  json_t *cpid;
  json_object_foreach(s->pods, name, cpid) {
    const char *c = json_string_value(cpid);
    if (!json_object_get(s->bindings, name))
      problem("Pod %s of the scale to %d: its binding is not in its own cascade", name,
              s->replicas);
    if (!c || !*c || !json_object_get(s->own, c))
      problem("Pod %s of the scale to %d: its CPID %s is not in its own cascade", name, s->replicas,
              c ? c : "(none)");
    for (int j = 0; j < SCALES; j++) {
      if (j == k) continue;
      if (json_object_get(sc[j].bindings, name))
        problem("Pod %s of the scale to %d is in the own cascade of the scale to %d", name,
                s->replicas, sc[j].replicas);
      if (c && *c && json_object_get(sc[j].own, c))
        problem("Pod %s's CPID %s (scale to %d) is in the own cascade of the scale to %d", name, c,
                s->replicas, sc[j].replicas);
    }
  }
}

/* Everything reachable from the first scale holds every later scale's Pods. */
static void check_reachable(const scale_t *sc) {
  json_t *rel = ask(sc[0].cpid, "related"), *sp = ask(sc[0].cpid, "spans");
  json_t *all = cpid_set(rel), *bindings = json_object();
  size_t creates;
  pod_writes(sp, &creates, bindings);
  fprintf(stderr, "# everything reachable from the first scale: %zu CPIDs, %zu Pod creates\n",
          json_object_size(all), creates);
  if (creates < (size_t)SCALES * STEP)
    problem("the first scale reaches %zu Pod creates, want at least %d", creates, SCALES * STEP);
  for (int k = 1; k < SCALES; k++) {
    const char *name;
    json_t *cpid;
    json_object_foreach(sc[k].pods, name, cpid) {
      if (!json_object_get(bindings, name))
        problem("Pod %s of the scale to %d is not reachable from the first scale", name,
                sc[k].replicas);
    }
  }
  json_decref(rel);
  json_decref(sp);
  json_decref(all);
  json_decref(bindings);
}

static void test_own_cascades(void **state) {
  (void)state;
  cl_begin("ripple-own");
  char c0[CL_CPID];
  cl_create_root("deployments", cl_deployment("web", FIRST), c0);
  cl_wait_fields("deployments", "web", FIRST, CL_READY_APPS, 120000);
  json_t *seen = json_object();
  json_decref(new_pods(seen));
  scale_t sc[SCALES];
  memset(sc, 0, sizeof sc);
  for (int k = 0; k < SCALES; k++) {
    char fields[64];
    sc[k].replicas = FIRST + STEP * (k + 1);
    snprintf(fields, sizeof fields, "\"spec\":{\"replicas\":%d}", sc[k].replicas);
    cl_patch_root("deployments", "deployment", "web", fields, sc[k].cpid);
    cl_wait_fields("deployments", "web", sc[k].replicas, CL_READY_APPS, 120000);
    sc[k].pods = new_pods(seen);
    if (json_object_size(sc[k].pods) != STEP)
      fail_msg("the scale to %d made %zu Pods, want %d", sc[k].replicas,
               json_object_size(sc[k].pods), STEP);
  }
  cl_spans_settle();
  for (int k = 0; k < SCALES; k++) load_own(&sc[k]);
  for (int k = 0; k < SCALES; k++) check_own(sc, k);
  check_reachable(sc);
  for (int k = 0; k < SCALES; k++) {
    json_decref(sc[k].pods);
    json_decref(sc[k].own);
    json_decref(sc[k].bindings);
  }
  json_decref(seen);
  if (problems) fail_msg("%d problems (above)", problems);
  cl_nothing_refused();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_own_cascades, cl_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
