/*
 * test_graph_model.c - the merge graph (server/graph.c) against a model.
 *
 * The model is an adjacency matrix over a few slots with the deletion rule
 * written as plainly as possible. Seeded random histories of mergelogs (with
 * repeated and self sources), spans, and expiries by size and age are applied
 * to both; after every step every answer must agree: which vertices exist,
 * their rows, related (breadth-first, limits) and a change's own cascade
 * (trigger edges only: mergelogs with random trigger flags or none, the
 * first place of a repeated source deciding), origins with shortest paths,
 * and exactly what each expiry reports gone. Removed slots come back with old
 * and new CPIDs, so freed vertex slots and index entries are reused. A second
 * test churns the CPID index at high load to exercise its deletion.
 * A failure prints the seed and step to replay it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "testutil.h"

typedef struct seqs {
  uint64_t v[64];
  size_t n;
} seqs_t;

static void push_seq(void *ud, uint64_t seq) {
  seqs_t *s = ud;
  assert_true(s->n < 64);
  s->v[s->n++] = seq;
}

static uint64_t rnd(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* A CPID that says which slot of a test it is for (and which generation). */
static ripple_cpid_t tagged(uint32_t tag) {
  ripple_cpid_t c = test_cpid(tag + 5000000);
  memcpy(c.b + 12, &tag, 4);
  return c;
}

static uint32_t tag_of(const ripple_cpid_t *c) {
  uint32_t tag;
  memcpy(&tag, c->b + 12, 4);
  return tag;
}

/* At most 716 live vertices keep the index at its first 1024 slots (it grows
 * past a load of 0.7), so rounds run at loads of 0.35 to 0.7 with long
 * clusters, often wrapping around the end of the table. */
#define CHURN 716
static uint8_t churn_in[CHURN];

static void churn_gone(void *ud, const ripple_cpid_t *cpid, uint64_t seq) {
  uint32_t k = tag_of(cpid);
  assert_true(k < CHURN && churn_in[k]);
  churn_in[k] = 0;
  ++*(size_t *)ud;
}

/* Many isolated vertices of random ages, expired and re-added in rounds: the
 * index's backward-shift deletion must keep every survivor findable and
 * forget every vertex removed, at loads up to the index's maximum. */
static void index_churn(void **state) {
  (void)state;
  uint64_t s = 0x5eed;
  graph_t *g = NULL;
  assert_int_equal(graph_new(&g), RIPPLE_OK);
  memset(churn_in, 0, sizeof churn_in);
  size_t live = 0;
  for (int round = 0; round < 1000; round++) {
    size_t target = CHURN / 2 + rnd(&s) % (CHURN / 2 + 1);
    for (uint32_t k = (uint32_t)(rnd(&s) % CHURN); live < target; k = (k + 7919) % CHURN) {
      if (churn_in[k]) continue;
      ripple_cpid_t c = tagged(k);
      int64_t t = (int64_t)(rnd(&s) % 100000);
      assert_int_equal(graph_add_span(g, &c, t, t, k + 1), RIPPLE_OK);
      churn_in[k] = 1;
      live++;
    }
    size_t max = live / 2 + rnd(&s) % (live / 2), removed = 0;
    graph_gone_t gone = {churn_gone, NULL, &removed};
    assert_int_equal(graph_expire(g, max, 0, &gone), live - max);
    assert_int_equal(removed, live - max);
    live = max;
    assert_int_equal(graph_vertices(g), live);
    for (uint32_t k = 0; k < CHURN; k++) {
      ripple_cpid_t c = tagged(k);
      vid_t v = graph_find(g, &c);
      if ((v != 0) != churn_in[k]) fail_msg("round %d: vertex %" PRIu32 " lost or kept", round, k);
      if (v) assert_int_equal(tag_of(graph_cpid(g, v)), k);
    }
  }
  graph_free(g);
}

/* The model: an adjacency matrix over RN slots, and the deletion rule written
 * as plainly as possible. Each slot's CPID changes generation when it is
 * removed (half of the time), so re-adds use both old and new CPIDs. */
#define RN 20
#define RSPANS 6

typedef struct model {
  int present[RN], hasml[RN], nspans[RN];
  int64_t time[RN];
  uint64_t mlseq[RN], spans[RN][RSPANS];
  uint32_t gen[RN];
  uint8_t adj[RN][RN];
  uint8_t trig[RN][RN]; /* adj[j][i] is a trigger edge (valid where adj is) */
  uint64_t seed, rs;    /* the seed to print; the random state */
  int step;
} model_t;

#define MCHECK(m, cond)                                                                 \
  do {                                                                                  \
    if (!(cond)) fail_msg("seed %" PRIu64 " step %d: %s", (m)->seed, (m)->step, #cond); \
  } while (0)

static ripple_cpid_t mcpid(const model_t *m, int i) { return tagged(m->gen[i] << 8 | (uint32_t)i); }

static vid_t mfind(const model_t *m, const graph_t *g, int i) {
  ripple_cpid_t c = mcpid(m, i);
  return graph_find(g, &c);
}

/* The slot of a live vertex, checking that its CPID is the slot's current one. */
static int mslot(const model_t *m, const ripple_cpid_t *c) {
  uint32_t tag = tag_of(c);
  int i = (int)(tag & 0xff);
  MCHECK(m, i < RN && tag >> 8 == m->gen[i]);
  return i;
}

static int indeg(const model_t *m, int i) {
  int d = 0;
  for (int j = 0; j < RN; j++) d += m->adj[j][i];
  return d;
}

static void mtouch(model_t *m, int i, int64_t t) {
  if (m->present[i]) return;
  m->present[i] = 1;
  m->hasml[i] = m->nspans[i] = 0;
  m->mlseq[i] = 0;
  m->time[i] = t;
}

static int madd_ml(model_t *m, int i, const int *src, int n, const uint8_t *tf, int64_t t,
                   uint64_t seq) {
  if (m->present[i] && m->hasml[i]) return 0;
  mtouch(m, i, t);
  m->time[i] = t;
  m->hasml[i] = 1;
  m->mlseq[i] = seq;
  for (int k = 0; k < n; k++) {
    if (src[k] == i) continue;
    mtouch(m, src[k], t);
    /* Edges into i come from its one mergelog: the first place of a source
     * makes the edge, and its flag. */
    if (!m->adj[src[k]][i]) m->trig[src[k]][i] = !tf || tf[k];
    m->adj[src[k]][i] = 1;
  }
  return 1;
}

typedef struct aged_slot {
  int64_t time;
  vid_t v;
  int i;
} aged_slot_t;

static int cmp_slot(const void *a, const void *b) {
  const aged_slot_t *x = a, *y = b;
  if (x->time != y->time) return x->time < y->time ? -1 : 1;
  return x->v < y->v ? -1 : x->v > y->v;
}

/* Remove i and whatever loses its last incoming edge; mark them in `gone`. */
static void mcascade(model_t *m, int i, int *gone, int *live) {
  int stack[RN * RN + 1], top = 0;
  stack[top++] = i;
  while (top) {
    int x = stack[--top];
    if (!m->present[x]) continue;
    for (int j = 0; j < RN; j++) m->adj[j][x] = 0;
    for (int j = 0; j < RN; j++)
      if (m->adj[x][j]) {
        m->adj[x][j] = 0;
        if (indeg(m, j) == 0) stack[top++] = j;
      }
    m->present[x] = 0;
    gone[x] = 1;
    --*live;
  }
}

/* The rule, ties in age broken by vertex id as the graph does. */
static void mexpire(model_t *m, const graph_t *g, size_t max, int64_t min_time, int *gone) {
  aged_slot_t a[RN];
  int live = 0;
  for (int i = 0; i < RN; i++) live += m->present[i];
  for (int pass = 0; pass < 2; pass++) {
    int n = 0;
    for (int i = 0; i < RN; i++)
      if (m->present[i] && (pass == 1 || indeg(m, i) == 0))
        a[n++] = (aged_slot_t){m->time[i], mfind(m, g, i), i};
    qsort(a, (size_t)n, sizeof *a, cmp_slot);
    for (int k = 0; k < n; k++) {
      int over = max && (size_t)live > max, old = min_time && a[k].time < min_time;
      if (!over && (pass == 1 || !old)) break;
      if (m->present[a[k].i]) mcascade(m, a[k].i, gone, &live);
    }
    if (!(max && (size_t)live > max)) break;
  }
}

typedef struct mgone {
  model_t *m;
  int gone[RN];
  uint64_t ml[RN], span[RN * RSPANS];
  size_t n, nspan;
} mgone_t;

static void mgone_vertex(void *ud, const ripple_cpid_t *cpid, uint64_t seq) {
  mgone_t *r = ud;
  int i = mslot(r->m, cpid);
  MCHECK(r->m, !r->gone[i]);
  r->gone[i] = 1;
  r->ml[i] = seq;
  r->n++;
}

static void mgone_span(void *ud, uint64_t seq) {
  mgone_t *r = ud;
  MCHECK(r->m, r->nspan < RN * RSPANS);
  r->span[r->nspan++] = seq;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void mcheck_expire(model_t *m, graph_t *g, size_t max, int64_t min_time) {
  model_t before = *m;
  int want[RN] = {0};
  mexpire(m, g, max, min_time, want);
  mgone_t got = {.m = &before};
  graph_gone_t cb = {mgone_vertex, mgone_span, &got};
  size_t removed = graph_expire(g, max, min_time, &cb);
  MCHECK(m, removed == got.n);
  uint64_t spans[RN * RSPANS];
  size_t nspans = 0;
  for (int i = 0; i < RN; i++) {
    MCHECK(m, want[i] == got.gone[i]);
    if (!want[i]) continue;
    MCHECK(m, got.ml[i] == before.mlseq[i]);
    for (int k = 0; k < before.nspans[i]; k++) spans[nspans++] = before.spans[i][k];
    ripple_cpid_t old = mcpid(m, i);
    if (rnd(&m->rs) & 1) m->gen[i]++; /* the next add uses a new CPID */
    MCHECK(m, graph_find(g, &old) == 0);
  }
  MCHECK(m, nspans == got.nspan);
  qsort(spans, nspans, sizeof *spans, cmp_u64);
  qsort(got.span, got.nspan, sizeof *spans, cmp_u64);
  MCHECK(m, !memcmp(spans, got.span, nspans * sizeof *spans));
}

/* Forward (dir 1) or backward distances from i, along every edge or (own)
 * trigger edges only; -1 where unreachable. */
static void mdist_own(const model_t *m, int i, int dir, int own, int *dist) {
  int q[RN], n = 0;
  for (int j = 0; j < RN; j++) dist[j] = -1;
  dist[i] = 0;
  q[n++] = i;
  for (int h = 0; h < n; h++)
    for (int j = 0; j < RN; j++)
      if (dist[j] < 0 && (dir ? m->adj[q[h]][j] && (!own || m->trig[q[h]][j])
                              : m->adj[j][q[h]] && (!own || m->trig[j][q[h]]))) {
        dist[j] = dist[q[h]] + 1;
        q[n++] = j;
      }
}

static void mdist(const model_t *m, int i, int dir, int *dist) { mdist_own(m, i, dir, 0, dist); }

static void mcheck_related(const model_t *m, const graph_t *g, int i, size_t limit,
                           graph_scope_t scope) {
  int dist[RN], reach = 0, seen[RN] = {0};
  mdist_own(m, i, 1, scope == GRAPH_OWN, dist);
  for (int j = 0; j < RN; j++) reach += dist[j] >= 0;
  ripple_cpid_t c = mcpid(m, i);
  vid_t *vs;
  size_t n;
  int tr;
  MCHECK(m, (scope == GRAPH_REACHABLE
                 ? graph_related(g, &c, limit, &vs, &n, &tr)
                 : graph_cascade(g, &c, scope, limit, &vs, &n, &tr)) == RIPPLE_OK);
  size_t want = limit && limit < (size_t)reach ? limit : (size_t)reach;
  MCHECK(m, n == want && tr == (n < (size_t)reach));
  MCHECK(m, vs[0] == mfind(m, g, i));
  for (size_t k = 0; k < n; k++) {
    int j = mslot(m, graph_cpid(g, vs[k]));
    MCHECK(m, dist[j] >= 0 && !seen[j]);
    MCHECK(m, k == 0 || dist[j] >= dist[mslot(m, graph_cpid(g, vs[k - 1]))]); /* breadth-first */
    seen[j] = 1;
  }
  free(vs);
}

static void mcheck_origins(const model_t *m, const graph_t *g, int i) {
  int dist[RN], want = 0, seen[RN] = {0};
  mdist(m, i, 0, dist);
  for (int j = 0; j < RN; j++) want += dist[j] >= 0 && indeg(m, j) == 0;
  ripple_cpid_t c = mcpid(m, i);
  graph_origin_t *o;
  size_t n;
  int tr;
  MCHECK(m, graph_origins(g, &c, 0, &o, &n, &tr) == RIPPLE_OK);
  MCHECK(m, n == (size_t)want && tr == 0);
  for (size_t k = 0; k < n; k++) {
    int j = mslot(m, graph_cpid(g, o[k].path[0]));
    MCHECK(m, dist[j] >= 0 && indeg(m, j) == 0 && !seen[j]);
    MCHECK(m, o[k].len == (size_t)dist[j] + 1);
    MCHECK(m, o[k].path[o[k].len - 1] == mfind(m, g, i));
    for (size_t s = 0; s + 1 < o[k].len; s++)
      MCHECK(
          m,
          m->adj[mslot(m, graph_cpid(g, o[k].path[s]))][mslot(m, graph_cpid(g, o[k].path[s + 1]))]);
    seen[j] = 1;
  }
  graph_origins_free(o, n);
}

static void mcheck_all(model_t *m, const graph_t *g) {
  size_t nv = 0, ne = 0, ns = 0;
  for (int i = 0; i < RN; i++) {
    vid_t v = mfind(m, g, i);
    MCHECK(m, (v != 0) == m->present[i]);
    if (!v) continue;
    nv++;
    ns += (size_t)m->nspans[i];
    for (int j = 0; j < RN; j++) ne += m->adj[i][j];
    ripple_cpid_t c = mcpid(m, i);
    MCHECK(m, graph_has_mergelog(g, &c) == m->hasml[i]);
    MCHECK(m, graph_mergelog_seq(g, v) == m->mlseq[i]);
    seqs_t sp = {0};
    graph_span_seqs(g, v, push_seq, &sp);
    MCHECK(m, sp.n == (size_t)m->nspans[i]);
    for (int k = 0; k < m->nspans[i]; k++) MCHECK(m, sp.v[k] == m->spans[i][m->nspans[i] - 1 - k]);
    mcheck_related(m, g, i, 0, GRAPH_REACHABLE);
    mcheck_related(m, g, i, 1 + rnd(&m->rs) % 4, GRAPH_REACHABLE);
    mcheck_related(m, g, i, 0, GRAPH_OWN);
    mcheck_related(m, g, i, 1 + rnd(&m->rs) % 4, GRAPH_OWN);
    mcheck_origins(m, g, i);
  }
  MCHECK(m, graph_vertices(g) == nv && graph_edges(g) == ne && graph_spans(g) == ns);
}

static void mstep(model_t *m, graph_t *g) {
  uint64_t r = rnd(&m->rs) % 10, seq = (uint64_t)m->step + 1;
  int64_t t = m->step / 3; /* coarse, so that ages tie and ids break the ties */
  int i = (int)(rnd(&m->rs) % RN);
  ripple_cpid_t c = mcpid(m, i);
  if (r < 5) {
    int src[5], n = (int)(rnd(&m->rs) % 5);
    ripple_cpid_t s[5];
    uint8_t tf[5];
    int listed = rnd(&m->rs) % 3 != 0; /* a trigger list, or none (every source) */
    for (int k = 0; k < n; k++) {
      src[k] = (int)(rnd(&m->rs) % RN); /* itself or repeated, sometimes */
      s[k] = mcpid(m, src[k]);
      tf[k] = (uint8_t)(rnd(&m->rs) % 2);
    }
    int want = madd_ml(m, i, src, n, listed ? tf : NULL, t, seq);
    MCHECK(m, graph_add_mergelog(g, &c, s, (size_t)n, listed ? tf : NULL, t, seq) == want);
  } else if (r < 7) {
    if (m->present[i] && m->nspans[i] == RSPANS) return;
    mtouch(m, i, t);
    m->spans[i][m->nspans[i]++] = seq;
    MCHECK(m, graph_add_span(g, &c, t, t, seq) == RIPPLE_OK);
  } else {
    size_t max = r == 9 ? 0 : rnd(&m->rs) % (RN / 2);
    int64_t min_time = r == 8 ? 0 : t - (int64_t)(rnd(&m->rs) % 20);
    mcheck_expire(m, g, max, min_time);
  }
}

static void random_against_model(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 300; seed++) {
    model_t *m = calloc(1, sizeof *m);
    graph_t *g = NULL;
    assert_int_equal(graph_new(&g), RIPPLE_OK);
    assert_non_null(m);
    assert_non_null(g);
    m->seed = seed;
    m->rs = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (m->step = 0; m->step < 300; m->step++) {
      mstep(m, g);
      mcheck_all(m, g);
    }
    graph_free(g);
    free(m);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(index_churn),
      cmocka_unit_test(random_against_model),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
