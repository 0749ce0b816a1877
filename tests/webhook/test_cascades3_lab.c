/*
 * test_cascades3_lab.c - no false merges (property test), with the real
 * ripple-webhook and ripple-server on the lab.
 *
 * In one namespace, workloads of every built-in kind (Deployments,
 * StatefulSets, a DaemonSet, Jobs, a CronJob, ReplicaSets, bare Pods, one
 * named by generateName), each with a Service selecting only its own Pods and
 * each written by a person with its own root CPID, are created, then scaled,
 * rolled out and touched, then deleted, every phase's writes in a seeded
 * random order with no wait in between, so that the controllers work on all
 * of them at once. Nothing relates two workloads, so:
 *
 *   - every Pod carries a CPID related to a root of its own workload;
 *   - the CPIDs related to the roots of one workload and those related to the
 *     roots of another are disjoint (a CPID in both is a false merge);
 *   - every person's DELETE was a root (its admission warning names it).
 *
 * RIPPLE_TEST_SEED picks other sizes and orders; the seed is printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cascade_lab.h"
#include "http_client.h"

#define NW 12
#define CONTAINERS_V "\"containers\":[{\"name\":\"c\",\"image\":\"ripple.invalid/noop:%d\"}]"

typedef enum { K_DEPLOY, K_STS, K_DS, K_JOB, K_CRON, K_RS, K_POD, K_GENPOD } wkind_t;

static const struct {
  const char *res, *kind;
} KINDS[] = {{"deployments", "Deployment"},
             {"statefulsets", "StatefulSet"},
             {"daemonsets", "DaemonSet"},
             {"jobs", "Job"},
             {"cronjobs", "CronJob"},
             {"replicasets", "ReplicaSet"},
             {"pods", "Pod"},
             {"pods", "Pod"}};

static const wkind_t PLAN[NW] = {K_DEPLOY, K_DEPLOY, K_STS, K_STS, K_DS,  K_JOB,
                                 K_JOB,    K_CRON,   K_RS,  K_RS,  K_POD, K_GENPOD};

typedef struct workload {
  wkind_t kind;
  char name[64]; /* the object's name (a generateName Pod: the one it got) */
  char app[32];  /* its Pods' label app= */
  int replicas;
  json_t *roots; /* root CPIDs of this workload's changes */
} workload_t;

static workload_t w[NW];
static unsigned long long seed, rng;
static int missing_warnings;

static unsigned rnd(unsigned n) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (unsigned)((rng * 2685821657736338717ULL) >> 33) % n;
}

static void shuffle(int *a, int n) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)rnd((unsigned)i + 1), t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

static void add_root(workload_t *x, const char *cpid) {
  json_array_append_new(x->roots, json_string(cpid));
}

/* ---- phase 1: create ------------------------------------------------------------ */

static json_t *pod_template(const workload_t *x, int restart_never) {
  return lab_json("{\"metadata\":{\"labels\":{\"app\":\"%s\"}},\"spec\":{%s" CONTAINERS_V "}}",
                  x->app, restart_never ? "\"restartPolicy\":\"Never\"," : "", 1);
}

static json_t *workload_json(const workload_t *x) {
  json_t *o = lab_json("{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\"}}",
                       x->kind == K_JOB || x->kind == K_CRON ? "batch/v1"
                       : x->kind >= K_POD                    ? "v1"
                                                             : "apps/v1",
                       KINDS[x->kind].kind, x->name);
  json_t *sel = lab_json("{\"matchLabels\":{\"app\":\"%s\"}}", x->app), *spec = NULL;
  switch (x->kind) {
    case K_DEPLOY:
    case K_RS:
    case K_STS:
    case K_DS:
      spec = json_pack("{s:O,s:o}", "selector", sel, "template", pod_template(x, 0));
      if (x->kind != K_DS) json_object_set_new(spec, "replicas", json_integer(x->replicas));
      if (x->kind == K_STS) {
        json_object_set_new(spec, "serviceName", json_string(x->name));
        json_object_set_new(spec, "podManagementPolicy", json_string("Parallel"));
      }
      break;
    case K_JOB:
    case K_CRON:
      spec = json_pack("{s:i,s:i,s:o}", "completions", x->replicas, "parallelism", x->replicas,
                       "template", pod_template(x, 1));
      if (x->kind == K_CRON)
        spec = json_pack("{s:s,s:s,s:{s:o}}", "schedule", "* * * * *", "concurrencyPolicy",
                         "Forbid", "jobTemplate", "spec", spec);
      break;
    case K_POD:
    case K_GENPOD:
      json_decref(o);
      json_decref(sel);
      o = lab_json(
          "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"%s\":\"%s\","
          "\"labels\":{\"app\":\"%s\"}},\"spec\":{" CONTAINERS_V "}}",
          x->kind == K_GENPOD ? "generateName" : "name", x->name, x->app, 1);
      return o;
  }
  json_decref(sel);
  json_object_set_new(o, "spec", spec);
  return o;
}

/* Create with a root context of the object's kind; a generateName Pod learns
 * its name from the answer. */
static void create_workload(workload_t *x) {
  json_t *o = workload_json(x), *out = NULL;
  char key[RIPPLE_ANNOTATION_KEYMAX], cpid[CL_CPID], value[64];
  assert_int_equal(ripple_annotation_key(KINDS[x->kind].kind, key, sizeof key), RIPPLE_OK);
  whlab_new_cpid(cpid);
  snprintf(value, sizeof value, "1;%s", cpid);
  json_object_set_new(json_object_get(o, "metadata"), "annotations",
                      json_pack("{s:s}", key, value));
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(cl.kc, lab_resolve(cl.kc, KINDS[x->kind].res), cl.ns, o, NULL, &out,
                                &st));
  if (x->kind == K_GENPOD) snprintf(x->name, sizeof x->name, "%s", lab_str(out, "metadata.name"));
  json_decref(o);
  json_decref(out);
  add_root(x, cpid);
}

static void create_service(workload_t *x) {
  char cpid[CL_CPID], name[80];
  snprintf(name, sizeof name, "%s", x->app);
  cl_create_root("services",
                 lab_json("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":"
                          "\"%s\"},\"spec\":{\"selector\":{\"app\":\"%s\"},\"ports\":[{"
                          "\"port\":80}]}}",
                          name, x->app),
                 cpid);
  add_root(x, cpid);
}

/* ---- settling ------------------------------------------------------------------- */

static int settled_one(const workload_t *x, int nodes) {
  if (x->kind == K_CRON) return 1;
  json_t *o = cl_get(KINDS[x->kind].res, x->name);
  long long want = lab_int(o, "spec.replicas");
  int ok = o != NULL;
  if (ok && lab_at(o, "status.observedGeneration"))
    ok = lab_int(o, "status.observedGeneration") == lab_int(o, "metadata.generation");
  switch (x->kind) {
    case K_DEPLOY:
      ok = ok && lab_int(o, "status.updatedReplicas") == want &&
           lab_int(o, "status.availableReplicas") == want && lab_int(o, "status.replicas") == want;
      break;
    case K_STS:
    case K_RS:
      ok =
          ok && lab_int(o, "status.readyReplicas") == want && lab_int(o, "status.replicas") == want;
      break;
    case K_DS:
      ok = ok && lab_int(o, "status.numberReady") == nodes &&
           lab_int(o, "status.updatedNumberScheduled") == nodes;
      break;
    case K_JOB: ok = ok && lab_int(o, "status.succeeded") == x->replicas; break;
    default:
      ok = ok && lab_str(o, "status.phase") && !strcmp(lab_str(o, "status.phase"), "Running");
  }
  json_decref(o);
  return ok;
}

static int all_settled(void *ud) {
  int nodes = *(int *)ud;
  for (int i = 0; i < NW; i++)
    if (!settled_one(&w[i], nodes)) return 0;
  return 1;
}

static int no_pods(void *ud) {
  (void)ud;
  json_t *p = lab_names(cl.kc, "pods", cl.ns, NULL);
  int ok = json_object_size(p) == 0;
  json_decref(p);
  return ok;
}

/* ---- phase 2: change; phase 3: delete ----------------------------------------------- */

/* Op i of the change phase: 2 per workload (the second only for Deployments). */
static void change(int op) {
  workload_t *x = &w[op / 2];
  char cpid[CL_CPID], fields[256];
  int second = op % 2;
  if (second && x->kind != K_DEPLOY) return;
  switch (x->kind) {
    case K_DEPLOY:
    case K_STS:
    case K_RS:
      if (x->kind == K_DEPLOY && second) {
        snprintf(fields, sizeof fields, "\"spec\":{\"template\":{\"spec\":{" CONTAINERS_V "}}}",
                 2 + (int)rnd(5));
      } else {
        x->replicas = 1 + (int)rnd(x->kind == K_STS ? 6 : 30);
        snprintf(fields, sizeof fields, "\"spec\":{\"replicas\":%d}", x->replicas);
      }
      break;
    case K_DS:
      snprintf(fields, sizeof fields, "\"spec\":{\"template\":{\"spec\":{" CONTAINERS_V "}}}", 2);
      break;
    case K_POD:
    case K_GENPOD:
      snprintf(fields, sizeof fields, "\"metadata\":{\"labels\":{\"touched\":\"yes\"}}");
      break;
    default: /* Jobs, the CronJob: a person's write of the context alone */ fields[0] = '\0';
  }
  if (x->kind == K_POD || x->kind == K_GENPOD) { /* metadata once: labels and context */
    char key[RIPPLE_ANNOTATION_KEYMAX], patch[512];
    assert_int_equal(ripple_annotation_key("Pod", key, sizeof key), RIPPLE_OK);
    whlab_new_cpid(cpid);
    snprintf(patch, sizeof patch,
             "{\"metadata\":{\"labels\":{\"touched\":\"yes\"},\"annotations\":{\"%s\":\"1;%s\"}}}",
             key, cpid);
    whlab_patch(&cl, "pods", x->name, patch);
  } else {
    cl_patch_root(KINDS[x->kind].res, KINDS[x->kind].kind, x->name, fields[0] ? fields : NULL,
                  cpid);
  }
  add_root(x, cpid);
}

/* Op i of the delete phase: the workload (even) or its Service (odd). */
static void delete_op(int op) {
  workload_t *x = &w[op / 2];
  char cpid[CL_CPID];
  if (op % 2)
    cl_delete_person("services", cl.ns, x->app, cpid);
  else
    cl_delete_person(KINDS[x->kind].res, cl.ns, x->name, cpid);
  if (!cpid[0]) {
    fprintf(stderr, "# seed %llu: the DELETE of %s %s got no \"ripple: cpid\" warning\n", seed,
            op % 2 ? "service" : KINDS[x->kind].res, op % 2 ? x->app : x->name);
    missing_warnings++;
    return;
  }
  add_root(x, cpid);
}

/* ---- the checks ------------------------------------------------------------------ */

/* {cpid: workload index} over the related sets of every root; a CPID reached
 * from two workloads' roots is reported (at most 10) and counted. */
static int owners(json_t *owner) {
  int clashes = 0;
  json_t *seen = json_object();
  for (int i = 0; i < NW; i++) {
    size_t r;
    json_t *root;
    json_array_foreach(w[i].roots, r, root) {
      json_t *rel = cl_related_set(json_string_value(root));
      const char *c;
      json_t *v;
      json_object_foreach(rel, c, v) {
        json_t *o = json_object_get(owner, c);
        if (!o) {
          json_object_set_new(owner, c, json_integer(i));
        } else if (json_integer_value(o) != i && !json_object_get(seen, c)) {
          json_object_set_new(seen, c, json_true());
          if (clashes++ >= 10) continue;
          json_t *org = whlab_trace(&cl, c, "origins");
          char *d = json_dumps(org, JSON_COMPACT);
          fprintf(stderr, "# FALSE MERGE: %s reached from %s (%s) and %s; origins %s\n", c,
                  w[i].name, json_string_value(root), w[json_integer_value(o)].name, d);
          free(d);
          json_decref(org);
        }
      }
      json_decref(rel);
    }
  }
  json_decref(seen);
  return clashes;
}

/* Whether an origin of cpid carries the causeUnknown mark: a replica that
 * could not reach the decider (a forward failed, as on a loaded machine)
 * decided alone and said so. Such a Pod is cut from its change, visibly;
 * it is not merged into another's. */
static int cut_marked(const char *cpid) {
  json_t *org = whlab_trace(&cl, cpid, "origins");
  int marked = 0;
  size_t i, j;
  json_t *o, *s;
  json_array_foreach(json_object_get(org, "origins"), i, o) {
    json_t *sp = whlab_trace(&cl, json_string_value(o), "spans");
    json_t *arr = json_is_array(sp) ? sp : json_object_get(sp, "spans");
    json_array_foreach(arr, j, s) marked |= !strcmp(cl_attr(s, "causeUnknown"), "true");
    json_decref(sp);
  }
  json_decref(org);
  return marked;
}

/* Every live Pod's CPID is related to a root of its own workload, or (cut,
 * never merged) to a root marked causeUnknown alone. */
static void check_pods(void) {
  json_t *owner = json_object();
  int clashes = owners(owner);
  if (clashes) fail_msg("seed %llu: %d CPIDs shared by two workloads (above)", seed, clashes);
  json_t *pods = cl_cpids("pods", NULL, "Pod");
  size_t checked = 0;
  const char *k;
  json_t *v;
  json_object_foreach(pods, k, v) {
    json_t *p = cl_get("pods", k);
    const char *app = p ? lab_str(p, "metadata.labels.app") : NULL;
    int i = app ? (int)strtol(app + 1, NULL, 10) : -1;
    json_decref(p);
    if (!app || i < 0 || i >= NW || w[i].kind == K_CRON) continue;
    const char *id = json_string_value(v);
    json_t *o = *id ? json_object_get(owner, id) : NULL;
    if (!o && *id && cut_marked(id)) {
      fprintf(stderr, "# pod %s of %s: cut from its change, marked causeUnknown\n", k, w[i].name);
      continue;
    }
    if (!o || json_integer_value(o) != i)
      fail_msg("seed %llu: pod %s of %s carries \"%s\", related to %s", seed, k, w[i].name, id,
               o ? w[json_integer_value(o)].name : "no root of any workload");
    checked++;
  }
  fprintf(stderr, "# %zu pods checked, %zu CPIDs owned\n", checked, json_object_size(owner));
  assert_true(checked >= NW - 1);
  json_decref(pods);
  json_decref(owner);
}

static void plan(void) {
  for (int i = 0; i < NW; i++) {
    workload_t *x = &w[i];
    memset(x, 0, sizeof *x);
    x->kind = PLAN[i];
    x->roots = json_array();
    snprintf(x->app, sizeof x->app, "w%d", i);
    snprintf(x->name, sizeof x->name, "w%d-%s%s", i, KINDS[x->kind].res,
             x->kind == K_GENPOD ? "-" : "");
    x->replicas = x->kind == K_DEPLOY || x->kind == K_RS  ? 6 + (int)rnd(15)
                  : x->kind == K_STS                      ? 2 + (int)rnd(5)
                  : x->kind == K_JOB || x->kind == K_CRON ? 2 + (int)rnd(5)
                                                          : 1;
  }
}

static void test_no_false_merges(void **state) {
  (void)state;
  const char *env = getenv("RIPPLE_TEST_SEED");
  seed = env ? strtoull(env, NULL, 10) : 20261123;
  rng = seed ? seed : 1;
  fprintf(stderr, "# seed %llu (RIPPLE_TEST_SEED picks another)\n", seed);
  cl_begin("ripple-casc-i");
  int nodes = cl_nodes(), ops[2 * NW];
  plan();
  for (int i = 0; i < 2 * NW; i++) ops[i] = i;
  shuffle(ops, 2 * NW);
  for (int i = 0; i < 2 * NW; i++) {
    if (ops[i] % 2)
      create_service(&w[ops[i] / 2]);
    else
      create_workload(&w[ops[i] / 2]);
  }
  cl_wait(all_settled, &nodes, 240000, "every workload to be created");
  shuffle(ops, 2 * NW);
  for (int i = 0; i < 2 * NW; i++) change(ops[i]);
  cl_wait(all_settled, &nodes, 240000, "every workload to take its change");
  cl_spans_settle();
  check_pods();
  shuffle(ops, 2 * NW);
  for (int i = 0; i < 2 * NW; i++) delete_op(ops[i]);
  cl_wait(no_pods, NULL, 240000, "every pod to be gone");
  cl_spans_settle();
  json_t *owner = json_object();
  int clashes = owners(owner);
  fprintf(stderr, "# after the deletes: %zu CPIDs owned\n", json_object_size(owner));
  json_decref(owner);
  if (clashes) fail_msg("seed %llu: %d CPIDs shared by two workloads (above)", seed, clashes);
  if (missing_warnings) fail_msg("seed %llu: %d DELETEs were not roots", seed, missing_warnings);
  for (int i = 0; i < NW; i++) json_decref(w[i].roots);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_no_false_merges, cl_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
