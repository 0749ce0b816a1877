/*
 * test_webhook.c - the webhook's engine without a cluster: AdmissionReview
 * bodies in, answers, mergelogs and spans out, with related objects served
 * from hand-built JSON text through the engine's text lookup, as the
 * informers serve them in the program (wh_fixture.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pending.h"
#include "ripplex/sbuf.h"
#include "wh_fixture.h"

/* ---- bad input ------------------------------------------------------------ */

static void expect_400(fx_t *f, const char *body, const char *needle) {
  sbuf_t out;
  sbuf_init(&out);
  assert_int_equal(wh_handle(f->w, body, strlen(body), &out), 400);
  sbuf_putc(&out, '\0');
  json_t *j = json_loads(out.p, 0, NULL);
  assert_non_null(j);
  const char *msg = jstr(j, "error", NULL);
  if (!strstr(msg, needle)) fail_msg("error '%s' does not mention '%s'", msg, needle);
  json_decref(j);
  sbuf_free(&out);
}

static void test_bad_requests(void **state) {
  fx_t *f = *state;
  expect_400(f, "", "not JSON");
  expect_400(f, "{\"kind\":", "not JSON");
  expect_400(f, "[]", "JSON object");
  expect_400(f, "{\"kind\":\"Pod\"}", "AdmissionReview");
  expect_400(f, "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1beta1\"}",
             "admission.k8s.io/v1");
  expect_400(f, "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\"}", "request");
  expect_400(f,
             "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\",\"request\":"
             "{\"uid\":\"\"}}",
             "request.uid");
  expect_400(f,
             "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\",\"request\":"
             "{\"uid\":\"u\",\"operation\":\"PATCH\"}}",
             "request.operation");
  char body[4096];
  review(body, sizeof body, "CREATE", "kubernetes-admin", "Pod", "pods", "", "d", "p", "[1]",
         "null");
  expect_400(f, body, "request.object");
  /* Duplicate keys are ambiguous: refused, not guessed. */
  expect_400(f,
             "{\"kind\":\"AdmissionReview\",\"kind\":\"AdmissionReview\",\"apiVersion\":"
             "\"admission.k8s.io/v1\"}",
             "not JSON");
  assert_int_equal(atomic_load(&wh_metrics(f->w)->bad_requests), 10);
  assert_int_equal(f->cap->nml + f->cap->nsp, 0);
}

/* ---- who wrote ----------------------------------------------------------- */

static void test_users(void **state) {
  (void)state;
  static const struct {
    const char *user, *service;
    wh_actor_t actor;
  } cases[] = {
      {"system:serviceaccount:kube-system:deployment-controller", "deployment-controller",
       WH_ACTOR_CONTROLLER},
      {"system:serviceaccount:kube-system:endpointslice-controller", "endpointslice-controller",
       WH_ACTOR_CONTROLLER},
      {"system:serviceaccount:kube-system:generic-garbage-collector", "generic-garbage-collector",
       WH_ACTOR_CONTROLLER},
      {"system:kube-scheduler", "kube-scheduler", WH_ACTOR_CONTROLLER},
      {"system:kube-controller-manager", "kube-controller-manager", WH_ACTOR_CONTROLLER},
      {"system:node:kwok-node-0", "kubelet", WH_ACTOR_CONTROLLER},
      {"kwok-controller", "kwok", WH_ACTOR_CONTROLLER},
      {"system:apiserver", "kube-apiserver", WH_ACTOR_CONTROLLER},
      {"kubernetes-admin", "kubernetes-admin", WH_ACTOR_USER},
      {"alice@example.com", "alice@example.com", WH_ACTOR_USER},
      /* Every ServiceAccount is a controller (operators run as them) ... */
      {"system:serviceaccount:ops:my-operator", "my-operator", WH_ACTOR_CONTROLLER},
      {"system:serviceaccount:kube-public:x", "x", WH_ACTOR_CONTROLLER},
      /* ... unless --root-user names it (a CI system that starts traces). */
      {"system:serviceaccount:ci:deployer", "system:serviceaccount:ci:deployer", WH_ACTOR_USER},
      {"system:serviceaccount:ci:other", "system:serviceaccount:ci:other", WH_ACTOR_USER},
      {"bot-controller", "bot-controller", WH_ACTOR_CONTROLLER},
      {"system:node", "system:node", WH_ACTOR_USER}, /* not a node's name */
      {"", "unknown", WH_ACTOR_USER},
  };
  wh_users_t u = {0};
  assert_int_equal(wh_users_add(&u, "bot-controller"), RIPPLE_OK);
  assert_int_equal(wh_users_add_root(&u, "system:serviceaccount:ci:*"), RIPPLE_OK);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char svc[WH_SERVICE_MAX];
    wh_actor_t a = wh_users_classify(&u, cases[i].user, svc, sizeof svc);
    if (a != cases[i].actor || strcmp(svc, cases[i].service) != 0)
      fail_msg("%s: got %d %s, want %d %s", cases[i].user, a, svc, cases[i].actor,
               cases[i].service);
  }
  for (int i = 1; i < WH_USERS_EXTRA_MAX; i++) wh_users_add(&u, "x");
  assert_int_equal(wh_users_add(&u, "y"), RIPPLE_ERANGE);
  for (int i = 1; i < WH_USERS_EXTRA_MAX; i++) wh_users_add_root(&u, "x");
  assert_int_equal(wh_users_add_root(&u, "y"), RIPPLE_ERANGE);
  assert_int_equal(wh_users_add_root(&u, ""), RIPPLE_EINVAL);
}

/* ---- root changes --------------------------------------------------------- */

static void test_root_fresh(void **state) {
  fx_t *f = *state;
  admit(f, "CREATE", "kubernetes-admin", "Deployment", "deployments", "", "d", "web",
        "{\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\"}}", "null");
  assert_int_equal(f->cap->nml, 1);
  const cap_mergelog_t *ml = &f->cap->ml[0];
  assert_int_equal(ml->nsources, 0);
  assert_string_equal(ml->component, "kubernetes-admin");
  char id[40], want[256];
  fmt(&ml->cpid, id);
  snprintf(want, sizeof want, "ripple: cpid %s", id);
  assert_string_equal(warning(f), want);
  snprintf(want, sizeof want,
           "[{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{"
           "\"cpid.ripple.dev/deployment\":\"1;%s\","
           "\"cpid.ripple.dev/deployment.generation\":\"1\"}}]",
           id);
  assert_string_equal(f->patch, want);
  assert_int_equal(f->cap->nsp, 1);
  const cap_span_t *sp = &f->cap->sp[0];
  assert_true(ripple_cpid_equal(&sp->cpid, &ml->cpid));
  assert_string_equal(sp->service, "kubernetes-admin");
  assert_string_equal(sp->name, "create deployments");
  assert_string_equal(attr(sp, "kind"), "Deployment");
  assert_string_equal(attr(sp, "namespace"), "d");
  assert_string_equal(attr(sp, "name"), "web");
  assert_string_equal(attr(sp, "operation"), "CREATE");
  assert_string_equal(attr(sp, "user"), "kubernetes-admin");
  assert_non_null(attr(sp, "uid"));
  assert_non_null(attr(sp, "resourceVersion"));
  assert_null(attr(sp, "subresource"));
  assert_null(attr(sp, "owner")); /* no controlling owner */
  assert_int_equal(atomic_load(&wh_metrics(f->w)->roots), 1);
  assert_int_equal(atomic_load(&wh_metrics(f->w)->patched), 1);
}

static void test_root_client_cpid(void **state) {
  fx_t *f = *state;
  /* kubectl ripple set X in this write (the stored object had S): kept as the
   * root, and held: the Deployment's annotation stays S. */
  admit(f, "UPDATE", "kubernetes-admin", "Deployment", "deployments", "", "d", "web",
        "{\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\","
        "\"annotations\":{\"cpid.ripple.dev/deployment\":\"1;" X_CPID "\"}}}",
        "{\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\","
        "\"annotations\":{\"cpid.ripple.dev/deployment\":\"1;" S_CPID "\"}}}");
  assert_string_equal(f->patch,
                      "[{\"op\":\"add\",\"path\":\"/metadata/annotations/"
                      "cpid.ripple.dev~1deployment\",\"value\":\"1;" S_CPID "\"}]");
  assert_string_equal(warning(f), "ripple: cpid " X_CPID);
  assert_int_equal(f->cap->nml, 1);
  char id[40];
  fmt(&f->cap->ml[0].cpid, id);
  assert_string_equal(id, X_CPID);
  assert_int_equal(f->cap->ml[0].nsources, 0);
  /* The same write admitted again (kube-apiserver retries an update on a
   * conflict): the root's mergelog is not emitted twice. */
  admit(f, "UPDATE", "kubernetes-admin", "Deployment", "deployments", "", "d", "web",
        "{\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\","
        "\"annotations\":{\"cpid.ripple.dev/deployment\":\"1;" X_CPID "\"}}}",
        "{\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\","
        "\"annotations\":{\"cpid.ripple.dev/deployment\":\"1;" S_CPID "\"}}}");
  assert_string_equal(warning(f), "ripple: cpid " X_CPID);
  assert_int_equal(f->cap->nml, 1);
  /* The same annotation carried over from the stored object is not the
   * client's: a fresh root replaces it. */
  admit(f, "UPDATE", "kubernetes-admin", "StatefulSet", "statefulsets", "", "d", "db",
        "{\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"db\",\"namespace\":\"d\","
        "\"annotations\":{\"cpid.ripple.dev/statefulset\":\"1;" X_CPID "\"}}}",
        "{\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"db\",\"namespace\":\"d\","
        "\"annotations\":{\"cpid.ripple.dev/statefulset\":\"1;" X_CPID "\"}}}");
  assert_int_equal(f->cap->nml, 2);
  fmt(&f->cap->ml[1].cpid, id);
  assert_string_not_equal(id, X_CPID);
  assert_non_null(strstr(f->patch, id));
  assert_non_null(
      strstr(f->patch, "\"path\":\"/metadata/annotations/cpid.ripple.dev~1statefulset\""));
  /* A Deployment's fresh root is held, not written (its controller would copy
   * a changed annotation onto its ReplicaSet in a write of its own): no
   * patch, and its ReplicaSet's next write carries the root. */
  admit(f, "UPDATE", "kubernetes-admin", "Deployment", "deployments", "", "d", "web",
        "{\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\","
        "\"uid\":\"dep-uid\",\"annotations\":{\"cpid.ripple.dev/deployment\":\"1;" X_CPID "\"}}}",
        "{\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\","
        "\"uid\":\"dep-uid\",\"annotations\":{\"cpid.ripple.dev/deployment\":\"1;" X_CPID "\"}}}");
  assert_string_equal(f->patch, "");
  assert_int_equal(f->cap->nml, 3);
  fmt(&f->cap->ml[2].cpid, id);
  assert_string_not_equal(id, X_CPID);
  char want[64];
  snprintf(want, sizeof want, "ripple: cpid %s", id);
  assert_string_equal(warning(f), want);
  f->cap->now += 600 * 1000000000LL; /* long after the recent memory's 5 s */
  admit(f, "UPDATE", "system:serviceaccount:kube-system:deployment-controller", "ReplicaSet",
        "replicasets", "", "d", "web-1",
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-1\","
        "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"ownerReferences\":[{\"apiVersion\":"
        "\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"web\",\"uid\":\"dep-uid\","
        "\"controller\":true}]}}",
        "null");
  if (!strstr(f->patch, id)) fail_msg("patch %s lacks %s", f->patch, id);
  /* The Deployment controller's own writes of it keep what is held. */
  admit(f, "UPDATE", "system:serviceaccount:kube-system:deployment-controller", "Deployment",
        "deployments", "", "d", "web",
        "{\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\","
        "\"uid\":\"dep-uid\",\"annotations\":{\"cpid.ripple.dev/deployment\":\"1;" X_CPID "\"}}}",
        "{\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\","
        "\"uid\":\"dep-uid\",\"annotations\":{\"cpid.ripple.dev/deployment\":\"1;" X_CPID "\"}}}");
  assert_string_equal(f->patch, "");
  char got[40];
  fmt(&f->cap->sp[f->cap->nsp - 1].cpid, got);
  assert_string_equal(got, id);
  /* A client context that claims ancestors is cut to a root. */
  admit(f, "CREATE", "alice", "Service", "services", "", "d", "svc",
        "{\"kind\":\"Service\",\"metadata\":{\"name\":\"svc\",\"namespace\":\"d\","
        "\"annotations\":{\"cpid.ripple.dev/service\":\"1;" S_CPID ";" P_CPID "\"}}}",
        "null");
  assert_string_equal(warning(f), "ripple: cpid " S_CPID);
  assert_non_null(strstr(f->patch, "\"1;" S_CPID "\""));
}

static void test_root_hostile_annotation(void **state) {
  fx_t *f = *state;
  admit(f, "CREATE", "mallory", "Pod", "pods", "", "d", "p",
        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"d\",\"annotations\":{"
        "\"cpid.ripple.dev/pod\":\"1;not-a-cpid\\\"},{\"}}}",
        "null");
  assert_int_equal(atomic_load(&wh_metrics(f->w)->bad_annotations), 1);
  assert_int_equal(f->cap->nml, 1); /* a fresh root */
  char id[40], want[256];
  fmt(&f->cap->ml[0].cpid, id);
  snprintf(want, sizeof want,
           "[{\"op\":\"add\",\"path\":\"/metadata/annotations/cpid.ripple.dev~1pod\","
           "\"value\":\"1;%s\"}]",
           id);
  assert_string_equal(f->patch, want);
}

/* ---- controllers ------------------------------------------------------------ */

static void test_pod_create_inherits_owner(void **state) {
  fx_t *f = *state;
  world_add(&f->world,
            "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-1\","
            "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"annotations\":{\"cpid.ripple.dev/"
            "replicaset\":\"1;" X_CPID
            "\"}},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":"
            "\"web\"}}}}");
  admit(f, "CREATE", "system:serviceaccount:kube-system:replicaset-controller", "Pod", "pods", "",
        "d", "",
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":\"web-1-\","
        "\"namespace\":\"d\",\"labels\":{\"app\":\"web\"},\"ownerReferences\":[{\"apiVersion\":"
        "\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web-1\",\"uid\":\"rs-uid\","
        "\"controller\":true}]}}",
        "null");
  assert_null(warning(f));
  assert_string_equal(f->patch,
                      "[{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{"
                      "\"cpid.ripple.dev/pod\":\"1;" X_CPID "\"}}]");
  assert_int_equal(f->cap->nml, 0); /* one source: inherited, no mergelog */
  assert_int_equal(f->cap->nsp, 1);
  assert_string_equal(f->cap->sp[0].service, "replicaset-controller");
  assert_string_equal(f->cap->sp[0].name, "create pods");
  assert_string_equal(attr(&f->cap->sp[0], "owner"), "ReplicaSet/web-1");
  char id[40];
  fmt(&f->cap->sp[0].cpid, id);
  assert_string_equal(id, X_CPID);
}

/* A span's owner: its object's controlling owner (ownerReferences with
 * controller: true), a binding's its Pod's; none for an owner that does not
 * control it, a malformed reference, or a binding whose Pod is not at hand. */
static void test_span_owner(void **state) {
  fx_t *f = *state;
  const char *rc = "system:serviceaccount:kube-system:replicaset-controller";
  world_add(&f->world,
            "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-1\","
            "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"annotations\":{\"cpid.ripple.dev/"
            "replicaset\":\"1;" X_CPID "\"}}}");
  /* Two owners, the second the controller. */
  admit(f, "CREATE", rc, "Pod", "pods", "", "d", "web-1-a",
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1-a\","
        "\"namespace\":\"d\",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
        "\"name\":\"cm\",\"uid\":\"cm-uid\"},{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
        "\"name\":\"web-1\",\"uid\":\"rs-uid\",\"controller\":true}]}}",
        "null");
  assert_int_equal(f->cap->nsp, 1);
  assert_string_equal(attr(&f->cap->sp[0], "owner"), "ReplicaSet/web-1");
  /* Owners that do not control it, or a controller without a name. */
  static const char *const refs[] = {
      "[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web-1\",\"uid\":"
      "\"rs-uid\",\"controller\":false}]",
      "[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web-1\",\"uid\":"
      "\"rs-uid\"}]",
      "[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"uid\":\"rs-uid\",\"controller\":"
      "true}]",
      "{\"kind\":\"ReplicaSet\",\"name\":\"web-1\",\"controller\":true}"};
  for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
    char obj[1024];
    snprintf(obj, sizeof obj,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"solo-%zu\","
             "\"namespace\":\"d\",\"ownerReferences\":%s}}",
             i, refs[i]);
    admit(f, "CREATE", "kubernetes-admin", "Pod", "pods", "", "d", "solo", obj, "null");
    assert_int_equal(f->cap->nsp, i + 2);
    assert_null(attr(&f->cap->sp[i + 1], "owner"));
  }
  /* A binding: its Pod's owner, read from the Pod the informer has. */
  world_add(&f->world,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1-b\","
            "\"namespace\":\"d\",\"uid\":\"pod-uid\",\"annotations\":{\"cpid.ripple.dev/pod\":"
            "\"1;" X_CPID
            "\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
            "\"ReplicaSet\",\"name\":\"web-1\",\"uid\":\"rs-uid\",\"controller\":true}]}}");
  admit(f, "CREATE", "system:kube-scheduler", "Binding", "pods", "binding", "d", "web-1-b",
        "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"web-1-b\","
        "\"namespace\":\"d\",\"uid\":\"pod-uid\"},\"target\":{\"kind\":\"Node\",\"name\":"
        "\"n0\"}}",
        "null");
  assert_int_equal(f->cap->nsp, 6);
  assert_string_equal(f->cap->sp[5].name, "create pods/binding");
  assert_string_equal(attr(&f->cap->sp[5], "owner"), "ReplicaSet/web-1");
}

static void test_binding(void **state) {
  fx_t *f = *state;
  world_add(&f->world,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1-a\","
            "\"namespace\":\"d\",\"uid\":\"pod-uid\",\"annotations\":{\"cpid.ripple.dev/pod\":"
            "\"1;" X_CPID "\"}}}");
  const char *binding =
      "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"web-1-a\","
      "\"namespace\":\"d\"},\"target\":{\"kind\":\"Node\",\"name\":\"n0\"}}";
  admit(f, "CREATE", "system:kube-scheduler", "Binding", "pods", "binding", "d", "web-1-a", binding,
        "null");
  assert_string_equal(f->patch, ""); /* the Pod already carries the context */
  assert_int_equal(f->cap->nsp, 1);
  const cap_span_t *sp = &f->cap->sp[0];
  assert_string_equal(sp->name, "create pods/binding");
  assert_string_equal(sp->service, "kube-scheduler");
  assert_string_equal(attr(sp, "kind"), "Pod");
  assert_string_equal(attr(sp, "uid"), "pod-uid");
  assert_string_equal(attr(sp, "subresource"), "binding");
  char id[40];
  fmt(&sp->cpid, id);
  assert_string_equal(id, X_CPID);
  /* A Binding of a Pod the informer does not have (web-1-b), even with a
   * traced ReplicaSet nearby: a binding's only source is its Pod, so the
   * write is allowed unchanged and its span waits for the informer
   * (test_binding_before_informer); nothing is emitted now. */
  world_add(&f->world,
            "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-1\","
            "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"annotations\":{\"cpid.ripple.dev/"
            "replicaset\":\"1;" S_CPID "\"}}}");
  admit(f, "CREATE", "system:kube-scheduler", "Binding", "pods", "binding", "d", "web-1-b", binding,
        "null");
  assert_string_equal(f->patch, ""); /* web-1-b is unknown: nothing to say */
  assert_int_equal(f->cap->nsp, 1);
}

/* The scheduler binds a Pod before the informer has it. A Pod created with
 * generateName had no name at admission, so nothing may be guessed for it:
 * the binding is allowed unchanged and its span waits until the informer
 * has the Pod of that name and uid (wh_tick), then carries the Pod's CPID. */
static void test_binding_before_informer(void **state) {
  fx_t *f = *state;
  world_add(&f->world,
            "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-1\","
            "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"annotations\":{\"cpid.ripple.dev/"
            "replicaset\":\"1;" X_CPID "\"}}}");
  admit(f, "CREATE", "system:serviceaccount:kube-system:replicaset-controller", "Pod", "pods", "",
        "d", "",
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":\"web-1-\","
        "\"namespace\":\"d\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
        "\"ReplicaSet\",\"name\":\"web-1\",\"uid\":\"rs-uid\",\"controller\":true}]}}",
        "null");
  assert_int_equal(f->cap->nsp, 1);
  const char *binding =
      "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"web-1-x7k2q\","
      "\"namespace\":\"d\",\"uid\":\"pod-uid\"},\"target\":{\"kind\":\"Node\",\"name\":"
      "\"n0\"}}";
  admit(f, "CREATE", "system:kube-scheduler", "Binding", "pods", "binding", "d", "web-1-x7k2q",
        binding, "null");
  assert_string_equal(f->patch, ""); /* nothing known, nothing changed */
  assert_int_equal(f->cap->nsp, 1);  /* its span waits */
  wh_tick(f->w);
  assert_int_equal(f->cap->nsp, 1); /* still not in the informer */
  /* An older Pod of that name (another uid) is not the one being bound. */
  world_add(&f->world,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1-x7k2q\","
            "\"namespace\":\"d\",\"uid\":\"old-uid\",\"annotations\":{\"cpid.ripple.dev/pod\":"
            "\"1;" S_CPID "\"}}}");
  wh_tick(f->w);
  assert_int_equal(f->cap->nsp, 1);
  /* The informer now has the Pod being bound, with its context. */
  world_set(&f->world, 1,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1-x7k2q\","
            "\"namespace\":\"d\",\"uid\":\"pod-uid\",\"annotations\":{\"cpid.ripple.dev/pod\":"
            "\"1;" X_CPID
            "\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
            "\"ReplicaSet\",\"name\":\"web-1\",\"uid\":\"rs-uid\",\"controller\":true}]}}");
  f->cap->now += 1000000;
  wh_tick(f->w);
  assert_int_equal(f->cap->nsp, 2);
  const cap_span_t *sp = &f->cap->sp[1];
  char id[40];
  fmt(&sp->cpid, id);
  assert_string_equal(id, X_CPID);
  assert_string_equal(sp->name, "create pods/binding");
  assert_string_equal(sp->service, "kube-scheduler");
  assert_string_equal(attr(sp, "uid"), "pod-uid");
  assert_string_equal(attr(sp, "name"), "web-1-x7k2q");
  assert_string_equal(attr(sp, "owner"), "ReplicaSet/web-1"); /* the Pod's, now known */
  assert_int_equal(atomic_load(&wh_metrics(f->w)->pending_resolved), 1);
  wh_tick(f->w); /* resolved once only */
  assert_int_equal(f->cap->nsp, 2);
  /* A binding whose Pod never shows up is dropped after a while, counted. */
  admit(f, "CREATE", "system:kube-scheduler", "Binding", "pods", "binding", "d", "web-1-zzzzz",
        binding, "null");
  f->cap->now += WH_PENDING_TTL_NS + 1;
  wh_tick(f->w);
  assert_int_equal(f->cap->nsp, 2);
  assert_int_equal(atomic_load(&wh_metrics(f->w)->pending_dropped), 1);
}

static const char *svc_json =
    "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"web\",\"namespace\":"
    "\"d\",\"uid\":\"svc-uid\",\"annotations\":{\"cpid.ripple.dev/service\":\"1;" S_CPID
    "\"}},"
    "\"spec\":{\"selector\":{\"app\":\"web\"}}}";

static void add_pods(fx_t *f) {
  for (int i = 0; i < 3; i++) {
    char buf[512];
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-%d\","
             "\"namespace\":\"d\",\"uid\":\"p%d\",\"labels\":{\"app\":\"%s\"},\"annotations\":{"
             "\"cpid.ripple.dev/pod\":\"1;" P_CPID "\"}}}",
             i, i, i == 2 ? "other" : "web");
    world_add(&f->world, buf);
  }
}

static void test_endpoints_merge(void **state) {
  fx_t *f = *state;
  world_add(&f->world, svc_json);
  add_pods(f);
  char obj[1024];
  snprintf(obj, sizeof obj, "%s",
           "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":\"web\","
           "\"namespace\":\"d\",\"uid\":\"ep-uid\",\"resourceVersion\":\"7\"}}");
  admit(f, "UPDATE", "system:serviceaccount:kube-system:endpoint-controller", "Endpoints",
        "endpoints", "", "d", "web", obj, obj);
  assert_int_equal(f->cap->nml, 1);
  const cap_mergelog_t *ml = &f->cap->ml[0];
  ripple_cpid_t s, p;
  assert_int_equal(ripple_cpid_parse(S_CPID, 36, &s), RIPPLE_OK);
  assert_int_equal(ripple_cpid_parse(P_CPID, 36, &p), RIPPLE_OK);
  assert_int_equal(ml->nsources, 2);
  assert_true(mergelog_has_source(ml, &s) && mergelog_has_source(ml, &p));
  assert_string_equal(ml->component, "endpoint-controller");
  char id[40];
  fmt(&ml->cpid, id);
  assert_non_null(strstr(f->patch, id));
  assert_int_equal(atomic_load(&wh_metrics(f->w)->merges), 1);
  assert_string_equal(attr(&f->cap->sp[0], "resourceVersion"), "7");
  /* The controller writes again with what the webhook gave it: unchanged. */
  json_t *ep = json_loads(obj, 0, NULL), *ann = json_object();
  char val[200];
  snprintf(val, sizeof val, "1;%s;%s,%s", id, S_CPID, P_CPID);
  json_object_set_new(ann, "cpid.ripple.dev/endpoints", json_string(val));
  json_object_set_new(json_object_get(ep, "metadata"), "annotations", ann);
  char *ept = json_dumps(ep, JSON_COMPACT);
  json_decref(ep);
  /* Its stored context, as the webhook wrote it: the ancestors the merge kept. */
  char mine[600];
  snprintf(mine, sizeof mine, "%s", ept);
  free(ept);
  admit(f, "UPDATE", "system:serviceaccount:kube-system:endpoint-controller", "Endpoints",
        "endpoints", "", "d", "web", mine, mine);
  assert_int_equal(f->cap->nml, 1); /* no new mergelog */
  assert_string_equal(f->patch, "");
  fmt(&f->cap->sp[1].cpid, val);
  assert_string_equal(val, id);
}

/* The endpoints controllers write a new Service's Endpoints within
 * milliseconds, often before the informer has the Service: the Service this
 * webhook just admitted stands in (its selector, from memory), for the TTL
 * of recent contexts and until it is deleted. */
static void endpoints_of(fx_t *f, const char *uid) {
  char obj[512];
  snprintf(obj, sizeof obj,
           "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":\"web\","
           "\"namespace\":\"d\",\"uid\":\"%s\"}}",
           uid);
  admit(f, "CREATE", "system:serviceaccount:kube-system:endpoint-controller", "Endpoints",
        "endpoints", "", "d", "web", obj, "null");
}

static void test_endpoints_before_informer_has_service(void **state) {
  fx_t *f = *state;
  add_pods(f); /* the informer has the Pods, not the Service */
  const char *svc =
      "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":"
      "\"web\",\"namespace\":\"d\"},\"spec\":{\"selector\":{\"app\":\"web\"}}}";
  admit(f, "CREATE", "kubernetes-admin", "Service", "services", "", "d", "web", svc, "null");
  assert_int_equal(f->cap->nsp, 1);
  ripple_cpid_t root = f->cap->sp[0].cpid, p;
  assert_int_equal(ripple_cpid_parse(P_CPID, 36, &p), RIPPLE_OK);
  size_t nml = f->cap->nml; /* the root's own mergelog */
  f->cap->now += 3000000;   /* 3 ms later */
  endpoints_of(f, "ep-1");
  assert_int_equal(f->cap->nml, nml + 1);
  const cap_mergelog_t *ml = &f->cap->ml[nml];
  assert_int_equal(ml->nsources, 2); /* the Service's root and the Pods' P */
  assert_true(mergelog_has_source(ml, &root) && mergelog_has_source(ml, &p));
  /* Past the TTL (5 s) memory no longer stands in, and without its Service
   * nothing selects the Pods: a root of the write's own, no sources. */
  f->cap->now += 6000000000LL;
  endpoints_of(f, "ep-2");
  assert_int_equal(f->cap->nml, nml + 2);
  assert_int_equal(f->cap->ml[nml + 1].nsources, 0);
  /* A deleted Service is forgotten at once. */
  admit(f, "CREATE", "kubernetes-admin", "Service", "services", "", "d", "web", svc, "null");
  admit(f, "DELETE", "kubernetes-admin", "Service", "services", "", "d", "web", "null", svc);
  nml = f->cap->nml;
  f->cap->now += 1000000;
  endpoints_of(f, "ep-3");
  assert_int_equal(f->cap->nml, nml + 1);
  assert_int_equal(f->cap->ml[nml].nsources, 0);
}

static void test_endpointslice_and_status(void **state) {
  fx_t *f = *state;
  world_add(&f->world, svc_json);
  add_pods(f);
  admit(f, "CREATE", "system:serviceaccount:kube-system:endpointslice-controller", "EndpointSlice",
        "endpointslices", "", "d", "",
        "{\"apiVersion\":\"discovery.k8s.io/v1\",\"kind\":\"EndpointSlice\",\"metadata\":{"
        "\"generateName\":\"web-\",\"namespace\":\"d\",\"labels\":{\"kubernetes.io/"
        "service-name\":\"web\"}}}",
        "null");
  assert_int_equal(f->cap->nml, 1);
  assert_int_equal(f->cap->ml[0].nsources, 2);
  /* A ReplicaSet's status: its children. Pods of P under a ReplicaSet of P:
   * nothing to merge, nothing to patch. */
  world_add(&f->world,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"c1\",\"namespace\":"
            "\"d\",\"uid\":\"c1\",\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\","
            "\"uid\":\"rs-2\",\"controller\":true}],\"annotations\":{\"cpid.ripple.dev/pod\":"
            "\"1;" X_CPID ";" P_CPID "\"}}}");
  const char *rs =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\","
      "\"namespace\":\"d\",\"uid\":\"rs-2\",\"annotations\":{\"cpid.ripple.dev/replicaset\":"
      "\"1;" P_CPID "\"}}}";
  admit(f, "UPDATE", "system:serviceaccount:kube-system:replicaset-controller", "ReplicaSet",
        "replicasets", "status", "d", "rs", rs, rs);
  /* X descends from P: X is reused, no mergelog. */
  assert_int_equal(f->cap->nml, 1);
  assert_non_null(strstr(f->patch, "\"1;" X_CPID ";" P_CPID "\""));
  assert_string_equal(f->cap->sp[1].name, "update replicasets/status");
  assert_string_equal(attr(&f->cap->sp[1], "subresource"), "status");
  /* A Deployment's status keeps its context (see decide.c). */
  const char *dep =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"dep\","
      "\"namespace\":\"d\",\"uid\":\"dep-1\",\"annotations\":{\"cpid.ripple.dev/deployment\":"
      "\"1;" S_CPID "\"}}}";
  world_add(&f->world,
            "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"dep-1\","
            "\"namespace\":\"d\",\"uid\":\"rs-3\",\"ownerReferences\":[{\"kind\":\"Deployment\","
            "\"name\":\"dep\",\"uid\":\"dep-1\",\"controller\":true}],\"annotations\":{"
            "\"cpid.ripple.dev/replicaset\":\"1;" X_CPID "\"}}}");
  admit(f, "UPDATE", "system:serviceaccount:kube-system:deployment-controller", "Deployment",
        "deployments", "status", "d", "dep", dep, dep);
  assert_string_equal(f->patch, "");
  assert_int_equal(f->cap->nml, 1);
  assert_int_equal(f->cap->nsp, 3);
}

/* A controller's write with nothing traced anywhere (a malformed context is
 * nothing) starts a root of its own, marked spontaneous; no warning (that is
 * for people). */
static void test_bad_annotation_no_sources(void **state) {
  fx_t *f = *state;
  const char *cm =
      "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\",\"namespace\":\"d\","
      "\"annotations\":{\"cpid.ripple.dev/configmap\":17}}}";
  admit(f, "UPDATE", "system:serviceaccount:kube-system:some-controller", "ConfigMap", "configmaps",
        "", "d", "c", cm, cm);
  assert_int_equal(atomic_load(&wh_metrics(f->w)->bad_annotations), 1);
  assert_int_equal(atomic_load(&wh_metrics(f->w)->spontaneous), 1);
  assert_int_equal(atomic_load(&wh_metrics(f->w)->roots), 0);
  assert_null(warning(f));
  assert_int_equal(f->cap->nml, 1);
  assert_int_equal(f->cap->ml[0].nsources, 0);
  assert_int_equal(f->cap->nsp, 1);
  assert_string_equal(attr(&f->cap->sp[0], "spontaneous"), "true");
  assert_true(ripple_cpid_equal(&f->cap->sp[0].cpid, &f->cap->ml[0].cpid));
  char id[40], want[128];
  fmt(&f->cap->ml[0].cpid, id);
  snprintf(want, sizeof want, "\"value\":\"1;%s\"", id);
  if (!strstr(f->patch, want)) fail_msg("patch %s does not set %s", f->patch, want);
}

static void test_exclusions_and_dry_run(void **state) {
  fx_t *f = *state;
  char body[4096];
  const char *lease = "{\"kind\":\"Lease\",\"metadata\":{\"name\":\"l\",\"namespace\":\"d\"}}";
  admit(f, "UPDATE", "kubernetes-admin", "Lease", "leases", "", "d", "l", lease, lease);
  const char *pod =
      "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ripple-system\"}}";
  admit(f, "CREATE", "kubernetes-admin", "Pod", "pods", "", "ripple-system", "p", pod, "null");
  assert_string_equal(f->patch, "");
  assert_int_equal(atomic_load(&wh_metrics(f->w)->skipped), 2);
  /* A dry run is answered as usual but sends nothing. */
  review(body, sizeof body, "CREATE", "kubernetes-admin", "Pod", "pods", "", "d", "p",
         "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"d\"}}", "null");
  char *dry = strstr(body, "\"dryRun\":false");
  assert_non_null(dry);
  memcpy(dry, "\"dryRun\":true ", 14);
  post(f, body);
  assert_non_null(strstr(f->patch, "cpid.ripple.dev/pod"));
  assert_non_null(warning(f));
  assert_int_equal(f->cap->nml + f->cap->nsp, 0);
  /* Scale writes carry nothing, but the root is remembered for the
   * controller that acts on it. */
  admit(f, "UPDATE", "kubernetes-admin", "Scale", "deployments", "scale", "d", "dep",
        "{\"kind\":\"Scale\",\"metadata\":{\"name\":\"dep\",\"namespace\":\"d\"}}",
        "{\"kind\":\"Scale\",\"metadata\":{\"name\":\"dep\",\"namespace\":\"d\"}}");
  assert_string_equal(f->patch, "");
  assert_int_equal(f->cap->nml, 1);
  assert_string_equal(attr(&f->cap->sp[0], "kind"), "Deployment");
  admit(f, "UPDATE", "system:serviceaccount:kube-system:deployment-controller", "ReplicaSet",
        "replicasets", "", "d", "dep-1",
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"dep-1\","
        "\"namespace\":\"d\",\"ownerReferences\":[{\"kind\":\"Deployment\",\"name\":\"dep\","
        "\"uid\":\"dep-uid\",\"controller\":true}]}}",
        "null");
  char id[40], want[256];
  fmt(&f->cap->ml[0].cpid, id);
  snprintf(want, sizeof want, "1;%s", id);
  assert_non_null(strstr(f->patch, want));
}

static void test_idempotent_root_then_children(void **state) {
  fx_t *f = *state;
  /* Spans start when their cause was admitted: the clock moves between the
   * root and the controller's write. */
  admit(f, "UPDATE", "kubernetes-admin", "ReplicaSet", "replicasets", "", "d", "rs",
        "{\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\",\"namespace\":\"d\"}}",
        "{\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\",\"namespace\":\"d\"}}");
  int64_t t_root = f->cap->sp[0].end_ns;
  f->cap->now += 5000000;
  admit(f, "CREATE", "system:serviceaccount:kube-system:replicaset-controller", "Pod", "pods", "",
        "d", "",
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"d\","
        "\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"uid\":\"u\","
        "\"controller\":true}]}}",
        "null");
  assert_int_equal(f->cap->nsp, 2);
  assert_true(ripple_cpid_equal(&f->cap->sp[1].cpid, &f->cap->sp[0].cpid));
  assert_int_equal(f->cap->sp[1].start_ns, t_root);
  assert_int_equal(f->cap->sp[1].end_ns, t_root + 5000000);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_bad_requests, setup, teardown),
      cmocka_unit_test(test_users),
      cmocka_unit_test_setup_teardown(test_root_fresh, setup, teardown),
      cmocka_unit_test_setup_teardown(test_root_client_cpid, setup, teardown),
      cmocka_unit_test_setup_teardown(test_root_hostile_annotation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pod_create_inherits_owner, setup, teardown),
      cmocka_unit_test_setup_teardown(test_span_owner, setup, teardown),
      cmocka_unit_test_setup_teardown(test_binding, setup, teardown),
      cmocka_unit_test_setup_teardown(test_binding_before_informer, setup, teardown),
      cmocka_unit_test_setup_teardown(test_endpoints_merge, setup, teardown),
      cmocka_unit_test_setup_teardown(test_endpointslice_and_status, setup, teardown),
      cmocka_unit_test_setup_teardown(test_endpoints_before_informer_has_service, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_annotation_no_sources, setup, teardown),
      cmocka_unit_test_setup_teardown(test_exclusions_and_dry_run, setup, teardown),
      cmocka_unit_test_setup_teardown(test_idempotent_root_then_children, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
