/*
 * test_property.c - the merge rules hold over many random histories.
 *
 * A model cluster: objects with fixed "controller" relations forming a DAG
 * (each object is written by a controller that reads a few objects before it,
 * as Deployment -> ReplicaSet -> Pods -> Endpoints), operators changing random
 * objects, controllers reacting in random order. For every N we replay the same
 * history and check:
 *   1. no lineage is lost: after every write, every CPID that went into the
 *      decision (the target's old one and each source's) reaches the CPID
 *      written, in the merge graph built from the mergelogs emitted;
 *   2. decisions are idempotent whenever the result lists every CPID that went
 *      in (the documented guarantee): the same decision again changes nothing;
 *   3. the number of mergelogs never grows as N grows.
 * Histories are seeded; a failure prints the seed to replay it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define OBJS 8
#define STEPS 60
#define SEEDS 300
#define MAXSRC 3

typedef struct model {
  int nsrc[OBJS];
  int src[OBJS][MAXSRC];
} model_t;

typedef struct op {
  int root; /* operator change (else: controller write) */
  int obj;
} op_t;

static uint64_t rnd(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void make_history(uint64_t seed, model_t *m, op_t *ops) {
  uint64_t s = seed * 2654435761u + 7;
  memset(m, 0, sizeof *m);
  for (int o = 1; o < OBJS; o++) {
    m->nsrc[o] = 1 + (int)(rnd(&s) % MAXSRC);
    if (m->nsrc[o] > o) m->nsrc[o] = o;
    for (int k = 0; k < m->nsrc[o]; k++) m->src[o][k] = (int)(rnd(&s) % (uint64_t)o);
  }
  for (int i = 0; i < STEPS; i++) {
    ops[i].root = rnd(&s) % 4 == 0;
    ops[i].obj = (int)(rnd(&s) % OBJS);
    if (m->nsrc[ops[i].obj] == 0) ops[i].root = 1; /* object 0 has no controller */
  }
}

/* The merge graph from the captured mergelogs; reachability by DFS. */
static int reaches(const capture_t *c, const ripple_cpid_t *from, const ripple_cpid_t *to,
                   int depth) {
  if (ripple_cpid_equal(from, to)) return 1;
  if (depth > 64) return 0;
  for (size_t i = 0; i < c->nml; i++)
    if (mergelog_has_source(&c->ml[i], from) && reaches(c, &c->ml[i].cpid, to, depth + 1)) return 1;
  return 0;
}

static size_t idempotence_checks;

static int listed(const ripple_ctx_t *c, const ripple_ctx_t *in) {
  if (!ripple_ctx_is_set(in) || ripple_cpid_equal(&in->cpid, &c->cpid)) return 1;
  for (uint32_t i = 0; i < c->nanc; i++)
    if (ripple_cpid_equal(&c->anc[i], &in->cpid)) return 1;
  return 0;
}

static int lists_all_inputs(const ripple_ctx_t *out, const ripple_ctx_t *target,
                            const ripple_ctx_t *in, int k) {
  if (!listed(out, target)) return 0;
  for (int j = 0; j < k; j++)
    if (!listed(out, &in[j])) return 0;
  return 1;
}

/* Replays a history with ancestor limit n; returns the mergelogs made by
 * merging (roots excluded). */
static size_t replay(uint64_t seed, uint32_t n) {
  model_t m;
  op_t ops[STEPS];
  make_history(seed, &m, ops);
  capture_t *cap = capture_new(seed + 1);
  ripple_tracer_t *op = capture_tracer(cap, "operator", n);
  ripple_tracer_t *ctrl = capture_tracer(cap, "controllers", n);
  ripple_ctx_t obj[OBJS];
  memset(obj, 0, sizeof obj);
  for (int i = 0; i < STEPS; i++) {
    int o = ops[i].obj;
    ripple_ctx_t in[MAXSRC + 1], out, again, root;
    const ripple_ctx_t *src[MAXSRC + 1];
    int k = 0;
    if (ops[i].root) {
      assert_int_equal(ripple_root(op, NULL, &root), RIPPLE_OK);
      in[k] = root;
      src[k] = &in[k];
      k++;
    } else {
      for (int j = 0; j < m.nsrc[o]; j++) {
        in[k] = obj[m.src[o][j]];
        src[k] = &in[k];
        k++;
      }
    }
    ripple_merge_kind_t how;
    assert_int_equal(ripple_merge(ctrl, &obj[o], src, (size_t)k, NULL, &out, &how), RIPPLE_OK);
    /* 1. lineage */
    for (int j = 0; j < k; j++) {
      if (ripple_ctx_is_set(&in[j]) && !reaches(cap, &in[j].cpid, &out.cpid, 0))
        fail_msg("seed %llu N=%u step %d: source lost", (unsigned long long)seed, n, i);
    }
    if (ripple_ctx_is_set(&obj[o]) && !reaches(cap, &obj[o].cpid, &out.cpid, 0))
      fail_msg("seed %llu N=%u step %d: target's lineage lost", (unsigned long long)seed, n, i);
    assert_true(out.nanc <= n);
    /* 2. idempotence, where the result could record all its inputs */
    if (how != RIPPLE_MERGE_NONE && lists_all_inputs(&out, &obj[o], in, k)) {
      idempotence_checks++;
      size_t before = cap->nml;
      assert_int_equal(ripple_merge(ctrl, &out, src, (size_t)k, NULL, &again, &how), RIPPLE_OK);
      if (how != RIPPLE_MERGE_UNCHANGED || !ripple_ctx_equal(&out, &again) || cap->nml != before)
        fail_msg("seed %llu N=%u step %d: not idempotent", (unsigned long long)seed, n, i);
    }
    obj[o] = out;
  }
  ripple_tracer_stats_t st;
  ripple_tracer_stats(ctrl, &st);
  ripple_tracer_free(op);
  ripple_tracer_free(ctrl);
  free(cap);
  return st.mergelogs;
}

static void lineage_and_monotonic_in_n(void **state) {
  (void)state;
  static const uint32_t ns[] = {0, 1, 2, 3, 5, 10, 15, 20, 30};
  size_t total[sizeof ns / sizeof ns[0]] = {0};
  for (uint64_t seed = 1; seed <= SEEDS; seed++) {
    size_t prev = SIZE_MAX;
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
      size_t got = replay(seed, ns[i]);
      if (got > prev)
        fail_msg("seed %llu: N=%u made %zu mergelogs, more than %zu at N=%u",
                 (unsigned long long)seed, ns[i], got, prev, ns[i - 1]);
      prev = got;
      total[i] += got;
    }
  }
  /* The ancestors must actually help, or the test above proves nothing. */
  assert_true(total[5] < total[0]);
  assert_true(idempotence_checks > SEEDS * STEPS);
  print_message("mergelogs over %d histories:", SEEDS);
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) print_message(" N=%u:%zu", ns[i], total[i]);
  print_message("\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lineage_and_monotonic_in_n),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
