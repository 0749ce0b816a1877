/*
 * test_webhook_causes.c - where a write's context may come from, and whose
 * change a delete belongs to (webhook/decide.c, sources.c, deletes.c,
 * memo.c), without a cluster.
 *
 * The rule under test: a context comes only from the object itself, an
 * instrumented client, or a related object confirmed by the relation rules;
 * nothing remembered under a key that names more than one object (a
 * generated name, a reused name) may become a source.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ripplex/sbuf.h"
#include "wh_fixture.h"

#define RS_SA "system:serviceaccount:kube-system:replicaset-controller"
#define GC_SA "system:serviceaccount:kube-system:generic-garbage-collector"
#define NS_SA "system:serviceaccount:kube-system:namespace-controller"
#define Y_CPID "5e5e5e5e-1111-4222-8333-444455556666"

static void cpid_of_span(fx_t *f, size_t i, char *id) {
  assert_true(i < f->cap->nsp);
  fmt(&f->cap->sp[i].cpid, id);
}

/* A generateName create of a kind's Pod, owned by (kind, name, uid). */
static void create_generated_pod(fx_t *f, const char *user, const char *kind, const char *owner,
                                 const char *uid) {
  char obj[1024];
  snprintf(obj, sizeof obj,
           "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":\"%s-\","
           "\"namespace\":\"d\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"%s\","
           "\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true}]}}",
           owner, kind, owner, uid);
  admit(f, "CREATE", user, "Pod", "pods", "", "d", "", obj, "null");
}

/* The lab's finding: a DaemonSet's and a Job's Pods, created at the same
 * moment in one namespace, shared a CPID, because both creates had the name
 * "" at admission and the webhook remembered contexts by name. */
static void test_generated_names_never_merge(void **state) {
  fx_t *f = *state;
  world_add(&f->world,
            "{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"metadata\":{\"name\":\"ds\","
            "\"namespace\":\"d\",\"uid\":\"ds-uid\",\"annotations\":{\"cpid.ripple.dev/daemonset\":"
            "\"1;" X_CPID "\"}}}");
  world_add(&f->world,
            "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"job\","
            "\"namespace\":\"d\",\"uid\":\"job-uid\",\"annotations\":{\"cpid.ripple.dev/job\":"
            "\"1;" S_CPID "\"}}}");
  for (int round = 0; round < 3; round++) {
    create_generated_pod(f, "system:serviceaccount:kube-system:daemon-set-controller", "DaemonSet",
                         "ds", "ds-uid");
    create_generated_pod(f, "system:serviceaccount:kube-system:job-controller", "Job", "job",
                         "job-uid");
  }
  assert_int_equal(f->cap->nsp, 6);
  for (size_t i = 0; i < 6; i++) {
    char id[40];
    cpid_of_span(f, i, id);
    assert_string_equal(id, i % 2 ? S_CPID : X_CPID);
  }
  assert_int_equal(f->cap->nml, 0); /* nothing merged, so nothing to log */
}

/* An object of a reused name is not its predecessor: the memory of the old
 * one (by uid) is not a source of the new one's children. */
static void test_reused_name_is_another_object(void **state) {
  fx_t *f = *state;
  const char *old_dep =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
      "\"namespace\":\"d\",\"uid\":\"old-uid\"}}";
  admit(f, "UPDATE", "kubernetes-admin", "Deployment", "deployments", "", "d", "web", old_dep,
        old_dep); /* a root, remembered for (web, old-uid) */
  world_add(&f->world,
            "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
            "\"namespace\":\"d\",\"uid\":\"new-uid\",\"annotations\":{\"cpid.ripple.dev/"
            "deployment\":\"1;" X_CPID "\"}}}");
  admit(f, "CREATE", "system:serviceaccount:kube-system:deployment-controller", "ReplicaSet",
        "replicasets", "", "d", "web-2",
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-2\","
        "\"namespace\":\"d\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
        "\"Deployment\",\"name\":\"web\",\"uid\":\"new-uid\",\"controller\":true}]}}",
        "null");
  char id[40];
  cpid_of_span(f, 1, id);
  assert_string_equal(id, X_CPID);
  assert_int_equal(f->cap->nml, 1); /* the root's only */
}

/* A binding is caused by its Pod: a newer change of the Pod's owner is not
 * the binding's cause. */
static void test_binding_ignores_owner_changes(void **state) {
  fx_t *f = *state;
  world_add(&f->world,
            "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\","
            "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"annotations\":{\"cpid.ripple.dev/"
            "replicaset\":\"1;" Y_CPID ";" X_CPID "\"}}}");
  world_add(&f->world,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"rs-a\",\"namespace\":"
            "\"d\",\"uid\":\"pod-uid\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
            "\"ReplicaSet\",\"name\":\"rs\",\"uid\":\"rs-uid\",\"controller\":true}],"
            "\"annotations\":{\"cpid.ripple.dev/pod\":\"1;" X_CPID "\"}}}");
  admit(f, "CREATE", "system:kube-scheduler", "Binding", "pods", "binding", "d", "rs-a",
        "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"rs-a\","
        "\"namespace\":\"d\",\"uid\":\"pod-uid\"},\"target\":{\"kind\":\"Node\",\"name\":\"n\"}}",
        "null");
  assert_string_equal(f->patch, "");
  char id[40];
  cpid_of_span(f, 0, id);
  assert_string_equal(id, X_CPID);
}

/* A scale is remembered for its Deployment's uid only. */
static void test_scale_memory_by_uid(void **state) {
  fx_t *f = *state;
  const char *scale =
      "{\"kind\":\"Scale\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\",\"uid\":\"dep-uid\"}"
      "}";
  admit(f, "UPDATE", "kubernetes-admin", "Scale", "deployments", "scale", "d", "web", scale, scale);
  assert_int_equal(f->cap->nml, 1);
#define RS_FMT                                                                            \
  "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-1\"," \
  "\"namespace\":\"d\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"        \
  "\"Deployment\",\"name\":\"web\",\"uid\":\"%s\",\"controller\":true}]}}"
  char rs[1024];
  snprintf(rs, sizeof rs, RS_FMT, "other-uid");
  admit(f, "UPDATE", "system:serviceaccount:kube-system:deployment-controller", "ReplicaSet",
        "replicasets", "", "d", "web-1", rs, rs);
  assert_string_equal(attr(&f->cap->sp[1], "spontaneous"), "true"); /* not the scale's */
  snprintf(rs, sizeof rs, RS_FMT, "dep-uid");
  admit(f, "UPDATE", "system:serviceaccount:kube-system:deployment-controller", "ReplicaSet",
        "replicasets", "", "d", "web-2", rs, rs);
  assert_true(ripple_cpid_equal(&f->cap->sp[2].cpid, &f->cap->ml[0].cpid));
}

/* An operator (a ServiceAccount outside kube-system) is a controller, and a
 * custom resource relates through its controlling ownerReference. */
static void test_operator_custom_resource_owner(void **state) {
  fx_t *f = *state;
  world_add(&f->world,
            "{\"apiVersion\":\"lab.ripple.dev/v1\",\"kind\":\"RippleApp\",\"metadata\":{\"name\":"
            "\"app\",\"namespace\":\"d\",\"uid\":\"app-uid\",\"annotations\":{"
            "\"cpid.ripple.dev/rippleapp\":\"1;" X_CPID "\"}}}");
  admit(f, "CREATE", "system:serviceaccount:ops:ripple-operator", "Deployment", "deployments", "",
        "d", "app",
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"app\","
        "\"namespace\":\"d\",\"ownerReferences\":[{\"apiVersion\":\"lab.ripple.dev/v1\",\"kind\":"
        "\"RippleApp\",\"name\":\"app\",\"uid\":\"app-uid\",\"controller\":true}]}}",
        "null");
  assert_null(warning(f)); /* not a person's root */
  char id[40];
  cpid_of_span(f, 0, id);
  assert_string_equal(id, X_CPID);
  assert_string_equal(f->cap->sp[0].service, "ripple-operator");
  assert_non_null(strstr(f->patch, X_CPID));
  /* The owner's kind is one the program's cache starts watching. */
  assert_true(world_wanted(&f->world, "lab.ripple.dev/v1 RippleApp"));
}

/* A CronJob's run: a CPID of its own (spontaneous), made from the CronJob's,
 * so that runs are told apart and still belong to the CronJob's trace. */
static void test_cronjob_tick(void **state) {
  fx_t *f = *state;
  world_add(&f->world,
            "{\"apiVersion\":\"batch/v1\",\"kind\":\"CronJob\",\"metadata\":{\"name\":\"cj\","
            "\"namespace\":\"d\",\"uid\":\"cj-uid\",\"annotations\":{\"cpid.ripple.dev/"
            "cronjob\":\"1;" X_CPID "\"}}}");
  for (int run = 0; run < 2; run++) {
    char job[1024], name[32];
    snprintf(name, sizeof name, "cj-%d", 2900 + run);
    snprintf(job, sizeof job,
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"d\",\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":"
             "\"CronJob\",\"name\":\"cj\",\"uid\":\"cj-uid\",\"controller\":true}]}}",
             name);
    admit(f, "CREATE", "system:serviceaccount:kube-system:cronjob-controller", "Job", "jobs", "",
          "d", name, job, "null");
  }
  assert_int_equal(f->cap->nml, 2);
  assert_false(ripple_cpid_equal(&f->cap->ml[0].cpid, &f->cap->ml[1].cpid));
  for (size_t i = 0; i < 2; i++) {
    char src[40];
    assert_int_equal(f->cap->ml[i].nsources, 1);
    fmt(&f->cap->ml[i].sources[0], src);
    assert_string_equal(src, X_CPID);
    assert_true(ripple_cpid_equal(&f->cap->sp[i].cpid, &f->cap->ml[i].cpid));
    assert_string_equal(attr(&f->cap->sp[i], "spontaneous"), "true");
  }
  char want[128], id[40];
  fmt(&f->cap->ml[1].cpid, id);
  snprintf(want, sizeof want, "1;%s;" X_CPID, id); /* the CronJob's CPID is its ancestor */
  if (!strstr(f->patch, want)) fail_msg("patch %s lacks %s", f->patch, want);
}

/* Reviews of authentication.k8s.io and authorization.k8s.io are never
 * stored: left alone. A custom resource that happens to end in "reviews" is
 * traced like any other. */
static void test_reviews_excluded_by_group(void **state) {
  fx_t *f = *state;
  char body[4096];
  const char *obj = "{\"kind\":\"X\",\"metadata\":{\"name\":\"r\",\"namespace\":\"d\"}}";
  review(body, sizeof body, "CREATE", "kubernetes-admin", "TokenReview", "tokenreviews", "", "d",
         "r", obj, "null");
  /* request.resource.group: review() writes "" there. */
  static const char from[] = "\"resource\":{\"group\":\"\"";
  char *g = strstr(body, from), tail[4096];
  assert_non_null(g);
  snprintf(tail, sizeof tail, "%s", g + sizeof from - 1);
  snprintf(g, sizeof body - (size_t)(g - body), "\"resource\":{\"group\":\"%s\"%s",
           "authentication.k8s.io", tail);
  post(f, body);
  assert_int_equal(f->cap->nsp, 0);
  assert_int_equal(atomic_load(&wh_metrics(f->w)->skipped), 1);
  admit(f, "CREATE", "kubernetes-admin", "CodeReview", "codereviews", "", "d", "r", obj, "null");
  assert_int_equal(f->cap->nsp, 1);
}

/* ---- deletes -------------------------------------------------------------- */

static void delete_req(fx_t *f, const char *user, const char *kind, const char *resource,
                       const char *name, const char *old) {
  admit(f, "DELETE", user, kind, resource, "", "d", name, "null", old);
  assert_string_equal(f->patch, "");
}

static const char *rs_json =
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-1\","
    "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
    "\"kind\":\"Deployment\",\"name\":\"web\",\"uid\":\"dep-uid\",\"controller\":true}],"
    "\"annotations\":{\"cpid.ripple.dev/replicaset\":\"1;" X_CPID "\"}}}";
static const char *pod_json =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1-a\",\"namespace\":"
    "\"d\",\"uid\":\"pod-uid\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
    "\"ReplicaSet\",\"name\":\"web-1\",\"uid\":\"rs-uid\",\"controller\":true}],\"annotations\":{"
    "\"cpid.ripple.dev/pod\":\"1;" P_CPID "\"}}}";

static void assert_span(fx_t *f, size_t i, const char *cpid, const char *last, const char *svc) {
  char id[40];
  cpid_of_span(f, i, id);
  if (cpid) assert_string_equal(id, cpid);
  const char *l = attr(&f->cap->sp[i], "lastCpid");
  if (last)
    assert_string_equal(l ? l : "(none)", last);
  else
    assert_null(l);
  assert_string_equal(f->cap->sp[i].service, svc);
}

/* A ReplicaSet scaled down (a rollout) deletes Pods: the deletes carry the
 * ReplicaSet's current context, the Pods' own CPIDs as lastCpid. */
static void test_delete_by_owner_controller(void **state) {
  fx_t *f = *state;
  world_add(&f->world, rs_json);
  delete_req(f, RS_SA, "Pod", "pods", "web-1-a", pod_json);
  assert_int_equal(f->cap->nsp, 1);
  assert_span(f, 0, X_CPID, P_CPID, "replicaset-controller");
  assert_string_equal(f->cap->sp[0].name, "delete pods");
  assert_int_equal(atomic_load(&wh_metrics(f->w)->deletes_caused), 1);
  assert_int_equal(f->cap->nml, 0);
}

/* A person deletes a Deployment: a root. The garbage collector's deletes of
 * its ReplicaSet and of that one's Pods, and the kubelet's final delete of a
 * Pod, all carry that root, even though the ReplicaSet is still in the
 * informer with a context of its own. */
static void test_delete_cascade(void **state) {
  fx_t *f = *state;
  world_add(&f->world, rs_json);
  delete_req(f, "kubernetes-admin", "Deployment", "deployments", "web",
             "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
             "\"namespace\":\"d\",\"uid\":\"dep-uid\",\"annotations\":{\"cpid.ripple.dev/"
             "deployment\":\"1;" S_CPID "\"}}}");
  assert_non_null(warning(f));
  assert_int_equal(f->cap->nml, 1);
  assert_int_equal(f->cap->ml[0].nsources, 0);
  char root[40];
  fmt(&f->cap->ml[0].cpid, root);
  assert_span(f, 0, root, S_CPID, "kubernetes-admin");
  delete_req(f, GC_SA, "ReplicaSet", "replicasets", "web-1", rs_json);
  assert_span(f, 1, root, X_CPID, "generic-garbage-collector");
  delete_req(f, GC_SA, "Pod", "pods", "web-1-a", pod_json);
  assert_span(f, 2, root, P_CPID, "generic-garbage-collector");
  delete_req(f, "system:node:n0", "Pod", "pods", "web-1-a", pod_json);
  assert_span(f, 3, root, P_CPID, "kubelet");
  assert_int_equal(f->cap->nml, 1);
  assert_int_equal(atomic_load(&wh_metrics(f->w)->deletes_caused), 3);
}

/* kubectl ripple delete: a patch with the client's root, then the DELETE,
 * which carries nothing: the delete and its cascade keep that root. */
static void test_delete_after_client_root(void **state) {
  fx_t *f = *state;
  world_add(&f->world, rs_json);
  const char *dep_old =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
      "\"namespace\":\"d\",\"uid\":\"dep-uid\",\"annotations\":{\"cpid.ripple.dev/"
      "deployment\":\"1;" S_CPID "\"}}}";
  const char *dep_new =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
      "\"namespace\":\"d\",\"uid\":\"dep-uid\",\"annotations\":{\"cpid.ripple.dev/"
      "deployment\":\"1;" Y_CPID "\"}}}";
  admit(f, "UPDATE", "kubernetes-admin", "Deployment", "deployments", "", "d", "web", dep_new,
        dep_old);
  assert_string_equal(warning(f), "ripple: cpid " Y_CPID);
  f->cap->now += 1000000;
  delete_req(f, "kubernetes-admin", "Deployment", "deployments", "web", dep_old);
  assert_string_equal(warning(f), "ripple: cpid " Y_CPID);
  assert_span(f, 1, Y_CPID, S_CPID, "kubernetes-admin");
  delete_req(f, GC_SA, "ReplicaSet", "replicasets", "web-1", rs_json);
  assert_span(f, 2, Y_CPID, X_CPID, "generic-garbage-collector");
  assert_int_equal(f->cap->nml, 1); /* the client's root, once */
  /* Much later, a delete is a change of its own. */
  f->cap->now += 60 * 1000000000LL;
  delete_req(f, "kubernetes-admin", "Deployment", "deployments", "web", dep_old);
  assert_int_equal(f->cap->nml, 2);
}

/* A namespace delete is one trace: the namespace controller's collection
 * deletes and the kubelet's deletes inside it carry its root, before any
 * owner's context. */
static void test_delete_namespace(void **state) {
  fx_t *f = *state;
  world_add(&f->world, rs_json);
  admit(f, "DELETE", "kubernetes-admin", "Namespace", "namespaces", "", "d", "d", "null",
        "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"d\","
        "\"uid\":\"ns-uid\"}}");
  char root[40];
  fmt(&f->cap->ml[0].cpid, root);
  admit(f, "DELETE", NS_SA, "Pod", "pods", "", "d", "", "null", pod_json);
  assert_span(f, 1, root, P_CPID, "namespace-controller");
  /* A collection delete admits each object with request.name "". */
  assert_string_equal(attr(&f->cap->sp[1], "name"), "web-1-a");
  delete_req(f, "system:node:n0", "Pod", "pods", "web-1-a", pod_json);
  assert_span(f, 2, root, P_CPID, "kubelet");
  /* Another namespace's objects are not part of it: a cause of their own. */
  admit(f, "DELETE", NS_SA, "Pod", "pods", "", "e", "", "null", "null");
  assert_int_equal(f->cap->nsp, 4);
  assert_false(ripple_cpid_equal(&f->cap->sp[3].cpid, &f->cap->ml[0].cpid));
  assert_string_equal(attr(&f->cap->sp[3], "spontaneous"), "true");
}

/* kube-apiserver deletes a Service's Endpoints itself when the Service goes,
 * without admission (Service storage's AfterDelete): the Service's DELETE
 * writes that span too, under the same cause, with the Endpoints' own CPID
 * as lastCpid; an Endpoints whose delete was admitted already, or a Service
 * that waits for finalizers, gets none; a dry run sends nothing. */
static const char *svc_json =
    "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"web\",\"namespace\":"
    "\"d\",\"uid\":\"svc-uid\",\"annotations\":{\"cpid.ripple.dev/service\":\"1;" S_CPID "\"}}}";
static const char *ep_json =
    "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":\"web\",\"namespace\":"
    "\"d\",\"uid\":\"ep-uid\",\"resourceVersion\":\"42\",\"annotations\":{"
    "\"cpid.ripple.dev/endpoints\":\"1;" P_CPID "\"}},\"subsets\":[]}";

static void test_delete_service_takes_endpoints(void **state) {
  fx_t *f = *state;
  world_add(&f->world, ep_json);
  admit(f, "DELETE", "kubernetes-admin", "Namespace", "namespaces", "", "d", "d", "null",
        "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"d\","
        "\"uid\":\"ns-uid\"}}");
  char root[40];
  fmt(&f->cap->ml[0].cpid, root);
  /* The namespace controller's collection delete of services. */
  admit(f, "DELETE", NS_SA, "Service", "services", "", "d", "", "null", svc_json);
  assert_int_equal(f->cap->nsp, 3);
  assert_span(f, 1, root, P_CPID, "kube-apiserver");
  assert_string_equal(f->cap->sp[1].name, "delete endpoints");
  assert_string_equal(attr(&f->cap->sp[1], "kind"), "Endpoints");
  assert_string_equal(attr(&f->cap->sp[1], "namespace"), "d");
  assert_string_equal(attr(&f->cap->sp[1], "name"), "web");
  assert_string_equal(attr(&f->cap->sp[1], "uid"), "ep-uid");
  assert_string_equal(attr(&f->cap->sp[1], "resourceVersion"), "42");
  assert_string_equal(attr(&f->cap->sp[1], "user"), "system:apiserver");
  assert_string_equal(attr(&f->cap->sp[1], "operation"), "DELETE");
  assert_span(f, 2, root, S_CPID, "namespace-controller");
  assert_string_equal(f->cap->sp[2].name, "delete services");
  /* The endpoints controller's delete raced it to admission: the same cause. */
  delete_req(f, "system:serviceaccount:kube-system:endpoint-controller", "Endpoints", "endpoints",
             "web", ep_json);
  assert_span(f, 3, root, P_CPID, "endpoint-controller");
  /* The same Service deleted again (the informer still has the Endpoints,
   * whose delete is known): nothing more of the Endpoints. */
  admit(f, "DELETE", NS_SA, "Service", "services", "", "d", "", "null", svc_json);
  assert_int_equal(f->cap->nsp, 5);
  assert_string_equal(f->cap->sp[4].name, "delete services");
  assert_int_equal(f->cap->nml, 1);
}

/* The Endpoints' delete was admitted first (the namespace controller visited
 * endpoints before services): the Service's DELETE adds nothing. A Service
 * with a finalizer, and a dry run, add nothing either; without an Endpoints
 * of its name there is nothing to add. */
static void test_delete_service_endpoints_once(void **state) {
  fx_t *f = *state;
  world_add(&f->world, ep_json);
  delete_req(f, NS_SA, "Endpoints", "endpoints", "web", ep_json);
  delete_req(f, NS_SA, "Service", "services", "web", svc_json);
  assert_int_equal(f->cap->nsp, 2);
  assert_string_equal(f->cap->sp[1].name, "delete services");

  world_set(&f->world, 0,
            "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":\"lb\","
            "\"namespace\":\"d\",\"uid\":\"ep2-uid\"}}");
  delete_req(f, "kubernetes-admin", "Service", "services", "lb",
             "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"lb\","
             "\"namespace\":\"d\",\"uid\":\"lb-uid\",\"finalizers\":"
             "[\"service.kubernetes.io/load-balancer-cleanup\"]}}");
  assert_int_equal(f->cap->nsp, 3);
  assert_string_equal(f->cap->sp[2].name, "delete services");

  char body[4096];
  review(body, sizeof body, "DELETE", "kubernetes-admin", "Service", "services", "", "d", "lb",
         "null",
         "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"lb\","
         "\"namespace\":\"d\",\"uid\":\"lb-uid\"}}");
  char *dry = strstr(body, "\"dryRun\":false");
  assert_non_null(dry);
  memcpy(dry, "\"dryRun\":true ", 14); /* as long as false */
  post(f, body);
  assert_int_equal(f->cap->nsp, 3);

  delete_req(f, "kubernetes-admin", "Service", "services", "other",
             "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"other\","
             "\"namespace\":\"d\",\"uid\":\"o-uid\"}}");
  assert_int_equal(f->cap->nsp, 4);
  assert_string_equal(f->cap->sp[3].name, "delete services");
}

/* No cause known: the object's own last context; none at all: a
 * spontaneous root. */
static void test_delete_without_cause(void **state) {
  fx_t *f = *state;
  const char *cm =
      "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\",\"namespace\":"
      "\"d\",\"uid\":\"cm-uid\",\"annotations\":{\"cpid.ripple.dev/configmap\":\"1;" P_CPID "\"}}}";
  delete_req(f, "system:serviceaccount:ops:cleaner", "ConfigMap", "configmaps", "c", cm);
  assert_span(f, 0, P_CPID, P_CPID, "cleaner");
  assert_int_equal(atomic_load(&wh_metrics(f->w)->deletes_caused), 0);
  delete_req(f, "system:serviceaccount:ops:cleaner", "ConfigMap", "configmaps", "c2",
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c2\","
             "\"namespace\":\"d\",\"uid\":\"cm2-uid\"}}");
  assert_span(f, 1, NULL, NULL, "cleaner");
  assert_string_equal(attr(&f->cap->sp[1], "spontaneous"), "true");
  assert_int_equal(f->cap->nml, 1);
}

/* A deleted object's name is free again: its memory goes with it. */
static void test_delete_forgets(void **state) {
  fx_t *f = *state;
  const char *ss_old =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"db\","
      "\"namespace\":\"d\"}}";
  admit(f, "UPDATE", "kubernetes-admin", "StatefulSet", "statefulsets", "", "d", "db", ss_old,
        ss_old);
  delete_req(f, "kubernetes-admin", "StatefulSet", "statefulsets", "db", ss_old);
  /* A controller's later write of a new "db" (no uid known yet) finds nothing. */
  admit(f, "CREATE", "system:serviceaccount:ops:op", "StatefulSet", "statefulsets", "", "d", "db",
        ss_old, "null");
  assert_string_equal(attr(&f->cap->sp[2], "spontaneous"), "true");
}

/* ---- hop metrics ------------------------------------------------------------ */

static void test_hop_metrics(void **state) {
  fx_t *f = *state;
  admit(f, "UPDATE", "kubernetes-admin", "ReplicaSet", "replicasets", "", "d", "rs",
        "{\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\",\"namespace\":\"d\"}}",
        "{\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\",\"namespace\":\"d\"}}");
  f->cap->now += 20000000; /* the controller reacts 20 ms later */
  create_generated_pod(f, RS_SA, "ReplicaSet", "rs", "u");
  create_generated_pod(f, RS_SA, "ReplicaSet", "rs", "u");
  sbuf_t out;
  sbuf_init(&out);
  wh_gauges_t g = {0};
  wh_metrics_write(wh_metrics(f->w), &g, &out);
  sbuf_putc(&out, '\0');
  const char *want[] = {
      "# TYPE ripple_hop_seconds histogram\n",
      "ripple_hop_seconds_bucket{component=\"replicaset-controller\",write=\"create pods\","
      "le=\"0.01\"} 0\n",
      "ripple_hop_seconds_bucket{component=\"replicaset-controller\",write=\"create pods\","
      "le=\"0.025\"} 2\n",
      "ripple_hop_seconds_bucket{component=\"replicaset-controller\",write=\"create pods\","
      "le=\"+Inf\"} 2\n",
      "ripple_hop_seconds_count{component=\"replicaset-controller\",write=\"create pods\"} 2\n",
      "ripple_hop_seconds_sum{component=\"replicaset-controller\",write=\"create pods\"} "
      "0.040000000\n",
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    if (!strstr(out.p, want[i])) fail_msg("missing from /metrics: %s", want[i]);
  /* Roots are not hops. */
  assert_null(strstr(out.p, "component=\"kubernetes-admin\""));
  sbuf_free(&out);
}

/* Label values are escaped, and the series are bounded whatever the
 * writers' names. */
static void test_hop_series_bounded(void **state) {
  (void)state;
  wh_metrics_t m = {0};
  wh_metrics_init(&m);
  wh_metrics_hop(&m, "we\"ird\\", "update x\n", 1000000);
  for (int i = 0; i < 2 * WH_HOP_SERIES; i++) {
    char c[32];
    snprintf(c, sizeof c, "c%d", i);
    wh_metrics_hop(&m, c, "create pods", 1000);
  }
  sbuf_t out;
  sbuf_init(&out);
  wh_gauges_t g = {0};
  wh_metrics_write(&m, &g, &out);
  sbuf_putc(&out, '\0');
  assert_non_null(strstr(out.p, "component=\"we\\\"ird\\\\\",write=\"update x\\n\""));
  assert_non_null(strstr(out.p, "ripple_hop_seconds_count{component=\"other\",write=\"other\"} "));
  size_t series = 0;
  for (const char *p = out.p; (p = strstr(p, "ripple_hop_seconds_count{")); p++) series++;
  assert_int_equal(series, WH_HOP_SERIES);
  sbuf_free(&out);
  wh_metrics_destroy(&m);
}

/* ---- many connections at once (run under TSan too) --------------------------- */

typedef struct par {
  wh_t *w;
  atomic_int spans, mergelogs, stop;
  int id;
} par_t;

static void par_span(void *ud, const ripple_span_rec_t *sp) {
  (void)sp;
  atomic_fetch_add(&((par_t *)ud)->spans, 1);
}

static void par_mergelog(void *ud, const ripple_mergelog_t *ml) {
  (void)ml;
  atomic_fetch_add(&((par_t *)ud)->mergelogs, 1);
}

typedef struct worker {
  par_t *p;
  int id;
} worker_t;

/* Roots, children, bindings that must wait, deletes: every shared table. */
static void *par_requests(void *ud) {
  worker_t *wk = ud;
  char body[4096], obj[1024], name[64];
  for (int i = 0; i < 200; i++) {
    snprintf(name, sizeof name, "w%d-%d", wk->id, i % 7);
    /* A client's CPID per worker: its claims and MACs under threads too. */
    snprintf(obj, sizeof obj,
             "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":"
             "\"%s\",\"namespace\":\"d\",\"uid\":\"u-%s\",\"annotations\":{"
             "\"cpid.ripple.dev/deployment\":\"1;5e5e5e5e-1111-4222-8333-00000000000%d\"}}}",
             name, name, wk->id);
    review(body, sizeof body, i % 3 ? "UPDATE" : "CREATE", "kubernetes-admin", "Deployment",
           "deployments", "", "d", name, obj, i % 3 ? obj : "null");
    sbuf_t out;
    sbuf_init(&out);
    assert_int_equal(wh_handle(wk->p->w, body, strlen(body), &out), 200);
    out.len = 0;
    snprintf(obj, sizeof obj,
             "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":"
             "\"%s-1\",\"namespace\":\"d\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
             "\"kind\":\"Deployment\",\"name\":\"%s\",\"uid\":\"u-%s\",\"controller\":true}]}}",
             name, name, name);
    review(body, sizeof body, "CREATE", RS_SA, "ReplicaSet", "replicasets", "", "d", "", obj,
           "null");
    assert_int_equal(wh_handle(wk->p->w, body, strlen(body), &out), 200);
    out.len = 0;
    review(body, sizeof body, "CREATE", "system:kube-scheduler", "Binding", "pods", "binding", "d",
           name, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p\"}}",
           "null");
    assert_int_equal(wh_handle(wk->p->w, body, strlen(body), &out), 200);
    out.len = 0;
    review(body, sizeof body, "DELETE", GC_SA, "ReplicaSet", "replicasets", "", "d", name, "null",
           obj);
    assert_int_equal(wh_handle(wk->p->w, body, strlen(body), &out), 200);
    sbuf_free(&out);
  }
  return NULL;
}

static void *par_ticks(void *ud) {
  par_t *p = ud;
  while (!atomic_load(&p->stop)) wh_tick(p->w);
  return NULL;
}

static void test_concurrent_requests(void **state) {
  (void)state;
  par_t p = {0};
  wh_opts_t o = {.max_ancestors = 10,
                 .sink = {par_mergelog, par_span, &p},
                 .context_key = FX_CTX_KEY,
                 .context_key_len = sizeof FX_CTX_KEY - 1};
  assert_int_equal(wh_new(&o, &p.w), RIPPLE_OK);
  enum { N = 4 };
  pthread_t t[N], ticker;
  worker_t wk[N];
  assert_int_equal(pthread_create(&ticker, NULL, par_ticks, &p), 0);
  for (int i = 0; i < N; i++) {
    wk[i] = (worker_t){&p, i};
    assert_int_equal(pthread_create(&t[i], NULL, par_requests, &wk[i]), 0);
  }
  for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
  atomic_store(&p.stop, 1);
  pthread_join(ticker, NULL);
  /* Each round: a root and its ReplicaSet create and delete (the binding's
   * span waits for a Pod that never comes). */
  assert_int_equal(atomic_load(&p.spans), N * 200 * 3);
  sbuf_t out;
  sbuf_init(&out);
  wh_gauges_t g = {0};
  wh_metrics_write(wh_metrics(p.w), &g, &out);
  sbuf_putc(&out, '\0');
  assert_non_null(strstr(out.p, "component=\"replicaset-controller\""));
  sbuf_free(&out);
  wh_free(p.w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_generated_names_never_merge, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reused_name_is_another_object, setup, teardown),
      cmocka_unit_test_setup_teardown(test_binding_ignores_owner_changes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scale_memory_by_uid, setup, teardown),
      cmocka_unit_test_setup_teardown(test_operator_custom_resource_owner, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cronjob_tick, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reviews_excluded_by_group, setup, teardown),
      cmocka_unit_test_setup_teardown(test_delete_by_owner_controller, setup, teardown),
      cmocka_unit_test_setup_teardown(test_delete_cascade, setup, teardown),
      cmocka_unit_test_setup_teardown(test_delete_after_client_root, setup, teardown),
      cmocka_unit_test_setup_teardown(test_delete_namespace, setup, teardown),
      cmocka_unit_test_setup_teardown(test_delete_service_takes_endpoints, setup, teardown),
      cmocka_unit_test_setup_teardown(test_delete_service_endpoints_once, setup, teardown),
      cmocka_unit_test_setup_teardown(test_delete_without_cause, setup, teardown),
      cmocka_unit_test_setup_teardown(test_delete_forgets, setup, teardown),
      cmocka_unit_test_setup_teardown(test_hop_metrics, setup, teardown),
      cmocka_unit_test(test_hop_series_bounded),
      cmocka_unit_test(test_concurrent_requests),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
