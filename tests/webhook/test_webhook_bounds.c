/*
 * test_webhook_bounds.c - what a workload or a forged review can make the
 * engine do, without a cluster (issue 27):
 *
 *   - an ownerReference of a kind that does not own (a ConfigMap) starts no
 *     informer and is counted; the workload kinds, Service and the
 *     --owner-kind custom resources do (webhook/owners.c);
 *   - --owner-kind's syntax;
 *   - a user name (and a name) far over the trace server's limit on a string:
 *     the span and the mergelog still go out, every string bounded and the
 *     span marked truncated (webhook/emit.c).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "ripplex/sbuf.h"
#include "wh_fixture.h"

#define OPERATOR_SA "system:serviceaccount:ops:some-operator"

/* A Pod created by OPERATOR_SA with a controlling owner of api_version kind. */
static void create_owned_pod(fx_t *f, const char *name, const char *api_version, const char *kind) {
  char obj[1024];
  snprintf(obj, sizeof obj,
           "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
           "\"namespace\":\"d\",\"ownerReferences\":[{\"apiVersion\":\"%s\",\"kind\":\"%s\","
           "\"name\":\"own\",\"uid\":\"own-uid-%s\",\"controller\":true}]}}",
           name, api_version, kind, name);
  admit(f, "CREATE", OPERATOR_SA, "Pod", "pods", "", "d", name, obj, "null");
}

static uint64_t refused(fx_t *f) { return atomic_load(&wh_metrics(f->w)->owner_kinds_refused); }

/* A ConfigMap (or a Secret, or a kind of an unknown group) named as a
 * controlling owner: no informer, counted; the write is still admitted. */
static void test_owner_kind_refused(void **state) {
  fx_t *f = *state;
  create_owned_pod(f, "p1", "v1", "ConfigMap");
  assert_false(world_wanted(&f->world, "v1 ConfigMap"));
  assert_int_equal(refused(f), 1);
  create_owned_pod(f, "p2", "v1", "Secret");
  create_owned_pod(f, "p3", "example.com/v1", "Widget");
  create_owned_pod(f, "p4", "v1", "Node");
  assert_int_equal(f->world.nwanted, 0);
  assert_int_equal(refused(f), 4);
  assert_int_equal(f->cap->nsp, 4); /* admitted and traced all the same */
  sbuf_t m;
  sbuf_init(&m);
  wh_gauges_t g = {0};
  wh_metrics_write(wh_metrics(f->w), &g, &m);
  assert_non_null(strstr(m.p, "ripple_webhook_owner_kinds_refused_total 4\n"));
  sbuf_free(&m);
}

/* The kinds that own are followed: built in, and --owner-kind's. */
static void test_owner_kind_followed(void **state) {
  fx_t *f = *state;
  create_owned_pod(f, "p1", "apps/v1", "ReplicaSet");
  create_owned_pod(f, "p2", "v1", "ReplicationController");
  create_owned_pod(f, "p3", "batch/v1", "Job");
  create_owned_pod(f, "p4", "lab.ripple.dev/v1", "RippleApp");
  assert_true(world_wanted(&f->world, "apps/v1 ReplicaSet"));
  assert_true(world_wanted(&f->world, "v1 ReplicationController"));
  assert_true(world_wanted(&f->world, "batch/v1 Job"));
  assert_true(world_wanted(&f->world, "lab.ripple.dev/v1 RippleApp"));
  /* The same kind name in another group is another kind. */
  create_owned_pod(f, "p5", "evil.example.com/v1", "RippleApp");
  create_owned_pod(f, "p6", "apps.example.com/v1", "Deployment");
  assert_int_equal(f->world.nwanted, 4);
  assert_int_equal(refused(f), 2);
}

static void test_owner_kind_syntax(void **state) {
  (void)state;
  wh_owner_kinds_t t = {0};
  assert_int_equal(wh_owner_kinds_add(&t, "lab.ripple.dev/RippleApp"), RIPPLE_OK);
  assert_int_equal(wh_owner_kinds_add(&t, "lab.ripple.dev/RippleApp"), RIPPLE_OK);
  assert_int_equal(t.n, 1);
  assert_int_equal(wh_owner_kinds_add(&t, "example.com/Widget2"), RIPPLE_OK);
  assert_true(wh_owner_kind_ok(&t, "example.com", "Widget2"));
  assert_false(wh_owner_kind_ok(&t, "example.com", "widget2"));
  assert_true(wh_owner_kind_ok(NULL, "apps", "StatefulSet"));
  assert_false(wh_owner_kind_ok(NULL, "", "ConfigMap"));
  static const char *const bad[] = {"RippleApp",       "/RippleApp",
                                    "lab.ripple.dev/", "Lab.dev/App",
                                    "lab..dev/App",    "-lab.dev/App",
                                    "lab-.dev/App",    "lab.dev./App",
                                    "lab.dev/App/x",   "lab.dev/1App",
                                    "lab.dev/Ap-p",    "lab dev/App",
                                    "lab.dev/App\n",   ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(wh_owner_kinds_add(&t, bad[i]), RIPPLE_EINVAL);
  char big[400];
  memset(big, 'a', sizeof big);
  memcpy(big + 300, "/Kind", 6);
  assert_int_equal(wh_owner_kinds_add(&t, big), RIPPLE_EINVAL); /* group over 253 */
  for (int i = (int)t.n; i < WH_OWNER_KINDS_MAX; i++) {
    char gk[64];
    snprintf(gk, sizeof gk, "g%d.example.com/K", i);
    assert_int_equal(wh_owner_kinds_add(&t, gk), RIPPLE_OK);
  }
  assert_int_equal(wh_owner_kinds_add(&t, "full.example.com/K"), RIPPLE_ERANGE);
}

/* ---- strings bounded ------------------------------------------------------- */

typedef struct longest {
  size_t spans, mergelogs, max_len;
  int truncated;
  char user_head[16];
} longest_t;

static void note_len(longest_t *l, const char *s) {
  if (s && strlen(s) > l->max_len) l->max_len = strlen(s);
}

static void on_span(void *ud, const ripple_span_rec_t *sp) {
  longest_t *l = ud;
  l->spans++;
  note_len(l, sp->service);
  note_len(l, sp->name);
  for (size_t i = 0; i < sp->nattrs; i++) {
    note_len(l, sp->attrs[i].value);
    if (!strcmp(sp->attrs[i].key, "truncated")) l->truncated = !strcmp(sp->attrs[i].value, "true");
    if (!strcmp(sp->attrs[i].key, "user"))
      snprintf(l->user_head, sizeof l->user_head, "%s", sp->attrs[i].value);
  }
}

static void on_mergelog(void *ud, const ripple_mergelog_t *ml) {
  longest_t *l = ud;
  l->mergelogs++;
  note_len(l, ml->component);
  if (ml->object) {
    note_len(l, ml->object->kind);
    note_len(l, ml->object->namespace_);
    note_len(l, ml->object->name);
  }
}

/* A person whose user name is 10000 bytes (an OIDC claim, a certificate's
 * CN) creates an object whose name is 3000: the span and the root's
 * mergelog go out with every string at most WH_ATTR_MAX bytes, so the trace
 * server takes them (it refuses a whole batch over one string longer than
 * 4096), and the span says it was cut. */
static void test_long_strings_bounded(void **state) {
  (void)state;
  longest_t l = {0};
  wh_opts_t o = {.max_ancestors = 10, .sink = {on_mergelog, on_span, &l}};
  wh_t *w;
  assert_int_equal(wh_new(&o, &w), RIPPLE_OK);
  size_t ulen = 10000, nlen = 3000;
  char *user = malloc(ulen + 1), *name = malloc(nlen + 1);
  memset(user, 'u', ulen);
  user[ulen] = '\0';
  memcpy(user, "alice\xc3\xa9", 7); /* a character of two bytes first */
  memset(name, 'n', nlen);
  name[nlen] = '\0';
  size_t cap = 3 * (ulen + nlen) + 4096;
  char *obj = malloc(nlen + 256), *body = malloc(cap);
  snprintf(obj, nlen + 256,
           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
           "\"namespace\":\"d\"}}",
           name);
  review(body, cap, "CREATE", user, "ConfigMap", "configmaps", "", "d", name, obj, "null");
  sbuf_t out;
  sbuf_init(&out);
  assert_int_equal(wh_handle(w, body, strlen(body), &out), 200);
  assert_non_null(strstr(out.p, "\"allowed\":true"));
  assert_int_equal(l.spans, 1);
  assert_true(l.mergelogs >= 1);
  assert_true(l.max_len <= WH_ATTR_MAX);
  assert_true(l.max_len > 100); /* the cut strings are there, not dropped */
  assert_true(l.truncated);
  assert_string_equal(l.user_head, "alice\xc3\xa9uuuuuuuu");
  assert_true(atomic_load(&wh_metrics(w)->truncated) >= 1);
  sbuf_free(&out);
  free(user), free(name), free(obj), free(body);
  wh_free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_owner_kind_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_owner_kind_followed, setup, teardown),
      cmocka_unit_test(test_owner_kind_syntax),
      cmocka_unit_test(test_long_strings_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
