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

static void url_of(int port, char *out, size_t cap) {
  snprintf(out, cap, "http://127.0.0.1:%d", port);
}

static ripple_tracer_t *tracer_into(ripple_shipper_t *s) {
  ripple_tracer_opts_t o = {.component = "test", .sink = ripple_shipper_sink(s)};
  ripple_tracer_t *t = NULL;
  assert_int_equal(ripple_tracer_new(&o, &t), RIPPLE_OK);
  return t;
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
  recv_server_t *r = recv_start();
  assert_non_null(r);
  char url[64];
  url_of(recv_port(r), url, sizeof url);
  ripple_shipper_opts_t o = {
      .url = url, .bearer_token = "s3cret", .batch_max = 100, .flush_interval_ms = 20};
  ripple_shipper_t *s;
  assert_int_equal(ripple_shipper_new(&o, &s), RIPPLE_OK);
  ripple_tracer_t *t = tracer_into(s);
  produce(t, 1000);
  assert_int_equal(ripple_shipper_flush(s, 30000), RIPPLE_OK);
  assert_int_equal(recv_records(r, "/v1/mergelogs"), 1000);
  assert_int_equal(recv_records(r, "/v1/spans"), 1000);
  assert_int_equal(recv_invalid(r), 0);
  assert_true(recv_requests(r) >= 20); /* batched by 100 */
  char auth[64];
  recv_last_auth(r, auth, sizeof auth);
  assert_string_equal(auth, "Bearer s3cret");
  ripple_shipper_stats_t st;
  ripple_shipper_stats(s, &st);
  assert_int_equal(st.sent, 2000);
  assert_int_equal(st.queued, 0);
  ripple_tracer_free(t);
  ripple_shipper_free(s, 1000);
  recv_stop(r);
}

static void retries_until_accepted(void **state) {
  (void)state;
  recv_server_t *r = recv_start();
  recv_configure(r, 200, 3, 0);
  char url[64];
  url_of(recv_port(r), url, sizeof url);
  ripple_shipper_opts_t o = {.url = url, .backoff_min_ms = 5, .backoff_max_ms = 20};
  ripple_shipper_t *s;
  assert_int_equal(ripple_shipper_new(&o, &s), RIPPLE_OK);
  ripple_tracer_t *t = tracer_into(s);
  produce(t, 50);
  assert_int_equal(ripple_shipper_flush(s, 30000), RIPPLE_OK);
  assert_int_equal(recv_records(r, "/v1/mergelogs"), 50);
  assert_int_equal(recv_records(r, "/v1/spans"), 50);
  ripple_shipper_stats_t st;
  ripple_shipper_stats(s, &st);
  assert_int_equal(st.failures, 3);
  assert_int_equal(st.sent, 100);
  ripple_tracer_free(t);
  ripple_shipper_free(s, 1000);
  recv_stop(r);
}

static void refused_batches_are_not_retried(void **state) {
  (void)state;
  recv_server_t *r = recv_start();
  recv_configure(r, 400, 0, 0);
  char url[64];
  url_of(recv_port(r), url, sizeof url);
  ripple_shipper_opts_t o = {.url = url, .backoff_min_ms = 5};
  ripple_shipper_t *s;
  assert_int_equal(ripple_shipper_new(&o, &s), RIPPLE_OK);
  ripple_tracer_t *t = tracer_into(s);
  ripple_log_setup("test", RIPPLE_LOG_ERROR, NULL, NULL);
  produce(t, 10);
  assert_int_equal(ripple_shipper_flush(s, 30000), RIPPLE_OK);
  ripple_shipper_stats_t st;
  ripple_shipper_stats(s, &st);
  assert_int_equal(st.rejected, 20);
  assert_int_equal(st.failures, 0);
  assert_int_equal(recv_requests(r), st.requests);
  ripple_tracer_free(t);
  ripple_shipper_free(s, 1000);
  recv_stop(r);
}

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

static void dead_server_drops_and_counts(void **state) {
  (void)state;
  char url[64];
  url_of(dead_port(), url, sizeof url);
  ripple_shipper_opts_t o = {.url = url,
                             .queue_capacity = 100,
                             .batch_max = 10,
                             .backoff_min_ms = 50,
                             .backoff_max_ms = 200};
  ripple_shipper_t *s;
  assert_int_equal(ripple_shipper_new(&o, &s), RIPPLE_OK);
  ripple_tracer_t *t = tracer_into(s);
  produce(t, 5000);
  ripple_shipper_stats_t st;
  ripple_shipper_stats(s, &st);
  assert_true(st.dropped >= 10000 - 100 - 2 * 10); /* at most ring + batches in flight kept */
  assert_int_equal(ripple_shipper_enqueue_mergelog(s, &(ripple_mergelog_t){.cpid = test_cpid(1)}),
                   RIPPLE_EFULL);
  assert_int_equal(ripple_shipper_flush(s, 10), RIPPLE_ETIMEDOUT);
  ripple_tracer_free(t);
  ripple_shipper_free(s, 10);
  assert_int_equal(st.sent, 0);
  check_accounting(
      &(ripple_shipper_stats_t){
          .enqueued = st.enqueued, .dropped = st.dropped, .abandoned = st.enqueued},
      10000);
}

/* A server that accepts and never answers: shutting down must not wait for
 * the (long) request timeout. */
static void hanging_server_does_not_hold_shutdown(void **state) {
  (void)state;
  recv_server_t *r = recv_start();
  recv_configure(r, 200, 0, 1);
  char url[64];
  url_of(recv_port(r), url, sizeof url);
  ripple_shipper_opts_t o = {.url = url, .timeout_ms = 600000, .flush_interval_ms = 5};
  ripple_shipper_t *s;
  assert_int_equal(ripple_shipper_new(&o, &s), RIPPLE_OK);
  ripple_tracer_t *t = tracer_into(s);
  produce(t, 100);
  /* Wait until the first batch has left the queue and hangs in flight. */
  ripple_shipper_stats_t st;
  do {
    usleep(1000);
    ripple_shipper_stats(s, &st);
  } while (st.queued == 100 * 2 || st.requests == 0);
  assert_int_equal(st.enqueued, 200);
  assert_int_equal(st.sent, 0);
  ripple_tracer_free(t);
  ripple_shipper_free(s, 50); /* returns although the request never will */
  assert_int_equal(recv_records(r, "/v1/mergelogs"), 0);
  recv_stop(r);
}

static void accounting_after_shutdown(void **state) {
  (void)state;
  recv_server_t *r = recv_start();
  recv_configure(r, 200, 2, 0);
  char url[64];
  url_of(recv_port(r), url, sizeof url);
  ripple_shipper_opts_t o = {
      .url = url, .queue_capacity = 300, .batch_max = 50, .backoff_min_ms = 1, .backoff_max_ms = 2};
  ripple_shipper_t *s;
  assert_int_equal(ripple_shipper_new(&o, &s), RIPPLE_OK);
  ripple_tracer_t *t = tracer_into(s);
  produce(t, 1000);
  assert_int_equal(ripple_shipper_flush(s, 30000), RIPPLE_OK);
  ripple_shipper_stats_t st;
  ripple_shipper_stats(s, &st);
  check_accounting(&st, 2000);
  assert_int_equal(recv_records(r, "/v1/mergelogs") + recv_records(r, "/v1/spans"), st.sent);
  ripple_tracer_free(t);
  ripple_shipper_free(s, 1000);
  recv_stop(r);
}

/* Many controller threads share one tracer and one shipper. */
typedef struct producer {
  ripple_tracer_t *t;
  int n;
} producer_t;

static void *produce_thread(void *arg) {
  producer_t *p = arg;
  produce(p->t, p->n);
  return NULL;
}

static void concurrent_producers(void **state) {
  (void)state;
  enum { THREADS = 6, EACH = 2000 };
  recv_server_t *r = recv_start();
  char url[64];
  url_of(recv_port(r), url, sizeof url);
  ripple_shipper_opts_t o = {.url = url, .batch_max = 256, .flush_interval_ms = 5};
  ripple_shipper_t *s;
  assert_int_equal(ripple_shipper_new(&o, &s), RIPPLE_OK);
  ripple_tracer_t *t = tracer_into(s);
  pthread_t th[THREADS];
  producer_t p = {t, EACH};
  for (int i = 0; i < THREADS; i++)
    assert_int_equal(pthread_create(&th[i], NULL, produce_thread, &p), 0);
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  assert_int_equal(ripple_shipper_flush(s, 60000), RIPPLE_OK);
  assert_int_equal(recv_records(r, "/v1/mergelogs"), THREADS * EACH);
  assert_int_equal(recv_records(r, "/v1/spans"), THREADS * EACH);
  ripple_tracer_stats_t ts;
  ripple_tracer_stats(t, &ts);
  assert_int_equal(ts.roots, THREADS * EACH);
  assert_int_equal(ts.spans, THREADS * EACH);
  ripple_tracer_free(t);
  ripple_shipper_free(s, 1000);
  recv_stop(r);
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
      cmocka_unit_test(dead_server_drops_and_counts),
      cmocka_unit_test(hanging_server_does_not_hold_shutdown),
      cmocka_unit_test(accounting_after_shutdown),
      cmocka_unit_test(concurrent_producers),
      cmocka_unit_test(options_checked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
