/*
 * stall_queue.h - the bounded queue between ingest and the stall detector.
 *
 * The store's writer thread pushes every committed span that writes an
 * object (after the graph's write lock is released): a small copy of what
 * the detector reads (CPID, span id, times, seven short strings), never the
 * body. The detector's thread takes everything queued at once and feeds it.
 * Bounded in bytes: a span that does not fit is dropped and counted, never
 * waited for, so ingest never blocks on the detector.
 *
 * Every span carries the wall time it was queued at. The detector's clock
 * never goes past the oldest span still queued (stallq_clock): a span
 * committed before time T has been fed before the detector judges anything
 * at T, so a lag can make an answer late, never false (stalls.c).
 *
 * Threads: one producer (the writer), one consumer (the detector's thread),
 * any number of readers of the counters and of stallq_wait. Owned by
 * stalls_t (stalls.h).
 */
#ifndef RIPPLE_SERVER_STALL_QUEUE_H
#define RIPPLE_SERVER_STALL_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/stall.h"
#include "ingest/decode.h"
#include "ripplex/sbuf.h"

typedef struct stallq stallq_t;

/* What the consumer took: walk it with stallq_next. */
typedef struct stallq_chunk {
  sbuf_t buf;
  size_t off, n;
  uint64_t upto; /* the ticket of its last span: pass to stallq_done */
} stallq_chunk_t;

typedef struct stallq_stats {
  size_t depth, bytes; /* spans queued or being fed, and the bytes they hold */
  int64_t lag_ns;      /* how long the oldest of them has waited (0: none) */
  uint64_t queued, dropped;
  int64_t last_drop_ns; /* the wall time of the newest drop (0: never) */
} stallq_stats_t;

int stallq_new(size_t cap_bytes, stallq_t **out);
void stallq_free(stallq_t *q);
/* Queue the spans of b that write an object (now: their commit's wall time). */
void stallq_push(stallq_t *q, const dec_batch_t *b, int64_t now);
/* Wait up to timeout_ms for spans, then take every queued one into c (the
 * previous contents of c are reused). Returns how many were taken; 0 on a
 * timeout or once stopped. */
size_t stallq_take(stallq_t *q, int timeout_ms, stallq_chunk_t *c);
/* The next span of c into sp (strings point into c); 0 at the end. */
int stallq_next(stallq_chunk_t *c, stall_span_t *sp);
/* The consumer fed everything up to ticket upto (and ticked after it). */
void stallq_done(stallq_t *q, uint64_t upto);
/* min(now, the queue time of the oldest span not yet taken): the clock the
 * consumer may tick to once it fed what it took. */
int64_t stallq_clock(stallq_t *q, int64_t now);
/* Wait until every span queued before this call has been fed, at most
 * timeout_ms. 1: it has; 0: timed out (or stopped). */
int stallq_wait(stallq_t *q, int timeout_ms);
/* Wake the consumer for good: stallq_take returns 0 from now on. */
void stallq_stop(stallq_t *q);
int stallq_stopped(stallq_t *q);
void stallq_stats(stallq_t *q, stallq_stats_t *out);
void stallq_chunk_free(stallq_chunk_t *c);

#endif
