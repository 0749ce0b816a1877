/*
 * test_roots_index.c - the trace server's index of objects' root mergelogs
 * (server/roots.c): newest first by time then row, whatever order they came
 * in; the liveness filter; pruning after retention, which frees objects left
 * without roots; a table that grows over many objects. Randomised parts are
 * seeded and print the seed when they fail.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/roots.h"
#include "testutil.h"

static ripple_cpid_t cpid_of(uint64_t seq) {
  ripple_cpid_t c;
  memset(&c, 0, sizeof c);
  memcpy(c.b, &seq, sizeof seq);
  c.b[15] = 1;
  return c;
}

static int add(roots_t *r, const char *uid, int64_t time, uint64_t seq) {
  ripple_cpid_t c = cpid_of(seq);
  return roots_add(r, uid, strlen(uid), time, seq, &c);
}

/* Rows whose seq is not a multiple of *ud are gone. */
static int live_mod(void *ud, uint64_t seq, const ripple_cpid_t *cpid) {
  ripple_cpid_t want = cpid_of(seq);
  assert_memory_equal(cpid, &want, sizeof want); /* each entry keeps its CPID */
  return seq % *(uint64_t *)ud == 0;
}

static void expect(const roots_t *r, const char *uid, uint64_t mod, size_t max,
                   const uint64_t *want, size_t n) {
  uint64_t got[64];
  assert_true(max <= 64);
  long k = roots_find(r, uid, mod ? live_mod : NULL, &mod, got, max);
  assert_int_equal(k, n);
  for (size_t i = 0; i < n; i++) assert_int_equal(got[i], want[i]);
}

static void test_order_and_filter(void **state) {
  (void)state;
  roots_t *r = NULL;
  assert_int_equal(roots_new(&r), RIPPLE_OK);
  assert_non_null(r);
  expect(r, "a", 0, 10, NULL, 0); /* empty */
  size_t m0 = roots_memory(r);
  assert_int_equal(add(r, "a", 100, 1), RIPPLE_OK);
  assert_int_equal(add(r, "b", 150, 2), RIPPLE_OK);
  assert_int_equal(add(r, "a", 300, 3), RIPPLE_OK);
  expect(r, "a", 0, 10, (uint64_t[]){3, 1}, 2);
  expect(r, "b", 0, 10, (uint64_t[]){2}, 1);
  expect(r, "c", 0, 10, NULL, 0);
  expect(r, "", 0, 10, NULL, 0);
  /* Out of time order (made earlier, arrived later), and a tie broken by row. */
  assert_int_equal(add(r, "a", 200, 4), RIPPLE_OK);
  assert_int_equal(add(r, "a", 300, 6), RIPPLE_OK);
  expect(r, "a", 0, 10, (uint64_t[]){6, 3, 4, 1}, 4);
  expect(r, "a", 0, 2, (uint64_t[]){6, 3}, 2);
  expect(r, "a", 2, 10, (uint64_t[]){6, 4}, 2); /* only even rows live */
  expect(r, "a", 2, 1, (uint64_t[]){6}, 1);
  assert_int_equal(roots_count(r), 5);
  assert_true(roots_memory(r) > m0);

  /* Pruning keeps what lives, in order, and frees objects left empty. */
  uint64_t mod = 2;
  size_t m1 = roots_memory(r);
  assert_int_equal(roots_prune(r, live_mod, &mod), 2);
  assert_int_equal(roots_count(r), 3);
  expect(r, "a", 0, 10, (uint64_t[]){6, 4}, 2);
  expect(r, "b", 0, 10, (uint64_t[]){2}, 1);
  assert_true(roots_memory(r) <= m1);
  mod = 3;
  size_t m2 = roots_memory(r);
  assert_int_equal(roots_prune(r, live_mod, &mod), 2);
  assert_true(roots_memory(r) < m2); /* "b", left without roots, is freed */
  expect(r, "a", 0, 10, (uint64_t[]){6}, 1);
  expect(r, "b", 0, 10, NULL, 0);
  assert_int_equal(roots_count(r), 1);
  assert_int_equal(add(r, "b", 10, 9), RIPPLE_OK); /* a freed object comes back */
  expect(r, "b", 0, 10, (uint64_t[]){9}, 1);
  roots_free(r);
  roots_free(NULL);
}

static uint64_t rng(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545f4914f6cdd1dULL;
}

/* Many objects, roots in random time order: each object's answer is its
 * roots sorted by (time, row), newest first, before and after pruning. */
static void test_many_objects(void **state) {
  (void)state;
  enum { OBJS = 3000, ROOTS = 20000 };
  uint64_t seed = 0x5eed1234abcdULL, s = seed;
  roots_t *r = NULL;
  assert_int_equal(roots_new(&r), RIPPLE_OK);
  assert_non_null(r);
  static int64_t at[ROOTS + 1];
  static uint32_t owner[ROOTS + 1];
  char uid[32];
  for (uint64_t seq = 1; seq <= ROOTS; seq++) {
    owner[seq] = (uint32_t)(rng(&s) % OBJS);
    at[seq] = (int64_t)(rng(&s) % 1000);
    snprintf(uid, sizeof uid, "obj-%u", owner[seq]);
    if (add(r, uid, at[seq], seq) != RIPPLE_OK)
      fail_msg("add failed (seed %llx)", (unsigned long long)seed);
  }
  assert_int_equal(roots_count(r), ROOTS);
  for (int pass = 0; pass < 2; pass++) {
    uint64_t mod = pass ? 3 : 1;
    for (uint32_t o = 0; o < OBJS; o += 7) {
      snprintf(uid, sizeof uid, "obj-%u", o);
      uint64_t got[64];
      long k = roots_find(r, uid, NULL, NULL, got, 64);
      assert_true(k >= 0);
      size_t want = 0;
      uint64_t newest = 0;
      for (uint64_t seq = 1; seq <= ROOTS; seq++) {
        if (owner[seq] != o || seq % mod != 0) continue;
        want++;
        if (!newest || at[seq] >= at[newest]) newest = seq;
      }
      if (k && got[0] != newest)
        fail_msg("obj-%u: newest %llu, want %llu (seed %llx)", o, (unsigned long long)got[0],
                 (unsigned long long)newest, (unsigned long long)seed);
      if ((size_t)k != (want < 64 ? want : 64))
        fail_msg("obj-%u: %ld roots, want %zu (seed %llx)", o, k, want, (unsigned long long)seed);
      for (long i = 0; i < k; i++) {
        assert_int_equal(owner[got[i]], o);
        if (i &&
            (at[got[i]] > at[got[i - 1]] || (at[got[i]] == at[got[i - 1]] && got[i] > got[i - 1])))
          fail_msg("obj-%u: not newest first at %ld (seed %llx)", o, i, (unsigned long long)seed);
      }
    }
    mod = 3;
    if (!pass) assert_int_equal(roots_prune(r, live_mod, &mod), ROOTS - ROOTS / 3);
  }
  roots_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_order_and_filter),
      cmocka_unit_test(test_many_objects),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
