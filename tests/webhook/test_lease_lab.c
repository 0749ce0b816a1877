/*
 * test_lease_lab.c - the decider election (webhook/lease.h) against the
 * lab's API server: replicas with clients of their own on one Lease in the
 * test's namespace. Exactly one becomes the decider; stopping it releases
 * the Lease and another takes it without waiting for it to expire; a frozen
 * holder stops calling itself the decider by its own clock and another takes
 * over after the duration; a Lease with a holder nobody can read expires
 * like any other. All along, a thread samples every replica's state and two
 * deciders at once fail the test. Bounds are liveness bounds, generous.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lease.h"
#include "rw_lab.h"
#include "wh_lab.h"

#define DUR_MS 6000
#define RETRY_MS 250
#define DEADLINE_MS 4000

enum { MAXR = 4 };

typedef struct replica {
  ripple_kube_client_t *kc;
  wh_lease_t *l;
  char id[64];
} replica_t;

static whlab_t lab;
static replica_t reps[MAXR];
static pthread_mutex_t reps_mu = PTHREAD_MUTEX_INITIALIZER; /* reps[].l vs the sampler */
static pthread_t sampler;
static int sampler_on;
static atomic_int sampling, samples, overlaps;

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Every 2 ms: how many replicas say they decide. */
static void *sample(void *ud) {
  (void)ud;
  while (atomic_load(&sampling)) {
    pthread_mutex_lock(&reps_mu);
    int n = 0;
    for (int i = 0; i < MAXR; i++) n += wh_lease_state(reps[i].l, NULL, 0, NULL, NULL);
    pthread_mutex_unlock(&reps_mu);
    if (n > 1) atomic_fetch_add(&overlaps, 1);
    atomic_fetch_add(&samples, 1);
    usleep(2000);
  }
  return NULL;
}

static void start(int i, const char *name) {
  replica_t *r = &reps[i];
  r->kc = lab_client();
  snprintf(r->id, sizeof r->id, "https://127.0.0.%d:8443", i + 1);
  wh_lease_opts_t o = {.kc = r->kc,
                       .ns = lab.ns,
                       .name = name,
                       .identity = r->id,
                       .duration_ms = DUR_MS,
                       .retry_ms = RETRY_MS,
                       .renew_deadline_ms = DEADLINE_MS};
  wh_lease_t *l;
  assert_int_equal(wh_lease_start(&o, &l), RIPPLE_OK);
  pthread_mutex_lock(&reps_mu);
  r->l = l;
  pthread_mutex_unlock(&reps_mu);
}

/* Stop replica i (releasing the Lease if it holds it); the sampler stops
 * looking at it first. */
static void stop(int i) {
  pthread_mutex_lock(&reps_mu);
  wh_lease_t *l = reps[i].l;
  reps[i].l = NULL;
  pthread_mutex_unlock(&reps_mu);
  wh_lease_stop(l);
  ripple_kube_client_free(reps[i].kc);
  reps[i].kc = NULL;
}

static int is_decider(int i) { return wh_lease_state(reps[i].l, NULL, 0, NULL, NULL); }

/* The one replica among mask that decides, within timeout_ms; -1 if none. */
static int wait_decider(unsigned mask, int timeout_ms) {
  for (int64_t end = now_ms() + timeout_ms; now_ms() < end; usleep(20000))
    for (int i = 0; i < MAXR; i++)
      if ((mask & (1u << i)) && is_decider(i)) return i;
  return -1;
}

/* Does replica i see holder id (within timeout_ms)? */
static int sees(int i, const char *id, int timeout_ms) {
  char h[WH_LEASE_ID_MAX];
  for (int64_t end = now_ms() + timeout_ms; now_ms() < end; usleep(20000)) {
    wh_lease_state(reps[i].l, h, sizeof h, NULL, NULL);
    if (!strcmp(h, id)) return 1;
  }
  return 0;
}

static json_t *get_lease(const char *name) {
  ripple_kube_status_t st = {0};
  json_t *o = NULL;
  LAB_OK(st, ripple_kube_get(lab.kc, lab_resolve(lab.kc, "leases.coordination.k8s.io"), lab.ns,
                             name, &o, &st));
  return o;
}

static void check_record(const char *name, const char *holder, long long min_transitions) {
  json_t *o = get_lease(name);
  const char *h = lab_str(o, "spec.holderIdentity");
  if (strcmp(h ? h : "", holder) != 0) fail_msg("holder %s, want %s", h ? h : "(none)", holder);
  int64_t t;
  assert_int_equal(wh_lease_time_parse(lab_str(o, "spec.renewTime"), &t), RIPPLE_OK);
  assert_int_equal(wh_lease_time_parse(lab_str(o, "spec.acquireTime"), &t), RIPPLE_OK);
  assert_int_equal(strlen(lab_str(o, "spec.renewTime")), WH_LEASE_MICROTIME);
  if (*holder) assert_int_equal(lab_int(o, "spec.leaseDurationSeconds"), DUR_MS / 1000);
  assert_true(lab_int(o, "spec.leaseTransitions") >= min_transitions);
  json_decref(o);
}

/* Two replicas: one decides, the other knows which; stopping it hands over
 * at once, without the Lease expiring. */
static void two_replicas_and_release(int *first, int *second) {
  start(0, "decider");
  start(1, "decider");
  int d = wait_decider(3u, 3 * DUR_MS);
  assert_true(d >= 0);
  int o = 1 - d;
  assert_true(sees(o, reps[d].id, 3 * DUR_MS));
  assert_true(sees(d, reps[d].id, 10));
  uint64_t gen;
  int64_t since;
  assert_int_equal(wh_lease_state(reps[d].l, NULL, 0, &since, &gen), 1);
  assert_true(since > 0 && gen >= 1);
  check_record("decider", reps[d].id, 0);
  /* It stays the decider while it renews. */
  usleep(2 * DUR_MS * 1000);
  assert_int_equal(is_decider(d), 1);
  assert_int_equal(is_decider(o), 0);
  uint64_t before;
  wh_lease_state(reps[o].l, NULL, 0, NULL, &before);
  int64_t t0 = now_ms();
  stop(d);
  /* Released: free, or already taken by the other. */
  json_t *l = get_lease("decider");
  const char *h = lab_str(l, "spec.holderIdentity");
  assert_true(!h || !*h || !strcmp(h, reps[o].id));
  json_decref(l);
  /* Expiry would take DUR_MS from the last renewal: half of it is plenty
   * for a few retry periods. */
  assert_int_equal(wait_decider(1u << o, DUR_MS / 2), o);
  fprintf(stderr, "# taken over %lld ms after the release\n", (long long)(now_ms() - t0));
  uint64_t after;
  wh_lease_state(reps[o].l, NULL, 0, NULL, &after);
  assert_true(after > before);
  check_record("decider", reps[o].id, 1);
  *first = d, *second = o;
}

/* A frozen holder (its thread paused: no I/O) stops being the decider by
 * its own clock; a new replica takes the Lease once it expires; the frozen
 * one, thawed, sees it lost. */
static void frozen_holder(int frozen, int other) {
  assert_int_equal(is_decider(frozen), 1);
  start(other, "decider");
  assert_true(sees(other, reps[frozen].id, 3 * DUR_MS));
  assert_int_equal(is_decider(other), 0);
  int64_t t0 = now_ms();
  wh_lease_pause(reps[frozen].l, 1);
  assert_int_equal(wait_decider(1u << other, 3 * DUR_MS), other);
  int64_t took = now_ms() - t0;
  fprintf(stderr, "# taken over %lld ms after the holder froze\n", (long long)took);
  /* Not before the Lease could expire: the last renewal was at most one
   * retry period before the freeze (or in flight during it). */
  assert_true(took >= DUR_MS - 2 * RETRY_MS);
  assert_int_equal(is_decider(frozen), 0);
  wh_lease_pause(reps[frozen].l, 0);
  assert_true(sees(frozen, reps[other].id, 3 * DUR_MS));
  usleep(4 * RETRY_MS * 1000);
  assert_int_equal(is_decider(frozen), 0);
  assert_int_equal(is_decider(other), 1);
  check_record("decider", reps[other].id, 2);
}

static void election(void **state) {
  (void)state;
  atomic_store(&sampling, 1);
  assert_int_equal(pthread_create(&sampler, NULL, sample, NULL), 0);
  sampler_on = 1;
  int first, second;
  two_replicas_and_release(&first, &second);
  /* The replica left holds it and freezes; a third one comes. */
  frozen_holder(second, 2);
  /* Stopping a replica that does not hold the Lease changes nothing. */
  stop(second);
  assert_int_equal(is_decider(2), 1);
  check_record("decider", reps[2].id, 2);
  stop(2);
  check_record("decider", "", 2);
  atomic_store(&sampling, 0);
  pthread_join(sampler, NULL);
  sampler_on = 0;
  fprintf(stderr, "# %d samples\n", atomic_load(&samples));
  assert_true(atomic_load(&samples) > 1000);
  assert_int_equal(atomic_load(&overlaps), 0);
}

/* A Lease whose holder no replica can read (too long to be an identity)
 * is someone's until it expires, then taken. */
static void unreadable_holder(void **state) {
  (void)state;
  char holder[600];
  memset(holder, 'h', sizeof holder - 1);
  holder[sizeof holder - 1] = '\0';
  json_t *o = lab_json(
      "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
      "\"metadata\":{\"name\":\"odd\"},\"spec\":{\"holderIdentity\":\"%s\","
      "\"leaseDurationSeconds\":%d}}",
      holder, DUR_MS / 1000);
  ripple_kube_status_t st = {0};
  LAB_OK(st, ripple_kube_create(lab.kc, lab_resolve(lab.kc, "leases.coordination.k8s.io"), lab.ns,
                                o, NULL, NULL, &st));
  json_decref(o);
  int64_t t0 = now_ms();
  start(3, "odd");
  char h[WH_LEASE_ID_MAX] = "x";
  usleep(3 * RETRY_MS * 1000);
  assert_int_equal(wh_lease_state(reps[3].l, h, sizeof h, NULL, NULL), 0);
  assert_string_equal(h, "");
  assert_int_equal(wait_decider(1u << 3, 3 * DUR_MS), 3);
  assert_true(now_ms() - t0 >= DUR_MS - 100);
  check_record("odd", reps[3].id, 1);
  stop(3);
  check_record("odd", "", 1);
  whlab_ns_delete(&lab); /* the last test: a passing run leaves nothing */
}

static int teardown(void **state) {
  (void)state;
  atomic_store(&sampling, 0);
  if (sampler_on) pthread_join(sampler, NULL);
  sampler_on = 0;
  for (int i = 0; i < MAXR; i++)
    if (reps[i].l || reps[i].kc) stop(i);
  return 0;
}

static int group_setup(void **state) {
  (void)state;
  whlab_begin_cluster(&lab, "lease");
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  whlab_end(&lab);
  return 0;
}

int main(void) {
  ripple_log_setup("test_lease_lab", RIPPLE_LOG_INFO, NULL, NULL);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(election, teardown),
      cmocka_unit_test_teardown(unreadable_holder, teardown),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
