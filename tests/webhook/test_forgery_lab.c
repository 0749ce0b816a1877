/*
 * test_forgery_lab.c - contexts the webhook did not issue never join another
 * trace (issue 27 item 7, webhook/ctxmac.h), against the lab with the real
 * ripple-webhook (with a context key, as the chart runs it) and
 * ripple-server.
 *
 * An administrator starts a trace A (a ConfigMap created with a root CPID
 * of its own, as kubectl ripple writes it). Then, through the lab's admin
 * credentials with Impersonate-User:
 *   (a) a person, mallory, writes A on an unrelated object of hers, once
 *       bare and once copied with its MAC from A's object;
 *   (b) a ServiceAccount writes contexts with forged ancestors naming A,
 *       and one that names A itself.
 * Neither joins A: the trace server's related CPIDs of A are A's alone and
 * its spans are all on A's object, and each forged object carries a CPID
 * and ancestors of the webhook's own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_client.h"
#include "rw_lab.h"
#include "wh_lab.h"

static whlab_t lab;

static int teardown(void **state) {
  (void)state;
  whlab_end(&lab);
  return 0;
}

/* POST body to path on the lab's API server as user; the HTTP status, the
 * answer in *out. */
static long post_as(const char *user, const char *path, const char *body, json_t **out) {
  sbuf_t b;
  sbuf_init(&b);
  long status = whlab_post_as(user, NULL, path, body, &b);
  *out = json_loadb(b.p ? b.p : "", b.len, 0, NULL);
  if (status != 201)
    fprintf(stderr, "# POST %s as %s: %ld %.*s\n", path, user, status, (int)b.len, b.p ? b.p : "");
  sbuf_free(&b);
  return status;
}

/* A ConfigMap name in the test's namespace created by user with the
 * annotations ann (JSON members); the stored object. */
static json_t *configmap_as(const char *user, const char *name, const char *ann) {
  char path[256], body[2048];
  snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps", lab.ns);
  snprintf(body, sizeof body,
           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
           "\"annotations\":{%s}},\"data\":{\"k\":\"v\"}}",
           name, ann);
  json_t *out = NULL;
  if (post_as(user, path, body, &out) != 201) fail_msg("%s could not create %s", user, name);
  return out;
}

static const char *annotation(const json_t *o, const char *key) {
  return json_string_value(json_object_get(lab_at(o, "metadata.annotations"), key));
}

/* Whom mallory and the ServiceAccount are: allowed to write ConfigMaps here. */
static void grant(const char *sa) {
  whlab_create(&lab, "roles",
               lab_json("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"Role\","
                        "\"metadata\":{\"name\":\"cm-writer\",\"namespace\":\"%s\"},\"rules\":[{"
                        "\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],\"verbs\":[\"*\"]}]}",
                        lab.ns));
  whlab_create(&lab, "rolebindings",
               lab_json("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":"
                        "\"RoleBinding\",\"metadata\":{\"name\":\"cm-writer\",\"namespace\":"
                        "\"%s\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":"
                        "\"Role\",\"name\":\"cm-writer\"},\"subjects\":[{\"kind\":\"User\","
                        "\"apiGroup\":\"rbac.authorization.k8s.io\",\"name\":\"mallory\"},{"
                        "\"kind\":\"ServiceAccount\",\"name\":\"%s\",\"namespace\":\"%s\"}]}",
                        lab.ns, sa, lab.ns));
}

static int shipped(void *ud) {
  char path[160];
  snprintf(path, sizeof path, "/v1/cpids/%s/spans", (const char *)ud);
  json_t *j = hc_get_json(lab.trace, path, 200);
  int ok = j && json_array_size(json_object_get(j, "spans")) > 0;
  json_decref(j);
  return ok;
}

static double metric(const char *name) {
  char *body = NULL;
  assert_int_equal(whlab_webhook_get(&lab, "/metrics", &body), 200);
  double v = hc_metric_value(body, name);
  free(body);
  return v;
}

#define NFORGED 4

static void test_forged_contexts(void **state) {
  (void)state;
  whlab_begin(&lab, "ripple-forgery", "ripple-forgery-test");
  char sa[300];
  grant("forger");
  snprintf(sa, sizeof sa, "system:serviceaccount:%s:forger", lab.ns);

  /* Trace A: the administrator's change. */
  char a[RIPPLE_CPID_STRLEN + 1], z[RIPPLE_CPID_STRLEN + 1], id[RIPPLE_CPID_STRLEN + 1];
  char ann[1024];
  whlab_new_cpid(a);
  whlab_new_cpid(z);
  whlab_create(&lab, "configmaps",
               lab_json("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                        "\"first\",\"annotations\":{\"cpid.ripple.dev/configmap\":\"1;%s\"}},"
                        "\"data\":{\"k\":\"v\"}}",
                        a));
  json_t *first = whlab_get(&lab, "configmaps", "first");
  assert_true(whlab_obj_cpid(first, "ConfigMap", id));
  assert_string_equal(id, a);
  const char *mac = annotation(first, "cpid.ripple.dev/configmap.mac");
  if (!mac) fail_msg("the webhook wrote no MAC beside A's context");
  fprintf(stderr, "# trace A %s, MAC %s\n", a, mac);

  /* (a) mallory: A bare, and A copied from its object with its MAC. */
  json_t *forged[NFORGED];
  snprintf(ann, sizeof ann, "\"cpid.ripple.dev/configmap\":\"1;%s\"", a);
  forged[0] = configmap_as("mallory", "mallory-bare", ann);
  snprintf(ann, sizeof ann,
           "\"cpid.ripple.dev/configmap\":\"1;%s\",\"cpid.ripple.dev/configmap.mac\":\"%s\"", a,
           mac);
  forged[1] = configmap_as("mallory", "mallory-copy", ann);
  /* (b) a ServiceAccount: ancestors naming A, and A itself. */
  snprintf(ann, sizeof ann, "\"cpid.ripple.dev/configmap\":\"1;%s;%s\"", z, a);
  forged[2] = configmap_as(sa, "sa-ancestors", ann);
  snprintf(ann, sizeof ann, "\"cpid.ripple.dev/configmap\":\"1;%s\"", a);
  forged[3] = configmap_as(sa, "sa-same", ann);

  char ids[NFORGED][RIPPLE_CPID_STRLEN + 1];
  for (int i = 0; i < NFORGED; i++) {
    const char *name = lab_str(forged[i], "metadata.name");
    const char *v = annotation(forged[i], "cpid.ripple.dev/configmap");
    fprintf(stderr, "# %s: %s\n", name, v ? v : "(none)");
    if (!whlab_obj_cpid(forged[i], "ConfigMap", ids[i])) fail_msg("%s has no context", name);
    /* Neither A nor the forged CPID, nor A as an ancestor. */
    if (!v || strstr(v, a) || strstr(v, z)) fail_msg("%s kept a forged context", name);
    if (!annotation(forged[i], "cpid.ripple.dev/configmap.mac"))
      fail_msg("%s has no MAC beside its context", name);
  }
  /* Every forged object's span has reached the trace server, and A's too. */
  for (int i = 0; i < NFORGED; i++)
    if (!lab_wait(shipped, ids[i], 30000)) fail_msg("no span of %s reached the server", ids[i]);
  if (!lab_wait(shipped, a, 30000)) fail_msg("no span of A reached the server");

  json_t *rel = whlab_trace(&lab, a, "related");
  char *dump = json_dumps(rel, JSON_COMPACT);
  fprintf(stderr, "# related(A): %s\n", dump);
  free(dump);
  for (int i = 0; i < NFORGED; i++)
    if (hc_array_has(json_object_get(rel, "related"), ids[i]))
      fail_msg("%s (of %s) joined A's trace", ids[i], lab_str(forged[i], "metadata.name"));
  assert_int_equal(json_array_size(json_object_get(rel, "related")), 1);
  json_decref(rel);
  json_t *spans = whlab_trace(&lab, a, "spans");
  size_t i;
  const json_t *s;
  json_array_foreach(json_object_get(spans, "spans"), i, s) {
    const char *obj = json_string_value(json_object_get(json_object_get(s, "attributes"), "name"));
    if (!obj || strcmp(obj, "first") != 0) fail_msg("a span of A is on %s", obj ? obj : "?");
  }
  json_decref(spans);
  assert_true(metric("ripple_webhook_contexts_refused_total{reason=\"cpid_in_use\"}") >= 2);
  assert_true(metric("ripple_webhook_contexts_refused_total{reason=\"untrusted_writer\"}") >= 2);

  for (int k = 0; k < NFORGED; k++) json_decref(forged[k]);
  json_decref(first);
  whlab_unregister(&lab);
  whlab_stop(&lab.webhook);
  whlab_ns_delete(&lab);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_forged_contexts, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
