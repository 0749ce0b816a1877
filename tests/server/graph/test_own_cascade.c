/*
 * test_own_cascade.c - a change's own cascade in the merge graph
 * (graph_cascade with GRAPH_OWN, server/graph.h) against everything it
 * reaches (GRAPH_REACHABLE), on the cascade the trigger lists were made for:
 * one Deployment scaled four times by a person. Each scale k is a root P_k;
 * the ReplicaSet's update merges it with the ReplicaSet's own earlier context
 * into N_k (sources [P_k, N_{k-1}], trigger [P_k]), and each new Pod's
 * context Q_k_i comes from N_k. Own(P_1) holds N_1 and its Pods, not N_2..N_4;
 * reachable(P_1) holds them all. A mergelog without a trigger list counts
 * every source (today's meaning); a repeated source takes its first place's
 * flag; retention unlinks flagged edges like any other.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "testutil.h"

#define SCALES 4
#define PODS 10

/* Keys: the ReplicaSet's first context 1; P_k 10+k; N_k 20+k; Q_k_i 100*k+i. */
static ripple_cpid_t C(uint64_t k) { return test_cpid(k); }
#define R0 1
#define P(k) (10 + (uint64_t)(k))
#define N(k) ((k) ? 20 + (uint64_t)(k) : R0)
#define Q(k, i) (100 * (uint64_t)(k) + (uint64_t)(i))

static void add(graph_t *g, uint64_t k, const uint64_t *src, size_t n, const uint8_t *trig,
                int64_t t) {
  ripple_cpid_t c = C(k), s[4];
  for (size_t i = 0; i < n; i++) s[i] = C(src[i]);
  assert_int_equal(graph_add_mergelog(g, &c, s, n, trig, t, 1000 + k), 1);
}

/* The four scales, with trigger lists (or, with_trigger 0, without). */
static graph_t *four_scales(int with_trigger) {
  graph_t *g;
  assert_int_equal(graph_new(&g), RIPPLE_OK);
  add(g, R0, NULL, 0, NULL, 1);
  static const uint8_t person_only[] = {1, 0}, one[] = {1};
  for (int k = 1; k <= SCALES; k++) {
    int64_t t = 1000 * k;
    add(g, P(k), NULL, 0, NULL, t);
    add(g, N(k), (uint64_t[]){P(k), N(k - 1)}, 2, with_trigger ? person_only : NULL, t + 1);
    for (int i = 0; i < PODS; i++) {
      add(g, Q(k, i), (uint64_t[]){N(k)}, 1, with_trigger ? one : NULL, t + 2);
      ripple_cpid_t q = C(Q(k, i));
      assert_int_equal(graph_add_span(g, &q, t + 3, t + 4 + i, 5000 + Q(k, i)), RIPPLE_OK);
    }
  }
  return g;
}

/* The keys (of the four scales' vertices) in k's cascade, as a set. */
static size_t cascade(const graph_t *g, uint64_t k, graph_scope_t scope, uint8_t in[1000]) {
  ripple_cpid_t c = C(k);
  vid_t *vs;
  size_t n;
  int truncated;
  assert_int_equal(graph_cascade(g, &c, scope, 0, &vs, &n, &truncated), RIPPLE_OK);
  assert_false(truncated);
  memset(in, 0, 1000);
  for (size_t i = 0; i < n; i++)
    for (uint64_t key = 0; key < 1000; key++) {
      ripple_cpid_t x = C(key);
      if (ripple_cpid_equal(graph_cpid(g, vs[i]), &x)) in[key] = 1;
    }
  free(vs);
  return n;
}

static void own_is_each_scale_alone(void **state) {
  (void)state;
  graph_t *g = four_scales(1);
  uint8_t in[1000];
  for (int k = 1; k <= SCALES; k++) {
    /* P_k, N_k and its ten Pods' contexts, nothing of another scale. */
    assert_int_equal(cascade(g, P(k), GRAPH_OWN, in), 2 + PODS);
    assert_true(in[P(k)] && in[N(k)]);
    for (int i = 0; i < PODS; i++) assert_true(in[Q(k, i)]);
    for (int j = 1; j <= SCALES; j++)
      if (j != k) assert_true(!in[N(j)] && !in[Q(j, 0)] && !in[P(j)]);
    /* Everything reachable: every later scale rides on N_k. */
    size_t want = 1 + (size_t)(SCALES - k + 1) * (1 + PODS);
    assert_int_equal(cascade(g, P(k), GRAPH_REACHABLE, in), want);
    for (int j = k; j <= SCALES; j++) assert_true(in[N(j)] && in[Q(j, PODS - 1)]);
  }
  /* The ReplicaSet's first context caused none of the scales. */
  assert_int_equal(cascade(g, R0, GRAPH_OWN, in), 1);
  assert_int_equal(cascade(g, R0, GRAPH_REACHABLE, in), 1 + SCALES * (1 + PODS));
  /* graph_related is the reachable scope. */
  ripple_cpid_t p1 = C(P(1));
  vid_t *vs;
  size_t n;
  int truncated;
  assert_int_equal(graph_related(g, &p1, 0, &vs, &n, &truncated), RIPPLE_OK);
  free(vs);
  assert_int_equal(n, 1 + SCALES * (1 + PODS));
  /* The limit cuts an own walk as it cuts the other. */
  assert_int_equal(graph_cascade(g, &p1, GRAPH_OWN, 3, &vs, &n, &truncated), RIPPLE_OK);
  free(vs);
  assert_int_equal(n, 3);
  assert_true(truncated);
  graph_free(g);
}

static void without_trigger_lists_own_is_reachable(void **state) {
  (void)state;
  graph_t *g = four_scales(0);
  uint8_t own[1000], all[1000];
  for (int k = 1; k <= SCALES; k++) {
    assert_int_equal(cascade(g, P(k), GRAPH_OWN, own), cascade(g, P(k), GRAPH_REACHABLE, all));
    assert_memory_equal(own, all, sizeof own);
  }
  graph_free(g);
}

/* Origins walk every edge backwards: N_2 came from P_2 and, through N_1,
 * from P_1 and the ReplicaSet's first context, trigger or not. */
static void origins_ignore_triggers(void **state) {
  (void)state;
  graph_t *g = four_scales(1);
  ripple_cpid_t n2 = C(N(2));
  graph_origin_t *o;
  size_t n;
  int truncated;
  assert_int_equal(graph_origins(g, &n2, 0, &o, &n, &truncated), RIPPLE_OK);
  assert_int_equal(n, 3);
  graph_origins_free(o, n);
  graph_free(g);
}

static void repeated_source_first_flag(void **state) {
  (void)state;
  graph_t *g;
  assert_int_equal(graph_new(&g), RIPPLE_OK);
  add(g, 1, NULL, 0, NULL, 1);
  add(g, 2, NULL, 0, NULL, 1);
  /* Sources [1, 2, 1]: 1's flag is its first place's (0); 2 triggered. */
  add(g, 3, (uint64_t[]){1, 2, 1}, 3, (const uint8_t[]){0, 1, 1}, 2);
  uint8_t in[1000];
  assert_int_equal(cascade(g, 1, GRAPH_OWN, in), 1);
  assert_int_equal(cascade(g, 2, GRAPH_OWN, in), 2);
  assert_int_equal(cascade(g, 1, GRAPH_REACHABLE, in), 2);
  assert_int_equal(graph_edges(g), 2);
  graph_free(g);
}

/* Retention takes flagged edges like the others: expiring the oldest roots
 * leaves every later scale whole, and a later own walk sound. */
static void expire_with_triggers(void **state) {
  (void)state;
  graph_t *g = four_scales(1);
  size_t before = graph_vertices(g);
  /* R0 and P_1 are the oldest roots; N_1 goes with them, then its Pods. */
  size_t gone = graph_expire(g, before - 2 - 1 - PODS, 0, NULL);
  assert_int_equal(gone, 2 + 1 + PODS);
  uint8_t in[1000];
  assert_int_equal(cascade(g, P(2), GRAPH_OWN, in), 2 + PODS);
  assert_int_equal(cascade(g, P(2), GRAPH_REACHABLE, in), 1 + (SCALES - 1) * (1 + PODS));
  assert_int_equal(graph_edges(g), (SCALES - 1) * (1 + PODS) + (SCALES - 2));
  graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(own_is_each_scale_alone),
      cmocka_unit_test(without_trigger_lists_own_is_reachable),
      cmocka_unit_test(origins_ignore_triggers),
      cmocka_unit_test(repeated_source_first_flag),
      cmocka_unit_test(expire_with_triggers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
