/*
 * test_stall_memory.c - the stall detector's accounting (stall_memory,
 * analysis/stall.h): it grows as writes enter the window and hop kinds are
 * learned, and stops growing at the window's bound (max_window) however
 * many more spans come. Deterministic: the accounting counts what the
 * detector asked for, not what malloc gave.
 */
#include <stdio.h>
#include <string.h>

#include "analysis/stall.h"
#include "testutil.h"

#define SEC 1000000000LL
#define T0 (1700000000LL * SEC)

static int never_related(void *ud, const ripple_cpid_t *anc, const ripple_cpid_t *desc) {
  (void)ud;
  return !memcmp(anc, desc, sizeof *anc);
}

/* Span i: one of 4 hop kinds, writing one of 1000 Pods (names of one length,
 * so that the window's strings weigh the same whichever it holds), its own CPID. */
static void feed(stall_t *s, uint64_t i) {
  static const char *svc[] = {"kube-controller-manager", "kube-scheduler", "kubelet", "kubectl"};
  char obj[16];
  snprintf(obj, sizeof obj, "web-%04u", (unsigned)(i % 1000));
  stall_span_t sp = {.span_id = i + 1, .start = T0 + (int64_t)i * 1000000};
  memcpy(sp.cpid.b, &i, sizeof i);
  sp.cpid.b[15] = 1;
  sp.end = sp.start + 1000;
  sp.service = svc[i % 4], sp.name = "sync", sp.kind = "Pod", sp.ns = "default";
  sp.obj = obj, sp.owner = "", sp.operation = "UPDATE";
  stall_add(s, &sp);
}

static void test_grows_then_bounded(void **state) {
  (void)state;
  stall_t *s;
  stall_opts_t o = {.max_window = 64};
  assert_int_equal(stall_new(&o, never_related, NULL, &s), RIPPLE_OK);
  size_t empty = stall_memory(s);
  assert_true(empty > 0);
  feed(s, 0);
  size_t one = stall_memory(s);
  assert_true(one > empty); /* a slab chunk, its names, its index lists */
  stall_stats_t st;
  uint64_t i = 1;
  for (; i < 64; i++) feed(s, i);
  stall_stats(s, &st);
  assert_int_equal(st.window, 64);
  assert_int_equal(st.kinds, 4);
  size_t bound = stall_memory(s);
  assert_true(bound > one);
  /* 100 windows' worth more: the oldest leave as new ones come. */
  for (; i < 64 * 100; i++) feed(s, i);
  stall_stats(s, &st);
  assert_true(st.evicted > 0);
  assert_true(st.window <= 64);
  assert_true(stall_memory(s) <= bound);
  stall_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grows_then_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
