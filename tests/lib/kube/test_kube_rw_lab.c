/*
 * test_kube_rw_lab.c - reads and writes against the lab's API server: get and
 * NotFound, paged lists (exact counts over 120 ConfigMaps), label and field
 * selectors, conflicts, each patch type with its effect, server-side apply
 * with conflicts and force, dry runs, delete, the scale and status
 * subresources, binding a Pod to a KWOK node, and the messages made from
 * Status objects. Each test works in a namespace of its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_rw.h"
#include "rw_lab.h"

static ripple_kube_client_t *C;
static const ripple_kube_resource_t *CM, *DEPLOY, *POD, *SVC, *NODE;
static char NS[64];

static int setup_group(void **state) {
  (void)state;
  C = lab_client();
  CM = lab_resolve(C, "configmaps");
  DEPLOY = lab_resolve(C, "deployments.apps");
  POD = lab_resolve(C, "pods");
  SVC = lab_resolve(C, "services");
  NODE = lab_resolve(C, "nodes");
  return 0;
}

static int teardown_group(void **state) {
  (void)state;
  ripple_kube_client_free(C);
  return 0;
}

static int setup(void **state) {
  (void)state;
  lab_ns_new(C, "ripple-rw", NS, sizeof NS);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  lab_ns_delete(C, NS);
  return 0;
}

static json_t *cm_new(const char *name, const char *labels, const char *data) {
  return lab_json(
      "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
      "\"labels\":{%s}},\"data\":{%s}}",
      name, labels, data);
}

static void cm_create(const char *name, const char *labels, const char *data) {
  json_t *cm = cm_new(name, labels, data);
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(C, CM, NS, cm, NULL, NULL, &st));
  json_decref(cm);
}

static json_t *get(const ripple_kube_resource_t *r, const char *name) {
  json_t *obj = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_get(C, r, NS, name, &obj, &st));
  return obj;
}

/* ---- reads ------------------------------------------------------------------------ */

static void test_get(void **state) {
  (void)state;
  cm_create("one", "\"a\":\"b\"", "\"k\":\"v\"");
  json_t *obj = get(CM, "one");
  assert_string_equal(lab_str(obj, "data.k"), "v");
  assert_string_equal(lab_str(obj, "metadata.namespace"), NS);
  assert_string_equal(lab_str(obj, "kind"), "ConfigMap");
  json_decref(obj);
  ripple_kube_status_t st;
  obj = NULL;
  LAB_ERR(st, RIPPLE_KUBE_ENOTFOUND, ripple_kube_get(C, CM, NS, "nope", &obj, &st));
  assert_null(obj);
  assert_int_equal(st.http, 404);
  assert_string_equal(st.reason, "NotFound");
  assert_string_equal(st.message, "configmaps \"nope\" not found");
  /* A namespaced object needs a namespace; a cluster-scoped one ignores it. */
  assert_int_equal(ripple_kube_get(C, CM, NULL, "one", &obj, &st), RIPPLE_EINVAL);
  assert_non_null(strstr(st.message, "namespace"));
  LAB_OK(st, ripple_kube_get(C, lab_resolve(C, "ns"), "ignored", NS, &obj, &st));
  json_decref(obj);
  /* generateName: a create goes to the collection and needs no name. */
  json_t *gen = lab_json("{\"metadata\":{\"generateName\":\"gen-\"},\"data\":{}}"), *made = NULL;
  LAB_OK(st, ripple_kube_create(C, CM, NS, gen, NULL, &made, &st));
  assert_memory_equal(lab_str(made, "metadata.name"), "gen-", 4);
  assert_true(strlen(lab_str(made, "metadata.name")) > 4);
  json_decref(gen);
  json_decref(made);
}

typedef struct tally {
  int n, resets, typed;
  char names[128];
} tally_t;

static void count(void *ud, json_t *obj) {
  tally_t *t = ud;
  if (!obj) {
    t->resets++;
    return;
  }
  const char *name = lab_str(obj, "metadata.name");
  int i = name && strncmp(name, "cm-", 3) == 0 ? (int)strtol(name + 3, NULL, 10) : -1;
  if (i >= 0 && i < 128) t->names[i]++;
  t->n++;
  t->typed += lab_str(obj, "kind") && strcmp(lab_str(obj, "kind"), "ConfigMap") == 0 &&
              strcmp(lab_str(obj, "apiVersion"), "v1") == 0;
}

static tally_t list(const char *ns, const char *labels, const char *fields, uint32_t page) {
  tally_t t = {0};
  ripple_kube_list_opts_t o = {ns, labels, fields, page};
  ripple_kube_status_t st;
  char *rv = NULL;
  LAB_OK(st, ripple_kube_list(C, CM, &o, count, &t, &rv, &st));
  assert_true(rv && strtoll(rv, NULL, 10) > 0);
  ripple_free(rv);
  assert_int_equal(t.resets, 0);
  assert_int_equal(t.typed, t.n);
  return t;
}

/* Count the requests a list makes, through the paging engine. */
typedef struct counted {
  int requests;
} counted_t;

static int counted_get(void *ud, const char *path, json_t **out, ripple_kube_status_t *st) {
  ((counted_t *)ud)->requests++;
  return kube_fetch_client(C, path, out, st);
}

static void test_list_paging_and_selectors(void **state) {
  (void)state;
  for (int i = 0; i < 120; i++) {
    char name[16], labels[64];
    snprintf(name, sizeof name, "cm-%d", i);
    snprintf(labels, sizeof labels, "\"ripple-test\":\"paging\",\"batch\":\"%s\",\"idx\":\"%d\"",
             i % 2 ? "b" : "a", i);
    cm_create(name, labels, "");
  }
  tally_t t = list(NS, "ripple-test=paging", NULL, 7);
  assert_int_equal(t.n, 120);
  for (int i = 0; i < 120; i++) assert_int_equal(t.names[i], 1);
  /* Every ConfigMap of the namespace, kube-root-ca.crt included. */
  assert_int_equal(list(NS, NULL, NULL, 0).n, 121);
  assert_int_equal(list(NS, "batch=a", NULL, 10).n, 60);
  /* Characters that need escaping in a query: spaces, parentheses, '!', ','. */
  assert_int_equal(list(NS, "batch in (a, b),idx!=3,!nolabel", NULL, 50).n, 119);
  assert_int_equal(list(NS, NULL, "metadata.name=cm-7", 5).n, 1);
  assert_int_equal(list(NS, "batch=b", "metadata.name!=cm-7", 5).n, 59);
  /* All namespaces (other runs of this test may have theirs), then ours. */
  assert_true(list(NULL, "ripple-test=paging,batch=a", NULL, 0).n >= 60);
  char ours[96];
  snprintf(ours, sizeof ours, "metadata.namespace=%s", NS);
  assert_int_equal(list(NULL, "ripple-test=paging,batch=a", ours, 25).n, 60);
  /* 120 objects in pages of 7: 18 requests. */
  counted_t n = {0};
  char base[160];
  snprintf(base, sizeof base,
           "/api/v1/namespaces/%s/configmaps?labelSelector=ripple-test%%3Dpaging", NS);
  tally_t p = {0};
  ripple_kube_status_t st;
  LAB_OK(st, kube_list_pages(counted_get, &n, base, 7, count, &p, NULL, &st));
  assert_int_equal(n.requests, 18);
  assert_int_equal(p.n, 120);
}

/* ---- writes ------------------------------------------------------------------------ */

static void test_conflicts(void **state) {
  (void)state;
  cm_create("c", "", "\"k\":\"1\"");
  json_t *v1 = get(CM, "c"), *v2 = NULL;
  ripple_kube_status_t st;
  json_object_set_new(json_object_get(v1, "data"), "k", json_string("2"));
  LAB_OK(st, ripple_kube_update(C, CM, NULL, v1, NULL, &v2, &st));
  assert_string_equal(lab_str(v2, "data.k"), "2");
  assert_string_not_equal(lab_str(v2, "metadata.resourceVersion"),
                          lab_str(v1, "metadata.resourceVersion"));
  /* v1's resourceVersion is stale now. */
  json_object_set_new(json_object_get(v1, "data"), "k", json_string("3"));
  LAB_ERR(st, RIPPLE_KUBE_ECONFLICT, ripple_kube_update(C, CM, NULL, v1, NULL, NULL, &st));
  assert_int_equal(st.http, 409);
  assert_string_equal(st.reason, "Conflict");
  assert_non_null(strstr(st.message, "the object has been modified"));
  /* Creating what exists (a create must not carry a resourceVersion). */
  json_object_del(json_object_get(v2, "metadata"), "resourceVersion");
  LAB_ERR(st, RIPPLE_KUBE_ECONFLICT, ripple_kube_create(C, CM, NS, v2, NULL, NULL, &st));
  assert_string_equal(st.reason, "AlreadyExists");
  json_decref(v1);
  json_decref(v2);
  json_t *now = get(CM, "c");
  assert_string_equal(lab_str(now, "data.k"), "2");
  json_decref(now);
}

static void patch(const ripple_kube_resource_t *r, const char *name, ripple_kube_patch_t type,
                  const char *body, const ripple_kube_write_opts_t *o, json_t **out) {
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_patch(C, r, NS, name, type, body, strlen(body), o, out, &st));
}

static void test_json_and_merge_patch(void **state) {
  (void)state;
  cm_create("p", "\"keep\":\"yes\"", "\"a\":\"1\",\"b\":\"2\"");
  json_t *out = NULL;
  patch(CM, "p", RIPPLE_KUBE_PATCH_JSON,
        "[{\"op\":\"add\",\"path\":\"/data/c\",\"value\":\"3\"},"
        "{\"op\":\"remove\",\"path\":\"/data/a\"}]",
        NULL, &out);
  assert_string_equal(lab_str(out, "data.c"), "3");
  assert_null(lab_at(out, "data.a"));
  json_decref(out);
  /* A failed test operation refuses the whole patch. */
  const char *bad =
      "[{\"op\":\"test\",\"path\":\"/data/b\",\"value\":\"9\"},"
      "{\"op\":\"add\",\"path\":\"/data/d\",\"value\":\"4\"}]";
  ripple_kube_status_t st;
  LAB_ERR(
      st, RIPPLE_KUBE_EINVALID,
      ripple_kube_patch(C, CM, NS, "p", RIPPLE_KUBE_PATCH_JSON, bad, strlen(bad), NULL, NULL, &st));
  assert_string_equal(st.reason, "Invalid");
  assert_non_null(strstr(st.message, "(PATCH configmaps \"p\")"));
  patch(CM, "p", RIPPLE_KUBE_PATCH_MERGE, "{\"data\":{\"b\":null,\"e\":\"5\"}}", NULL, &out);
  assert_null(lab_at(out, "data.b"));
  assert_string_equal(lab_str(out, "data.e"), "5");
  assert_string_equal(lab_str(out, "data.c"), "3");
  assert_string_equal(lab_str(out, "metadata.labels.keep"), "yes");
  json_decref(out);
  /* Every write names its field manager. */
  json_t *obj = get(CM, "p");
  const json_t *mf = lab_at(obj, "metadata.managedFields"), *m;
  size_t i;
  int ripple = 0;
  json_array_foreach(mf, i, m) ripple += strcmp(lab_str(m, "manager"), "ripple") == 0;
  assert_true(ripple > 0);
  json_decref(obj);
}

static json_t *deployment(const char *name, int replicas) {
  return lab_json(
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"%s\"},"
      "\"spec\":{\"replicas\":%d,\"selector\":{\"matchLabels\":{\"app\":\"%s\"}},"
      "\"template\":{\"metadata\":{\"labels\":{\"app\":\"%s\"}},\"spec\":{\"containers\":["
      "{\"name\":\"main\",\"image\":\"example.com/main:1\"},"
      "{\"name\":\"side\",\"image\":\"example.com/side:1\"}]}}}}",
      name, replicas, name, name);
}

/* A strategic merge patch merges containers by name; a merge patch would
 * replace the list. */
static void test_strategic_patch(void **state) {
  (void)state;
  json_t *d = deployment("web", 1), *out = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(C, DEPLOY, NS, d, NULL, NULL, &st));
  json_decref(d);
  patch(DEPLOY, "web", RIPPLE_KUBE_PATCH_STRATEGIC,
        "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"side\","
        "\"image\":\"example.com/side:2\"}]}}}}",
        NULL, &out);
  const json_t *cs = lab_at(out, "spec.template.spec.containers");
  assert_int_equal(json_array_size(cs), 2);
  assert_string_equal(lab_str(json_array_get(cs, 0), "image"), "example.com/main:1");
  assert_string_equal(lab_str(json_array_get(cs, 1), "image"), "example.com/side:2");
  json_decref(out);
  patch(DEPLOY, "web", RIPPLE_KUBE_PATCH_MERGE,
        "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"side\","
        "\"image\":\"example.com/side:3\"}]}}}}",
        NULL, &out);
  assert_int_equal(json_array_size(lab_at(out, "spec.template.spec.containers")), 1);
  json_decref(out);
}

static void test_apply(void **state) {
  (void)state;
  const char *a =
      "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"ap\"},"
      "\"data\":{\"x\":\"1\",\"y\":\"1\"}}";
  const char *b =
      "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"ap\"},"
      "\"data\":{\"x\":\"2\"}}";
  ripple_kube_write_opts_t m1 = {.field_manager = "ripple-m1"};
  ripple_kube_write_opts_t m2 = {.field_manager = "ripple-m2"};
  json_t *out = NULL;
  patch(CM, "ap", RIPPLE_KUBE_PATCH_APPLY, a, &m1, &out); /* apply creates */
  assert_string_equal(lab_str(out, "data.x"), "1");
  json_decref(out);
  ripple_kube_status_t st;
  LAB_ERR(
      st, RIPPLE_KUBE_ECONFLICT,
      ripple_kube_patch(C, CM, NS, "ap", RIPPLE_KUBE_PATCH_APPLY, b, strlen(b), &m2, NULL, &st));
  assert_non_null(strstr(st.message, "ripple-m1"));
  assert_non_null(strstr(st.message, ".data.x"));
  m2.force = 1;
  patch(CM, "ap", RIPPLE_KUBE_PATCH_APPLY, b, &m2, &out);
  assert_string_equal(lab_str(out, "data.x"), "2");
  assert_string_equal(lab_str(out, "data.y"), "1"); /* still m1's */
  json_decref(out);
  /* m1 applies without y: y is removed, x stays m2's. */
  const char *a2 =
      "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"ap\"},"
      "\"data\":{}}";
  patch(CM, "ap", RIPPLE_KUBE_PATCH_APPLY, a2, &m1, &out);
  assert_null(lab_at(out, "data.y"));
  assert_string_equal(lab_str(out, "data.x"), "2");
  json_decref(out);
}

static void test_dry_run_and_delete(void **state) {
  (void)state;
  ripple_kube_write_opts_t dry = {.dry_run = 1};
  json_t *cm = cm_new("d", "", "\"k\":\"v\""), *out = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(C, CM, NS, cm, &dry, &out, &st));
  assert_string_equal(lab_str(out, "metadata.name"), "d");
  json_decref(out);
  LAB_ERR(st, RIPPLE_KUBE_ENOTFOUND, ripple_kube_get(C, CM, NS, "d", &out, &st));
  LAB_OK(st, ripple_kube_create(C, CM, NS, cm, NULL, NULL, &st));
  LAB_OK(st, ripple_kube_delete(C, CM, NS, "d", &dry, &st));
  json_decref(get(CM, "d"));
  LAB_OK(st, ripple_kube_delete(C, CM, NS, "d", NULL, &st));
  LAB_ERR(st, RIPPLE_KUBE_ENOTFOUND, ripple_kube_get(C, CM, NS, "d", &out, &st));
  LAB_ERR(st, RIPPLE_KUBE_ENOTFOUND, ripple_kube_delete(C, CM, NS, "d", NULL, &st));
  json_decref(cm);
}

/* A refused object: the message names the field. */
static void test_invalid(void **state) {
  (void)state;
  json_t *cm = cm_new("Bad_Name", "", ""), *d = deployment("neg", -1);
  ripple_kube_status_t st;
  LAB_ERR(st, RIPPLE_KUBE_EINVALID, ripple_kube_create(C, CM, NS, cm, NULL, NULL, &st));
  assert_int_equal(st.http, 422);
  assert_string_equal(st.reason, "Invalid");
  assert_non_null(strstr(st.message, "metadata.name"));
  LAB_ERR(st, RIPPLE_KUBE_EINVALID, ripple_kube_create(C, DEPLOY, NS, d, NULL, NULL, &st));
  assert_non_null(strstr(st.message, "spec.replicas"));
  print_message("422 reads: %s\n", st.message);
  json_decref(cm);
  json_decref(d);
}

/* ---- subresources ------------------------------------------------------------------- */

static void test_scale(void **state) {
  (void)state;
  json_t *d = deployment("sc", 1), *out = NULL;
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(C, DEPLOY, NS, d, NULL, NULL, &st));
  json_decref(d);
  ripple_kube_write_opts_t scale = {.subresource = "scale"};
  patch(DEPLOY, "sc", RIPPLE_KUBE_PATCH_MERGE, "{\"spec\":{\"replicas\":3}}", &scale, &out);
  assert_string_equal(lab_str(out, "kind"), "Scale");
  assert_int_equal(lab_int(out, "spec.replicas"), 3);
  json_decref(out);
  /* PUT the Scale back, as controllers do: the Deployment controller writes
   * the object's status meanwhile, so a conflict means "read again, retry". */
  char path[256];
  snprintf(path, sizeof path, "/apis/apps/v1/namespaces/%s/deployments/sc/scale", NS);
  json_t *put = NULL;
  int rc = RIPPLE_KUBE_ECONFLICT;
  for (int attempt = 0; attempt < 10 && rc == RIPPLE_KUBE_ECONFLICT; attempt++) {
    LAB_OK(st, ripple_kube_request(C, "GET", path, NULL, NULL, 0, &out, &st));
    assert_int_equal(lab_int(out, "spec.replicas"), 3);
    json_object_set_new(json_object_get(out, "spec"), "replicas", json_integer(2));
    rc = ripple_kube_update(C, DEPLOY, NS, out, &scale, &put, &st);
    json_decref(out);
  }
  if (rc != RIPPLE_OK) fail_msg("PUT scale: %s", st.message);
  assert_int_equal(lab_int(put, "spec.replicas"), 2);
  json_decref(put);
  d = get(DEPLOY, "sc");
  assert_int_equal(lab_int(d, "spec.replicas"), 2);
  json_decref(d);
  /* A subresource the resource does not have is named as such. */
  const char *p = "{}";
  ripple_kube_write_opts_t bogus = {.subresource = "bogus"};
  LAB_ERR(st, RIPPLE_KUBE_ENOTFOUND,
          ripple_kube_patch(C, DEPLOY, NS, "sc", RIPPLE_KUBE_PATCH_MERGE, p, 2, &bogus, NULL, &st));
  assert_non_null(strstr(st.message, "no subresource \"bogus\""));
  /* Background propagation: the Deployment goes at once, its ReplicaSet
   * after it (Foreground would keep the Deployment until the ReplicaSet is
   * gone). */
  LAB_OK(st, ripple_kube_delete(C, DEPLOY, NS, "sc", NULL, &st));
  LAB_ERR(st, RIPPLE_KUBE_ENOTFOUND, ripple_kube_get(C, DEPLOY, NS, "sc", &d, &st));
}

static void test_status(void **state) {
  (void)state;
  json_t *svc = lab_json(
      "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"lb\"},\"spec\":{"
      "\"type\":\"LoadBalancer\",\"ports\":[{\"port\":80}],\"selector\":{\"app\":\"x\"}}}");
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(C, SVC, NS, svc, NULL, NULL, &st));
  json_decref(svc);
  const char *body = "{\"status\":{\"loadBalancer\":{\"ingress\":[{\"ip\":\"192.0.2.7\"}]}}}";
  json_t *out = NULL;
  /* The main resource ignores status... */
  patch(SVC, "lb", RIPPLE_KUBE_PATCH_MERGE, body, NULL, &out);
  assert_null(lab_at(out, "status.loadBalancer.ingress"));
  json_decref(out);
  /* ...the status subresource writes it. */
  ripple_kube_write_opts_t status = {.subresource = "status"};
  patch(SVC, "lb", RIPPLE_KUBE_PATCH_MERGE, body, &status, &out);
  json_decref(out);
  out = get(SVC, "lb");
  assert_string_equal(lab_str(json_array_get(lab_at(out, "status.loadBalancer.ingress"), 0), "ip"),
                      "192.0.2.7");
  json_decref(out);
}

static void first_node(void *ud, json_t *obj) {
  char *name = ud;
  if (!*name) snprintf(name, 128, "%s", lab_str(obj, "metadata.name"));
}

static void test_binding(void **state) {
  (void)state;
  json_t *pod = lab_json(
      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"bind-me\"},\"spec\":{"
      "\"schedulerName\":\"ripple-no-such-scheduler\",\"containers\":[{\"name\":\"c\","
      "\"image\":\"example.com/c:1\"}]}}");
  ripple_kube_status_t st;
  LAB_OK(st, ripple_kube_create(C, POD, NS, pod, NULL, NULL, &st));
  json_decref(pod);
  char node[128] = "";
  ripple_kube_list_opts_t o = {.label_selector = "type=kwok"};
  LAB_OK(st, ripple_kube_list(C, NODE, &o, first_node, node, NULL, &st));
  if (!*node) LAB_OK(st, ripple_kube_list(C, NODE, NULL, first_node, node, NULL, &st));
  assert_true(*node);
  json_t *got = get(POD, "bind-me");
  assert_null(lab_str(got, "spec.nodeName")); /* nobody scheduled it */
  json_decref(got);
  json_t *b = lab_json(
      "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":"
      "\"bind-me\"},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\","
      "\"name\":\"%s\"}}",
      node);
  ripple_kube_write_opts_t binding = {.subresource = "binding"};
  LAB_OK(st, ripple_kube_create(C, POD, NS, b, &binding, NULL, &st));
  got = get(POD, "bind-me");
  assert_string_equal(lab_str(got, "spec.nodeName"), node);
  json_decref(got);
  /* Bound already: a second binding conflicts. */
  LAB_ERR(st, RIPPLE_KUBE_ECONFLICT, ripple_kube_create(C, POD, NS, b, &binding, NULL, &st));
  json_decref(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_get, setup, teardown),
      cmocka_unit_test_setup_teardown(test_list_paging_and_selectors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conflicts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_json_and_merge_patch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_strategic_patch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_apply, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dry_run_and_delete, setup, teardown),
      cmocka_unit_test_setup_teardown(test_invalid, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scale, setup, teardown),
      cmocka_unit_test_setup_teardown(test_status, setup, teardown),
      cmocka_unit_test_setup_teardown(test_binding, setup, teardown),
  };
  return cmocka_run_group_tests(tests, setup_group, teardown_group);
}
