/*
 * test_owner_kinds_lab.c - issue 27's attack on the informers, on the lab:
 * a workload (a ServiceAccount) writes an object whose controlling
 * ownerReference names a ConfigMap. The webhook admits and traces the write
 * but starts no informer of ConfigMaps (cluster-wide, every ConfigMap's
 * text in its memory); the refusal is counted. A write owned by a
 * ReplicationController, a kind that owns, does start one: the check that
 * the first write was seen at all.
 *
 * The writes are the test's own, as the ServiceAccount (the admin's
 * certificate with Impersonate-User, and group system:masters so that RBAC
 * allows them), straight to the API server (whlab_post_as).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_client.h"
#include "rw_lab.h"
#include "testutil.h"
#include "wh_lab.h"

static whlab_t lab;

static int teardown(void **state) {
  (void)state;
  whlab_end(&lab);
  return 0;
}

/* POST json to the namespace's resource as system:serviceaccount:NS:ops. */
static void create_as_sa(const char *resource, const char *json) {
  char path[512], user[256];
  snprintf(path, sizeof path, "/api/v1/namespaces/%s/%s", lab.ns, resource);
  snprintf(user, sizeof user, "system:serviceaccount:%s:ops", lab.ns);
  sbuf_t out;
  sbuf_init(&out);
  long status = whlab_post_as(user, "system:masters", path, json, &out);
  if (status != 201) fail_msg("create %s: %ld %s", resource, status, out.p ? out.p : "");
  /* The webhook annotated it: it was traced. */
  assert_non_null(strstr(out.p, "cpid.ripple.dev/"));
  sbuf_free(&out);
}

static double metric(const char *name) {
  char *body = NULL;
  assert_int_equal(whlab_webhook_get(&lab, "/metrics", &body), 200);
  double v = hc_metric_value(body, name);
  free(body);
  return v;
}

/* A ConfigMap owned by a ConfigMap, as a ServiceAccount. */
static void create_owned(const char *name, const char *owner_api, const char *owner_kind) {
  char json[1024];
  snprintf(json, sizeof json,
           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
           "\"ownerReferences\":[{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"name\":\"owner\","
           "\"uid\":\"00000000-0000-4000-8000-%012d\",\"controller\":true}]}}",
           name, owner_api, owner_kind, (int)strlen(name));
  create_as_sa("configmaps", json);
}

static int informers_are(void *ud) { return metric("ripple_webhook_informers") == *(double *)ud; }

static void test_owner_kind_not_followed(void **state) {
  (void)state;
  whlab_begin(&lab, "ripple-owners", "ripple-owners");
  double before = metric("ripple_webhook_informers");
  assert_true(before > 0);
  assert_int_equal(metric("ripple_webhook_owner_kinds_refused_total"), 0);
  create_owned("by-configmap", "v1", "ConfigMap");
  /* Counted when admitted (and again when the garbage collector deletes the
   * orphan: its owner does not exist). */
  assert_true(metric("ripple_webhook_owner_kinds_refused_total") >= 1);
  /* A kind that owns is followed: its informer comes (the same path the
   * ConfigMap would have taken, started later). */
  create_owned("by-rc", "v1", "ReplicationController");
  double after = before + 1;
  if (!lab_wait(informers_are, &after, 30000))
    fail_msg("no ReplicationController informer (informers %g, before %g)",
             metric("ripple_webhook_informers"), before);
  assert_int_equal(whlab_count_in_log(lab.webhook.log, "event=owner_kind_watched kind=ConfigMap"),
                   0);
  assert_int_equal(
      whlab_count_in_log(lab.webhook.log, "event=owner_kind_watched kind=ReplicationController"),
      1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_owner_kind_not_followed, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
