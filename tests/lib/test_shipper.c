/*
 * test_shipper.c - the shipper's promises: everything acknowledged is counted
 * as sent, failures are retried, refusals are not, and a dead or hanging trace
 * server never blocks the caller (if it did, this test would hang and CTest's
 * timeout would fail it). After shutdown every record is accounted for:
 * enqueued = sent + rejected + abandoned.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "recv_server.h"
#include "testutil.h"

/* The usual arrangement: a receiver (or, with dead, a port nobody listens
 * on), a shipper sending to it, and a tracer whose records go to the shipper. */
typedef struct rig {
  recv_server_t *r;
  ripple_shipper_t *s;
  ripple_tracer_t *t;
} rig_t;

/* A port nobody listens on: bind, learn the port, close. */
static int dead_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
  assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
  close(fd);
  return ntohs(sa.sin_port);
}

static void rig_up(rig_t *g, ripple_shipper_opts_t o, int dead, int status, int fail_first,
                   int hang) {
  memset(g, 0, sizeof *g);
  char url[64];
  if (!dead) {
    g->r = recv_start();
    assert_non_null(g->r);
    recv_configure(g->r, status, fail_first, hang);
  }
  snprintf(url, sizeof url, "http://127.0.0.1:%d", dead ? dead_port() : recv_port(g->r));
  o.url = url;
  assert_int_equal(ripple_shipper_new(&o, &g->s), RIPPLE_OK);
  ripple_tracer_opts_t to = {.component = "test", .sink = ripple_shipper_sink(g->s)};
  assert_int_equal(ripple_tracer_new(&to, &g->t), RIPPLE_OK);
}

static void rig_down(rig_t *g, uint32_t flush_ms) {
  ripple_tracer_free(g->t);
  ripple_shipper_free(g->s, flush_ms);
  if (g->r) recv_stop(g->r);
}

/* n roots (one mergelog each) and n spans with attributes. */
static void produce(ripple_tracer_t *t, int n) {
  for (int i = 0; i < n; i++) {
    ripple_ctx_t c;
    ripple_objref_t obj = {"v1", "Pod", "default", "web", NULL};
    assert_int_equal(ripple_root(t, &obj, &c), RIPPLE_OK);
    ripple_span_t *s;
    assert_int_equal(ripple_span_start(t, &c, "reconcile", &s), RIPPLE_OK);
    ripple_span_set_attr(s, "object", "pods/web");
    ripple_span_end(s);
  }
}

static void check_accounting(const ripple_shipper_stats_t *st, uint64_t attempted) {
  assert_int_equal(st->enqueued + st->dropped, attempted);
  assert_int_equal(st->enqueued, st->sent + st->rejected + st->abandoned);
}

static void delivers_everything(void **state) {
  (void)state;
  rig_t g;
  ripple_shipper_opts_t o = {.bearer_token = "s3cret", .batch_max = 100, .flush_interval_ms = 20};
  rig_up(&g, o, 0, 200, 0, 0);
  produce(g.t, 1000);
  assert_int_equal(ripple_shipper_flush(g.s, 30000), RIPPLE_OK);
  assert_int_equal(recv_records(g.r, "/v1/mergelogs"), 1000);
  assert_int_equal(recv_records(g.r, "/v1/spans"), 1000);
  assert_int_equal(recv_invalid(g.r), 0);
  assert_true(recv_requests(g.r) >= 20); /* batched by 100 */
  char auth[64];
  recv_last_auth(g.r, auth, sizeof auth);
  assert_string_equal(auth, "Bearer s3cret");
  ripple_shipper_stats_t st;
  ripple_shipper_stats(g.s, &st);
  assert_int_equal(st.sent, 2000);
  assert_int_equal(st.queued, 0);
  rig_down(&g, 1000);
}

static void retries_until_accepted(void **state) {
  (void)state;
  rig_t g;
  rig_up(&g, (ripple_shipper_opts_t){.backoff_min_ms = 5, .backoff_max_ms = 20}, 0, 200, 3, 0);
  produce(g.t, 50);
  assert_int_equal(ripple_shipper_flush(g.s, 30000), RIPPLE_OK);
  assert_int_equal(recv_records(g.r, "/v1/mergelogs"), 50);
  assert_int_equal(recv_records(g.r, "/v1/spans"), 50);
  ripple_shipper_stats_t st;
  ripple_shipper_stats(g.s, &st);
  assert_int_equal(st.failures, 3);
  assert_int_equal(st.sent, 100);
  rig_down(&g, 1000);
}

static void refused_batches_are_not_retried(void **state) {
  (void)state;
  rig_t g;
  rig_up(&g, (ripple_shipper_opts_t){.backoff_min_ms = 5}, 0, 400, 0, 0);
  ripple_log_setup("test", RIPPLE_LOG_ERROR, NULL, NULL);
  produce(g.t, 10);
  assert_int_equal(ripple_shipper_flush(g.s, 30000), RIPPLE_OK);
  ripple_shipper_stats_t st;
  ripple_shipper_stats(g.s, &st);
  assert_int_equal(st.rejected, 20);
  assert_int_equal(st.failures, 0);
  assert_int_equal(recv_requests(g.r), st.requests);
  rig_down(&g, 1000);
}

/* A mergelog's trigger goes with it through the queue (copied: the
 * caller's array may go at once); a trigger longer than the sources is
 * refused. */
static void trigger_shipped(void **state) {
  (void)state;
  rig_t g;
  rig_up(&g, (ripple_shipper_opts_t){0}, 0, 200, 0, 0);
  ripple_cpid_t src[2] = {test_cpid(1), test_cpid(2)};
  ripple_cpid_t *trig = malloc(sizeof *trig);
  assert_non_null(trig);
  *trig = src[1];
  ripple_mergelog_t ml = {
      .cpid = test_cpid(3), .sources = src, .nsources = 2, .trigger = trig, .ntrigger = 1};
  assert_int_equal(ripple_shipper_enqueue_mergelog(g.s, &ml), RIPPLE_OK);
  free(trig);
  ml.trigger = NULL;
  ml.ntrigger = 0;
  ml.cpid = test_cpid(4);
  assert_int_equal(ripple_shipper_enqueue_mergelog(g.s, &ml), RIPPLE_OK);
  ml.trigger = src;
  ml.ntrigger = 3;
  assert_int_equal(ripple_shipper_enqueue_mergelog(g.s, &ml), RIPPLE_EINVAL);
  assert_int_equal(ripple_shipper_flush(g.s, 30000), RIPPLE_OK);
  assert_int_equal(recv_records(g.r, "/v1/mergelogs"), 2);
  assert_int_equal(recv_triggered(g.r), 1);
  assert_int_equal(recv_invalid(g.r), 0);
  rig_down(&g, 1000);
}

static void dead_server_drops_and_counts(void **state) {
  (void)state;
  rig_t g;
  ripple_shipper_opts_t o = {
      .queue_capacity = 100, .batch_max = 10, .backoff_min_ms = 50, .backoff_max_ms = 200};
  rig_up(&g, o, 1, 0, 0, 0);
  produce(g.t, 5000);
  ripple_shipper_stats_t st;
  ripple_shipper_stats(g.s, &st);
  /* Kept at most: the ring plus the one batch being retried. */
  assert_true(st.enqueued <= 100 + 10);
  assert_int_equal(st.enqueued + st.dropped, 10000);
  assert_int_equal(st.sent, 0);
  ripple_mergelog_t ml = {.cpid = test_cpid(1)};
  assert_int_equal(ripple_shipper_enqueue_mergelog(g.s, &ml), RIPPLE_EFULL);
  assert_int_equal(ripple_shipper_flush(g.s, 10), RIPPLE_ETIMEDOUT);
  rig_down(&g, 10);
}

/* A server that accepts and never answers: shutting down must not wait for
 * the (long) request timeout. */
static void hanging_server_does_not_hold_shutdown(void **state) {
  (void)state;
  rig_t g;
  rig_up(&g, (ripple_shipper_opts_t){.timeout_ms = 600000, .flush_interval_ms = 5}, 0, 200, 0, 1);
  produce(g.t, 100);
  /* Wait until the first batch has left the queue and hangs in flight. */
  ripple_shipper_stats_t st;
  do {
    usleep(1000);
    ripple_shipper_stats(g.s, &st);
  } while (st.queued == 100 * 2 || st.requests == 0);
  assert_int_equal(st.enqueued, 200);
  assert_int_equal(st.sent, 0);
  rig_down(&g, 50); /* returns although the request never will */
  /* (rig_down frees the shipper before it stops the receiver.) */
}

static void accounting_after_shutdown(void **state) {
  (void)state;
  rig_t g;
  ripple_shipper_opts_t o = {
      .queue_capacity = 300, .batch_max = 50, .backoff_min_ms = 1, .backoff_max_ms = 2};
  rig_up(&g, o, 0, 200, 2, 0);
  produce(g.t, 1000);
  assert_int_equal(ripple_shipper_flush(g.s, 30000), RIPPLE_OK);
  ripple_shipper_stats_t st;
  ripple_shipper_stats(g.s, &st);
  check_accounting(&st, 2000);
  assert_int_equal(recv_records(g.r, "/v1/mergelogs") + recv_records(g.r, "/v1/spans"), st.sent);
  rig_down(&g, 1000);
}

/* Many controller threads share one tracer and one shipper. */
static void *produce_thread(void *arg) {
  produce(arg, 2000);
  return NULL;
}

static void concurrent_producers(void **state) {
  (void)state;
  enum { THREADS = 6, EACH = 2000 };
  rig_t g;
  rig_up(&g, (ripple_shipper_opts_t){.batch_max = 256, .flush_interval_ms = 5}, 0, 200, 0, 0);
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++)
    assert_int_equal(pthread_create(&th[i], NULL, produce_thread, g.t), 0);
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  assert_int_equal(ripple_shipper_flush(g.s, 60000), RIPPLE_OK);
  assert_int_equal(recv_records(g.r, "/v1/mergelogs"), THREADS * EACH);
  assert_int_equal(recv_records(g.r, "/v1/spans"), THREADS * EACH);
  ripple_tracer_stats_t ts;
  ripple_tracer_stats(g.t, &ts);
  assert_int_equal(ts.roots, THREADS * EACH);
  assert_int_equal(ts.spans, THREADS * EACH);
  rig_down(&g, 1000);
}

static void options_checked(void **state) {
  (void)state;
  ripple_shipper_t *s = NULL;
  ripple_shipper_opts_t o = {.url = NULL};
  assert_int_equal(ripple_shipper_new(&o, &s), RIPPLE_EINVAL);
  o.url = "ftp://127.0.0.1/";
  assert_int_equal(ripple_shipper_new(&o, &s), RIPPLE_EINVAL);
  o.url = "";
  assert_int_equal(ripple_shipper_new(&o, &s), RIPPLE_EINVAL);
  assert_null(s);
  assert_int_equal(ripple_shipper_enqueue_span(NULL, NULL), RIPPLE_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(delivers_everything),
      cmocka_unit_test(retries_until_accepted),
      cmocka_unit_test(refused_batches_are_not_retried),
      cmocka_unit_test(trigger_shipped),
      cmocka_unit_test(dead_server_drops_and_counts),
      cmocka_unit_test(hanging_server_does_not_hold_shutdown),
      cmocka_unit_test(accounting_after_shutdown),
      cmocka_unit_test(concurrent_producers),
      cmocka_unit_test(options_checked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
