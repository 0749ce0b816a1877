/*
 * test_objects_memory.c - the object index's accounting (objects_memory,
 * graph/objects.h): it grows with each new object and with each CPID an
 * object keeps, stays put once an object keeps OBJECTS_KEEP of them (the
 * bound), and gives back what objects_prune drops. Deterministic: the
 * accounting counts what the index asked for, not what malloc gave.
 */
#include <stdio.h>
#include <string.h>

#include "graph/objects.h"
#include "testutil.h"

static ripple_cpid_t cpid_of(uint64_t i) {
  ripple_cpid_t c;
  memset(&c, 0, sizeof c);
  memcpy(c.b, &i, sizeof i);
  c.b[15] = 1;
  return c;
}

static void add(objects_t *o, unsigned obj, uint64_t cpid, int64_t time) {
  char name[32];
  int n = snprintf(name, sizeof name, "web-%u", obj);
  obj_name_t k = {"Pod", "default", name, 3, 7, (size_t)n};
  ripple_cpid_t c = cpid_of(cpid);
  assert_int_equal(objects_add(o, &k, &c, time), RIPPLE_OK);
}

/* Live: CPIDs below *ud. */
static int live_below(void *ud, const ripple_cpid_t *cpid) {
  uint64_t i;
  memcpy(&i, cpid->b, sizeof i);
  return i < *(const uint64_t *)ud;
}

static void test_grows_and_bounds(void **state) {
  (void)state;
  objects_t *o;
  assert_int_equal(objects_new(&o), RIPPLE_OK);
  size_t m = objects_memory(o);
  assert_true(m > 0); /* the index itself */
  for (unsigned i = 0; i < 1000; i++) {
    add(o, i, i, i);
    size_t now = objects_memory(o);
    assert_true(now > m); /* every new object costs its key and entry at least */
    m = now;
  }
  /* One object's CPIDs: more memory as its list grows, none past the bound. */
  size_t before = objects_memory(o);
  for (uint64_t c = 1; c < OBJECTS_KEEP; c++) add(o, 0, 100000 + c, 2000 + (int64_t)c);
  size_t full = objects_memory(o);
  assert_true(full > before);
  for (uint64_t c = 0; c < 100; c++) add(o, 0, 200000 + c, 3000 + (int64_t)c);
  assert_int_equal(objects_memory(o), full);
  /* Writing again under a CPID it keeps costs nothing. */
  add(o, 5, 5, 4000);
  assert_int_equal(objects_memory(o), full);
  /* Retention: objects left without live CPIDs are freed. */
  uint64_t below = 500;
  assert_true(objects_prune(o, live_below, &below) > 0);
  assert_int_equal(objects_count(o), 499); /* 1..499: object 0 kept only later CPIDs */
  assert_true(objects_memory(o) < full);
  objects_free(o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grows_and_bounds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
