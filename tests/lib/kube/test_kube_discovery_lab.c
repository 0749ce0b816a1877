/*
 * test_kube_discovery_lab.c - discovery against the lab's API server: the names
 * kubectl accepts for core and apps resources, kinds, the resource list,
 * subresources, and a CustomResourceDefinition created by the test, found
 * once it is established (the cache refreshes on a miss), used for a custom
 * object, and gone again after it is deleted.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_rw.h"
#include "rw_lab.h"

static ripple_kube_client_t *C;

static int setup(void **state) {
  (void)state;
  C = lab_client();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  ripple_kube_client_free(C);
  return 0;
}

static void expect(const char *name, const char *group, const char *version, const char *resource,
                   const char *kind, int namespaced) {
  const ripple_kube_resource_t *r = lab_resolve(C, name);
  if (strcmp(r->group, group) != 0 || strcmp(r->version, version) != 0 ||
      strcmp(r->resource, resource) != 0 || strcmp(r->kind, kind) != 0 ||
      r->namespaced != namespaced)
    fail_msg("%s: got %s/%s %s %s %d", name, r->group, r->version, r->resource, r->kind,
             r->namespaced);
}

static void test_core_and_apps(void **state) {
  (void)state;
  const char *pods[] = {"pods", "pod", "po", "Pod", "PODS"};
  for (size_t i = 0; i < sizeof pods / sizeof *pods; i++)
    expect(pods[i], "", "v1", "pods", "Pod", 1);
  const char *deploy[] = {"deployments",        "deployment",       "deploy",
                          "Deployment",         "deployments.apps", "deploy.apps",
                          "deployments.v1.apps"};
  for (size_t i = 0; i < sizeof deploy / sizeof *deploy; i++)
    expect(deploy[i], "apps", "v1", "deployments", "Deployment", 1);
  expect("rs", "apps", "v1", "replicasets", "ReplicaSet", 1);
  expect("svc", "", "v1", "services", "Service", 1);
  expect("ep", "", "v1", "endpoints", "Endpoints", 1);
  expect("cm", "", "v1", "configmaps", "ConfigMap", 1);
  expect("ns", "", "v1", "namespaces", "Namespace", 0);
  expect("no", "", "v1", "nodes", "Node", 0);
  expect("crd", "apiextensions.k8s.io", "v1", "customresourcedefinitions",
         "CustomResourceDefinition", 0);
  /* Served by two groups: the core group comes first, as with kubectl. */
  expect("events", "", "v1", "events", "Event", 1);
  expect("events.events.k8s.io", "events.k8s.io", "v1", "events", "Event", 1);
  /* The same name resolves to the same entry, cached. */
  assert_ptr_equal(lab_resolve(C, "po"), lab_resolve(C, "pods"));
}

static void test_unknown(void **state) {
  (void)state;
  const ripple_kube_resource_t *r = NULL;
  ripple_kube_status_t st;
  LAB_ERR(st, RIPPLE_KUBE_ENOTFOUND, ripple_kube_resolve(C, "nosuchthings", &r, &st));
  assert_null(r);
  assert_non_null(strstr(st.message, "\"nosuchthings\""));
  LAB_ERR(st, RIPPLE_KUBE_ENOTFOUND, ripple_kube_resolve(C, "deployments.v9.apps", &r, &st));
  LAB_ERR(st, RIPPLE_KUBE_ENOTFOUND, ripple_kube_resolve(C, "pods.apps", &r, &st));
  assert_int_equal(ripple_kube_resolve(C, "", &r, &st), RIPPLE_EINVAL);
}

static void test_kinds(void **state) {
  (void)state;
  const ripple_kube_resource_t *r = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_resolve_kind(C, "apps", "ReplicaSet", &r, &st));
  assert_ptr_equal(r, lab_resolve(C, "rs"));
  LAB_OK(st, ripple_kube_resolve_kind(C, "", "Pod", &r, &st));
  assert_ptr_equal(r, lab_resolve(C, "pods"));
  LAB_OK(st, ripple_kube_resolve_kind(C, NULL, "Node", &r, &st));
  assert_string_equal(r->resource, "nodes");
  LAB_ERR(st, RIPPLE_KUBE_ENOTFOUND, ripple_kube_resolve_kind(C, "apps", "Pod", &r, &st));
  assert_non_null(strstr(st.message, "Pod"));
}

typedef struct listed {
  int n, pods, deployments, crds, subresources, dup;
  char seen[512][96];
} listed_t;

static void on_resource(void *ud, const ripple_kube_resource_t *r) {
  listed_t *l = ud;
  char key[96];
  snprintf(key, sizeof key, "%s/%s", r->group, r->resource);
  for (int i = 0; i < l->n && i < 512; i++)
    if (strcmp(l->seen[i], key) == 0) l->dup++;
  if (l->n < 512) snprintf(l->seen[l->n], sizeof l->seen[0], "%s", key);
  l->n++;
  l->pods += strcmp(key, "/pods") == 0;
  l->deployments += strcmp(key, "apps/deployments") == 0;
  l->crds += strcmp(key, "apiextensions.k8s.io/customresourcedefinitions") == 0;
  l->subresources += strchr(r->resource, '/') != NULL;
}

static void test_resources(void **state) {
  (void)state;
  static listed_t l;
  memset(&l, 0, sizeof l);
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_resources(C, on_resource, &l, &st));
  assert_true(l.n > 40); /* a v1.36 server serves about 60 */
  assert_int_equal(l.pods, 1);
  assert_int_equal(l.deployments, 1);
  assert_int_equal(l.crds, 1);
  assert_int_equal(l.subresources, 0);
  assert_int_equal(l.dup, 0); /* preferred versions only */
}

static void expect_subs(const char *name, const char *want) {
  char subs[256];
  assert_int_equal(kube_discovery_subresources(C, lab_resolve(C, name), subs, sizeof subs), 1);
  char list[260];
  snprintf(list, sizeof list, ",%s,", subs);
  for (const char *w = want; *w;) {
    char one[64];
    size_t n = strcspn(w, ",");
    snprintf(one, sizeof one, ",%.*s,", (int)n, w);
    if (!strstr(list, one)) fail_msg("%s: subresource %s missing from %s", name, one, subs);
    w += n + (w[n] == ',');
  }
}

static void test_subresources(void **state) {
  (void)state;
  expect_subs("deployments", "scale,status");
  expect_subs("pods", "binding,status,log,eviction,exec,ephemeralcontainers");
  expect_subs("serviceaccounts", "token");
  expect_subs("replicasets.apps", "scale,status");
}

/* ---- a custom resource ---------------------------------------------------------- */

typedef struct crd_wait {
  const ripple_kube_resource_t *crds;
  const char *name;
  int gone;
} crd_wait_t;

static int established(void *ud) {
  crd_wait_t *w = ud;
  json_t *crd = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_get(C, w->crds, NULL, w->name, &crd, &st));
  int ok = 0;
  const json_t *conds = lab_at(crd, "status.conditions"), *cond;
  size_t i;
  json_array_foreach(conds, i, cond) {
    if (strcmp(lab_str(cond, "type"), "Established") == 0 &&
        strcmp(lab_str(cond, "status"), "True") == 0)
      ok = 1;
  }
  json_decref(crd);
  return ok;
}

/* Discovery of a new CRD's group may trail Established by a moment. */
static int resolvable(void *ud) {
  const ripple_kube_resource_t *r = NULL;
  ripple_kube_status_t st;
  int rc = ripple_kube_resolve(C, ud, &r, &st);
  if (rc != RIPPLE_OK && rc != RIPPLE_KUBE_ENOTFOUND) fail_msg("resolve: %s", st.message);
  return rc == RIPPLE_OK;
}

static void ignore(void *ud, const ripple_kube_resource_t *r) { (void)ud, (void)r; }

/* A hit is never refreshed (a cache), so ask for the resource list, which
 * always fetches, then look again. */
static int unresolvable(void *ud) {
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_resources(C, ignore, NULL, &st));
  return !resolvable(ud);
}

static void create_crd(const ripple_kube_resource_t *crds, const char *group, const char *sfx) {
  json_t *crd = lab_json(
      "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
      "\"metadata\":{\"name\":\"widgets.%s\"},\"spec\":{\"group\":\"%s\",\"scope\":\"Namespaced\","
      "\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\",\"kind\":\"Widget\","
      "\"shortNames\":[\"wdg%s\"]},\"versions\":[{\"name\":\"v1alpha1\",\"served\":true,"
      "\"storage\":true,\"subresources\":{\"status\":{}},\"schema\":{\"openAPIV3Schema\":{"
      "\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{"
      "\"size\":{\"type\":\"integer\"}}},\"status\":{\"type\":\"object\","
      "\"x-kubernetes-preserve-unknown-fields\":true}}}}}]}}",
      group, group, sfx);
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(C, crds, NULL, crd, NULL, NULL, &st));
  json_decref(crd);
}

static void on_widget(void *ud, json_t *o) {
  int *n = ud;
  assert_string_equal(lab_str(o, "kind"), "Widget");
  (*n)++;
}

static void use_widget(const ripple_kube_resource_t *w, const char *group, const char *ns) {
  json_t *obj = lab_json(
      "{\"apiVersion\":\"%s/v1alpha1\",\"kind\":\"Widget\",\"metadata\":"
      "{\"name\":\"w1\",\"namespace\":\"%s\"},\"spec\":{\"size\":3}}",
      group, ns);
  json_t *got = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(C, w, NULL, obj, NULL, NULL, &st));
  LAB_OK(st, ripple_kube_get(C, w, ns, "w1", &got, &st));
  assert_int_equal(lab_int(got, "spec.size"), 3);
  json_decref(got);
  int n = 0;
  ripple_kube_list_opts_t lo = {.namespace_ = ns};
  LAB_OK(st, ripple_kube_list(C, w, &lo, on_widget, &n, NULL, &st));
  assert_int_equal(n, 1);
  LAB_OK(st, ripple_kube_delete(C, w, ns, "w1", NULL, &st));
  LAB_ERR(st, RIPPLE_KUBE_ENOTFOUND, ripple_kube_get(C, w, ns, "w1", &got, &st));
  json_decref(obj);
}

static void test_crd(void **state) {
  (void)state;
  char sfx[8], group[64], name[96], qualified[96], ns[64];
  lab_suffix(sfx, 6);
  snprintf(group, sizeof group, "ripple-%s.example.com", sfx);
  snprintf(name, sizeof name, "widgets.%s", group);
  snprintf(qualified, sizeof qualified, "widgets.v1alpha1.%s", group);
  const ripple_kube_resource_t *crds = lab_resolve(C, "customresourcedefinitions");
  const ripple_kube_resource_t *r = NULL;
  ripple_kube_status_t st;
  /* Cache the discovery before the CRD exists: the lookup below must refresh. */
  LAB_ERR(st, RIPPLE_KUBE_ENOTFOUND, ripple_kube_resolve(C, name, &r, &st));
  create_crd(crds, group, sfx);
  crd_wait_t w = {crds, name, 0};
  assert_true(lab_wait(established, &w, 60000));
  assert_true(lab_wait(resolvable, name, 30000));
  const ripple_kube_resource_t *widgets = lab_resolve(C, name);
  assert_string_equal(widgets->group, group);
  assert_string_equal(widgets->version, "v1alpha1");
  assert_string_equal(widgets->kind, "Widget");
  assert_true(widgets->namespaced);
  char shortname[16];
  snprintf(shortname, sizeof shortname, "wdg%s", sfx);
  assert_ptr_equal(lab_resolve(C, shortname), widgets);
  assert_ptr_equal(lab_resolve(C, qualified), widgets);
  LAB_OK(st, ripple_kube_resolve_kind(C, group, "Widget", &r, &st));
  assert_ptr_equal(r, widgets);
  expect_subs(name, "status");
  lab_ns_new(C, "ripple-disc", ns, sizeof ns);
  use_widget(widgets, group, ns);
  lab_ns_delete(C, ns);
  LAB_OK(st, ripple_kube_delete(C, crds, NULL, name, NULL, &st));
  assert_true(lab_wait(unresolvable, name, 60000));
  /* Whoever still holds the entry can read it. */
  assert_string_equal(widgets->kind, "Widget");
}

/* ---- many threads ------------------------------------------------------------------ */

typedef struct racer {
  const ripple_kube_resource_t *pods;
  int errors;
} racer_t;

/* Hits and misses from many threads: misses refresh the shared cache while
 * others read it; the entries handed out stay the same. */
static void *race(void *ud) {
  racer_t *r = ud;
  for (int i = 0; i < 10; i++) {
    const ripple_kube_resource_t *got = NULL;
    ripple_kube_status_t st;
    if (ripple_kube_resolve(C, "po", &got, &st) != RIPPLE_OK || got != r->pods) r->errors++;
    if (ripple_kube_resolve(C, "nosuchthings", &got, &st) != RIPPLE_KUBE_ENOTFOUND) r->errors++;
    if (ripple_kube_resolve_kind(C, "", "Pod", &got, &st) != RIPPLE_OK || got != r->pods)
      r->errors++;
  }
  return NULL;
}

static void test_threads(void **state) {
  (void)state;
  pthread_t t[6];
  racer_t r[6];
  for (int i = 0; i < 6; i++) {
    r[i] = (racer_t){lab_resolve(C, "pods"), 0};
    assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
  }
  for (int i = 0; i < 6; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(r[i].errors, 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_core_and_apps), cmocka_unit_test(test_unknown),
      cmocka_unit_test(test_kinds),         cmocka_unit_test(test_resources),
      cmocka_unit_test(test_subresources),  cmocka_unit_test(test_crd),
      cmocka_unit_test(test_threads),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
