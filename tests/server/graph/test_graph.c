/*
 * test_graph.c - the trace server's merge graph (server/graph.c).
 *
 * Hand-built graphs where the answer is known (first mergelog wins, related,
 * origins with shortest paths, spans, the deletion rule by size, by age and its
 * cycle fallback), the memory bound per vertex, and a failed allocation in the
 * middle of a mergelog. test_graph_model.c compares the graph with a model.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "testutil.h"

/* Vertex k of a hand-built graph; its mergelog, if any, is stored at row SEQ(k). */
#define SEQ(k) (1000 + (uint64_t)(k))

static ripple_cpid_t C(uint64_t k) { return test_cpid(k); }

static vid_t F(const graph_t *g, uint64_t k) {
  ripple_cpid_t c = C(k);
  return graph_find(g, &c);
}

/* The key of vertex v among 0..999 (hand-built graphs use small keys). */
static uint64_t K(const graph_t *g, vid_t v) {
  for (uint64_t k = 0; k < 1000; k++) {
    ripple_cpid_t c = C(k);
    if (ripple_cpid_equal(graph_cpid(g, v), &c)) return k;
  }
  fail_msg("vertex %" PRIu32 " has no known key", v);
  return 0;
}

static int add_ml(graph_t *g, uint64_t k, int64_t t, const uint64_t *src, size_t n) {
  ripple_cpid_t c = C(k), s[16];
  assert_true(n <= 16);
  for (size_t i = 0; i < n; i++) s[i] = C(src[i]);
  return graph_add_mergelog(g, &c, s, n, NULL, t, SEQ(k));
}

/* ML(g, k, t, sources...) adds k's mergelog; ROOT(g, k, t) one without sources. */
#define ML(g, k, t, ...)                                                         \
  assert_int_equal(add_ml(g, k, t, (uint64_t[]){__VA_ARGS__},                    \
                          sizeof((uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t)), \
                   1)
#define ROOT(g, k, t) assert_int_equal(add_ml(g, k, t, NULL, 0), 1)

/* Keys of the vertices related to k, in the order given. */
static int related(const graph_t *g, uint64_t k, size_t limit, uint64_t *keys, size_t *n,
                   int *truncated) {
  ripple_cpid_t c = C(k);
  vid_t *vs = NULL;
  int rc = graph_related(g, &c, limit, &vs, n, truncated);
  if (rc != RIPPLE_OK) return rc;
  for (size_t i = 0; i < *n; i++) keys[i] = K(g, vs[i]);
  free(vs);
  return rc;
}

static int has_key(const uint64_t *keys, size_t n, uint64_t k) {
  for (size_t i = 0; i < n; i++)
    if (keys[i] == k) return 1;
  return 0;
}

/* ---- what graph_expire reports gone ---------------------------------------- */

typedef struct gone_log {
  uint64_t key[64], ml[64];
  size_t n;
  uint64_t span[64];
  size_t nspan;
} gone_log_t;

static void on_vertex(void *ud, const ripple_cpid_t *cpid, uint64_t ml_seq) {
  gone_log_t *l = ud;
  assert_true(l->n < 64);
  for (uint64_t k = 0; k < 1000; k++) {
    ripple_cpid_t c = C(k);
    if (ripple_cpid_equal(cpid, &c)) {
      l->key[l->n] = k;
      l->ml[l->n++] = ml_seq;
      return;
    }
  }
  fail_msg("an unknown CPID was reported gone");
}

static void on_span(void *ud, uint64_t seq) {
  gone_log_t *l = ud;
  assert_true(l->nspan < 64);
  l->span[l->nspan++] = seq;
}

static size_t expire(graph_t *g, size_t max, int64_t min_time, gone_log_t *l) {
  memset(l, 0, sizeof *l);
  graph_gone_t gone = {on_vertex, on_span, l};
  size_t n = graph_expire(g, max, min_time, &gone);
  assert_int_equal(n, l->n);
  return n;
}

/* The log holds exactly these vertices, each with its mergelog row (or 0). */
static void assert_gone(const gone_log_t *l, const uint64_t *keys, const int *has_ml, size_t n) {
  assert_int_equal(l->n, n);
  for (size_t i = 0; i < n; i++) {
    size_t j = 0;
    while (j < l->n && l->key[j] != keys[i]) j++;
    if (j == l->n) fail_msg("vertex %" PRIu64 " should have gone", keys[i]);
    assert_int_equal(l->ml[j], has_ml[i] ? SEQ(keys[i]) : 0);
  }
}

/* ---- building -------------------------------------------------------------- */

static void first_mergelog_wins(void **state) {
  (void)state;
  graph_t *g = NULL;
  assert_int_equal(graph_new(&g), RIPPLE_OK);
  assert_non_null(g);
  ML(g, 1, 100, 2, 3);
  assert_int_equal(add_ml(g, 1, 200, (uint64_t[]){4}, 1), 0); /* a retry or a liar */
  assert_int_equal(graph_mergelog_seq(g, F(g, 1)), SEQ(1));
  assert_int_equal(F(g, 4), 0); /* the loser's sources are not added */
  assert_int_equal(graph_vertices(g), 3);
  assert_int_equal(graph_edges(g), 2);
  ripple_cpid_t c1 = C(1), c2 = C(2);
  assert_true(graph_has_mergelog(g, &c1));
  assert_false(graph_has_mergelog(g, &c2));
  assert_int_equal(graph_mergelog_seq(g, F(g, 2)), 0);
  /* A vertex first seen as a source can still get its own mergelog, once. */
  ML(g, 2, 50, 5);
  assert_true(graph_has_mergelog(g, &c2));
  assert_int_equal(graph_mergelog_seq(g, F(g, 2)), SEQ(2));
  assert_int_equal(graph_edges(g), 3);
  graph_free(g);
}

static void self_and_duplicate_sources_ignored(void **state) {
  (void)state;
  graph_t *g = NULL;
  assert_int_equal(graph_new(&g), RIPPLE_OK);
  ML(g, 1, 100, 1, 2, 2, 3, 2, 1);
  assert_int_equal(graph_vertices(g), 3);
  assert_int_equal(graph_edges(g), 2);
  uint64_t keys[8];
  size_t n;
  int tr;
  assert_int_equal(related(g, 1, 0, keys, &n, &tr), RIPPLE_OK);
  assert_int_equal(n, 1); /* no self-loop */
  assert_int_equal(related(g, 2, 0, keys, &n, &tr), RIPPLE_OK);
  assert_int_equal(n, 2);
  /* One edge 2 -> 1, not three: expiring 2 and 3 must drop 1's in-degree to 0. */
  gone_log_t l;
  assert_int_equal(expire(g, 0, 101, &l), 3);
  graph_free(g);
}

static void spans_per_vertex(void **state) {
  (void)state;
  graph_t *g = NULL;
  assert_int_equal(graph_new(&g), RIPPLE_OK);
  ripple_cpid_t c = C(7);
  uint64_t want[] = {502, 501, 500}; /* most recent first */
  for (int i = 0; i < 3; i++)
    assert_int_equal(graph_add_span(g, &c, 10 + i, 10 + i, 500 + i), RIPPLE_OK);
  /* A span of an unknown CPID makes a vertex without a mergelog. */
  assert_int_equal(graph_vertices(g), 1);
  assert_int_equal(graph_spans(g), 3);
  assert_int_equal(graph_mergelog_seq(g, F(g, 7)), 0);
  gone_log_t got = {0};
  graph_span_seqs(g, F(g, 7), on_span, &got);
  assert_int_equal(got.nspan, 3);
  assert_memory_equal(got.span, want, sizeof want);
  /* Its mergelog arriving later is accepted; the spans stay. */
  ML(g, 7, 5, 8);
  got.nspan = 0;
  graph_span_seqs(g, F(g, 7), on_span, &got);
  assert_int_equal(got.nspan, 3);
  got.nspan = 0;
  graph_span_seqs(g, F(g, 8), on_span, &got);
  assert_int_equal(got.nspan, 0);
  graph_free(g);
}

/* ---- queries --------------------------------------------------------------- */

static void related_reach_and_limit(void **state) {
  (void)state;
  graph_t *g = NULL;
  assert_int_equal(graph_new(&g), RIPPLE_OK);
  ML(g, 2, 10, 1); /* 1 -> 2 -> {3, 4}; 5 -> 6 elsewhere; 0 -> 1 above */
  ML(g, 3, 11, 2);
  ML(g, 4, 12, 2);
  ML(g, 1, 9, 0);
  ML(g, 6, 13, 5);
  uint64_t keys[16];
  size_t n;
  int tr = -1;
  assert_int_equal(related(g, 1, 0, keys, &n, &tr), RIPPLE_OK);
  assert_int_equal(n, 4);
  assert_int_equal(tr, 0);
  assert_int_equal(keys[0], 1); /* itself first, then breadth-first */
  assert_int_equal(keys[1], 2);
  assert_true(has_key(keys, n, 3) && has_key(keys, n, 4));
  assert_int_equal(related(g, 3, 0, keys, &n, &tr), RIPPLE_OK);
  assert_int_equal(n, 1);
  assert_int_equal(related(g, 5, 0, keys, &n, &tr), RIPPLE_OK);
  assert_int_equal(n, 2);
  assert_int_equal(keys[1], 6);
  assert_int_equal(related(g, 1, 2, keys, &n, &tr), RIPPLE_OK);
  assert_int_equal(n, 2);
  assert_int_equal(tr, 1);
  assert_int_equal(keys[1], 2);
  assert_int_equal(related(g, 1, 3, keys, &n, &tr), RIPPLE_OK);
  assert_int_equal(n, 3);
  assert_int_equal(tr, 1);
  assert_int_equal(related(g, 1, 4, keys, &n, &tr), RIPPLE_OK); /* exactly all: not cut */
  assert_int_equal(n, 4);
  assert_int_equal(tr, 0);
  assert_int_equal(related(g, 3, 1, keys, &n, &tr), RIPPLE_OK);
  assert_int_equal(tr, 0);
  /* Unknown: RIPPLE_ENOENT and the outputs untouched. */
  ripple_cpid_t unknown = C(99);
  vid_t sentinel[1], *vs = sentinel;
  n = 77;
  assert_int_equal(graph_related(g, &unknown, 0, &vs, &n, &tr), RIPPLE_ENOENT);
  assert_ptr_equal(vs, sentinel);
  assert_int_equal(n, 77);
  graph_free(g);
}

/* Origins of k: each path must start at an origin (no incoming edge), use only
 * edges in `edges` (pairs), end at k, and have the expected length. */
typedef struct want_origin {
  uint64_t key;
  size_t len;
} want_origin_t;

static void check_origins(const graph_t *g, uint64_t k, const uint64_t (*edges)[2], size_t nedges,
                          const want_origin_t *want, size_t nwant) {
  ripple_cpid_t c = C(k);
  graph_origin_t *o;
  size_t n;
  int tr;
  assert_int_equal(graph_origins(g, &c, 0, &o, &n, &tr), RIPPLE_OK);
  assert_int_equal(tr, 0);
  assert_int_equal(n, nwant);
  for (size_t i = 0; i < nwant; i++) {
    size_t j = 0;
    while (j < n && K(g, o[j].path[0]) != want[i].key) j++;
    if (j == n) fail_msg("origin %" PRIu64 " of %" PRIu64 " missing", want[i].key, k);
    assert_int_equal(o[j].len, want[i].len);
    assert_int_equal(o[j].path[o[j].len - 1], F(g, k));
    for (size_t s = 0; s + 1 < o[j].len; s++) {
      uint64_t a = K(g, o[j].path[s]), b = K(g, o[j].path[s + 1]);
      size_t e = 0;
      while (e < nedges && !(edges[e][0] == a && edges[e][1] == b)) e++;
      if (e == nedges) fail_msg("path uses %" PRIu64 " -> %" PRIu64 ", not an edge", a, b);
    }
  }
  graph_origins_free(o, n);
}

static void origins_paths(void **state) {
  (void)state;
  graph_t *g = NULL;
  assert_int_equal(graph_new(&g), RIPPLE_OK);
  /* Diamond 1 -> {2, 3} -> 4 -> 5, with a short cut 1 -> 5 absent; and a
   * multi-root join 10, 11 -> 13; 13, 12 -> 14; and 20 -> 21 -> 22 -> 23 with
   * the short cut 20 -> 23. */
  static const uint64_t edges[][2] = {{1, 2},   {1, 3},   {2, 4},   {3, 4},   {4, 5},
                                      {10, 13}, {11, 13}, {13, 14}, {12, 14}, {20, 21},
                                      {21, 22}, {22, 23}, {20, 23}};
  ROOT(g, 1, 1);
  ML(g, 2, 2, 1);
  ML(g, 3, 3, 1);
  ML(g, 4, 4, 2, 3);
  ML(g, 5, 5, 4);
  ML(g, 13, 6, 10, 11);
  ML(g, 14, 7, 13, 12);
  ML(g, 21, 8, 20);
  ML(g, 22, 9, 21);
  ML(g, 23, 10, 22, 20);
  size_t ne = sizeof edges / sizeof edges[0];
  check_origins(g, 1, edges, ne, (want_origin_t[]){{1, 1}}, 1); /* a root is its own origin */
  check_origins(g, 5, edges, ne, (want_origin_t[]){{1, 4}}, 1);
  check_origins(g, 4, edges, ne, (want_origin_t[]){{1, 3}}, 1);
  check_origins(g, 14, edges, ne, (want_origin_t[]){{10, 3}, {11, 3}, {12, 2}}, 3);
  check_origins(g, 13, edges, ne, (want_origin_t[]){{10, 2}, {11, 2}}, 2);
  check_origins(g, 23, edges, ne, (want_origin_t[]){{20, 2}}, 1); /* the shortest path */
  /* The origin first in its path, the queried CPID last. */
  ripple_cpid_t c = C(5);
  graph_origin_t *o;
  size_t n;
  int tr;
  assert_int_equal(graph_origins(g, &c, 0, &o, &n, &tr), RIPPLE_OK);
  assert_int_equal(K(g, o[0].path[0]), 1);
  assert_int_equal(K(g, o[0].path[2]), 4);
  assert_int_equal(K(g, o[0].path[3]), 5);
  graph_origins_free(o, n);
  /* A limit on the backward walk: 5's walk needs 5 vertices to reach 1. */
  assert_int_equal(graph_origins(g, &c, 3, &o, &n, &tr), RIPPLE_OK);
  assert_int_equal(tr, 1);
  assert_int_equal(n, 0);
  graph_origins_free(o, n);
  ripple_cpid_t unknown = C(99);
  assert_int_equal(graph_origins(g, &unknown, 0, &o, &n, &tr), RIPPLE_ENOENT);
  graph_free(g);
}

static void origins_with_cycles(void **state) {
  (void)state;
  graph_t *g = NULL;
  assert_int_equal(graph_new(&g), RIPPLE_OK);
  /* 30 -> 31 -> 32 -> 30, fed by the root 40 -> 30; and 50 <-> 51 alone. */
  static const uint64_t edges[][2] = {{30, 31}, {31, 32}, {32, 30}, {40, 30}, {50, 51}, {51, 50}};
  ML(g, 31, 1, 30);
  ML(g, 32, 2, 31);
  ML(g, 30, 3, 32, 40);
  ML(g, 51, 4, 50);
  ML(g, 50, 5, 51);
  size_t ne = sizeof edges / sizeof edges[0];
  check_origins(g, 32, edges, ne, (want_origin_t[]){{40, 4}}, 1);
  check_origins(g, 30, edges, ne, (want_origin_t[]){{40, 2}}, 1);
  check_origins(g, 50, edges, ne, NULL, 0); /* no origin at all, and no hang */
  uint64_t keys[8];
  size_t n;
  int tr;
  assert_int_equal(related(g, 31, 0, keys, &n, &tr), RIPPLE_OK);
  assert_int_equal(n, 3);
  graph_free(g);
}

/* ---- retention ------------------------------------------------------------- */

static void expire_by_size(void **state) {
  (void)state;
  graph_t *g = NULL;
  assert_int_equal(graph_new(&g), RIPPLE_OK);
  /* 1 (t1) -> 6 (t0, the oldest, but it has incoming edges) <- 2 (t2);
   * 6 -> 7 (t6); 3 (t3) alone with two spans; 4 (t10) -> 5 (t11). */
  ROOT(g, 1, 1);
  ROOT(g, 2, 2);
  ML(g, 6, 0, 1, 2);
  ML(g, 7, 6, 6);
  ROOT(g, 3, 3);
  ripple_cpid_t c3 = C(3);
  assert_int_equal(graph_add_span(g, &c3, 3, 3, 900), RIPPLE_OK);
  assert_int_equal(graph_add_span(g, &c3, 4, 4, 901), RIPPLE_OK);
  ML(g, 5, 11, 4); /* 4 first seen as a source: made at t11 */
  ROOT(g, 4, 10);  /* its mergelog says t10 */
  assert_int_equal(graph_vertices(g), 7);
  gone_log_t l;

  assert_int_equal(expire(g, 7, 0, &l), 0); /* within the limit: nothing */
  assert_int_equal(expire(g, 6, 0, &l), 1); /* the oldest root only; 6 keeps 2's edge */
  assert_gone(&l, (uint64_t[]){1}, (int[]){1}, 1);
  assert_int_equal(l.nspan, 0);
  assert_int_not_equal(F(g, 6), 0);
  check_origins(g, 6, (const uint64_t[][2]){{2, 6}}, 1, (want_origin_t[]){{2, 2}}, 1);

  /* Root 2 goes; 6 loses its last incoming edge and goes, then 7 with it. */
  assert_int_equal(expire(g, 5, 0, &l), 3);
  assert_gone(&l, (uint64_t[]){2, 6, 7}, (int[]){1, 1, 1}, 3);
  assert_int_not_equal(F(g, 3), 0);

  assert_int_equal(expire(g, 2, 0, &l), 1); /* 3 and its span rows */
  assert_gone(&l, (uint64_t[]){3}, (int[]){1}, 1);
  assert_int_equal(l.nspan, 2);
  assert_true(l.span[0] + l.span[1] == 900 + 901 && l.span[0] != l.span[1]);
  assert_int_equal(graph_spans(g), 0);

  /* The cascade may go below the limit: 5 has no other source. */
  assert_int_equal(expire(g, 1, 0, &l), 2);
  assert_gone(&l, (uint64_t[]){4, 5}, (int[]){1, 1}, 2);
  assert_int_equal(graph_vertices(g), 0);
  assert_int_equal(graph_edges(g), 0);
  graph_free(g);
}

static void expire_by_age(void **state) {
  (void)state;
  graph_t *g = NULL;
  assert_int_equal(graph_new(&g), RIPPLE_OK);
  /* Roots 1 (t100), 2 (t300), 3 (t50), 4 (t400), 8 (t100); 1, 4 -> 5 (t50);
   * 2 -> 6 (t10); 8 -> 9 (t1000, young). Only spans: 10 (t199), 11 (t200). */
  ROOT(g, 1, 100);
  ROOT(g, 2, 300);
  ROOT(g, 3, 50);
  ROOT(g, 4, 400);
  ROOT(g, 8, 100);
  ML(g, 5, 50, 1, 4);
  ML(g, 6, 10, 2);
  ML(g, 9, 1000, 8);
  ripple_cpid_t c10 = C(10), c11 = C(11);
  assert_int_equal(graph_add_span(g, &c10, 199, 199, 910), RIPPLE_OK);
  assert_int_equal(graph_add_span(g, &c11, 200, 200, 911), RIPPLE_OK);
  gone_log_t l;
  /* Older than 200: roots 3, 1, 8 and 10. 5 and 6 are old but have sources;
   * 9 is young but its only source goes; 11 is exactly 200, not older. */
  assert_int_equal(expire(g, 0, 200, &l), 5);
  assert_gone(&l, (uint64_t[]){3, 1, 8, 9, 10}, (int[]){1, 1, 1, 1, 0}, 5);
  assert_int_equal(l.nspan, 1);
  assert_int_equal(l.span[0], 910);
  assert_int_not_equal(F(g, 5), 0);
  assert_int_not_equal(F(g, 6), 0);
  assert_int_not_equal(F(g, 11), 0);
  assert_int_equal(expire(g, 0, 200, &l), 0); /* idempotent */
  assert_int_equal(expire(g, 0, 350, &l), 3);
  assert_gone(&l, (uint64_t[]){2, 6, 11}, (int[]){1, 1, 0}, 3);
  assert_int_equal(graph_vertices(g), 2); /* 4 -> 5 */
  /* Size and age together: age removes nothing here, size removes 4 and 5. */
  assert_int_equal(expire(g, 1, 350, &l), 2);
  graph_free(g);
}

static void expire_cycle_fallback(void **state) {
  (void)state;
  graph_t *g = NULL;
  assert_int_equal(graph_new(&g), RIPPLE_OK);
  /* Two cycles, 1 (t1) <-> 4 (t4) and 2 (t2) <-> 3 (t3); 3 -> 5 (t0); a root 9. */
  ML(g, 4, 4, 1);
  ML(g, 1, 1, 4);
  ML(g, 3, 3, 2);
  ML(g, 2, 2, 3);
  ML(g, 5, 0, 3);
  ROOT(g, 9, 100);
  gone_log_t l;
  /* Age alone never removes a vertex that has an incoming edge. */
  assert_int_equal(expire(g, 0, 1000, &l), 1);
  assert_gone(&l, (uint64_t[]){9}, (int[]){1}, 1);
  assert_int_equal(expire(g, 0, 1000, &l), 0);
  assert_int_equal(expire(g, 5, 0, &l), 0);
  /* Over the limit with only cycles left: the oldest goes regardless. 5 is the
   * oldest: removing it leaves 4 vertices, enough. */
  assert_int_equal(expire(g, 4, 0, &l), 1);
  assert_gone(&l, (uint64_t[]){5}, (int[]){1}, 1);
  /* Next oldest 1: 4 loses its only source and goes with it; 2 <-> 3 stay. */
  assert_int_equal(expire(g, 3, 0, &l), 2);
  assert_gone(&l, (uint64_t[]){1, 4}, (int[]){1, 1}, 2);
  assert_int_not_equal(F(g, 2), 0);
  assert_int_not_equal(F(g, 3), 0);
  assert_int_equal(graph_edges(g), 2);
  assert_int_equal(expire(g, 1, 0, &l), 2); /* 2 goes and takes 3 */
  assert_int_equal(graph_vertices(g), 0);
  assert_int_equal(graph_edges(g), 0);
  graph_free(g);
}

/* ---- size ------------------------------------------------------------------ */

#define BIG 1000000

static void memory_per_vertex(void **state) {
  (void)state;
  /* A chain 0 -> 1 -> ... and a fan 0 -> each of 1..BIG-1: the design bound of
   * under 100 bytes per vertex, all structures included. */
  for (int fan = 0; fan < 2; fan++) {
    graph_t *g = NULL;
    assert_int_equal(graph_new(&g), RIPPLE_OK);
    for (uint64_t i = 1; i < BIG; i++) {
      ripple_cpid_t c = C(i), s = C(fan ? 0 : i - 1);
      assert_int_equal(graph_add_mergelog(g, &c, &s, 1, NULL, (int64_t)i, i), 1);
    }
    assert_int_equal(graph_vertices(g), BIG);
    assert_int_equal(graph_edges(g), BIG - 1);
    size_t mem = graph_memory(g);
    print_message("%s: %zu bytes per vertex\n", fan ? "fan" : "chain", mem / BIG);
    assert_true(mem / graph_vertices(g) < 100);
    /* One root: it and everything below it go together, without recursion. */
    assert_int_equal(graph_expire(g, BIG / 2, 0, NULL), BIG);
    assert_int_equal(graph_vertices(g), 0);
    /* Freed slots are reused: re-adding costs no more memory. */
    for (uint64_t i = 1; i < BIG; i++) {
      ripple_cpid_t c = C(i + BIG), s = C(fan ? BIG : i + BIG - 1);
      assert_int_equal(graph_add_mergelog(g, &c, &s, 1, NULL, (int64_t)i, i), 1);
    }
    assert_int_equal(graph_vertices(g), BIG);
    assert_true(graph_memory(g) <= mem);
    graph_free(g);
  }
}

/* ---- out of memory ---------------------------------------------------------- */

/* test_graph links with --wrap for the allocator, so that the graph's
 * allocations (and only those of statically linked code) can be refused. */
void *__real_malloc(size_t n);
void *__real_realloc(void *p, size_t n);
void *__real_calloc(size_t n, size_t m);
void *__wrap_malloc(size_t n);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_calloc(size_t n, size_t m);
static int refuse_alloc, refused_allocs;

void *__wrap_malloc(size_t n) { return refuse_alloc && ++refused_allocs ? NULL : __real_malloc(n); }
void *__wrap_realloc(void *p, size_t n) {
  return refuse_alloc && ++refused_allocs ? NULL : __real_realloc(p, n);
}
void *__wrap_calloc(size_t n, size_t m) {
  return refuse_alloc && ++refused_allocs ? NULL : __real_calloc(n, m);
}

static void oom_keeps_edges_whole(void **state) {
  (void)state;
  graph_t *g = NULL;
  assert_int_equal(graph_new(&g), RIPPLE_OK);
  /* Edges take two slots of a pool that grows by chunks of 65536 (slot 0 is
   * never used): after 32767 edges the next edge's out-slot is the chunk's
   * last, and its in-slot needs a new chunk. */
  for (uint64_t i = 1; i <= 32767; i++) {
    ripple_cpid_t c = C(i), s = C(i - 1);
    assert_int_equal(graph_add_mergelog(g, &c, &s, 1, NULL, (int64_t)i, i), 1);
  }
  ripple_cpid_t v = C(50000), s = C(50001);
  assert_int_equal(graph_add_span(g, &s, -1, -1, 1), RIPPLE_OK); /* s: the oldest vertex */
  refuse_alloc = 1;
  int rc = graph_add_mergelog(g, &v, &s, 1, NULL, 100000, 1);
  refuse_alloc = 0;
  assert_int_equal(rc, RIPPLE_ENOMEM);
  assert_true(refused_allocs > 0);
  /* Half an edge s -> v would make s's removal take an in-degree v never had,
   * leaving v a vertex that is neither live nor free. */
  assert_int_equal(graph_expire(g, 0, INT64_MAX, NULL), 32768 + 2);
  assert_int_equal(graph_vertices(g), 0);
  assert_int_equal(graph_edges(g), 0);
  assert_int_equal(graph_find(g, &v), 0);
  graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(first_mergelog_wins),   cmocka_unit_test(self_and_duplicate_sources_ignored),
      cmocka_unit_test(spans_per_vertex),      cmocka_unit_test(related_reach_and_limit),
      cmocka_unit_test(origins_paths),         cmocka_unit_test(origins_with_cycles),
      cmocka_unit_test(expire_by_size),        cmocka_unit_test(expire_by_age),
      cmocka_unit_test(expire_cycle_fallback), cmocka_unit_test(memory_per_vertex),
      cmocka_unit_test(oom_keeps_edges_whole),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
