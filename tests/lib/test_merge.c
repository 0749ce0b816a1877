/*
 * test_merge.c - the merge decision, on the paper's own examples and on the
 * cases a hostile or unlucky cluster produces.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const ripple_objref_t endpoints = {"v1", "Endpoints", "default", "web", NULL};

/* A hand-built context: CPID test_cpid(id) and, nearest first, the n
 * ancestors test_cpid(k) of the n keys k that follow. */
static ripple_ctx_t ctx_of(int id, int n, ...) {
  ripple_ctx_t c;
  memset(&c, 0, sizeof c);
  c.cpid = test_cpid((uint64_t)id);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) c.anc[i] = test_cpid((uint64_t)va_arg(ap, int));
  va_end(ap);
  c.nanc = (uint32_t)n;
  return c;
}

static int in_anc(const ripple_ctx_t *c, const ripple_cpid_t *id) {
  for (uint32_t i = 0; i < c->nanc; i++)
    if (ripple_cpid_equal(&c->anc[i], id)) return 1;
  return 0;
}

/* Paper, figure 5: a Deployment created with root alpha, its Pods inherit it; a
 * Service created with root beta, its Endpoints inherit it; the Endpoints
 * controller then writes the Endpoints because of the Service and the Pods. */
static void figure5_endpoints_merge(void **state) {
  (void)state;
  capture_t *cap = capture_new(5);
  ripple_tracer_t *kubectl = capture_tracer(cap, "kubectl", 10);
  ripple_tracer_t *ctrl = capture_tracer(cap, "controllers", 10);
  ripple_ctx_t deploy, rs, pod, svc, ep, ep2;
  ripple_merge_kind_t how;
  const ripple_objref_t dref = {"apps/v1", "Deployment", "default", "web", NULL};

  assert_int_equal(ripple_root(kubectl, &dref, &deploy), RIPPLE_OK); /* alpha */
  assert_int_equal(cap->nml, 1);
  assert_int_equal(cap->ml[0].nsources, 0); /* a root's mergelog has no sources */
  assert_string_equal(cap->ml[0].component, "kubectl");
  assert_string_equal(cap->ml[0].kind, "Deployment");

  const ripple_ctx_t *src[3] = {&deploy};
  assert_int_equal(ripple_merge(ctrl, NULL, src, 1, NULL, &rs, &how), RIPPLE_OK);
  assert_int_equal(how, RIPPLE_MERGE_REUSED); /* a create inherits its source's CPID */
  assert_true(ripple_cpid_equal(&rs.cpid, &deploy.cpid));
  src[0] = &rs;
  assert_int_equal(ripple_merge(ctrl, NULL, src, 1, NULL, &pod, &how), RIPPLE_OK);
  assert_true(ripple_cpid_equal(&pod.cpid, &deploy.cpid));

  assert_int_equal(ripple_root(kubectl, NULL, &svc), RIPPLE_OK); /* beta */
  src[0] = &svc;
  assert_int_equal(ripple_merge(ctrl, NULL, src, 1, NULL, &ep, &how), RIPPLE_OK);
  assert_true(ripple_cpid_equal(&ep.cpid, &svc.cpid));
  assert_int_equal(cap->nml, 2); /* the two roots, nothing else yet */

  src[0] = &svc;
  src[1] = &pod;
  assert_int_equal(ripple_merge(ctrl, &ep, src, 2, &endpoints, &ep2, &how), RIPPLE_OK);
  assert_int_equal(how, RIPPLE_MERGE_NEW);
  assert_int_equal(cap->nml, 3);
  const cap_mergelog_t *ml = &cap->ml[2];
  assert_true(ripple_cpid_equal(&ml->cpid, &ep2.cpid)); /* gamma */
  assert_int_equal(ml->nsources, 2);
  assert_true(mergelog_has_source(ml, &deploy.cpid));
  assert_true(mergelog_has_source(ml, &svc.cpid));
  assert_false(ripple_cpid_equal(&ep2.cpid, &deploy.cpid));
  assert_false(ripple_cpid_equal(&ep2.cpid, &svc.cpid));
  assert_string_equal(ml->kind, "Endpoints");
  /* gamma remembers both as its nearest ancestors. */
  assert_int_equal(ep2.nanc, 2);
  assert_true(in_anc(&ep2, &deploy.cpid));
  assert_true(in_anc(&ep2, &svc.cpid));

  ripple_tracer_stats_t st;
  ripple_tracer_stats(ctrl, &st);
  assert_int_equal(st.mergelogs, 1);
  ripple_tracer_free(kubectl);
  ripple_tracer_free(ctrl);
  free(cap);
}

/* Paper, figures 8 and 9: object A is updated again and again; each update
 * merges A's old context with the operator's root; B follows A. Without
 * ancestors every step costs a mergelog at B too. With them, B reuses A's CPID
 * because A's new CPID lists B's current one as an ancestor. */
static size_t repeated_updates_mergelogs_at_b(uint32_t n, int updates) {
  capture_t *cap = capture_new(89);
  ripple_tracer_t *op = capture_tracer(cap, "kubectl", n);
  ripple_tracer_t *a_ctrl = capture_tracer(cap, "a-writer", n);
  ripple_tracer_t *b_ctrl = capture_tracer(cap, "b-controller", n);
  ripple_ctx_t a, b, root;
  assert_int_equal(ripple_root(op, NULL, &a), RIPPLE_OK);
  const ripple_ctx_t *src[1] = {&a};
  assert_int_equal(ripple_merge(b_ctrl, NULL, src, 1, NULL, &b, NULL), RIPPLE_OK);
  for (int i = 0; i < updates; i++) {
    assert_int_equal(ripple_root(op, NULL, &root), RIPPLE_OK);
    src[0] = &root;
    ripple_ctx_t a2;
    assert_int_equal(ripple_merge(a_ctrl, &a, src, 1, NULL, &a2, NULL), RIPPLE_OK);
    a = a2;
    src[0] = &a;
    ripple_ctx_t b2;
    assert_int_equal(ripple_merge(b_ctrl, &b, src, 1, NULL, &b2, NULL), RIPPLE_OK);
    assert_true(ripple_cpid_equal(&b2.cpid, &a.cpid) || n == 0);
    b = b2;
  }
  ripple_tracer_stats_t st;
  ripple_tracer_stats(b_ctrl, &st);
  ripple_tracer_free(op);
  ripple_tracer_free(a_ctrl);
  ripple_tracer_free(b_ctrl);
  free(cap);
  return st.mergelogs;
}

static void figure8_9_repeated_updates(void **state) {
  (void)state;
  assert_int_equal(repeated_updates_mergelogs_at_b(0, 20), 20);
  assert_int_equal(repeated_updates_mergelogs_at_b(1, 20), 0);
  assert_int_equal(repeated_updates_mergelogs_at_b(10, 20), 0);
}

static void nothing_to_merge(void **state) {
  (void)state;
  capture_t *cap = capture_new(1);
  ripple_tracer_t *t = capture_tracer(cap, "c", 10);
  ripple_ctx_t absent, out;
  memset(&absent, 0, sizeof absent);
  const ripple_ctx_t *src[2] = {NULL, &absent};
  ripple_merge_kind_t how = RIPPLE_MERGE_NEW;
  assert_int_equal(ripple_merge(t, NULL, src, 2, NULL, &out, &how), RIPPLE_OK);
  assert_int_equal(how, RIPPLE_MERGE_NONE);
  assert_false(ripple_ctx_is_set(&out));
  assert_int_equal(cap->nml, 0);
  assert_int_equal(ripple_merge(t, NULL, NULL, 1, NULL, &out, &how), RIPPLE_EINVAL);
  ripple_tracer_free(t);
  free(cap);
}

/* Whatever a merge returns, merging it again with the same sources must leave
 * it alone: a webhook or controller re-running its decision never loops. */
static void merge_is_idempotent(void **state) {
  (void)state;
  capture_t *cap = capture_new(3);
  ripple_tracer_t *t = capture_tracer(cap, "c", 4);
  ripple_ctx_t x, y, z, out, again;
  ripple_root(t, NULL, &x);
  ripple_root(t, NULL, &y);
  ripple_root(t, NULL, &z);
  const ripple_ctx_t *src[2] = {&y, &z};
  ripple_merge_kind_t how;
  assert_int_equal(ripple_merge(t, &x, src, 2, NULL, &out, &how), RIPPLE_OK);
  assert_int_equal(how, RIPPLE_MERGE_NEW);
  size_t before = cap->nml;
  assert_int_equal(ripple_merge(t, &out, src, 2, NULL, &again, &how), RIPPLE_OK);
  assert_int_equal(how, RIPPLE_MERGE_UNCHANGED);
  assert_true(ripple_ctx_equal(&out, &again));
  assert_int_equal(cap->nml, before);
  ripple_tracer_free(t);
  free(cap);
}

/* Hostile annotations: A says B is its ancestor and B says A is. No CPID
 * descends from all, so the merge must make a new CPID rather than trust
 * either; and a context listing itself must not cover itself. */
static void contradictory_lists_merge_anew(void **state) {
  (void)state;
  capture_t *cap = capture_new(4);
  ripple_tracer_t *t = capture_tracer(cap, "c", 10);
  ripple_ctx_t a = ctx_of(1, 1, 2), b = ctx_of(2, 1, 1), out;
  const ripple_ctx_t *src[1] = {&b};
  ripple_merge_kind_t how;
  assert_int_equal(ripple_merge(t, &a, src, 1, NULL, &out, &how), RIPPLE_OK);
  assert_int_equal(how, RIPPLE_MERGE_NEW);
  assert_int_equal(cap->nml, 1);
  assert_int_equal(cap->ml[0].nsources, 2);
  ripple_tracer_stats_t st;
  ripple_tracer_stats(t, &st);
  assert_int_equal(st.cycles, 1);

  b.anc[0] = b.cpid; /* lists itself */
  a = ctx_of(3, 0);
  assert_int_equal(ripple_merge(t, &a, src, 1, NULL, &out, &how), RIPPLE_OK);
  assert_int_equal(how, RIPPLE_MERGE_NEW);
  ripple_tracer_free(t);
  free(cap);
}

/* An over-long caller-built list is refused, not read past its end. */
static void oversized_context_refused(void **state) {
  (void)state;
  capture_t *cap = capture_new(6);
  ripple_tracer_t *t = capture_tracer(cap, "c", 10);
  ripple_ctx_t a = ctx_of(1, 0), out;
  a.nanc = RIPPLE_ANC_MAX + 1;
  const ripple_ctx_t *src[1] = {&a};
  assert_int_equal(ripple_merge(t, NULL, src, 1, NULL, &out, NULL), RIPPLE_EINVAL);
  ripple_tracer_free(t);
  free(cap);
}

/* The new list: merged CPIDs first, then their ancestors level by level, cut
 * at N, no duplicates. */
static void new_list_is_nearest_first(void **state) {
  (void)state;
  capture_t *cap = capture_new(8);
  ripple_tracer_t *t = capture_tracer(cap, "c", 5);
  /* Both list 30 as an ancestor: the new list holds it once. */
  ripple_ctx_t a = ctx_of(10, 3, 11, 12, 30), b = ctx_of(20, 2, 21, 30), out;
  const ripple_ctx_t *src[1] = {&b};
  ripple_merge_kind_t how;
  assert_int_equal(ripple_merge(t, &a, src, 1, NULL, &out, &how), RIPPLE_OK);
  assert_int_equal(how, RIPPLE_MERGE_NEW);
  assert_int_equal(out.nanc, 5);
  ripple_cpid_t want[5] = {test_cpid(10), test_cpid(20), test_cpid(11), test_cpid(21),
                           test_cpid(12)};
  for (int i = 0; i < 5; i++) assert_true(ripple_cpid_equal(&out.anc[i], &want[i]));
  ripple_tracer_free(t);
  free(cap);
}

/* Reuse keeps the winner's own list first and adds the loser's lineage after. */
static void reuse_keeps_winner_list_first(void **state) {
  (void)state;
  capture_t *cap = capture_new(9);
  ripple_tracer_t *t = capture_tracer(cap, "c", 10);
  ripple_ctx_t target = ctx_of(1, 1, 7), d = ctx_of(2, 2, 1, 3), out;
  const ripple_ctx_t *src[1] = {&d};
  ripple_merge_kind_t how;
  assert_int_equal(ripple_merge(t, &target, src, 1, NULL, &out, &how), RIPPLE_OK);
  assert_int_equal(how, RIPPLE_MERGE_REUSED);
  assert_true(ripple_cpid_equal(&out.cpid, &d.cpid));
  assert_int_equal(out.nanc, 3);
  assert_true(ripple_cpid_equal(&out.anc[0], &d.anc[0]));
  assert_true(ripple_cpid_equal(&out.anc[1], &d.anc[1]));
  assert_true(ripple_cpid_equal(&out.anc[2], &target.anc[0]));
  assert_int_equal(cap->nml, 0);
  ripple_tracer_free(t);
  free(cap);
}

/* Endpoints of a big Service: thousands of Pod sources. Same-CPID Pods collapse
 * to one source; distinct ones all become sources of one mergelog. */
static void many_sources(void **state) {
  (void)state;
  enum { PODS = 3000 };
  ripple_tracer_opts_t o = {.component = "endpoints-controller"};
  ripple_tracer_t *t;
  assert_int_equal(ripple_tracer_new(&o, &t), RIPPLE_OK);
  ripple_ctx_t *pods = calloc(PODS + 1, sizeof *pods);
  const ripple_ctx_t **src = calloc(PODS + 1, sizeof(const ripple_ctx_t *));
  assert_non_null(pods);
  assert_non_null(src);
  ripple_ctx_t svc, out;
  ripple_root(t, NULL, &svc);
  ripple_ctx_t deploy;
  ripple_root(t, NULL, &deploy);
  src[0] = &svc;
  for (int i = 0; i < PODS; i++) {
    pods[i] = deploy;
    src[i + 1] = &pods[i];
  }
  ripple_merge_kind_t how;
  assert_int_equal(ripple_merge(t, NULL, src, PODS + 1, NULL, &out, &how), RIPPLE_OK);
  assert_int_equal(how, RIPPLE_MERGE_NEW);
  assert_int_equal(out.nanc, 2);
  for (int i = 0; i < PODS; i++) ripple_cpid_generate(&pods[i].cpid);
  assert_int_equal(ripple_merge(t, NULL, src, PODS + 1, NULL, &out, &how), RIPPLE_OK);
  assert_int_equal(how, RIPPLE_MERGE_NEW);
  assert_int_equal(out.nanc, RIPPLE_ANC_DEFAULT);
  free(pods);
  free(src);
  ripple_tracer_free(t);
}

static void tracer_options_checked(void **state) {
  (void)state;
  ripple_tracer_t *t = NULL;
  ripple_tracer_opts_t o = {.component = NULL};
  assert_int_equal(ripple_tracer_new(&o, &t), RIPPLE_EINVAL);
  o.component = "x";
  o.max_ancestors = RIPPLE_ANC_MAX + 1;
  assert_int_equal(ripple_tracer_new(&o, &t), RIPPLE_EINVAL);
  o.max_ancestors = 0;
  assert_int_equal(ripple_tracer_new(&o, &t), RIPPLE_OK);
  assert_int_equal(ripple_tracer_max_ancestors(t), RIPPLE_ANC_DEFAULT);
  ripple_tracer_free(t);
  o.no_ancestors = 1;
  assert_int_equal(ripple_tracer_new(&o, &t), RIPPLE_OK);
  assert_int_equal(ripple_tracer_max_ancestors(t), 0);
  ripple_tracer_free(t);
  assert_string_equal(ripple_merge_kind_name(RIPPLE_MERGE_REUSED), "reused");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(figure5_endpoints_merge),
      cmocka_unit_test(figure8_9_repeated_updates),
      cmocka_unit_test(nothing_to_merge),
      cmocka_unit_test(merge_is_idempotent),
      cmocka_unit_test(contradictory_lists_merge_anew),
      cmocka_unit_test(oversized_context_refused),
      cmocka_unit_test(new_list_is_nearest_first),
      cmocka_unit_test(reuse_keeps_winner_list_first),
      cmocka_unit_test(many_sources),
      cmocka_unit_test(tracer_options_checked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
