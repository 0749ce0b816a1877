/*
 * test_kube_rw.c - the engines under discovery and list, without a
 * cluster: name resolution over a fixed discovery snapshot (the documents a
 * v1.36 server serves, cut down), the carrying over of entries across
 * refreshes, and the paging loop of ripple_kube_list, including the restart
 * after an expired continue token, which a real cluster produces only after
 * a compaction. test_kube_discovery.c and test_kube_rw.c cover the same
 * against the lab.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_rw.h"
#include "testutil.h"

/* ---- discovery documents --------------------------------------------------- */

typedef struct doc {
  const char *path;
  const char *json; /* NULL: the server answers 503 */
} doc_t;

static const doc_t DOCS[] = {
    {"/api", "{\"kind\":\"APIVersions\",\"versions\":[\"v1\"]}"},
    {"/api/v1",
     "{\"groupVersion\":\"v1\",\"resources\":["
     "{\"name\":\"pods\",\"singularName\":\"pod\",\"namespaced\":true,\"kind\":\"Pod\","
     "\"shortNames\":[\"po\"]},"
     "{\"name\":\"pods/binding\",\"namespaced\":true,\"kind\":\"Binding\"},"
     "{\"name\":\"pods/status\",\"namespaced\":true,\"kind\":\"Pod\"},"
     "{\"name\":\"events\",\"singularName\":\"event\",\"namespaced\":true,\"kind\":\"Event\","
     "\"shortNames\":[\"ev\"]},"
     "{\"name\":\"namespaces\",\"singularName\":\"\",\"namespaced\":false,"
     "\"kind\":\"Namespace\",\"shortNames\":[\"ns\"]}]}"},
    {"/apis",
     "{\"kind\":\"APIGroupList\",\"groups\":["
     "{\"name\":\"apps\",\"versions\":[{\"groupVersion\":\"apps/v1\",\"version\":\"v1\"}],"
     "\"preferredVersion\":{\"groupVersion\":\"apps/v1\",\"version\":\"v1\"}},"
     "{\"name\":\"events.k8s.io\",\"versions\":[{\"version\":\"v1\"}],"
     "\"preferredVersion\":{\"version\":\"v1\"}},"
     "{\"name\":\"example.com\",\"versions\":[{\"version\":\"v1beta1\"},{\"version\":\"v2\"}],"
     "\"preferredVersion\":{\"version\":\"v2\"}},"
     "{\"name\":\"metrics.k8s.io\",\"versions\":[{\"version\":\"v1beta1\"}],"
     "\"preferredVersion\":{\"version\":\"v1beta1\"}}]}"},
    {"/apis/apps/v1",
     "{\"groupVersion\":\"apps/v1\",\"resources\":["
     "{\"name\":\"deployments\",\"singularName\":\"deployment\",\"namespaced\":true,"
     "\"kind\":\"Deployment\",\"shortNames\":[\"deploy\"]},"
     "{\"name\":\"deployments/scale\",\"namespaced\":true,\"group\":\"autoscaling\","
     "\"version\":\"v1\",\"kind\":\"Scale\"},"
     "{\"name\":\"deployments/status\",\"namespaced\":true,\"kind\":\"Deployment\"}]}"},
    {"/apis/events.k8s.io/v1",
     "{\"resources\":[{\"name\":\"events\",\"singularName\":\"event\",\"namespaced\":true,"
     "\"kind\":\"Event\",\"shortNames\":[\"ev\"]}]}"},
    {"/apis/example.com/v2",
     "{\"resources\":[{\"name\":\"widgets\",\"singularName\":\"widget\",\"namespaced\":true,"
     "\"kind\":\"Widget\",\"shortNames\":[\"wd\"]}]}"},
    {"/apis/example.com/v1beta1",
     "{\"resources\":[{\"name\":\"widgets\",\"singularName\":\"widget\",\"namespaced\":true,"
     "\"kind\":\"Widget\"},{\"name\":\"gadgets\",\"singularName\":\"gadget\","
     "\"namespaced\":false,\"kind\":\"Gadget\"}]}"},
    {"/apis/metrics.k8s.io/v1beta1", NULL},
};

typedef struct fake {
  const doc_t *docs;
  size_t ndocs;
  const char *down; /* a path that fails to connect */
  int calls;
} fake_t;

static int fake_get(void *ud, const char *path, json_t **out, ripple_kube_status_t *st) {
  fake_t *f = ud;
  f->calls++;
  if (f->down && strcmp(path, f->down) == 0)
    return kube_fail(st, RIPPLE_KUBE_ECONNECT, "connection refused");
  size_t plen = strcspn(path, "?"); /* the query does not matter here */
  for (size_t i = 0; i < f->ndocs; i++) {
    if (strlen(f->docs[i].path) != plen || strncmp(f->docs[i].path, path, plen) != 0) continue;
    if (!f->docs[i].json) return kube_fail(st, RIPPLE_KUBE_EHTTP, "service unavailable");
    *out = json_loads(f->docs[i].json, 0, NULL);
    assert_non_null(*out);
    return RIPPLE_OK;
  }
  return kube_fail(st, RIPPLE_KUBE_ENOTFOUND, "404 %s", path);
}

static kube_discovery_t *snapshot(fake_t *f) {
  kube_discovery_t *d = NULL;
  ripple_kube_status_t st;
  assert_int_equal(kube_discovery_fetch(fake_get, f, &d, &st), RIPPLE_OK);
  return d;
}

static void expect_res(const kube_discovery_t *d, const char *name, const char *group,
                       const char *version, const char *resource) {
  const ripple_kube_resource_t *r = kube_discovery_find(d, name);
  if (!r) {
    fail_msg("%s: not found", name);
    return;
  }
  if (strcmp(r->group, group) != 0 || strcmp(r->version, version) != 0 ||
      strcmp(r->resource, resource) != 0)
    fail_msg("%s: got %s/%s %s, want %s/%s %s", name, r->group, r->version, r->resource, group,
             version, resource);
}

static void test_names(void **state) {
  (void)state;
  fake_t f = {DOCS, sizeof DOCS / sizeof *DOCS, NULL, 0};
  kube_discovery_t *d = snapshot(&f);
  expect_res(d, "pods", "", "v1", "pods");
  expect_res(d, "pod", "", "v1", "pods");
  expect_res(d, "po", "", "v1", "pods");
  expect_res(d, "Pod", "", "v1", "pods");
  expect_res(d, "PODS", "", "v1", "pods");
  expect_res(d, "namespace", "", "v1", "namespaces"); /* no singularName: from the kind */
  expect_res(d, "deploy", "apps", "v1", "deployments");
  expect_res(d, "deployments.apps", "apps", "v1", "deployments");
  expect_res(d, "deployments.v1.apps", "apps", "v1", "deployments");
  expect_res(d, "deploy.apps", "apps", "v1", "deployments");
  /* Two groups serve events: the first group in the server's order wins. */
  expect_res(d, "events", "", "v1", "events");
  expect_res(d, "ev", "", "v1", "events");
  expect_res(d, "events.events.k8s.io", "events.k8s.io", "v1", "events");
  /* The preferred version unless asked; resources only in an older version. */
  expect_res(d, "widgets.example.com", "example.com", "v2", "widgets");
  expect_res(d, "wd", "example.com", "v2", "widgets");
  expect_res(d, "widgets.v1beta1.example.com", "example.com", "v1beta1", "widgets");
  expect_res(d, "gadget", "example.com", "v1beta1", "gadgets");
  assert_null(kube_discovery_find(d, "deployments.v2.apps"));
  assert_null(kube_discovery_find(d, "pods.apps"));
  assert_null(kube_discovery_find(d, "nosuch"));
  assert_null(kube_discovery_find(d, ".apps"));
  assert_null(kube_discovery_find(d, "pods/status")); /* subresources are no resources */
  assert_false(kube_discovery_find(d, "gadgets")->namespaced);
  assert_string_equal(kube_discovery_find(d, "po")->kind, "Pod");
  kube_discovery_free(d);
}

static void test_kinds_and_subresources(void **state) {
  (void)state;
  fake_t f = {DOCS, sizeof DOCS / sizeof *DOCS, NULL, 0};
  kube_discovery_t *d = snapshot(&f);
  const ripple_kube_resource_t *r = kube_discovery_find_kind(d, "apps", "Deployment");
  assert_non_null(r);
  assert_string_equal(r->resource, "deployments");
  assert_ptr_equal(kube_discovery_find_kind(d, NULL, "Pod"), kube_discovery_find(d, "pods"));
  assert_null(kube_discovery_find_kind(d, "", "Deployment"));
  assert_null(kube_discovery_find_kind(d, "apps", "Scale")); /* only a subresource's kind */
  r = kube_discovery_find_kind(d, "example.com", "Widget");
  assert_string_equal(r->version, "v2");
  char subs[64];
  assert_int_equal(kube_discovery_subs(d, r, subs, sizeof subs), 1);
  assert_string_equal(subs, "");
  assert_int_equal(kube_discovery_subs(d, kube_discovery_find(d, "deploy"), subs, sizeof subs), 1);
  assert_string_equal(subs, "scale,status");
  assert_int_equal(kube_discovery_subs(d, kube_discovery_find(d, "po"), subs, sizeof subs), 1);
  assert_string_equal(subs, "binding,status");
  ripple_kube_resource_t other = {"apps", "v1", "statefulsets", "StatefulSet", 1};
  assert_int_equal(kube_discovery_subs(d, &other, subs, sizeof subs), 0);
  kube_discovery_free(d);
}

/* A broken aggregated API is left out; an unreachable server fails. */
static void test_partial_failures(void **state) {
  (void)state;
  fake_t f = {DOCS, sizeof DOCS / sizeof *DOCS, NULL, 0};
  kube_discovery_t *d = snapshot(&f);
  assert_int_equal(f.calls, 8);
  kube_discovery_free(d);
  ripple_kube_status_t st;
  const char *down[] = {"/api", "/apis", "/apis/apps/v1"};
  for (size_t i = 0; i < 3; i++) {
    f.down = down[i];
    d = NULL;
    assert_int_equal(kube_discovery_fetch(fake_get, &f, &d, &st), RIPPLE_KUBE_ECONNECT);
    assert_null(d);
  }
}

/* A refresh carries entries over (same pointers), retires what is gone
 * without freeing it, and revives a retired entry when it comes back. */
static void test_merge(void **state) {
  (void)state;
  fake_t f = {DOCS, sizeof DOCS / sizeof *DOCS, NULL, 0};
  kube_discovery_t *d = snapshot(&f);
  const ripple_kube_resource_t *pods = kube_discovery_find(d, "pods");
  const ripple_kube_resource_t *widgets = kube_discovery_find(d, "widgets");
  doc_t fewer[sizeof DOCS / sizeof *DOCS];
  memcpy(fewer, DOCS, sizeof fewer);
  for (size_t i = 0; i < sizeof fewer / sizeof *fewer; i++)
    if (strcmp(fewer[i].path, "/apis/example.com/v2") == 0) fewer[i].json = "{\"resources\":[]}";
  fake_t g = {fewer, sizeof fewer / sizeof *fewer, NULL, 0};
  assert_int_equal(kube_discovery_merge(d, snapshot(&g)), RIPPLE_OK);
  assert_ptr_equal(kube_discovery_find(d, "pods"), pods);
  /* Retired: still readable by whoever holds it; the name now finds v1beta1. */
  assert_string_equal(widgets->version, "v2");
  assert_string_equal(kube_discovery_find(d, "widgets")->version, "v1beta1");
  assert_null(kube_discovery_find(d, "wd"));
  assert_int_equal(kube_discovery_merge(d, snapshot(&f)), RIPPLE_OK);
  assert_ptr_equal(kube_discovery_find(d, "wd"), widgets);
  assert_ptr_equal(kube_discovery_find(d, "pods"), pods);
  kube_discovery_free(d);
}

/* ---- the paging loop ---------------------------------------------------------------- */

#define NOBJ 23

/* A collection of NOBJ objects served in pages of the requested limit; the
 * continue token is the offset, prefixed by a generation. Tokens of an older
 * generation are expired: `expire` bumps the generation after that many
 * requests, as a compaction would in the middle of a list. */
typedef struct pages {
  int requests;
  int expire_at[4]; /* request numbers after which the generation moves on */
  int gen;
  char paths[64][160];
} pages_t;

static int pages_get(void *ud, const char *path, json_t **out, ripple_kube_status_t *st) {
  pages_t *p = ud;
  assert_true(p->requests < 64);
  snprintf(p->paths[p->requests++], sizeof p->paths[0], "%s", path);
  const char *q = strstr(path, "limit=");
  int limit = q ? (int)strtol(q + 6, NULL, 10) : NOBJ;
  int off = 0, gen = p->gen;
  q = strstr(path, "continue=");
  if (q) {
    char *end = NULL;
    gen = (int)strtol(q + 9, &end, 10);
    if (*end != '-') fail_msg("bad token in %s", path);
    off = (int)strtol(end + 1, NULL, 10);
  }
  if (gen != p->gen) {
    if (st) st->http = 410;
    return kube_fail(st, RIPPLE_KUBE_EGONE, "The provided continue parameter is too old");
  }
  json_t *items = json_array();
  for (int i = off; i < off + limit && i < NOBJ; i++) {
    char name[16];
    snprintf(name, sizeof name, "o%d", i);
    json_array_append_new(items, json_pack("{s:{s:s}}", "metadata", "name", name));
  }
  char token[32] = "";
  if (off + limit < NOBJ) snprintf(token, sizeof token, "%d-%d", p->gen, off + limit);
  *out = json_pack("{s:s,s:s,s:{s:s,s:s},s:o}", "kind", "ConfigMapList", "apiVersion", "v1",
                   "metadata", "resourceVersion", "777", "continue", token, "items", items);
  /* A compaction after this answer: its token is stale from now on. */
  for (int i = 0; i < 4; i++)
    if (p->expire_at[i] == p->requests) p->gen++;
  return RIPPLE_OK;
}

typedef struct seen {
  int n, resets;
  int count[NOBJ];
  int typed; /* every object got kind and apiVersion */
} seen_t;

static void on_obj(void *ud, json_t *obj) {
  seen_t *s = ud;
  if (!obj) {
    s->resets++;
    memset(s->count, 0, sizeof s->count);
    s->n = 0;
    return;
  }
  const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
  assert_non_null(name);
  s->count[strtol(name + 1, NULL, 10)]++;
  s->n++;
  const char *kind = json_string_value(json_object_get(obj, "kind"));
  const char *api = json_string_value(json_object_get(obj, "apiVersion"));
  if (!kind || strcmp(kind, "ConfigMap") != 0 || !api || strcmp(api, "v1") != 0) s->typed = 0;
}

static void expect_each_once(const seen_t *s) {
  assert_int_equal(s->n, NOBJ);
  for (int i = 0; i < NOBJ; i++) assert_int_equal(s->count[i], 1);
  assert_true(s->typed);
}

static void test_paging(void **state) {
  (void)state;
  pages_t p = {0};
  seen_t s = {.typed = 1};
  char *rv = NULL;
  ripple_kube_status_t st;
  assert_int_equal(kube_list_pages(pages_get, &p, "/api/v1/configmaps?labelSelector=a%3Db", 5,
                                   on_obj, &s, &rv, &st),
                   RIPPLE_OK);
  expect_each_once(&s);
  assert_int_equal(s.resets, 0);
  assert_int_equal(p.requests, 5);
  assert_string_equal(p.paths[0], "/api/v1/configmaps?labelSelector=a%3Db&limit=5");
  assert_string_equal(p.paths[1], "/api/v1/configmaps?labelSelector=a%3Db&limit=5&continue=0-5");
  assert_string_equal(rv, "777");
  free(rv);
  /* No query string yet; page size 0 means 500. */
  memset(&p, 0, sizeof p);
  s = (seen_t){.typed = 1};
  assert_int_equal(kube_list_pages(pages_get, &p, "/api/v1/configmaps", 0, on_obj, &s, NULL, &st),
                   RIPPLE_OK);
  assert_string_equal(p.paths[0], "/api/v1/configmaps?limit=500");
  expect_each_once(&s);
}

/* A token that expires mid-list: the list starts over, fn hears "forget"
 * once, and in the end saw every object exactly once. */
static void test_expired_continue_restarts(void **state) {
  (void)state;
  pages_t p = {.expire_at = {2}};
  seen_t s = {.typed = 1};
  char *rv = NULL;
  ripple_kube_status_t st;
  assert_int_equal(kube_list_pages(pages_get, &p, "/api/v1/configmaps", 10, on_obj, &s, &rv, &st),
                   RIPPLE_OK);
  assert_int_equal(s.resets, 1);
  expect_each_once(&s);
  assert_int_equal(p.requests, 2 + 1 + 3); /* 2 pages, the 410, then 3 pages */
  assert_string_equal(p.paths[3], "/api/v1/configmaps?limit=10");
  assert_string_equal(rv, "777");
  free(rv);
}

/* Expiring again and again: after the paged tries, one unpaged list. */
static void test_expiring_forever_falls_back_to_unpaged(void **state) {
  (void)state;
  pages_t p = {.expire_at = {1, 3, 5, 7}};
  seen_t s = {.typed = 1};
  ripple_kube_status_t st;
  assert_int_equal(kube_list_pages(pages_get, &p, "/api/v1/configmaps", 10, on_obj, &s, NULL, &st),
                   RIPPLE_OK);
  assert_int_equal(s.resets, 3);
  expect_each_once(&s);
  assert_string_equal(p.paths[p.requests - 1], "/api/v1/configmaps");
}

/* A 410 for the first page is not a stale token: it is the caller's error. */
static void test_errors(void **state) {
  (void)state;
  pages_t p = {.gen = 1};
  seen_t s = {.typed = 1};
  char *rv = (char *)"untouched";
  ripple_kube_status_t st;
  assert_int_equal(
      kube_list_pages(pages_get, &p, "/api/v1/configmaps?continue=0-0", 10, on_obj, &s, &rv, &st),
      RIPPLE_KUBE_EGONE);
  assert_int_equal(s.resets, 0);
  assert_string_equal(rv, "untouched");
  fake_t f = {DOCS, sizeof DOCS / sizeof *DOCS, NULL, 0};
  assert_int_equal(kube_list_pages(fake_get, &f, "/api", 10, on_obj, &s, &rv, &st), RIPPLE_EJSON);
  assert_int_equal(kube_list_pages(fake_get, &f, "/nothing", 10, on_obj, &s, &rv, &st),
                   RIPPLE_KUBE_ENOTFOUND);
  assert_string_equal(rv, "untouched");
}

/* ---- messages from Status objects ----------------------------------------------------- */

static void test_status_messages(void **state) {
  (void)state;
  ripple_kube_status_t st;
  const char *invalid =
      "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"admission webhook "
      "\\\"policy.example.com\\\" denied the request\",\"reason\":\"Invalid\",\"details\":{"
      "\"causes\":[{\"reason\":\"FieldValueInvalid\",\"message\":\"must be even\","
      "\"field\":\"spec.replicas\"},{\"message\":\"no field\"},{\"field\":\"webhook\"}]},"
      "\"code\":422}";
  assert_int_equal(kube_check(422, invalid, strlen(invalid), &st), RIPPLE_KUBE_EINVALID);
  assert_string_equal(st.reason, "Invalid");
  assert_string_equal(st.message,
                      "admission webhook \"policy.example.com\" denied the request; "
                      "spec.replicas: must be even");
  const char *bare = "{\"kind\":\"Status\",\"reason\":\"Conflict\",\"code\":409}";
  assert_int_equal(kube_check(409, bare, strlen(bare), &st), RIPPLE_KUBE_ECONFLICT);
  assert_string_equal(st.message, "HTTP 409 Conflict from the API server");
  assert_int_equal(kube_check(503, "no", 2, &st), RIPPLE_KUBE_EHTTP);
  assert_string_equal(st.message, "HTTP 503 from the API server: no");
  assert_int_equal(kube_check(410, NULL, 0, &st), RIPPLE_KUBE_EGONE);
  assert_int_equal(kube_check(201, NULL, 0, &st), RIPPLE_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_names),
      cmocka_unit_test(test_kinds_and_subresources),
      cmocka_unit_test(test_partial_failures),
      cmocka_unit_test(test_merge),
      cmocka_unit_test(test_paging),
      cmocka_unit_test(test_expired_continue_restarts),
      cmocka_unit_test(test_expiring_forever_falls_back_to_unpaged),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_status_messages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
