/*
 * test_idle.c - ripplex/idle.h: the nice value a background thread takes,
 * and that only the calling thread takes it (Linux nice is per thread: were
 * it per process, ingest would be lowered with the exporter).
 */
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ripplex/idle.h"
#include "testutil.h"

static int my_nice(void) { return getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid)); }

static void test_nice_for(void **state) {
  (void)state;
  assert_int_equal(idle_nice_for(0), IDLE_NICE_DELTA);
  assert_int_equal(idle_nice_for(-5), IDLE_NICE_DELTA - 5);
  assert_int_equal(idle_nice_for(19 - IDLE_NICE_DELTA), 19);
  assert_int_equal(idle_nice_for(15), 19); /* capped: Linux's lowest priority */
  assert_int_equal(idle_nice_for(19), 19);
}

typedef struct {
  int before, after, ok;
} seen_t;

static void *background(void *arg) {
  seen_t *s = arg;
  s->before = my_nice();
  s->ok = idle_enter();
  s->after = my_nice();
  return NULL;
}

static void test_enter_this_thread_only(void **state) {
  (void)state;
  int mine = my_nice();
  seen_t s = {0};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, background, &s), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_equal(s.before, mine); /* a new thread starts with its creator's nice */
  assert_true(s.ok);
  assert_int_equal(s.after, idle_nice_for(s.before));
  assert_int_equal(my_nice(), mine); /* the other threads keep theirs */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nice_for),
      cmocka_unit_test(test_enter_this_thread_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
