/*
 * test_webhook_patches.c - what the webhook's patches cost kube-apiserver
 * (issue 28): no patch at all where the object already carries what the
 * webhook would write, one operation per annotation it changes (never the
 * whole annotations map when one exists), and the per-write-kind counters
 * of /metrics (ripple_webhook_write_*_total). Every answer posted through
 * the fixture is also checked to be minimal (wh_fixture.c's
 * check_minimal). The engine in process, no cluster.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate.h"
#include "ctxmac.h"
#include "ripplex/sbuf.h"
#include "wh_fixture.h"

#define RS_SA "system:serviceaccount:kube-system:replicaset-controller"

/* A Pod "name" in ns "d" owned by ReplicaSet rs; ann: its annotations'
 * members as JSON text (NULL: no annotations map at all). */
static void pod(char *buf, size_t cap, const char *name, const char *ann) {
  int n = snprintf(buf, cap,
                   "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
                   "\"namespace\":\"d\",\"uid\":\"%s-uid\",%s%s%s\"ownerReferences\":[{"
                   "\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"rs\","
                   "\"uid\":\"rs-uid\",\"controller\":true}]},\"spec\":{\"nodeName\":\"n0\"}}",
                   name, name, ann ? "\"annotations\":{" : "", ann ? ann : "", ann ? "}," : "");
  assert_true(n > 0 && (size_t)n < cap);
}

static const json_t *response(const fx_t *f) { return json_object_get(f->answer, "response"); }

/* The value of one sample of /metrics ("name{labels}"), -1 when absent. */
static long long sample(fx_t *f, const char *series) {
  sbuf_t out;
  sbuf_init(&out);
  wh_gauges_t g = {0};
  wh_metrics_write(wh_metrics(f->w), &g, &out);
  sbuf_putc(&out, '\0');
  long long v = -1;
  char want[256];
  snprintf(want, sizeof want, "\n%s ", series);
  const char *at = strstr(out.p, want);
  if (at) v = strtoll(at + strlen(want), NULL, 10);
  sbuf_free(&out);
  return v;
}

/* The object already carries the context and MAC the webhook would write:
 * the answer has no patch and no patchType at all. */
static void test_no_patch_when_same(void **state) {
  fx_t *f = *state;
  world_add_signed_rs(f);
  char mac[WH_CTXMAC_LEN + 1], ann[256], obj[1024];
  fx_mac_of("Pod", "d", "1;" S_CPID, mac);
  snprintf(ann, sizeof ann,
           "\"cpid.ripple.dev/pod\":\"1;" S_CPID "\",\"cpid.ripple.dev/pod.mac\":\"%s\"", mac);
  pod(obj, sizeof obj, "p", ann);
  /* The kubelet's status writes keep the Pod's own context. */
  for (int i = 0; i < 3; i++) {
    admit(f, "UPDATE", "system:node:n0", "Pod", "pods", "status", "d", "p", obj, obj);
    assert_string_equal(f->patch, "");
    assert_null(json_object_get(response(f), "patch"));
    assert_null(json_object_get(response(f), "patchType"));
  }
  /* The ReplicaSet controller's write of a Pod that has its context already
   * (a label change): nothing either. */
  admit(f, "UPDATE", RS_SA, "Pod", "pods", "", "d", "p", obj, obj);
  assert_string_equal(f->patch, "");
  assert_null(json_object_get(response(f), "patchType"));
  assert_int_equal(f->cap->nsp, 4); /* each still traced */
  assert_int_equal(
      sample(f,
             "ripple_webhook_write_unpatched_total{resource=\"pods/status\",operation=\"UPDATE\"}"),
      3);
  assert_int_equal(
      sample(f,
             "ripple_webhook_write_patched_total{resource=\"pods/status\",operation=\"UPDATE\"}"),
      0);
  assert_int_equal(
      sample(f, "ripple_webhook_write_answers_total{resource=\"pods\",operation=\"UPDATE\"}"), 1);
  assert_int_equal(atomic_load(&wh_metrics(f->w)->patched), 0);
}

/* A Pod whose annotations exist: one "add" per annotation written, under
 * its own path; the map is never replaced. A Pod without annotations: one
 * op adds the map with the context and its MAC in it. */
static void test_minimal_ops(void **state) {
  fx_t *f = *state;
  world_add_signed_rs(f);
  char obj[1024], mac[WH_CTXMAC_LEN + 1], want[512];
  fx_mac_of("Pod", "d", "1;" S_CPID, mac);
  pod(obj, sizeof obj, "a", "\"team\":\"web\"");
  admit(f, "CREATE", RS_SA, "Pod", "pods", "", "d", "", obj, "null");
  snprintf(want, sizeof want,
           "[{\"op\":\"add\",\"path\":\"/metadata/annotations/cpid.ripple.dev~1pod\","
           "\"value\":\"1;" S_CPID
           "\"},{\"op\":\"add\",\"path\":\"/metadata/annotations/"
           "cpid.ripple.dev~1pod.mac\",\"value\":\"%s\"}]",
           mac);
  assert_string_equal(f->patch, want);
  size_t bytes = strlen(f->patch);
  pod(obj, sizeof obj, "b", NULL);
  admit(f, "CREATE", RS_SA, "Pod", "pods", "", "d", "", obj, "null");
  snprintf(want, sizeof want,
           "[{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"cpid.ripple.dev/"
           "pod\":\"1;" S_CPID "\",\"cpid.ripple.dev/pod.mac\":\"%s\"}}]",
           mac);
  assert_string_equal(f->patch, want);
  bytes += strlen(f->patch);
  /* A Pod created with the signed context it would get: nothing to write. */
  char ann[256];
  snprintf(ann, sizeof ann,
           "\"cpid.ripple.dev/pod\":\"1;" S_CPID "\",\"cpid.ripple.dev/pod.mac\":\"%s\"", mac);
  pod(obj, sizeof obj, "c", ann);
  admit(f, "CREATE", RS_SA, "Pod", "pods", "", "d", "", obj, "null");
  assert_string_equal(f->patch, "");
  const char *pre = "ripple_webhook_write_";
  const char *lab = "{resource=\"pods\",operation=\"CREATE\"}";
  char name[160];
  snprintf(name, sizeof name, "%spatched_total%s", pre, lab);
  assert_int_equal(sample(f, name), 2);
  snprintf(name, sizeof name, "%sunpatched_total%s", pre, lab);
  assert_int_equal(sample(f, name), 1);
  snprintf(name, sizeof name, "%spatch_ops_total%s", pre, lab);
  assert_int_equal(sample(f, name), 3);
  snprintf(name, sizeof name, "%spatch_bytes_total%s", pre, lab);
  assert_int_equal(sample(f, name), (long long)bytes);
}

/* A stamped kind's update: the context and its generation stamp, each one
 * op on its own key; a stamp already right is not written again. */
static void test_stamp_only_when_behind(void **state) {
  fx_t *f = *state;
  const char *old =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\","
      "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"generation\":3,\"annotations\":{"
      "\"cpid.ripple.dev/replicaset.generation\":\"3\"}},\"spec\":{\"replicas\":1}}";
  const char *now =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\","
      "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"generation\":3,\"annotations\":{"
      "\"cpid.ripple.dev/replicaset.generation\":\"3\"}},\"spec\":{\"replicas\":1}}";
  /* A person's metadata-only update: a new root; the generation stays 3. */
  admit(f, "UPDATE", "alice", "ReplicaSet", "replicasets", "", "d", "rs", now, old);
  assert_non_null(strstr(f->patch, "cpid.ripple.dev~1replicaset\""));
  assert_null(strstr(f->patch, "generation"));
  assert_null(strstr(f->patch, "\"path\":\"/metadata/annotations\","));
  /* A spec change: the stamp moves to 4, beside the new context. */
  const char *now2 =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\","
      "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"generation\":3,\"annotations\":{"
      "\"cpid.ripple.dev/replicaset.generation\":\"3\"}},\"spec\":{\"replicas\":2}}";
  admit(f, "UPDATE", "alice", "ReplicaSet", "replicasets", "", "d", "rs", now2, old);
  assert_non_null(strstr(f->patch,
                         "\"path\":\"/metadata/annotations/"
                         "cpid.ripple.dev~1replicaset.generation\",\"value\":\"4\""));
}

/* Writes of kinds outside the table are counted as "other": the label set
 * stays bounded whatever the API server sends. */
static void test_other_kinds(void **state) {
  fx_t *f = *state;
  admit(f, "CREATE", "alice", "Widget", "widgets", "", "ripple-system", "w",
        "{\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\",\"namespace\":\"ripple-system\"}}",
        "null");
  admit(f, "UPDATE", "alice", "Widget", "gadgets", "status", "ripple-system", "w",
        "{\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\",\"namespace\":\"ripple-system\"}}",
        "{\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\",\"namespace\":\"ripple-system\"}}");
  admit(f, "CREATE", "alice", "Pod", "pods", "evictionx", "ripple-system", "w",
        "{\"kind\":\"Eviction\",\"metadata\":{\"name\":\"w\",\"namespace\":\"ripple-system\"}}",
        "null");
  assert_int_equal(
      sample(f, "ripple_webhook_write_answers_total{resource=\"other\",operation=\"CREATE\"}"), 2);
  assert_int_equal(
      sample(f, "ripple_webhook_write_answers_total{resource=\"other\",operation=\"UPDATE\"}"), 1);
  assert_int_equal(
      sample(f, "ripple_webhook_write_answers_total{resource=\"widgets\",operation=\"CREATE\"}"),
      -1);
  /* A kind never answered has no series. */
  assert_int_equal(
      sample(f, "ripple_webhook_write_answers_total{resource=\"pods\",operation=\"CREATE\"}"), -1);
}

/* wh_patch_put_annotation: a member of a map the patch adds whole (under
 * /metadata/annotations or /metadata), else an op of its own. */
static void test_put_annotation(void **state) {
  (void)state;
  static const struct {
    const char *was, *want;
  } cases[] = {
      {NULL, "[{\"op\":\"add\",\"path\":\"/metadata/annotations/a.io~1k\",\"value\":\"v\"}]"},
      {"[]", "[{\"op\":\"add\",\"path\":\"/metadata/annotations/a.io~1k\",\"value\":\"v\"}]"},
      {"[{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"c\":\"1;x\"}}]",
       "[{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"c\":\"1;x\","
       "\"a.io/k\":\"v\"}}]"},
      {"[{\"op\":\"add\",\"path\":\"/metadata\",\"value\":{\"annotations\":{\"c\":\"1;x\"}}}]",
       "[{\"op\":\"add\",\"path\":\"/metadata\",\"value\":{\"annotations\":{\"c\":\"1;x\","
       "\"a.io/k\":\"v\"}}}]"},
      {"[{\"op\":\"add\",\"path\":\"/metadata/annotations/c\",\"value\":\"1;x\"}]",
       "[{\"op\":\"add\",\"path\":\"/metadata/annotations/c\",\"value\":\"1;x\"},"
       "{\"op\":\"add\",\"path\":\"/metadata/annotations/a.io~1k\",\"value\":\"v\"}]"},
      {"[{\"op\":\"remove\",\"path\":\"/metadata/annotations/c\"}]",
       "[{\"op\":\"remove\",\"path\":\"/metadata/annotations/c\"},"
       "{\"op\":\"add\",\"path\":\"/metadata/annotations/a.io~1k\",\"value\":\"v\"}]"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *p = NULL;
    size_t len = 0;
    if (cases[i].was) {
      len = strlen(cases[i].was);
      p = malloc(len + 1);
      memcpy(p, cases[i].was, len + 1);
    }
    assert_int_equal(wh_patch_put_annotation(&p, &len, "a.io/k", "v"), RIPPLE_OK);
    assert_int_equal(len, strlen(p));
    assert_string_equal(p, cases[i].want);
    ripple_free(p);
  }
  char *bad = malloc(3);
  memcpy(bad, "{}", 3);
  size_t blen = 2;
  assert_int_equal(wh_patch_put_annotation(&bad, &blen, "k", "v"), RIPPLE_EINVAL);
  assert_string_equal(bad, "{}"); /* left as it was */
  ripple_free(bad);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_no_patch_when_same, setup_keyed, teardown),
      cmocka_unit_test_setup_teardown(test_minimal_ops, setup_keyed, teardown),
      cmocka_unit_test_setup_teardown(test_stamp_only_when_behind, setup, teardown),
      cmocka_unit_test_setup_teardown(test_other_kinds, setup, teardown),
      cmocka_unit_test(test_put_annotation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
