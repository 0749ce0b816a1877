/*
 * test_webhook_traceparent.c - KEP-5915's `tracing.k8s.io/traceparent`
 * beside the CPID (--traceparent, webhook/traceparent.c): the parser, when
 * the annotation is written and when it is kept, a client's trace context as
 * a person's root, malformed values, the metrics, and nothing at all with
 * the flag off. Patches are applied to the object here (JSON Patch "add",
 * in order, as the API server applies them) and the result is read back.
 * kube-apiserver's own traceparent header, another thing, is tested in
 * test_webhook_apiserver_tp.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate.h"
#include "ripplex/sbuf.h"
#include "traceparent.h"
#include "wh_fixture.h"

/* The generation stamp a write leaves beside the context (stamp.c). */
#define STAMP_OP(kind, gen)                                                 \
  "{\"op\":\"add\",\"path\":\"/metadata/annotations/cpid.ripple.dev~1" kind \
  ".generation\","                                                          \
  "\"value\":\"" gen "\"}"

#define TP_KEY "tracing.k8s.io/traceparent"
/* The W3C specification's example, a version-4-looking trace id ... */
#define W3C_TP "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
#define W3C_CPID "4bf92f35-77b3-4da6-a3ce-929d0e0e4736"
/* ... and one that is no UUID of version 4 nor of the RFC's variant. */
#define RAW_TP "00-0123456789abcdef0123456789abcdef-b7ad6b7169203331-00"
#define RAW_CPID "01234567-89ab-cdef-0123-456789abcdef"
#define DEP_CONTROLLER "system:serviceaccount:kube-system:deployment-controller"

/* ---- helpers ----------------------------------------------------------------- */

/* The traceparent of a CPID, from its text (independently of the webhook's
 * own formatter): 00-<32 hex>-<last 16 hex>-01. */
static void tp_of(const char *cpid, char out[WH_TRACEPARENT_LEN + 1]) {
  char hex[33];
  size_t n = 0;
  for (const char *p = cpid; *p; p++)
    if (*p != '-') hex[n++] = *p;
  assert_int_equal(n, 32);
  hex[32] = '\0';
  snprintf(out, WH_TRACEPARENT_LEN + 1, "00-%s-%s-01", hex, hex + 16);
}

/* JSON Pointer token t (n bytes) unescaped into out. */
static void token(const char *t, size_t n, char *out, size_t cap) {
  size_t o = 0;
  for (size_t i = 0; i < n && o + 1 < cap; i++) {
    if (t[i] == '~' && i + 1 < n) {
      out[o++] = t[i + 1] == '1' ? '/' : '~';
      i++;
    } else {
      out[o++] = t[i];
    }
  }
  out[o] = '\0';
}

/* The object text with the patch applied: every operation an "add" of an
 * object member, applied in order. A new tree. */
static json_t *apply(const char *object, const char *patch) {
  json_t *obj = json_loads(object, 0, NULL);
  assert_non_null(obj);
  if (!*patch) return obj;
  json_t *ops = json_loads(patch, 0, NULL);
  assert_true(json_is_array(ops));
  size_t i;
  json_t *op;
  json_array_foreach(ops, i, op) {
    assert_string_equal(jstr(op, "op", NULL), "add");
    const char *path = jstr(op, "path", NULL);
    assert_true(path[0] == '/');
    json_t *at = obj;
    const char *p = path + 1;
    for (;;) {
      const char *slash = strchr(p, '/');
      char key[256];
      token(p, slash ? (size_t)(slash - p) : strlen(p), key, sizeof key);
      if (!slash) {
        json_object_set(at, key, json_object_get(op, "value"));
        break;
      }
      at = json_object_get(at, key);
      if (!json_is_object(at)) fail_msg("patch %s: %s does not exist", patch, path);
      p = slash + 1;
    }
  }
  json_decref(ops);
  return obj;
}

static const char *annotation(const json_t *obj, const char *key) {
  const json_t *v =
      json_object_get(json_object_get(json_object_get(obj, "metadata"), "annotations"), key);
  return json_is_string(v) ? json_string_value(v) : NULL;
}

/* The object after the last answer's patch: its annotation key. */
static void expect_annotation(fx_t *f, const char *object, const char *key, const char *want) {
  json_t *o = apply(object, f->patch);
  const char *got = annotation(o, key);
  if (want && (!got || strcmp(got, want) != 0))
    fail_msg("%s: got %s, want %s (patch %s)", key, got ? got : "(none)", want, f->patch);
  if (!want && got) fail_msg("%s: got %s, want none (patch %s)", key, got, f->patch);
  json_decref(o);
}

/* The last span's CPID as text. */
static const char *last_cpid(fx_t *f, char out[40]) {
  assert_true(f->cap->nsp > 0);
  fmt(&f->cap->sp[f->cap->nsp - 1].cpid, out);
  return out;
}

#define M(f, field) atomic_load(&wh_metrics((f)->w)->field)

/* ---- the value --------------------------------------------------------------- */

static void test_parse(void **state) {
  (void)state;
  wh_traceparent_t tp;
  assert_int_equal(wh_traceparent_parse(W3C_TP, strlen(W3C_TP), &tp), RIPPLE_OK);
  char id[40];
  fmt(&tp.trace_id, id);
  assert_string_equal(id, W3C_CPID);
  assert_true(tp.span_id == 0x00f067aa0ba902b7ULL);
  assert_int_equal(tp.flags, 1);
  assert_int_equal(wh_traceparent_parse(RAW_TP, strlen(RAW_TP), &tp), RIPPLE_OK);
  fmt(&tp.trace_id, id);
  assert_string_equal(id, RAW_CPID); /* the bytes as they are: no version forced */
  assert_int_equal(tp.flags, 0);
  /* The traceparent of a CPID, and back. */
  char out[WH_TRACEPARENT_LEN + 1], want[WH_TRACEPARENT_LEN + 1];
  ripple_cpid_t x;
  assert_int_equal(ripple_cpid_parse(X_CPID, 36, &x), RIPPLE_OK);
  assert_int_equal(wh_traceparent_of(&x, out), 1);
  tp_of(X_CPID, want);
  assert_string_equal(out, want);
  assert_string_equal(out, "00-3f2b8e4c9a1d4c7e8f001b2c3d4e5f60-8f001b2c3d4e5f60-01");
  assert_int_equal(wh_traceparent_parse(out, strlen(out), &tp), RIPPLE_OK);
  assert_true(ripple_cpid_equal(&tp.trace_id, &x));
  assert_true(tp.span_id == wh_traceparent_root_span(&x));
  assert_true(tp.span_id == 0x8f001b2c3d4e5f60ULL);
  /* A CPID whose last 8 bytes are zero has no valid root span id. */
  ripple_cpid_t low;
  assert_int_equal(ripple_cpid_parse("01234567-89ab-cdef-0000-000000000000", 36, &low), RIPPLE_OK);
  memcpy(out, "unchanged", 10);
  assert_int_equal(wh_traceparent_of(&low, out), 0);
  assert_string_equal(out, "unchanged");
  static const char *const bad[] = {
      "",
      "00",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",   /* short */
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-011", /* long */
      "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",  /* dash misplaced */
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  /* upper case */
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A",
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", /* version ff */
      "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", /* a version not known */
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01", /* zero trace id */
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", /* zero span id */
      "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
      "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01", /* not hex */
      " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ",
      "not a traceparent at all, but exactly fifty-five chars",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset(&tp, 0x5a, sizeof tp);
    wh_traceparent_t before = tp;
    if (wh_traceparent_parse(bad[i], strlen(bad[i]), &tp) != RIPPLE_EBADCTX)
      fail_msg("'%s' was accepted", bad[i]);
    assert_memory_equal(&tp, &before, sizeof tp); /* untouched */
  }
  /* A NUL inside is not the end. */
  char nul[WH_TRACEPARENT_LEN + 1];
  memcpy(nul, W3C_TP, sizeof nul);
  nul[20] = '\0';
  assert_int_equal(wh_traceparent_parse(nul, WH_TRACEPARENT_LEN, &tp), RIPPLE_EBADCTX);
}

/* ---- written ------------------------------------------------------------------ */

static const char *dep_new =
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
    "\"namespace\":\"d\",\"uid\":\"dep-uid\"},\"spec\":{\"replicas\":1}}";

/* A create gets the traceparent of its new CPID in the same patch, whatever
 * the shape of the patch's first operation (annotations absent, present,
 * metadata absent). */
static void test_create_writes(void **state) {
  fx_t *f = *state;
  char id[40], tp[WH_TRACEPARENT_LEN + 1];
  admit(f, "CREATE", "kubernetes-admin", "Deployment", "deployments", "", "d", "web", dep_new,
        "null");
  tp_of(last_cpid(f, id), tp);
  char want[512];
  snprintf(want, sizeof want,
           "[{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{"
           "\"cpid.ripple.dev/deployment\":\"1;%s\",\"tracing.k8s.io/traceparent\":\"%s\","
           "\"cpid.ripple.dev/deployment.generation\":\"1\"}}]",
           id, tp);
  assert_string_equal(f->patch, want);
  expect_annotation(f, dep_new, TP_KEY, tp);
  assert_int_equal(f->cap->sp[0].parent_id, 0); /* no client trace */
  /* A controller's create: the Pod inherits X from its ReplicaSet. */
  world_add(&f->world,
            "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-1\","
            "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"annotations\":{\"cpid.ripple.dev/"
            "replicaset\":\"1;" X_CPID "\"}}}");
  const char *pod =
      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":\"web-1-\","
      "\"namespace\":\"d\",\"annotations\":{\"other\":\"x\"},\"ownerReferences\":[{"
      "\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web-1\",\"uid\":"
      "\"rs-uid\",\"controller\":true}]},\"spec\":{}}";
  admit(f, "CREATE", "system:serviceaccount:kube-system:replicaset-controller", "Pod", "pods", "",
        "d", "", pod, "null");
  assert_string_equal(f->patch,
                      "[{\"op\":\"add\",\"path\":\"/metadata/annotations/cpid.ripple.dev~1pod\","
                      "\"value\":\"1;" X_CPID
                      "\"},{\"op\":\"add\",\"path\":\"/metadata/annotations/"
                      "tracing.k8s.io~1traceparent\",\"value\":\"00-"
                      "3f2b8e4c9a1d4c7e8f001b2c3d4e5f60-8f001b2c3d4e5f60-01\"}]");
  expect_annotation(f, pod, "other", "x");
  expect_annotation(f, pod, "cpid.ripple.dev/pod", "1;" X_CPID);
  /* An object without metadata at all. */
  const char *bare = "{\"kind\":\"ConfigMap\"}";
  admit(f, "CREATE", "kubernetes-admin", "ConfigMap", "configmaps", "", "d", "c", bare, "null");
  tp_of(last_cpid(f, id), tp);
  expect_annotation(f, bare, TP_KEY, tp);
  char ctx[64];
  snprintf(ctx, sizeof ctx, "1;%s", id);
  expect_annotation(f, bare, "cpid.ripple.dev/configmap", ctx);
  assert_int_equal(M(f, tp_written), 3);
  assert_int_equal(M(f, tp_kept) + M(f, tp_roots) + M(f, tp_invalid), 0);
}

/* An update that changes spec and gets a new context gets its traceparent;
 * one that changes only metadata, or a status write, never does. */
static void test_update_spec_only(void **state) {
  fx_t *f = *state;
  char id[40], tp[WH_TRACEPARENT_LEN + 1];
  const char *was =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"db\","
      "\"namespace\":\"d\",\"uid\":\"ss-uid\",\"annotations\":{\"cpid.ripple.dev/statefulset\":"
      "\"1;" S_CPID "\",\"" TP_KEY
      "\":\"00-0c9d2b1a111142228333444455556666-8333444455556666-01\"}},\"spec\":{"
      "\"replicas\":1}}";
  const char *scaled =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"db\","
      "\"namespace\":\"d\",\"uid\":\"ss-uid\",\"annotations\":{\"cpid.ripple.dev/statefulset\":"
      "\"1;" S_CPID "\",\"" TP_KEY
      "\":\"00-0c9d2b1a111142228333444455556666-8333444455556666-01\"}},\"spec\":{"
      "\"replicas\":3}}";
  /* A person's spec change: a fresh root, its traceparent replaces the one
   * carried over from the earlier change. */
  admit(f, "UPDATE", "kubernetes-admin", "StatefulSet", "statefulsets", "", "d", "db", scaled, was);
  tp_of(last_cpid(f, id), tp);
  assert_string_not_equal(id, S_CPID);
  expect_annotation(f, scaled, TP_KEY, tp);
  assert_int_equal(M(f, tp_written), 1);
  /* Labels only: a new root, the same traceparent as before. */
  const char *labelled =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"db\","
      "\"namespace\":\"d\",\"uid\":\"ss-uid\",\"labels\":{\"a\":\"b\"},\"annotations\":{"
      "\"cpid.ripple.dev/statefulset\":\"1;" S_CPID "\",\"" TP_KEY
      "\":\"00-0c9d2b1a111142228333444455556666-8333444455556666-01\"}},\"spec\":{"
      "\"replicas\":1}}";
  admit(f, "UPDATE", "kubernetes-admin", "StatefulSet", "statefulsets", "", "d", "db", labelled,
        was);
  assert_non_null(strstr(f->patch, "cpid.ripple.dev~1statefulset"));
  assert_null(strstr(f->patch, "traceparent"));
  expect_annotation(f, labelled, TP_KEY, "00-0c9d2b1a111142228333444455556666-8333444455556666-01");
  /* A spec that is equal but written in another member order is no change. */
  const char *reordered =
      "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"s\","
      "\"namespace\":\"d\"},\"spec\":{\"b\":1,\"a\":[1,2]}}";
  const char *ordered =
      "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"s\","
      "\"namespace\":\"d\"},\"spec\":{\"a\":[1,2],\"b\":1}}";
  admit(f, "UPDATE", "kubernetes-admin", "Service", "services", "", "d", "s", reordered, ordered);
  assert_non_null(strstr(f->patch, "cpid.ripple.dev/service"));
  assert_null(strstr(f->patch, "traceparent"));
  /* Objects without spec (a ConfigMap's data) have no spec change. */
  admit(f, "UPDATE", "kubernetes-admin", "ConfigMap", "configmaps", "", "d", "c",
        "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"},\"data\":{\"k\":\"2\"}}",
        "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"},\"data\":{\"k\":\"1\"}}");
  assert_non_null(strstr(f->patch, "cpid.ripple.dev/configmap"));
  assert_null(strstr(f->patch, "traceparent"));
  /* A status write that gets a new context: never. */
  world_add(&f->world,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"c1\",\"namespace\":"
            "\"d\",\"uid\":\"c1\",\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\","
            "\"uid\":\"rs-2\",\"controller\":true}],\"annotations\":{\"cpid.ripple.dev/pod\":"
            "\"1;" X_CPID "\"}}}");
  const char *rs =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\","
      "\"namespace\":\"d\",\"uid\":\"rs-2\",\"annotations\":{\"cpid.ripple.dev/replicaset\":"
      "\"1;" P_CPID "\"}},\"spec\":{\"replicas\":1}}";
  const char *rs_was =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\","
      "\"namespace\":\"d\",\"uid\":\"rs-2\",\"annotations\":{\"cpid.ripple.dev/replicaset\":"
      "\"1;" P_CPID "\"}},\"spec\":{\"replicas\":2}}";
  admit(f, "UPDATE", "system:serviceaccount:kube-system:replicaset-controller", "ReplicaSet",
        "replicasets", "status", "d", "rs", rs, rs_was);
  assert_non_null(strstr(f->patch, "cpid.ripple.dev~1replicaset"));
  assert_null(strstr(f->patch, "traceparent"));
  /* A controller's spec change with a new context: the ReplicaSet takes its
   * Deployment's X (not traced with a traceparent: nothing to keep). */
  world_add(&f->world,
            "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
            "\"namespace\":\"d\",\"uid\":\"dep-uid\",\"annotations\":{\"cpid.ripple.dev/"
            "deployment\":\"1;" X_CPID "\"}}}");
#define WEB1_FMT                                                                          \
  "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-1\"," \
  "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"ownerReferences\":[{\"apiVersion\":"          \
  "\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"web\",\"uid\":\"dep-uid\","             \
  "\"controller\":true}]},\"spec\":{\"replicas\":%d}}"
  char now[1024], before[1024];
  snprintf(now, sizeof now, WEB1_FMT, 5);
  snprintf(before, sizeof before, WEB1_FMT, 4);
  admit(f, "UPDATE", DEP_CONTROLLER, "ReplicaSet", "replicasets", "", "d", "web-1", now, before);
  expect_annotation(f, now, "cpid.ripple.dev/replicaset", "1;" X_CPID);
  expect_annotation(f, now, TP_KEY, "00-3f2b8e4c9a1d4c7e8f001b2c3d4e5f60-8f001b2c3d4e5f60-01");
  /* The same write again: the context is unchanged, so is everything. */
  json_t *o = apply(now, f->patch);
  char *again = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  admit(f, "UPDATE", DEP_CONTROLLER, "ReplicaSet", "replicasets", "", "d", "web-1", again, again);
  free(again);
  assert_string_equal(f->patch, "");
  assert_int_equal(M(f, tp_written), 2);
  assert_int_equal(M(f, tp_kept), 0);
}

/* ---- kept --------------------------------------------------------------------- */

static void test_request_value_kept(void **state) {
  fx_t *f = *state;
  /* A ReplicaSet created by the Deployment controller with its copy of the
   * Deployment's annotations: the copy stays exactly as sent. */
  world_add(&f->world,
            "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
            "\"namespace\":\"d\",\"uid\":\"dep-uid\",\"annotations\":{\"cpid.ripple.dev/"
            "deployment\":\"1;" X_CPID "\",\"" TP_KEY
            "\":\"00-3f2b8e4c9a1d4c7e8f001b2c3d4e5f60-8f001b2c3d4e5f60-01\"}}}");
  const char *rs =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-1\","
      "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"annotations\":{\"cpid.ripple.dev/deployment\":"
      "\"1;" X_CPID "\",\"" TP_KEY
      "\":\"00-3f2b8e4c9a1d4c7e8f001b2c3d4e5f60-8f001b2c3d4e5f60-01\"},\"ownerReferences\":[{"
      "\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"web\",\"uid\":\"dep-uid\","
      "\"controller\":true}]},\"spec\":{\"replicas\":1}}";
  admit(f, "CREATE", DEP_CONTROLLER, "ReplicaSet", "replicasets", "", "d", "web-1", rs, "null");
  assert_string_equal(f->patch,
                      "[{\"op\":\"add\",\"path\":\"/metadata/annotations/"
                      "cpid.ripple.dev~1replicaset\",\"value\":\"1;" X_CPID
                      "\"}," STAMP_OP("replicaset", "1") "]");
  assert_int_equal(M(f, tp_kept), 1);
  /* Even a malformed one: it is the writer's (and not counted: only a
   * person's traceparent is read for meaning). */
  const char *cm =
      "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\",\"namespace\":\"d\","
      "\"annotations\":{\"" TP_KEY "\":\"junk\"}}}";
  admit(f, "CREATE", "system:serviceaccount:ops:op", "ConfigMap", "configmaps", "", "d", "c", cm,
        "null");
  assert_non_null(strstr(f->patch, "cpid.ripple.dev~1configmap"));
  expect_annotation(f, cm, TP_KEY, "junk");
  assert_int_equal(M(f, tp_kept), 2);
  assert_int_equal(M(f, tp_invalid), 0);
  /* An update that sets a different one (the Deployment controller puts its
   * copy back over a value the webhook wrote), spec changed too: kept. */
  const char *mine =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-2\","
      "\"namespace\":\"d\",\"uid\":\"rs2-uid\",\"annotations\":{\"cpid.ripple.dev/replicaset\":"
      "\"1;" S_CPID "\",\"" TP_KEY
      "\":\"00-0c9d2b1a111142228333444455556666-8333444455556666-01\"},\"ownerReferences\":[{"
      "\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"web\",\"uid\":\"dep-uid\","
      "\"controller\":true}]},\"spec\":{\"replicas\":1}}";
  const char *copied =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-2\","
      "\"namespace\":\"d\",\"uid\":\"rs2-uid\",\"annotations\":{\"cpid.ripple.dev/replicaset\":"
      "\"1;" S_CPID "\",\"" TP_KEY
      "\":\"00-3f2b8e4c9a1d4c7e8f001b2c3d4e5f60-8f001b2c3d4e5f60-01\"},\"ownerReferences\":[{"
      "\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"web\",\"uid\":\"dep-uid\","
      "\"controller\":true}]},\"spec\":{\"replicas\":2,\"minReadySeconds\":3}}";
  admit(f, "UPDATE", DEP_CONTROLLER, "ReplicaSet", "replicasets", "", "d", "web-2", copied, mine);
  assert_non_null(strstr(f->patch, "cpid.ripple.dev~1replicaset")); /* a new context ... */
  assert_null(strstr(f->patch, "traceparent"));                     /* ... the copy kept */
  expect_annotation(f, copied, TP_KEY, "00-3f2b8e4c9a1d4c7e8f001b2c3d4e5f60-8f001b2c3d4e5f60-01");
  assert_int_equal(M(f, tp_kept), 3);
  /* A person's update that sets one: kept as sent (and it is the root). */
  const char *set =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"db\","
      "\"namespace\":\"d\",\"annotations\":{\"" TP_KEY "\":\"" W3C_TP
      "\"}},\"spec\":{\"replicas\":2}}";
  admit(f, "UPDATE", "kubernetes-admin", "StatefulSet", "statefulsets", "", "d", "db", set,
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"db\","
        "\"namespace\":\"d\"},\"spec\":{\"replicas\":1}}");
  assert_null(strstr(f->patch, "traceparent"));
  expect_annotation(f, set, TP_KEY, W3C_TP);
  assert_int_equal(M(f, tp_kept), 4);
  assert_int_equal(M(f, tp_written), 0);
}

/* A ReplicaSet scaled by the Deployment controller carries the copy of its
 * Deployment's traceparent over unchanged. It is left alone while it equals
 * the Deployment's (the controller would put it back at its next sync: one
 * more ReplicaSet write per scale); it is replaced otherwise. */
static void test_owner_copy_kept(void **state) {
  fx_t *f = *state;
  const char *tp_d = "00-3f2b8e4c9a1d4c7e8f001b2c3d4e5f60-8f001b2c3d4e5f60-01";
#define DEP_FMT                                                                         \
  "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\"," \
  "\"namespace\":\"d\",\"uid\":\"%s\",\"annotations\":{\"cpid.ripple.dev/deployment\":" \
  "\"1;" X_CPID "\"%s%s%s}}}"
  char dep[1024];
  snprintf(dep, sizeof dep, DEP_FMT, "dep-uid", ",\"" TP_KEY "\":\"", tp_d, "\"");
  world_add(&f->world, dep);
  /* The scale's root, held for the Deployment's uid. */
  admit(f, "UPDATE", "kubernetes-admin", "Scale", "deployments", "scale", "d", "web",
        "{\"kind\":\"Scale\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\",\"uid\":"
        "\"dep-uid\"}}",
        "{\"kind\":\"Scale\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\",\"uid\":"
        "\"dep-uid\"}}");
#define RS_FMT                                                                              \
  "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-1\","   \
  "\"namespace\":\"d\",\"uid\":\"rs-uid\",\"annotations\":{\"cpid.ripple.dev/replicaset\":" \
  "\"1;" X_CPID "\",\"" TP_KEY                                                              \
  "\":\"%s\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","    \
  "\"name\":\"web\",\"uid\":\"dep-uid\",\"controller\":true}]},\"spec\":{\"replicas\":%d}}"
  char now[1024], before[1024];
  snprintf(now, sizeof now, RS_FMT, tp_d, 5);
  snprintf(before, sizeof before, RS_FMT, tp_d, 4);
  admit(f, "UPDATE", DEP_CONTROLLER, "ReplicaSet", "replicasets", "", "d", "web-1", now, before);
  char id[40];
  assert_string_not_equal(last_cpid(f, id), X_CPID); /* the scale's change ... */
  assert_non_null(strstr(f->patch, "cpid.ripple.dev~1replicaset"));
  assert_null(strstr(f->patch, "traceparent")); /* ... but the copy stays */
  assert_int_equal(M(f, tp_kept), 1);
  assert_int_equal(M(f, tp_written), 0);
  /* The Deployment has no traceparent (nothing copies one back): replaced. */
  snprintf(dep, sizeof dep, DEP_FMT, "dep-uid", "", "", "");
  world_set(&f->world, 0, dep);
  f->cap->now += 10 * 1000000000LL; /* past the recent memory */
  admit(f, "UPDATE", "kubernetes-admin", "Scale", "deployments", "scale", "d", "web",
        "{\"kind\":\"Scale\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\",\"uid\":"
        "\"dep-uid\"}}",
        "{\"kind\":\"Scale\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\",\"uid\":"
        "\"dep-uid\"}}");
  snprintf(now, sizeof now, RS_FMT, tp_d, 6);
  snprintf(before, sizeof before, RS_FMT, tp_d, 5);
  admit(f, "UPDATE", DEP_CONTROLLER, "ReplicaSet", "replicasets", "", "d", "web-1", now, before);
  char want[WH_TRACEPARENT_LEN + 1];
  tp_of(last_cpid(f, id), want);
  expect_annotation(f, now, TP_KEY, want);
  assert_int_equal(M(f, tp_written), 1);
  /* A Deployment of that name but another uid is not the owner: replaced. */
  snprintf(dep, sizeof dep, DEP_FMT, "other-uid", ",\"" TP_KEY "\":\"", tp_d, "\"");
  world_set(&f->world, 0, dep);
  f->cap->now += 10 * 1000000000LL;
  admit(f, "UPDATE", "kubernetes-admin", "Scale", "deployments", "scale", "d", "web",
        "{\"kind\":\"Scale\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\",\"uid\":"
        "\"dep-uid\"}}",
        "{\"kind\":\"Scale\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\",\"uid\":"
        "\"dep-uid\"}}");
  snprintf(now, sizeof now, RS_FMT, tp_d, 7);
  snprintf(before, sizeof before, RS_FMT, tp_d, 6);
  admit(f, "UPDATE", DEP_CONTROLLER, "ReplicaSet", "replicasets", "", "d", "web-1", now, before);
  tp_of(last_cpid(f, id), want);
  expect_annotation(f, now, TP_KEY, want);
  assert_int_equal(M(f, tp_written), 2);
  assert_int_equal(M(f, tp_kept), 1);
}

/* ---- a client's trace context as a person's root --------------------------------- */

static void test_client_root(void **state) {
  fx_t *f = *state;
  const char *dep =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
      "\"namespace\":\"d\",\"annotations\":{\"" TP_KEY "\":\"" W3C_TP "\"}},\"spec\":{}}";
  admit(f, "CREATE", "alice", "Deployment", "deployments", "", "d", "web", dep, "null");
  assert_string_equal(warning(f), "ripple: cpid " W3C_CPID);
  assert_int_equal(f->cap->nml, 1);
  char id[40];
  fmt(&f->cap->ml[0].cpid, id);
  assert_string_equal(id, W3C_CPID);
  assert_int_equal(f->cap->ml[0].nsources, 0);
  assert_int_equal(f->cap->nsp, 1);
  assert_string_equal(last_cpid(f, id), W3C_CPID);
  assert_true(f->cap->sp[0].parent_id == 0x00f067aa0ba902b7ULL);
  /* The client's value is the object's: left as sent. */
  assert_string_equal(f->patch,
                      "[{\"op\":\"add\",\"path\":\"/metadata/annotations/"
                      "cpid.ripple.dev~1deployment\",\"value\":\"1;" W3C_CPID
                      "\"}," STAMP_OP("deployment", "1") "]");
  assert_int_equal(M(f, tp_roots), 1);
  assert_int_equal(M(f, tp_kept), 1);
  /* Any 16 bytes are a trace id: no UUID version, no variant. libripple's
   * parsers take the CPID back from the context written. */
  const char *cm =
      "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\",\"namespace\":\"d\","
      "\"annotations\":{\"" TP_KEY "\":\"" RAW_TP "\"}}}";
  admit(f, "CREATE", "alice", "ConfigMap", "configmaps", "", "d", "c", cm, "null");
  assert_string_equal(warning(f), "ripple: cpid " RAW_CPID);
  assert_true(f->cap->sp[1].parent_id == 0xb7ad6b7169203331ULL);
  json_t *o = apply(cm, f->patch);
  const char *v = annotation(o, "cpid.ripple.dev/configmap");
  assert_non_null(v);
  ripple_ctx_t ctx;
  assert_int_equal(ripple_ctx_decode(v, strlen(v), 10, &ctx), RIPPLE_OK);
  fmt(&ctx.cpid, id);
  assert_string_equal(id, RAW_CPID);
  json_decref(o);
  ripple_cpid_t raw;
  assert_int_equal(ripple_cpid_parse(RAW_CPID, 36, &raw), RIPPLE_OK);
  assert_true(ripple_cpid_equal(&raw, &ctx.cpid));
  /* Two writes carrying the same client traceparent share the CPID, and its
   * root mergelog is emitted once: two of one CPID in one shipper batch
   * would make the trace server refuse the batch. */
  const char *svc =
      "{\"kind\":\"Service\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\","
      "\"annotations\":{\"" TP_KEY "\":\"" W3C_TP "\"}},\"spec\":{}}";
  admit(f, "CREATE", "alice", "Service", "services", "", "d", "web", svc, "null");
  assert_string_equal(warning(f), "ripple: cpid " W3C_CPID);
  assert_int_equal(f->cap->nml, 2);
  assert_true(ripple_cpid_equal(&f->cap->ml[0].cpid, &(ripple_cpid_t){0}) == 0);
  assert_int_equal(M(f, tp_roots), 3);
  /* A value carried over from the stored object is an earlier write's: a
   * fresh root, no parent. */
  const char *svc2 =
      "{\"kind\":\"Service\",\"metadata\":{\"name\":\"web\",\"namespace\":\"d\","
      "\"annotations\":{\"" TP_KEY "\":\"" W3C_TP "\"}},\"spec\":{\"x\":1}}";
  admit(f, "UPDATE", "alice", "Service", "services", "", "d", "web", svc2, svc);
  assert_string_not_equal(last_cpid(f, id), W3C_CPID);
  assert_int_equal(f->cap->sp[f->cap->nsp - 1].parent_id, 0);
  char want[WH_TRACEPARENT_LEN + 1];
  tp_of(id, want);
  expect_annotation(f, svc2, TP_KEY, want); /* a spec change: ours replaces it */
  assert_int_equal(M(f, tp_roots), 3);
  /* ripple's own context set by the client wins over its traceparent (and
   * then the span has no parent: the client's span is in another trace). */
  const char *both =
      "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"d\",\"annotations\":{"
      "\"cpid.ripple.dev/pod\":\"1;" X_CPID "\",\"" TP_KEY "\":\"" W3C_TP "\"}},\"spec\":{}}";
  admit(f, "CREATE", "alice", "Pod", "pods", "", "d", "p", both, "null");
  assert_string_equal(warning(f), "ripple: cpid " X_CPID);
  assert_int_equal(f->cap->sp[f->cap->nsp - 1].parent_id, 0);
  assert_int_equal(M(f, tp_roots), 3);
  /* A Deployment's update is held, not written: the client's trace is the
   * root all the same, and its annotation is left as sent. */
  const char *d_was =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"api\","
      "\"namespace\":\"d\",\"uid\":\"api-uid\",\"annotations\":{\"cpid.ripple.dev/deployment\":"
      "\"1;" S_CPID "\"}},\"spec\":{\"replicas\":1}}";
  const char *d_now =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"api\","
      "\"namespace\":\"d\",\"uid\":\"api-uid\",\"annotations\":{\"cpid.ripple.dev/deployment\":"
      "\"1;" S_CPID "\",\"" TP_KEY "\":\"" RAW_TP "\"}},\"spec\":{\"replicas\":2}}";
  admit(f, "UPDATE", "alice", "Deployment", "deployments", "", "d", "api", d_now, d_was);
  assert_string_equal(warning(f), "ripple: cpid " RAW_CPID);
  assert_string_equal(f->patch, "");
  assert_true(f->cap->sp[f->cap->nsp - 1].parent_id == 0xb7ad6b7169203331ULL);
  assert_int_equal(M(f, tp_roots), 4);
  assert_int_equal(M(f, tp_invalid), 0);
}

/* Malformed client values: ignored for the root (a fresh random CPID, no
 * parent), left on the object as sent, counted; never an error. */
static void test_client_malformed(void **state) {
  fx_t *f = *state;
  static const char *const bad[] = {
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",    /* wrong length */
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",   /* upper case */
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",   /* version ff */
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",   /* zero trace id */
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",   /* zero span id */
      "00-4bf92f3577b34da60000000000000000-00f067aa0ba902b7-01",   /* no CPID's root span */
      "garbage",                                                   /* junk */
      "",                                                          /* empty */
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\n", /* trailing newline */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    json_t *obj = json_pack("{s:s,s:{s:s,s:s,s:{s:s}},s:{}}", "kind", "Pod", "metadata", "name",
                            "p", "namespace", "d", "annotations", TP_KEY, bad[i], "spec");
    char *text = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
    size_t nsp = f->cap->nsp;
    admit(f, "CREATE", "alice", "Pod", "pods", "", "d", "p", text, "null");
    assert_int_equal(f->cap->nsp, nsp + 1);
    char id[40];
    last_cpid(f, id);
    if (strstr(bad[i], "4bf92f35") && !strncmp(id, "4bf92f35", 8))
      fail_msg("'%s' became the root %s", bad[i], id);
    assert_int_equal(f->cap->sp[nsp].parent_id, 0);
    assert_non_null(warning(f));
    expect_annotation(f, text, TP_KEY, bad[i]); /* as the client sent it */
    free(text);
    assert_int_equal(M(f, tp_invalid), i + 1);
  }
  /* A non-string value (the API server would refuse it; the webhook only
   * ignores it). */
  admit(f, "CREATE", "alice", "Pod", "pods", "", "d", "p",
        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"annotations\":{\"" TP_KEY "\":7}}}",
        "null");
  assert_int_equal(M(f, tp_invalid), sizeof bad / sizeof bad[0] + 1);
  assert_int_equal(M(f, tp_roots), 0);
  assert_int_equal(M(f, errors), 0);
  /* The metrics say so. */
  sbuf_t out;
  sbuf_init(&out);
  wh_gauges_t g = {0};
  wh_metrics_write(wh_metrics(f->w), &g, &out);
  sbuf_putc(&out, '\0');
  char want[128];
  snprintf(want, sizeof want, "\nripple_webhook_traceparents_invalid_total %zu\n",
           sizeof bad / sizeof bad[0] + 1);
  if (!strstr(out.p, want)) fail_msg("no '%s' in:\n%s", want, out.p);
  assert_non_null(strstr(out.p, "\nripple_webhook_traceparents_written_total 0\n"));
  assert_non_null(strstr(out.p, "\nripple_webhook_traceparent_roots_total 0\n"));
  snprintf(want, sizeof want, "\nripple_webhook_traceparents_kept_total %zu\n",
           sizeof bad / sizeof bad[0] + 1);
  if (!strstr(out.p, want)) fail_msg("no '%s' in:\n%s", want, out.p);
  sbuf_free(&out);
}

/* A binding that changes its Pod's context carries the traceparent too: the
 * API server copies a Binding's annotations onto the Pod. */
static void test_binding(void **state) {
  fx_t *f = *state;
  world_add(&f->world,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1-a\","
            "\"namespace\":\"d\",\"uid\":\"pod-uid\",\"annotations\":{\"cpid.ripple.dev/pod\":"
            "\"1;" X_CPID "\"}}}");
  /* An instrumented scheduler (named by --trusted-writer) put a context of
   * its own on the Binding. */
  assert_int_equal(wh_users_add_trusted(&f->users, "system:kube-scheduler"), RIPPLE_OK);
  const char *binding =
      "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"web-1-a\","
      "\"namespace\":\"d\",\"uid\":\"pod-uid\",\"annotations\":{\"cpid.ripple.dev/pod\":"
      "\"1;" S_CPID "\"}},\"target\":{\"kind\":\"Node\",\"name\":\"n0\"}}";
  admit(f, "CREATE", "system:kube-scheduler", "Binding", "pods", "binding", "d", "web-1-a", binding,
        "null");
  char id[40], want[WH_TRACEPARENT_LEN + 1];
  tp_of(last_cpid(f, id), want);
  assert_string_not_equal(id, X_CPID);
  expect_annotation(f, binding, TP_KEY, want);
  /* The plain binding: the Pod keeps its context, nothing is written. */
  world_add(&f->world,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1-b\","
            "\"namespace\":\"d\",\"uid\":\"pod-b\",\"annotations\":{\"cpid.ripple.dev/pod\":"
            "\"1;" X_CPID "\"}}}");
  admit(f, "CREATE", "system:kube-scheduler", "Binding", "pods", "binding", "d", "web-1-b",
        "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"web-1-b\","
        "\"namespace\":\"d\",\"uid\":\"pod-b\"},\"target\":{\"kind\":\"Node\",\"name\":\"n0\"}}",
        "null");
  assert_string_equal(f->patch, "");
  assert_int_equal(M(f, tp_written), 1);
}

/* ---- off ------------------------------------------------------------------------ */

/* Without --traceparent the same writes are answered as before: the patch
 * is exactly the context's (libripple's patch for the object), a client's
 * traceparent is not read, no span has a parent, nothing is counted. */
static void test_flag_off(void **state) {
  fx_t *f = *state;
  const char *dep =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
      "\"namespace\":\"d\",\"annotations\":{\"" TP_KEY "\":\"" W3C_TP "\"}},\"spec\":{}}";
  const char *sts_was =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"db\","
      "\"namespace\":\"d\"},\"spec\":{\"replicas\":1}}";
  const char *sts_now =
      "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"db\","
      "\"namespace\":\"d\"},\"spec\":{\"replicas\":2}}";
  struct {
    const char *op, *kind, *resource, *name, *object, *old;
  } writes[] = {
      {"CREATE", "Deployment", "deployments", "web", dep, "null"},
      {"CREATE", "Deployment", "deployments", "web", dep_new, "null"},
      {"UPDATE", "StatefulSet", "statefulsets", "db", sts_now, sts_was},
  };
  for (size_t i = 0; i < sizeof writes / sizeof writes[0]; i++) {
    admit(f, writes[i].op, "alice", writes[i].kind, writes[i].resource, "", "d", writes[i].name,
          writes[i].object, writes[i].old);
    assert_null(strstr(f->patch, "traceparent"));
    char id[40];
    last_cpid(f, id);
    assert_string_not_equal(id, W3C_CPID);
    assert_int_equal(f->cap->sp[f->cap->nsp - 1].parent_id, 0);
    /* Byte for byte the patch of the context, then at most its generation
     * stamp (stamp.c): nothing of the traceparent. */
    json_t *obj = json_loads(writes[i].object, 0, NULL);
    ripple_ctx_t ctx = {0};
    ctx.cpid = f->cap->sp[f->cap->nsp - 1].cpid;
    char *want;
    size_t len;
    int changed;
    assert_int_equal(wh_obj_patch(obj, writes[i].kind, &ctx, &want, &len, &changed), RIPPLE_OK);
    assert_true(changed);
    /* (a map added whole may get the stamp as one more member) */
    size_t keep = len - 1;
    if (keep > 2 && want[keep - 1] == '}' && want[keep - 2] == '}') keep -= 2;
    assert_memory_equal(f->patch, want, keep);
    const char *rest = f->patch + keep;
    assert_true(!strcmp(rest, want + keep) || (strstr(rest, ".generation\"") && rest[0] == ','));
    ripple_free(want);
    json_decref(obj);
  }
  assert_int_equal(M(f, tp_written) + M(f, tp_kept) + M(f, tp_roots) + M(f, tp_invalid), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse),
      cmocka_unit_test_setup_teardown(test_create_writes, setup_traceparent, teardown),
      cmocka_unit_test_setup_teardown(test_update_spec_only, setup_traceparent, teardown),
      cmocka_unit_test_setup_teardown(test_request_value_kept, setup_traceparent, teardown),
      cmocka_unit_test_setup_teardown(test_owner_copy_kept, setup_traceparent, teardown),
      cmocka_unit_test_setup_teardown(test_client_root, setup_traceparent, teardown),
      cmocka_unit_test_setup_teardown(test_client_malformed, setup_traceparent, teardown),
      cmocka_unit_test_setup_teardown(test_binding, setup_traceparent, teardown),
      cmocka_unit_test_setup_teardown(test_flag_off, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
