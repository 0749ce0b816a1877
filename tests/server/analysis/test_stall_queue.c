/*
 * test_stall_queue.c - the queue between ingest and the stall detector
 * (server/analysis/stall_queue.h): what a span becomes on the way (only
 * object writes, strings cut as the detector always cut them), the bound
 * (a span with no room is dropped and counted, never waited for), the
 * detector's clock (never past the oldest span not taken), and the wait for
 * spans queued before a question.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stall_queue.h"
#include "ingest/decode.h"
#include "ripplex/sbuf.h"
#include "testutil.h"

static const dec_limits_t lim = {
    .max_records = 1000, .max_sources = 64, .max_attrs = 8, .max_string = 1024};

/* n spans, the first with a long owner, every third without an object. */
static void spans(dec_batch_t *b, int n) {
  sbuf_t j;
  sbuf_init(&j);
  sbuf_putc(&j, '[');
  for (int i = 0; i < n; i++) {
    char owner[500];
    memset(owner, 'o', sizeof owner - 1);
    owner[i == 0 ? sizeof owner - 1 : 12] = '\0';
    sbuf_printf(&j,
                "%s{\"cpid\":\"aaaaaaaa-bbbb-4ccc-8ddd-%012d\",\"span_id\":\"%016x\","
                "\"service\":\"svc\",\"name\":\"create pods\","
                "\"start\":\"2026-11-27T10:00:00.000000001Z\","
                "\"end\":\"2026-11-27T10:00:00.000000002Z\"",
                i ? "," : "", i + 1, i + 1);
    if (i % 3 != 2)
      sbuf_printf(&j,
                  ",\"attributes\":{\"kind\":\"Pod\",\"namespace\":\"d\",\"name\":\"p-%d\","
                  "\"operation\":\"CREATE\",\"owner\":\"%s\"}",
                  i, owner);
    sbuf_putc(&j, '}');
  }
  sbuf_putc(&j, ']');
  dec_error_t err;
  int rc = dec_decode(DEC_SPANS, j.p, j.len, &lim, b, &err);
  if (rc != RIPPLE_OK) fprintf(stderr, "decode: %s\n", err.msg);
  assert_int_equal(rc, RIPPLE_OK);
  sbuf_free(&j);
}

static void round_trip(void **state) {
  (void)state;
  stallq_t *q;
  assert_int_equal(stallq_new(1 << 20, &q), RIPPLE_OK);
  dec_batch_t b;
  spans(&b, 3);
  stallq_push(q, &b, 1000);
  stallq_stats_t st;
  stallq_stats(q, &st);
  assert_int_equal(st.depth, 2); /* the third writes no object */
  assert_int_equal(st.queued, 2);
  assert_int_equal(st.dropped, 0);
  stallq_chunk_t c = {0};
  assert_int_equal(stallq_take(q, 0, &c), 2);
  stall_span_t sp;
  assert_true(stallq_next(&c, &sp));
  assert_int_equal(sp.span_id, 1);
  assert_int_equal(sp.end - sp.start, 1);
  assert_string_equal(sp.service, "svc");
  assert_string_equal(sp.name, "create pods");
  assert_string_equal(sp.kind, "Pod");
  assert_string_equal(sp.ns, "d");
  assert_string_equal(sp.obj, "p-0");
  assert_string_equal(sp.operation, "CREATE");
  assert_int_equal(strlen(sp.owner), 383); /* cut where the detector always cut it */
  assert_true(stallq_next(&c, &sp));
  assert_int_equal(sp.span_id, 2);
  assert_string_equal(sp.owner, "oooooooooooo");
  assert_false(stallq_next(&c, &sp));
  stallq_done(q, c.upto);
  stallq_stats(q, &st);
  assert_int_equal(st.depth, 0);
  assert_int_equal(st.bytes, 0);
  dec_batch_free(&b);
  stallq_chunk_free(&c);
  stallq_free(q);
}

/* Room for about one span: the rest are dropped, counted, with their time. */
static void drops(void **state) {
  (void)state;
  stallq_t *q;
  assert_int_equal(stallq_new(200, &q), RIPPLE_OK);
  dec_batch_t b;
  spans(&b, 5); /* 4 object writes, the first too long for 200 bytes */
  stallq_push(q, &b, 7000);
  stallq_stats_t st;
  stallq_stats(q, &st);
  assert_int_equal(st.queued, 1);
  assert_int_equal(st.dropped, 3);
  assert_int_equal(st.last_drop_ns, 7000);
  assert_true(st.bytes <= 200);
  dec_batch_free(&b);
  stallq_free(q);
}

/* The clock stays at the oldest span not taken; taken, it may move on. */
static void clock_behind_queue(void **state) {
  (void)state;
  stallq_t *q;
  assert_int_equal(stallq_new(1 << 20, &q), RIPPLE_OK);
  assert_int_equal(stallq_clock(q, 5000), 5000);
  dec_batch_t b;
  spans(&b, 2);
  stallq_push(q, &b, 1000);
  stallq_push(q, &b, 2000);
  assert_int_equal(stallq_clock(q, 5000), 1000);
  stallq_chunk_t c = {0};
  assert_int_equal(stallq_take(q, 0, &c), 4);
  assert_int_equal(stallq_clock(q, 5000), 5000);
  stallq_push(q, &b, 3000);
  assert_int_equal(stallq_clock(q, 5000), 3000);
  assert_int_equal(stallq_clock(q, 2500), 2500);
  dec_batch_free(&b);
  stallq_chunk_free(&c);
  stallq_free(q);
}

/* A question waits for what was queued before it, not for later spans. */
static void wait_for_queued(void **state) {
  (void)state;
  stallq_t *q;
  assert_int_equal(stallq_new(1 << 20, &q), RIPPLE_OK);
  assert_true(stallq_wait(q, 0)); /* nothing queued */
  dec_batch_t b;
  spans(&b, 2);
  stallq_push(q, &b, 1000);
  assert_false(stallq_wait(q, 10)); /* not fed */
  stallq_chunk_t c = {0};
  assert_int_equal(stallq_take(q, 0, &c), 2);
  stallq_push(q, &b, 2000); /* after the take: not in c.upto */
  stallq_done(q, c.upto);
  stallq_stats_t st;
  stallq_stats(q, &st);
  assert_int_equal(st.depth, 2);
  assert_false(stallq_wait(q, 10)); /* the later spans are not fed yet */
  assert_int_equal(stallq_take(q, 0, &c), 2);
  stallq_done(q, c.upto);
  assert_true(stallq_wait(q, 0));
  stallq_stop(q);
  assert_int_equal(stallq_take(q, 1000, &c), 0); /* stopped: no wait */
  dec_batch_free(&b);
  stallq_chunk_free(&c);
  stallq_free(q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trip),
      cmocka_unit_test(drops),
      cmocka_unit_test(clock_behind_queue),
      cmocka_unit_test(wait_for_queued),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
